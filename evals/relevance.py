"""Passage relevance across chunkings: grade a retrieved passage by its word overlap with judged ones.

The Codefest judgments (``eval/codefest_dev/qrels_chunks.jsonl``) grade passages cut by *another*
chunker from *another* text extraction, so Radar's chunk ids never match them. A retrieved
passage inherits the grade of the judged passages it overlaps:

    containment(a, b) = |ngrams(a) ∩ ngrams(b)| / |ngrams(a)|          (Broder 1997, "On the
                                                                      resemblance and containment
                                                                      of documents")
    grade(p)          = max{ grade(j) : max(containment(p, j), containment(j, p)) >= 0.55 }, else 0

with word 5-gram *sets* (shingles). Taking the more favourable direction makes the rule symmetric
in chunk size: a small retrieved chunk lying inside a large judged one (``containment(p, j)``
high) and a large retrieved chunk holding a whole small judged one (``containment(j, p)`` high)
both match. The 0.55 threshold is the value the seed team measured and SPEC.md quotes; it is not
re-measured here.

Tokens: the text is NFKC-normalised and lower-cased (accents kept: "política" ≠ "politica");
a token is a ``\\w+`` run, except that CJK ideographs and kana (scripts written without spaces)
are one token per character, otherwise a whole Chinese sentence would be a single "word" (the
corpus has Chinese SWF summaries; per-character tokens raised their overlap with their own
document from ~0.47 to ~0.97).

Short texts (fewer than ``n`` tokens, e.g. a 4-word title chunk): the n-gram order drops to the
text's own length, i.e. ``containment(short, other)`` is 1.0 when the short text's whole token
sequence occurs contiguously in ``other`` and 0.0 otherwise (exact phrase containment), and
``containment(other, short)`` is 0.0 when ``other`` has ``n`` or more tokens. Consequence: a
retrieved passage of under ``n`` words inherits the grade of any judged passage that contains
it verbatim, so tiny passages can be graded generously; a text with no token matches nothing.
"""

from __future__ import annotations

import numbers
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

__all__ = [
    "DEFAULT_N",
    "DEFAULT_THRESHOLD",
    "JudgedPassage",
    "JudgedPassageIndex",
    "PassageMatch",
    "containment",
    "passage_grade",
    "tokenize",
    "word_ngrams",
]

DEFAULT_N = 5
# Seed team's measured overlap threshold (SPEC.md, "Every constant that came from a measurement").
DEFAULT_THRESHOLD = 0.55

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_TOKEN_RE = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_EPS = 1e-12


def tokenize(text: str) -> list[str]:
    """Word tokens of ``text``: NFKC, lower-case, ``\\w+`` runs, one token per CJK/kana character.

    Accents and other diacritics are preserved. Returns ``[]`` for empty or symbol-only text.
    """
    return _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower())


def _grams(tokens: Sequence[str], n: int) -> set[str]:
    return set(map(" ".join, zip(*(tokens[i:] for i in range(n)), strict=False)))


def word_ngrams(text: str, n: int = DEFAULT_N) -> set[str]:
    """The set of word ``n``-grams (shingles) of ``text``, each as its tokens joined by one space.

    Tokens as in :func:`tokenize`. A text with fewer than ``n`` tokens has no ``n``-gram and
    returns an empty set (:func:`containment` handles such texts by exact phrase containment).
    Raises ``ValueError`` for ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return _grams(tokenize(text), n)


def _joined(tokens: Sequence[str]) -> str:
    """Token sequence as ' t1 t2 … ' so that phrase containment is a substring test."""
    return " " + " ".join(tokens) + " "


def _containment_tokens(
    ta: Sequence[str], tb: Sequence[str], n: int, ga: set[str] | None = None, gb: set[str] | None = None
) -> float:
    if not ta:
        return 0.0
    if len(ta) < n:
        return 1.0 if _joined(ta) in _joined(tb) else 0.0
    ga = _grams(ta, n) if ga is None else ga
    gb = _grams(tb, n) if gb is None else gb
    return len(ga & gb) / len(ga)


def containment(a: str, b: str, n: int = DEFAULT_N) -> float:
    """Containment of ``a`` in ``b``: ``|ngrams(a) ∩ ngrams(b)| / |ngrams(a)|`` (Broder 1997).

    Word ``n``-gram sets as in :func:`word_ngrams`. Asymmetric: a short ``a`` inside a long ``b``
    gives ~1.0, the reverse a small value. Returns a float in [0, 1]; 0.0 when ``a`` has no token.
    When ``a`` has 1..n-1 tokens the value is 1.0 if its whole token sequence occurs contiguously
    in ``b``, else 0.0 (see the module docstring). Raises ``ValueError`` for ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return _containment_tokens(tokenize(a), tokenize(b), n)


@dataclass(frozen=True)
class JudgedPassage:
    """One judged passage of one query: its id in the judgments, its grade and its text."""

    query_id: str
    judged_id: str
    grade: int
    text: str


@dataclass(frozen=True)
class PassageMatch:
    """A judged passage that a retrieved passage overlaps.

    ``containment`` is the favourable direction ``max(c_pj, c_jp)``, with ``c_pj`` =
    containment(retrieved, judged) and ``c_jp`` = containment(judged, retrieved).
    """

    judged_id: str
    grade: int
    containment: float
    c_pj: float
    c_jp: float


@dataclass
class _Text:
    tokens_joined: str
    n_tokens: int
    grams: frozenset[str]


class JudgedPassageIndex:
    """Inverted index (query, word n-gram) → judged passages, built once for a whole set of queries.

    Grading a retrieved passage costs one tokenisation plus one set intersection of its n-grams
    with the query's indexed n-grams (dict keys, hashed); the overlap counts with every judged
    passage sharing an n-gram come from the posting lists. Grading 10 passages for each of 25
    queries takes ~60 ms here (~0.25 ms a passage, mostly tokenisation). Identical judged texts
    (the same text judged for several queries or under several chunk ids) are indexed once.

    Build with :meth:`add` or :meth:`from_records`; query with :meth:`grade` / :meth:`matches`.
    ``n`` is the n-gram order and ``threshold`` the favourable-direction containment needed for
    a match (defaults 5 and 0.55).
    """

    def __init__(self, n: int = DEFAULT_N, threshold: float = DEFAULT_THRESHOLD):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        self.n = n
        self.threshold = threshold
        self._text_ids: dict[str, int] = {}
        self._texts: list[_Text] = []
        # query_id -> n-gram -> ids of that query's judged texts containing it
        self._postings: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        self._short: dict[str, list[int]] = defaultdict(list)  # query_id -> texts of 1..n-1 tokens
        # query_id -> text id -> judged passages of that query with that text
        self._by_query: dict[str, dict[int, list[JudgedPassage]]] = defaultdict(lambda: defaultdict(list))

    # -- building -------------------------------------------------------------------------------
    def add(self, query_id: str, judged_id: str, text: str, grade: int) -> None:
        """Index one judged passage. ``grade`` must be an int >= 0; raises ``ValueError`` otherwise."""
        if isinstance(grade, bool) or not isinstance(grade, numbers.Integral) or grade < 0:
            raise ValueError(f"grade must be an int >= 0, got {grade!r} for {query_id}/{judged_id}")
        grade = int(grade)
        tid = self._text_ids.get(text)
        if tid is None:
            toks = tokenize(text)
            tid = len(self._texts)
            self._text_ids[text] = tid
            self._texts.append(_Text(_joined(toks), len(toks), frozenset(_grams(toks, self.n))))
        q = self._by_query[query_id]
        if tid not in q:  # first time this text is judged for this query: index it for the query
            t = self._texts[tid]
            post = self._postings[query_id]
            for g in t.grams:
                post[g].append(tid)
            if 0 < t.n_tokens < self.n:
                self._short[query_id].append(tid)
        q[tid].append(JudgedPassage(query_id, judged_id, grade, text))

    @classmethod
    def from_records(
        cls, records: Iterable[Any], n: int = DEFAULT_N, threshold: float = DEFAULT_THRESHOLD
    ) -> JudgedPassageIndex:
        """Index from records with ``query_id``, ``chunk_id``, ``text`` and ``grade``.

        Records may be mappings (e.g. rows of ``qrels_chunks.jsonl``) or objects with those
        attributes (e.g. ``evals.datasets.JudgedChunk``).
        """
        idx = cls(n=n, threshold=threshold)
        for r in records:
            if isinstance(r, Mapping):
                idx.add(r["query_id"], r["chunk_id"], r["text"], r["grade"])
            else:
                idx.add(r.query_id, r.chunk_id, r.text, r.grade)
        return idx

    # -- reading --------------------------------------------------------------------------------
    @property
    def query_ids(self) -> list[str]:
        """Query ids with at least one judged passage, in insertion order."""
        return list(self._by_query)

    def judged(self, query_id: str) -> list[JudgedPassage]:
        """All judged passages of ``query_id`` (empty list for an unknown query)."""
        q = self._by_query.get(query_id)
        return [jp for lst in q.values() for jp in lst] if q else []

    def ideal_gains(self, query_id: str) -> list[int]:
        """Grades of all judged passages of ``query_id`` (input for ``ndcg_at_k``'s ideal)."""
        return [jp.grade for jp in self.judged(query_id)]

    def matches(self, query_id: str, passage_text: str) -> list[PassageMatch]:
        """Judged passages of ``query_id`` overlapping ``passage_text`` by at least ``threshold``.

        Sorted by grade, then containment, descending. Empty for an unknown query or a text
        with no token.
        """
        q = self._by_query.get(query_id)
        if not q:
            return []
        toks = tokenize(passage_text)
        if not toks:
            return []
        n = self.n
        c_pj: dict[int, float] = {}
        c_jp: dict[int, float] = {}
        if len(toks) >= n:
            grams = _grams(toks, n)
            post = self._postings.get(query_id, {})
            # candidates = judged texts sharing at least one n-gram (posting lists of the shared
            # n-grams, gathered at C speed); exact overlap = size of the n-gram set intersection
            cands = set(chain.from_iterable(map(post.__getitem__, grams & post.keys())))
            for tid in cands:
                t = self._texts[tid]
                cnt = len(grams & t.grams)
                c_pj[tid] = cnt / len(grams)
                c_jp[tid] = cnt / len(t.grams)
            joined = _joined(toks)
            for tid in self._short.get(query_id, ()):  # judged texts shorter than n: phrase containment
                if self._texts[tid].tokens_joined in joined:
                    c_jp[tid] = 1.0
                    c_pj.setdefault(tid, 0.0)
        else:  # retrieved text shorter than n
            joined = _joined(toks)
            for tid in q:
                t = self._texts[tid]
                cpj = 1.0 if joined in t.tokens_joined else 0.0
                cjp = 1.0 if 0 < t.n_tokens < n and t.tokens_joined in joined else 0.0
                if cpj or cjp:
                    c_pj[tid], c_jp[tid] = cpj, cjp
        out: list[PassageMatch] = []
        for tid, cpj in c_pj.items():
            cjp = c_jp.get(tid, 0.0)
            fav = max(cpj, cjp)
            if fav + _EPS >= self.threshold:
                for jp in q[tid]:
                    out.append(PassageMatch(jp.judged_id, jp.grade, fav, cpj, cjp))
        out.sort(key=lambda m: (-m.grade, -m.containment, m.judged_id))
        return out

    def grade(self, query_id: str, passage_text: str) -> int:
        """Highest grade among the judged passages ``passage_text`` matches for ``query_id``, else 0."""
        ms = self.matches(query_id, passage_text)
        return ms[0].grade if ms else 0


def passage_grade(
    passage_text: str, judged: Iterable[tuple[str, int]], threshold: float = DEFAULT_THRESHOLD, n: int = DEFAULT_N
) -> int:
    """Grade of one passage against one query's judged ``(text, grade)`` pairs.

    The highest grade among judged passages ``j`` with
    ``max(containment(passage, j), containment(j, passage)) >= threshold``; 0 when none matches
    (an unjudged passage counts as non-relevant). Same rule and tokenisation as
    :class:`JudgedPassageIndex`, which it builds on the fly: for many passages or queries build
    the index once instead. Raises ``ValueError`` for a negative or non-integer grade.
    """
    idx = JudgedPassageIndex(n=n, threshold=threshold)
    for i, (text, grade) in enumerate(judged):
        idx.add("_", str(i), text, grade)
    return idx.grade("_", passage_text)
