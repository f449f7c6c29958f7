"""Judging as a Radar feature: blind batches of unjudged passages out, graded qrels in.

A configuration whose top 10 holds passages nobody judged cannot be compared honestly
(``evals.scoring.measurability``). This module closes the loop:

1. :func:`export_batch` takes the top-``k`` passages of one or more configurations on the dev
   questions, keeps those that match no judgment of the deepened set (same cross-chunking matcher
   as the evaluation, ``evals.relevance``), removes duplicates, shuffles them and writes a *blind*
   JSON Lines batch: ``{"item_id", "question", "text", "grade": null}`` — no query id, system,
   rank or score. The mapping item id → (query id, passage text hash, text, configurations, best
   rank) stays server-side in PostgreSQL (``judge_items``, with the question texts in
   ``judge_questions``); the item id is random and opaque. The tables live in
   ``radar_pipeline.stores.qrels``, shared with the dashboard's judging page, which stores one
   grade at a time (``record_grade``) in the same versioned table.
2. The judge fills ``grade`` with 0/1/2 by the rubric of ``<shared>/eval/codefest_dev/README.md``
   and :func:`import_grades` stores them in ``qrels_judgments``, a versioned table: one row per
   (annotator, round, query id, text hash) with the grade and the time; a later round of the same
   annotator supersedes an earlier one for the same passage, the history stays.
3. :func:`agreement` gives Cohen's kappa (unweighted, linear and quadratic weights;
   ``evals.metrics.cohen_kappa``) for every pair of annotators over the passages both graded.
4. :func:`merged_qrels` = the shared deepened judgments + the imported ones (per passage the
   lower median of the annotators' latest grades; a passage the shared set already grades for
   that question keeps the shared grade). The ``qrels`` Dagster asset writes it to
   ``qrels_merged`` (:func:`write_merged`) and the evaluation reads it (:func:`read_merged`).

The original pooled judgments (``qrels_chunks.jsonl``) are never merged in: they are a separate
judgment set, scored separately.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import statistics
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from evals.datasets import CodefestDev, JudgedChunk, load_deepened_qrels, text_hash
from evals.metrics import cohen_kappa
from evals.relevance import JudgedPassageIndex
from radar_pipeline.stores.qrels import (
    GRADES,
    ensure_judging_schema,
    judge_items,
    judge_questions,
    judging_metadata,
    next_round,
    qrels_judgments,
    qrels_merged,
)

__all__ = [
    "GRADES",
    "ExportSummary",
    "ImportSummary",
    "agreement",
    "ensure_judging_schema",
    "export_batch",
    "import_grades",
    "load_mapping",
    "write_mapping",
    "judge_items",
    "judge_questions",
    "judging_metadata",
    "latest_judgments",
    "merged_qrels",
    "merged_qrels_from_files",
    "qrels_judgments",
    "qrels_merged",
    "read_merged",
    "split_batch",
    "SplitSummary",
    "top_passages",
    "write_merged",
]


# -- export ---------------------------------------------------------------------------------------
@dataclass
class ExportSummary:
    """What :func:`export_batch` wrote: batch id, items written, passages skipped as already
    judged or repeated, and items per configuration (a passage several configurations return
    counts for each)."""

    batch_id: str
    n_items: int
    n_already_judged: int
    n_repeated: int
    per_config: dict[str, int] = field(default_factory=dict)


def top_passages(searcher: Any, cfg: Any, dev: CodefestDev, k: int = 10) -> dict[str, list[dict]]:
    """Query id → the top ``k`` passages (``{"rank", "text", ...}``) of ``cfg`` on each dev question.

    ``searcher`` is a ``radar_pipeline.retrieval.search.Searcher``; ``cfg`` a ``RetrievalConfig``
    whose passage policy is kept except its cut, set to ``k``.
    """
    from dataclasses import replace

    deep = cfg.with_(policy=replace(cfg.policy, k_passages=k))
    return {q.query_id: searcher.search(q.question, deep).passages[:k] for q in dev.questions}


def export_batch(
    engine: sa.Engine,
    runs: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]],
    dev: CodefestDev,
    judged: JudgedPassageIndex,
    out: str | os.PathLike[str],
    k: int = 10,
    seed: int | None = None,
) -> ExportSummary:
    """Write a blind, shuffled batch of the unjudged top-``k`` passages of ``runs`` to ``out``.

    ``runs``: configuration name → query id → ranked passages (``{"rank"?, "text"}``, best
    first). A passage is *unjudged* when it matches no judged passage of its question in
    ``judged`` (the deepened/merged set; :meth:`JudgedPassageIndex.matches`); passages with the
    same text for the same question are one item. ``out`` gets one JSON object a line,
    ``{"item_id", "question", "text", "grade": null}``, in random order (``seed`` for a
    reproducible order; item ids are random either way); the mapping is stored in
    ``judge_items`` under a new batch id. Raises ``KeyError`` for a query id not in ``dev``.
    """
    ensure_judging_schema(engine)
    questions = {q.query_id: q.question for q in dev.questions}
    items: dict[tuple[str, str], dict[str, Any]] = {}
    already = repeated = 0
    per_config: dict[str, int] = {}
    for config, by_q in runs.items():
        per_config[config] = 0
        for qid, passages in by_q.items():
            if qid not in questions:
                raise KeyError(f"query id {qid!r} is not a dev question")
            ranked = sorted(passages, key=lambda p: p["rank"]) if all("rank" in p for p in passages) else passages
            for rank, p in enumerate(ranked[:k], start=1):
                text = str(p.get("text") or "")
                if not text.strip() or judged.matches(qid, text):
                    already += 1
                    continue
                key = (qid, text_hash(text))
                if key in items:
                    repeated += 1
                    items[key]["configs"].setdefault(config, rank)
                else:
                    items[key] = {"query_id": qid, "text_hash": key[1], "text": text, "configs": {config: rank}}
                per_config[config] += 1
    rows = list(items.values())
    (random.Random(seed) if seed is not None else random.SystemRandom()).shuffle(rows)
    batch_id = uuid.uuid4().hex[:12]
    for r in rows:
        r["item_id"] = secrets.token_hex(8)
        r["batch_id"] = batch_id
    asked = sorted({r["query_id"] for r in rows})
    with engine.begin() as conn:
        if rows:
            conn.execute(judge_items.insert(), rows)
            # the question texts, so the dashboard's judging page can show them (it reads only the store)
            conn.execute(
                judge_questions.insert(),
                [{"batch_id": batch_id, "query_id": q, "question": questions[q]} for q in asked],
            )
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            blind = {"item_id": r["item_id"], "question": questions[r["query_id"]], "text": r["text"], "grade": None}
            f.write(json.dumps(blind, ensure_ascii=False) + "\n")
    return ExportSummary(batch_id, len(rows), already, repeated, per_config)


def write_mapping(engine: sa.Engine, batch_id: str, out: str | os.PathLike[str]) -> int:
    """Write the server-side mapping of batch ``batch_id`` (``judge_items`` rows with their
    configurations and ranks, and the batch's questions) to ``out`` as JSON Lines, for the
    organiser, never the judge: it lets the grades be imported into another Radar database
    (:func:`load_mapping`). Returns the number of items; raises ``KeyError`` for an unknown batch."""
    ensure_judging_schema(engine)
    with engine.connect() as conn:
        items = conn.execute(sa.select(judge_items).where(judge_items.c.batch_id == batch_id)).mappings().all()
        questions = (
            conn.execute(sa.select(judge_questions).where(judge_questions.c.batch_id == batch_id)).mappings().all()
        )
    if not items:
        raise KeyError(f"no batch {batch_id!r}")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps({"kind": "question", **dict(q)}, ensure_ascii=False) + "\n")
        for it in items:
            row = {k: v for k, v in dict(it).items() if k != "created_at"}
            f.write(json.dumps({"kind": "item", **row}, ensure_ascii=False) + "\n")
    return len(items)


def load_mapping(engine: sa.Engine, path: str | os.PathLike[str]) -> int:
    """Insert the items and questions of a mapping file (:func:`write_mapping`) that this database
    lacks (existing item ids are left as they are); returns the number of items inserted. Raises
    ``ValueError`` on a line that is not a mapping record."""
    ensure_judging_schema(engine)
    items, questions = [], []
    with Path(path).open(encoding="utf-8") as f:
        for ln, line in enumerate(f, start=1):
            if not line.strip():
                continue
            obj = json.loads(line)
            kind = obj.pop("kind", None)
            if kind == "item" and {"item_id", "batch_id", "query_id", "text_hash", "text", "configs"} <= set(obj):
                items.append(obj)
            elif kind == "question" and {"batch_id", "query_id", "question"} <= set(obj):
                questions.append(obj)
            else:
                raise ValueError(f"{path}:{ln}: not a judging mapping record")
    with engine.begin() as conn:
        have = set(conn.execute(sa.select(judge_items.c.item_id)).scalars())
        new = [i for i in items if i["item_id"] not in have]
        if new:
            conn.execute(judge_items.insert(), new)
        have_q = {(r.batch_id, r.query_id) for r in conn.execute(sa.select(judge_questions))}
        new_q = [q for q in questions if (q["batch_id"], q["query_id"]) not in have_q]
        if new_q:
            conn.execute(judge_questions.insert(), new_q)
    return len(new)


# -- splitting a batch among parallel judges ------------------------------------------------------
@dataclass
class SplitSummary:
    """What :func:`split_batch` wrote: the part files (in order), the items in each, the distinct
    items of the batch, and the item ids placed in two parts (graded by two judges)."""

    files: list[Path]
    sizes: list[int]
    n_distinct: int
    overlap: list[str]


def split_batch(
    batch: str | os.PathLike[str],
    max_items: int = 120,
    overlap: int = 0,
    out_dir: str | os.PathLike[str] | None = None,
    seed: int | None = None,
) -> SplitSummary:
    """Split a blind batch (:func:`export_batch`'s file) into parts of at most ``max_items`` items
    for parallel judges, ``overlap`` of its items placed in two different parts.

    Each judge grades one part under their own annotator name; an item in two parts is graded by
    two annotators, which gives Cohen's kappa at import (:func:`agreement`) and the lower median
    as its merged grade (:func:`merged_qrels`). The parts keep the batch's item ids and lines
    (``{"item_id", "question", "text", "grade"}``; blind), each in its own random order.

    Method: ``n`` distinct items, ``o`` overlapping, ``P = ceil((n + o) / max_items)`` parts (at
    least 2 when ``o > 0``). The ``o`` items (drawn at random) go to parts ``(j mod P, j+1 mod P)``
    for the j-th of them — a ring, so every neighbouring pair of judges shares some items and the
    pooled kappa covers all judges — then the other items fill the least-loaded part, so sizes
    differ by at most one where the overlap allows (each ≤ ``max_items``, since ``2o ≤ n + o``).
    Parts are written to ``out_dir`` (default: the batch's folder) as ``<stem>_<k>.jsonl``,
    ``k`` from 1. Raises ``ValueError`` for ``max_items < 1``, ``overlap`` outside ``[0, n]``, a
    line without ``item_id`` or an item id given twice.
    """
    if max_items < 1:
        raise ValueError(f"max_items must be ≥ 1, got {max_items}")
    src = Path(batch)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    with src.open(encoding="utf-8") as f:
        for ln, line in enumerate(f, start=1):
            if not line.strip():
                continue
            obj = json.loads(line)
            if not isinstance(obj, dict) or "item_id" not in obj:
                raise ValueError(f"{src}:{ln}: expected an object with item_id")
            if obj["item_id"] in seen:
                raise ValueError(f"{src}:{ln}: item {obj['item_id']!r} appears twice")
            seen.add(obj["item_id"])
            rows.append(obj)
    n = len(rows)
    if not 0 <= overlap <= n:
        raise ValueError(f"overlap must be between 0 and the {n} items of the batch, got {overlap}")
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    order = list(range(n))
    rng.shuffle(order)
    n_parts = max(-(-(n + overlap) // max_items), 2 if overlap else 1)
    parts: list[list[int]] = [[] for _ in range(n_parts)]
    for j, i in enumerate(order[:overlap]):
        parts[j % n_parts].append(i)
        parts[(j + 1) % n_parts].append(i)
    for i in order[overlap:]:
        min(parts, key=len).append(i)
    if max(len(p) for p in parts) > max_items:  # cannot happen while 2·overlap ≤ n + overlap
        raise ValueError("the overlap does not fit in parts of max_items")
    dest = Path(out_dir) if out_dir is not None else src.parent
    dest.mkdir(parents=True, exist_ok=True)
    files = []
    for k, part in enumerate(parts, start=1):
        rng.shuffle(part)
        path = dest / f"{src.stem}_{k}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for i in part:
                f.write(json.dumps(rows[i], ensure_ascii=False) + "\n")
        files.append(path)
    return SplitSummary(files, [len(p) for p in parts], n, sorted(rows[i]["item_id"] for i in order[:overlap]))


# -- import ---------------------------------------------------------------------------------------
@dataclass
class ImportSummary:
    """What :func:`import_grades` stored: annotator, round, grades stored, items left ungraded."""

    annotator: str
    round: int
    n_graded: int
    n_ungraded: int


def _grade(value: Any, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"{where}: grade must be 0, 1 or 2, got {value!r}")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or value not in GRADES:
        raise ValueError(f"{where}: grade must be 0, 1 or 2, got {value!r}")
    return value


def import_grades(
    engine: sa.Engine, path: str | os.PathLike[str], annotator: str, round: int | None = None
) -> ImportSummary:
    """Store the grades of a judged batch file for ``annotator`` in ``qrels_judgments``.

    ``path``: JSON Lines with ``item_id`` and ``grade`` (0/1/2; ``null`` or missing = not graded
    yet, skipped); other fields are ignored. ``round`` defaults to one more than the annotator's
    last round (1 for a new annotator), so every import is a new version and a re-grade
    supersedes the earlier one in :func:`latest_judgments`. All or nothing: raises
    ``ValueError`` (storing nothing) for an empty annotator, invalid JSON, a bad grade, an item
    id given twice or unknown to ``judge_items``, or a round the annotator already used.
    """
    annotator = annotator.strip()
    if not annotator:
        raise ValueError("annotator must be a non-empty name")
    ensure_judging_schema(engine)
    graded: dict[str, int] = {}
    ungraded = 0
    seen: set[str] = set()
    with Path(path).open(encoding="utf-8") as f:
        for ln, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path}:{ln}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: invalid JSON ({e.msg})") from e
            if not isinstance(obj, dict) or "item_id" not in obj:
                raise ValueError(f"{where}: expected an object with item_id")
            item = str(obj["item_id"])
            if item in seen:
                raise ValueError(f"{where}: item {item!r} appears twice")
            seen.add(item)
            g = _grade(obj.get("grade"), where)
            if g is None:
                ungraded += 1
            else:
                graded[item] = g
    with engine.begin() as conn:
        known = (
            {
                r.item_id: r
                for r in conn.execute(
                    sa.select(
                        judge_items.c.item_id, judge_items.c.query_id, judge_items.c.text_hash, judge_items.c.batch_id
                    ).where(judge_items.c.item_id.in_(list(seen)))
                )
            }
            if seen
            else {}
        )
        unknown = sorted(seen - set(known))
        if unknown:
            raise ValueError(f"{len(unknown)} item id(s) not exported by `radar judge export`: {unknown[:5]}")
        rnd = next_round(conn, annotator) if round is None else int(round)
        if (
            round is not None
            and conn.execute(
                sa.select(sa.func.count()).where(
                    qrels_judgments.c.annotator == annotator, qrels_judgments.c.round == rnd
                )
            ).scalar()
        ):
            raise ValueError(f"annotator {annotator!r} already has round {rnd}")
        rows, by_passage = [], {}
        for item, g in graded.items():
            k = known[item]
            key = (k.query_id, k.text_hash)
            if key in by_passage and by_passage[key] != g:
                raise ValueError(f"items of one passage graded differently in one file: {item!r}")
            if key in by_passage:
                continue
            by_passage[key] = g
            rows.append(
                {
                    "query_id": k.query_id,
                    "text_hash": k.text_hash,
                    "grade": g,
                    "annotator": annotator,
                    "round": rnd,
                    "item_id": item,
                    "batch_id": k.batch_id,
                }
            )
        if rows:
            conn.execute(qrels_judgments.insert(), rows)
    return ImportSummary(annotator, rnd, len(rows), ungraded)


# -- reading, agreement, merging ------------------------------------------------------------------
def latest_judgments(engine: sa.Engine) -> dict[tuple[str, str], dict[str, int]]:
    """``(query_id, text_hash)`` → ``{annotator: grade}``, each annotator's latest round.

    Ties within a round cannot happen (one row per annotator, round and passage). Empty when
    nothing was imported (tables created if missing).
    """
    ensure_judging_schema(engine)
    q = sa.text(
        "SELECT DISTINCT ON (annotator, query_id, text_hash) annotator, query_id, text_hash, grade "
        "FROM qrels_judgments ORDER BY annotator, query_id, text_hash, round DESC, judged_at DESC"
    )
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    with engine.connect() as conn:
        for r in conn.execute(q):
            out[(r.query_id, r.text_hash)][r.annotator] = int(r.grade)
    return dict(out)


def agreement(latest: Mapping[tuple[str, str], Mapping[str, int]]) -> dict[str, Any]:
    """Inter-annotator agreement over the passages graded by two or more annotators.

    For each pair of annotators (sorted names, ``"ana|beto"``) over the passages both graded:
    ``n``, ``exact`` (share of equal grades), ``binary`` (share agreeing on relevant ≥ 1 vs 0),
    ``kappa`` (Cohen 1960), ``kappa_linear`` and ``kappa_quadratic`` (weighted kappa, Cohen
    1968; see ``evals.metrics.cohen_kappa`` for the formula). ``"pooled"`` is the same over all
    pairs' items together. Returns ``{"pairs": {...}, "pooled": {...} | None, "n_overlap":
    passages with ≥ 2 annotators, "annotators": [...]}``.
    """
    pairs: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    names: set[str] = set()
    n_overlap = 0
    for grades in latest.values():
        names |= set(grades)
        if len(grades) < 2:
            continue
        n_overlap += 1
        for x, y in combinations(sorted(grades), 2):
            a, b = pairs[f"{x}|{y}"]
            a.append(grades[x])
            b.append(grades[y])

    def stats(a: list[int], b: list[int]) -> dict[str, float | int]:
        return {
            "n": len(a),
            "exact": sum(x == y for x, y in zip(a, b, strict=True)) / len(a),
            "binary": sum((x >= 1) == (y >= 1) for x, y in zip(a, b, strict=True)) / len(a),
            "kappa": cohen_kappa(a, b),
            "kappa_linear": cohen_kappa(a, b, weights="linear"),
            "kappa_quadratic": cohen_kappa(a, b, weights="quadratic"),
        }

    out_pairs = {name: stats(a, b) for name, (a, b) in sorted(pairs.items())}
    all_a = [g for a, _ in pairs.values() for g in a]
    all_b = [g for _, b in pairs.values() for g in b]
    return {
        "pairs": out_pairs,
        "pooled": stats(all_a, all_b) if all_a else None,
        "n_overlap": n_overlap,
        "annotators": sorted(names),
    }


def merged_qrels(engine: sa.Engine | None, shared_dir: str | os.PathLike[str] | None = None) -> list[JudgedChunk]:
    """The deepened judgment set: shared ``qrels_deepened.jsonl`` + the imported grades.

    Each imported passage (query id, text hash) gets the lower median (``statistics.median_low``)
    of its annotators' latest grades, so two annotators at 1 and 2 give 1 and a tie never rounds
    up; its text comes from ``judge_items``. A passage whose hash the shared set already holds
    for that question keeps the shared grade. ``chunk_id`` of every record is the text hash,
    ``doc_id`` is ``"imported"`` or ``""`` (shared). ``engine=None`` gives the shared set alone.
    """
    shared = [c for v in load_deepened_qrels(shared_dir).values() for c in v]
    if engine is None:
        return shared
    have = {(c.query_id, c.chunk_id) for c in shared}
    latest = latest_judgments(engine)
    keys = [k for k in latest if k not in have]
    texts: dict[tuple[str, str], str] = {}
    if keys:
        with engine.connect() as conn:
            for r in conn.execute(
                sa.select(judge_items.c.query_id, judge_items.c.text_hash, judge_items.c.text).distinct()
            ):
                texts[(r.query_id, r.text_hash)] = r.text
    imported = [
        JudgedChunk(q, h, "imported", statistics.median_low(latest[(q, h)].values()), texts[(q, h)])
        for q, h in sorted(keys)
        if (q, h) in texts
    ]
    return shared + imported


def merged_qrels_from_files(
    mapping: str | os.PathLike[str],
    graded: Mapping[str, str | os.PathLike[str]],
    shared_dir: str | os.PathLike[str] | None = None,
) -> list[JudgedChunk]:
    """:func:`merged_qrels` computed from files, with no database: the shared deepened judgments
    plus a judging round's grades, for evaluating on a home whose PostgreSQL must not be written
    (a read-only evaluation home never imported the round).

    ``mapping``: a mapping file (:func:`write_mapping`: items with query id, text hash and text);
    ``graded``: annotator → the JSON Lines file that annotator graded (``item_id``, ``grade``; a
    null grade is skipped), one round each. Per passage (query id, text hash), the lower median of
    its annotators' grades, exactly as :func:`merged_qrels`; a passage the shared set holds keeps
    the shared grade. Raises ``ValueError`` for an item id the mapping lacks or a bad grade.
    """
    shared = [c for v in load_deepened_qrels(shared_dir).values() for c in v]
    have = {(c.query_id, c.chunk_id) for c in shared}
    items: dict[str, tuple[str, str, str]] = {}
    with Path(mapping).open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                if obj.get("kind") == "item":
                    items[obj["item_id"]] = (obj["query_id"], obj["text_hash"], obj["text"])
    grades: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for annotator, path in graded.items():
        with Path(path).open(encoding="utf-8") as f:
            for ln, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                obj = json.loads(line)
                g = _grade(obj.get("grade"), f"{path}:{ln}")
                if g is None:
                    continue
                if obj.get("item_id") not in items:
                    raise ValueError(f"{path}:{ln}: item {obj.get('item_id')!r} is not in the mapping")
                q, h, _ = items[obj["item_id"]]
                grades[(q, h)][annotator] = g
    texts = {(q, h): t for q, h, t in items.values()}
    imported = [
        JudgedChunk(q, h, "imported", statistics.median_low(grades[(q, h)].values()), texts[(q, h)])
        for q, h in sorted(grades)
        if (q, h) not in have
    ]
    return shared + imported


def write_merged(engine: sa.Engine, records: Iterable[JudgedChunk], annotators: Mapping[tuple[str, str], int]) -> int:
    """Replace ``qrels_merged`` with ``records`` (as from :func:`merged_qrels`); returns the row
    count. ``annotators``: (query id, text hash) → number of annotators (imported passages)."""
    ensure_judging_schema(engine)
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for c in records:
        prev = by_key.get((c.query_id, c.chunk_id))
        if prev is not None:  # the same text judged twice for one question: the matcher takes the max
            prev["grade"] = max(prev["grade"], c.grade)
            continue
        by_key[(c.query_id, c.chunk_id)] = {
            "query_id": c.query_id,
            "text_hash": c.chunk_id,
            "grade": c.grade,
            "source": "imported" if c.doc_id == "imported" else "shared",
            "n_annotators": annotators.get((c.query_id, c.chunk_id), 0),
            "text": c.text,
        }
    rows = list(by_key.values())
    with engine.begin() as conn:
        conn.execute(qrels_merged.delete())
        if rows:
            conn.execute(qrels_merged.insert(), rows)
    return len(rows)


def read_merged(engine: sa.Engine | None, shared_dir: str | os.PathLike[str] | None = None) -> list[JudgedChunk]:
    """The merged qrels as the ``qrels`` asset last wrote them; when the table is empty or absent
    (or ``engine`` is None) they are computed now (:func:`merged_qrels`)."""
    if engine is None:
        return merged_qrels(None, shared_dir)
    ensure_judging_schema(engine)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(qrels_merged).order_by(qrels_merged.c.query_id)).all()
    if not rows:
        return merged_qrels(engine, shared_dir)
    return [
        JudgedChunk(r.query_id, r.text_hash, "imported" if r.source == "imported" else "", int(r.grade), r.text)
        for r in rows
    ]
