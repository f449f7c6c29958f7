"""Loaders for the evaluation data in ``<shared>/eval`` (read in place, never copied).

The shared directory is, in order: the ``shared_dir`` argument, the ``RADAR_SHARED_DIR``
environment variable, ``<repo>/../shared``.

- ``codefest_dev/``: 25 of the 50 official Codefest Ad Astra 2026 questions (Spanish) with graded
  passage judgments (0/1/2, made on another chunking, passage text included) and relevant
  documents. See :func:`load_codefest_dev`; ``qrels_deepened.jsonl``, blind re-judgments of
  every top-10 passage of Radar's first stage, Radar's default and the finalist, is a *separate*
  judgment set (:func:`load_deepened_qrels`), never mixed with the original one.
- ``xquad_es_en/`` and ``xquad_es_en_hard/``: BEIR-layout benchmarks, 1,190 Spanish questions
  against 240 (hard: 2,067) English SQuAD paragraphs, one relevant passage per question (built
  from google-deepmind/xquad, CC BY-SA 4.0; see their ``SOURCE.md``). See :func:`load_xquad`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Literal

from radar_pipeline.config import env as read_env
from radar_pipeline.vocabulary import CODEFEST_CODES

__all__ = [
    "BeirDataset",
    "BeirDoc",
    "BeirQuery",
    "CodefestDev",
    "CodefestQuestion",
    "JudgedChunk",
    "PHENOMENA",
    "benchmark_doc_id",
    "load_codefest_dev",
    "load_deepened_qrels",
    "text_hash",
    "load_xquad",
    "resolve_shared_dir",
]

REPO_ROOT = Path(__file__).resolve().parents[1]
PHENOMENA = tuple(CODEFEST_CODES)  # the benchmark labels questions F1/F2/F3
XQUAD_NAMES = ("xquad_es_en", "xquad_es_en_hard")
# Codefest document ids: phenomenon, source collection, 3-digit number (e.g. F1-CSET-005).
_CODEFEST_ID = re.compile(r"F[123]-[A-Z0-9]+-\d{3}")


def resolve_shared_dir(shared_dir: str | os.PathLike[str] | None = None) -> Path:
    """The shared data directory: argument, else ``$RADAR_SHARED_DIR``, else ``<repo>/../shared``.

    Raises ``FileNotFoundError`` when the chosen directory does not exist.
    """
    if shared_dir is None:
        env = read_env("RADAR_SHARED_DIR")
        shared_dir = env if env else REPO_ROOT.parent / "shared"
    path = Path(shared_dir).expanduser().resolve()
    if not path.is_dir():
        raise FileNotFoundError(f"shared data directory not found: {path} (set RADAR_SHARED_DIR)")
    return path


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: invalid JSON ({e.msg})") from e
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{lineno}: expected a JSON object")
            yield lineno, obj


def _need(obj: dict, keys: tuple[str, ...], where: str) -> None:
    missing = [k for k in keys if k not in obj]
    if missing:
        raise ValueError(f"{where}: missing field(s) {missing}")


# -- Codefest ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CodefestQuestion:
    """One dev question: id (``q001``…), Spanish text, phenomenon ``F1`` | ``F2`` | ``F3``."""

    query_id: str
    question: str
    phenomenon: str


@dataclass(frozen=True)
class JudgedChunk:
    """One graded passage of one question, cut by the judges' own chunker.

    ``chunk_id`` is ``<doc_id>-chunk-NNNN`` of *that* chunking (not Radar's); ``grade`` is 0
    (not relevant), 1 (partially) or 2 (highly relevant); ``text`` is the judged passage.
    """

    query_id: str
    chunk_id: str
    doc_id: str
    grade: int
    text: str


@dataclass(frozen=True)
class CodefestDev:
    """The Codefest dev set.

    - ``questions``: in file order.
    - ``qrels_chunks``: query id → its judged passages (file order).
    - ``relevant_docs``: query id → benchmark doc ids counted as relevant for F1@3.
    - ``docs_with_positive_chunk``: query id → doc ids having a judged passage with grade > 0
      (a superset of ``relevant_docs`` in this data; not the F1@3 target).
    """

    questions: tuple[CodefestQuestion, ...]
    qrels_chunks: dict[str, tuple[JudgedChunk, ...]]
    relevant_docs: dict[str, frozenset[str]]
    docs_with_positive_chunk: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def query_ids(self) -> list[str]:
        return [q.query_id for q in self.questions]

    @property
    def phenomenon(self) -> dict[str, str]:
        """Query id → phenomenon."""
        return {q.query_id: q.phenomenon for q in self.questions}

    def all_judged(self) -> list[JudgedChunk]:
        """Every judged passage of every question (input for ``JudgedPassageIndex.from_records``)."""
        return [c for q in self.questions for c in self.qrels_chunks.get(q.query_id, ())]


def load_codefest_dev(shared_dir: str | os.PathLike[str] | None = None) -> CodefestDev:
    """Load ``<shared>/eval/codefest_dev``: questions, graded passage judgments, relevant docs.

    Files: ``questions.jsonl`` (``query_id, question, phenomenon``), ``qrels_chunks.jsonl``
    (``query_id, chunk_id, doc_id, grade, text``), ``qrels_docs.jsonl`` (``query_id,
    relevant_doc_ids, docs_with_positive_chunk``).

    Raises ``FileNotFoundError`` if a file is missing and ``ValueError`` on malformed rows: a
    missing field, a grade outside {0, 1, 2}, a phenomenon outside F1/F2/F3, a duplicate question
    id, or judgments for a question not in ``questions.jsonl``.
    """
    base = resolve_shared_dir(shared_dir) / "eval" / "codefest_dev"
    questions: list[CodefestQuestion] = []
    seen: set[str] = set()
    for ln, o in _read_jsonl(base / "questions.jsonl"):
        where = f"questions.jsonl:{ln}"
        _need(o, ("query_id", "question", "phenomenon"), where)
        if o["phenomenon"] not in PHENOMENA:
            raise ValueError(f"{where}: phenomenon {o['phenomenon']!r} not in {PHENOMENA}")
        if o["query_id"] in seen:
            raise ValueError(f"{where}: duplicate query_id {o['query_id']!r}")
        seen.add(o["query_id"])
        questions.append(CodefestQuestion(str(o["query_id"]), str(o["question"]), o["phenomenon"]))

    chunks: dict[str, list[JudgedChunk]] = {q: [] for q in seen}
    for ln, o in _read_jsonl(base / "qrels_chunks.jsonl"):
        where = f"qrels_chunks.jsonl:{ln}"
        _need(o, ("query_id", "chunk_id", "doc_id", "grade", "text"), where)
        if o["query_id"] not in seen:
            raise ValueError(f"{where}: unknown query_id {o['query_id']!r}")
        g = o["grade"]
        if isinstance(g, bool) or g not in (0, 1, 2):
            raise ValueError(f"{where}: grade {g!r} not in 0/1/2")
        chunks[o["query_id"]].append(
            JudgedChunk(str(o["query_id"]), str(o["chunk_id"]), str(o["doc_id"]), int(g), str(o["text"]))
        )

    relevant: dict[str, frozenset[str]] = {}
    positive: dict[str, frozenset[str]] = {}
    for ln, o in _read_jsonl(base / "qrels_docs.jsonl"):
        where = f"qrels_docs.jsonl:{ln}"
        _need(o, ("query_id", "relevant_doc_ids"), where)
        if o["query_id"] not in seen:
            raise ValueError(f"{where}: unknown query_id {o['query_id']!r}")
        relevant[o["query_id"]] = frozenset(map(str, o["relevant_doc_ids"]))
        positive[o["query_id"]] = frozenset(map(str, o.get("docs_with_positive_chunk", ())))

    return CodefestDev(
        questions=tuple(questions),
        qrels_chunks={q: tuple(v) for q, v in chunks.items()},
        relevant_docs=relevant,
        docs_with_positive_chunk=positive,
    )


def text_hash(text: str) -> str:
    """The id of a judged passage text: first 16 hex digits of the SHA-256 of its UTF-8 bytes.

    Used for the deepened judgments (which have no chunk id) and for the imported ones
    (``evals.judging``), so the same text gets the same id everywhere.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load_deepened_qrels(shared_dir: str | os.PathLike[str] | None = None) -> dict[str, tuple[JudgedChunk, ...]]:
    """Load ``<shared>/eval/codefest_dev/qrels_deepened.jsonl``: query id → its blind judgments.

    Rows are ``{query_id, grade, original_grade, text}`` (615 rows, grades 0/1/2, see the
    folder's README). Each becomes a :class:`JudgedChunk` with ``chunk_id`` = ``text_hash(text)``
    and ``doc_id`` = ``""`` (the judgments carry no document). Use them as their own judgment set
    (``evals.relevance.JudgedPassageIndex.from_records``), not merged with ``qrels_chunks``.

    Raises ``FileNotFoundError`` if the file is missing and ``ValueError`` on a missing field or
    a grade outside {0, 1, 2}.
    """
    path = resolve_shared_dir(shared_dir) / "eval" / "codefest_dev" / "qrels_deepened.jsonl"
    out: dict[str, list[JudgedChunk]] = {}
    for ln, o in _read_jsonl(path):
        where = f"qrels_deepened.jsonl:{ln}"
        _need(o, ("query_id", "grade", "text"), where)
        g = o["grade"]
        if isinstance(g, bool) or g not in (0, 1, 2):
            raise ValueError(f"{where}: grade {g!r} not in 0/1/2")
        qid, text = str(o["query_id"]), str(o["text"])
        out.setdefault(qid, []).append(JudgedChunk(qid, text_hash(text), "", int(g), text))
    return {q: tuple(v) for q, v in out.items()}


def benchmark_doc_id(source_path: str) -> str | None:
    """Codefest benchmark document id of a source file: its stem, or ``None`` for other files.

    ``corpus/codefest/F1/F1-CSET-005.txt`` → ``"F1-CSET-005"``. Accepts absolute or relative
    paths, POSIX or Windows separators, and bare file names (the mini corpus
    ``eval/codefest_mini_corpus/`` is flat). A path counts as Codefest when its file name is
    ``<ID>.txt`` with ``<ID>`` matching ``F[123]-<COLLECTION>-<NNN>`` (upper-case collection,
    three digits) — no file of the Radar corpus is named that way. ``None`` for anything else,
    including the empty string.
    """
    if not source_path:
        return None
    name = PurePosixPath(str(source_path).replace("\\", "/")).name
    stem, dot, ext = name.rpartition(".")
    if not dot or ext.lower() != "txt" or not _CODEFEST_ID.fullmatch(stem):
        return None
    return stem


# -- BEIR / XQuAD --------------------------------------------------------------------------------
@dataclass(frozen=True)
class BeirQuery:
    """One query of a BEIR dataset (``_id`` → ``query_id``)."""

    query_id: str
    text: str


@dataclass(frozen=True)
class BeirDoc:
    """One corpus passage of a BEIR dataset (``_id`` → ``doc_id``)."""

    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class BeirDataset:
    """A BEIR-layout benchmark.

    - ``queries``: :class:`BeirQuery` in file order (a tuple, so it can be sliced).
    - ``corpus``: :class:`BeirDoc` in file order.
    - ``qrels``: query id → {passage id: relevance}; only rows with relevance > 0 are kept.

    ``query_text`` and ``doc_by_id`` give id lookups.
    """

    name: str
    queries: tuple[BeirQuery, ...]
    corpus: tuple[BeirDoc, ...]
    qrels: dict[str, dict[str, int]]

    @cached_property
    def query_text(self) -> dict[str, str]:
        """Query id → query text."""
        return {q.query_id: q.text for q in self.queries}

    @cached_property
    def doc_by_id(self) -> dict[str, BeirDoc]:
        """Passage id → passage."""
        return {d.doc_id: d for d in self.corpus}


def load_xquad(
    name: Literal["xquad_es_en", "xquad_es_en_hard"] = "xquad_es_en", shared_dir: str | os.PathLike[str] | None = None
) -> BeirDataset:
    """Load ``<shared>/eval/<name>`` (``queries.jsonl``, ``corpus.jsonl``, ``qrels.tsv``).

    ``queries.jsonl`` rows are ``{_id, text}``, ``corpus.jsonl`` rows ``{_id, title, text}``,
    ``qrels.tsv`` has the header ``query-id  corpus-id  score`` (tab-separated, integer score).
    Expected sizes: 1,190 queries and qrels; 240 passages (``xquad_es_en``) or 2,067
    (``xquad_es_en_hard``).

    Raises ``ValueError`` for an unknown ``name``, a duplicate id, a bad qrels header or row,
    or a qrel whose query or passage id is not in the files; ``FileNotFoundError`` if missing.
    """
    if name not in XQUAD_NAMES:
        raise ValueError(f"unknown dataset {name!r}; expected one of {XQUAD_NAMES}")
    base = resolve_shared_dir(shared_dir) / "eval" / name
    queries: dict[str, BeirQuery] = {}
    for ln, o in _read_jsonl(base / "queries.jsonl"):
        _need(o, ("_id", "text"), f"queries.jsonl:{ln}")
        qid = str(o["_id"])
        if qid in queries:
            raise ValueError(f"queries.jsonl:{ln}: duplicate _id {qid!r}")
        queries[qid] = BeirQuery(qid, str(o["text"]))
    corpus: dict[str, BeirDoc] = {}
    for ln, o in _read_jsonl(base / "corpus.jsonl"):
        _need(o, ("_id", "text"), f"corpus.jsonl:{ln}")
        did = str(o["_id"])
        if did in corpus:
            raise ValueError(f"corpus.jsonl:{ln}: duplicate _id {did!r}")
        corpus[did] = BeirDoc(did, str(o.get("title", "")), str(o["text"]))
    qrels: dict[str, dict[str, int]] = {}
    with (base / "qrels.tsv").open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        header = next(reader, None)
        if header != ["query-id", "corpus-id", "score"]:
            raise ValueError(f"{base / 'qrels.tsv'}: unexpected header {header!r}")
        for ln, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != 3:
                raise ValueError(f"qrels.tsv:{ln}: expected 3 columns, got {len(row)}")
            qid, did, score = row
            try:
                s = int(score)
            except ValueError as e:
                raise ValueError(f"qrels.tsv:{ln}: non-integer score {score!r}") from e
            if qid not in queries or did not in corpus:
                raise ValueError(f"qrels.tsv:{ln}: unknown query {qid!r} or passage {did!r}")
            if s > 0:
                qrels.setdefault(qid, {})[did] = s
    return BeirDataset(name=name, queries=tuple(queries.values()), corpus=tuple(corpus.values()), qrels=qrels)
