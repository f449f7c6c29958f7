"""The retrieval service: read-only access to one encoder's materialized indexes.

``RetrievalService`` wraps a ``radar_pipeline.retrieval.search.Searcher`` (the FAISS/BM25 stores
and the passage table): passage search with the raw cosine similarity of each hit, document
search, document outline, the publication listing (``publications``), a window of ~80 passages around a chunk, passages by id. The API's
``/search`` and ``/documents`` endpoints and the agent's tools call the same methods, so a figure
cannot differ between chat and dashboard.

Access: ``for_scope(AccessScope)`` returns a view of the same index that holds only the rows of the
scope's collections: its ``row_of``/``doc_rows`` (every lookup by id, every window, outline,
neighbour and listing goes through them) contain no other row, and its searches pass the searcher
the scope's ``RowMask``, so candidates outside the scope are never ranked. A chunk or document
outside the scope is answered exactly as one that does not exist (None). Every record a view
returns carries ``politica`` (``AccessScope.policy``: collection, key id, rule).
"""

from __future__ import annotations

import copy
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute.reader import PrecomputeReader
from radar_pipeline.retrieval.identifiers import naming_needles, naming_pattern
from radar_pipeline.retrieval.publications import PublicationQuery, list_publications
from radar_pipeline.textfold import fold_question

_HYPHENS = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u2043]")
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff\\s]")


def normalize_id(raw: str) -> str:
    """Canonical form of a doc/chunk id as a model may write it: odd hyphens (U+2011 …) → ``-``,
    soft hyphens, zero-width characters and spaces removed, lower case."""
    return _HYPHENS.sub("-", _INVISIBLE.sub("", str(raw))).lower()


class IndexUnavailable(RuntimeError):
    """The passage table / FAISS index of the configured encoder has not been materialized."""


@dataclass
class EncodeBudget:
    """How many re-ranker passage vectors one caller (an agent run) may encode at query time, in
    all its searches together; not thread-safe (one per run).

    Why: a passage without a precomputed re-ranker vector (``rerank_vectors`` asset incomplete) is
    encoded at query time, ≤ ``RetrievalConfig.rerank_encode_limit`` (8) per search, at ~0.3 s per
    passage on one core (multilingual-e5-small, 128 words; several seconds on a loaded machine). A
    run makes up to 8 searches, so an unbounded run paid up to ~64 encodings: most of its answer
    time (evals/README.md "Chat latency"). With a budget, each new query is granted
    ``min(per-query limit, limit - spent)`` and what it actually encoded is spent; past the budget
    the second stage imputes the missing scores as it does past the per-query limit.

    ``limit`` ≥ 0 (0: never encode at query time). ``grant`` is idempotent per query: the same
    query asked twice in a run (``search_documents`` then ``search_evidence``) gets the same grant,
    so both read one cached search. Raises ``ValueError`` on a negative ``limit``."""

    limit: int
    spent: int = 0
    _grants: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.limit < 0:
            raise ValueError(f"EncodeBudget.limit must be >= 0, got {self.limit}")

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.spent)

    def grant(self, query: str, per_query: int) -> int:
        """The query-time encodings ``query`` may use: its earlier grant in this run, else
        ``min(per_query, remaining)``."""
        if query not in self._grants:
            self._grants[query] = max(0, min(per_query, self.remaining))
        return self._grants[query]

    def granted(self, query: str) -> int | None:
        """The grant ``query`` received in this run (None: never searched with this budget)."""
        return self._grants.get(query)

    def spend(self, n: int) -> None:
        """Record ``n`` ≥ 0 passages encoded."""
        self.spent += max(0, int(n))


_CODE = re.compile(r"(?<![\w\-])[\w]*\d[\w]*(?:-[\w]+)*(?![\w\-])|(?<![\w\-])[a-zA-Z]+(?:-[\w]+)*-\d[\w]*(?![\w\-])")


def _codes(query: str) -> list[str]:
    """The designations a query names: tokens with a digit ("1408", "018-18", "USA-193",
    "Fengyun-1C"), at least three characters, a year (1800–2099) alone excepted."""
    out = []
    for m in _CODE.finditer(query or ""):
        t = m.group(0)
        if len(t) >= 3 and not re.fullmatch(r"(?:18|19|20)\d\d", t):
            out.append(t)
    return list(dict.fromkeys(out))


def _written_names(query: str) -> list[str]:
    """Names a query writes in a form no common word has: an acronym of three capitals or more
    ("MSS", "KA-SAT", "FCC") or a word with a capital inside it ("KaGeM", "OneWeb", "SpaceX").
    Matched case-sensitively: "KaGeM" is no "kagem" typed in a sentence."""
    out = []
    for t in re.findall(r"[^\W_][\w\-]*", query or ""):
        letters = [c for c in t if c.isalpha()]
        if len(letters) >= 3 and all(c.isupper() for c in letters):
            out.append(t)
        elif any(c.islower() for c in t) and sum(c.isupper() for c in t[1:]) >= 1 and t[:1].isupper():
            out.append(t)
    return list(dict.fromkeys(out))


_NAME_CONNECTORS = frozenset({"de", "del", "la", "las", "los", "el", "y", "of", "the"})


def _whole_name(query: str) -> list[str]:
    """The query itself when it is one proper name of 1-6 words, each capitalised or a connector
    ("San Onofre", "Los Paisas", "Frente Oliver Sinisterra"): searched inside the documents that
    name it, its passages are those naming it verbatim (case aside), whatever else they say."""
    words = (query or "").split()
    if not 1 <= len(words) <= 6 or not words[0][:1].isupper():  # "Los Paisas" opens with a capital
        return []
    if all(w[:1].isupper() or w.lower() in _NAME_CONNECTORS for w in words):
        return [" ".join(words)]
    return []


ONTHEFLY_ROWS = 48
"""Passages of a documents-restricted search scored by cosine while only the lexical stage is live
(each one's vector encoded at query time: USE ~7–20 ms a passage on one thread)."""


class RetrievalService:
    """Read-only view over a ``Searcher`` (thread-safe: lookups are immutable, caches are locked)."""

    def __init__(self, searcher):
        self.searcher = searcher
        frame = searcher.passages
        self.chunk_ids: list[str] = frame["chunk_id"].to_list()
        self.doc_ids: list[str] = frame["doc_id"].to_list()
        self.texts: list[str] = frame["text"].to_list()
        self.titles: list[str] = frame["title"].to_list()
        self.paths: list[str] = frame["source_path"].to_list()
        self.page_start: list[int] = frame["page_start"].to_list()
        self.page_end: list[int] = frame["page_end"].to_list()
        self.phenomena: list[str | None] = frame["phenomenon"].to_list()
        self.languages: list[str | None] = frame["language"].to_list()
        self.collections: list[str | None] = frame["collection"].to_list()
        self.row_of = {c: i for i, c in enumerate(self.chunk_ids)}
        self.doc_rows: dict[str, list[int]] = {}
        for i, d in enumerate(self.doc_ids):
            self.doc_rows.setdefault(d, []).append(i)
        self._lock = threading.Lock()
        self._scache: OrderedDict[tuple, Any] = OrderedDict()
        self.scope = AccessScope.everything()
        self._mask = None  # the searcher's RowMask of a restricted view
        self._views: dict[tuple, RetrievalService] = {}
        # documents retracted since this index was built (``history.retract_document``): shared by
        # every scoped view (``copy.copy`` keeps the same set), left out of every lookup and search
        # until the rebuilt index no longer holds them
        self.withdrawn: set[str] = set()

    def for_scope(self, scope: AccessScope | None) -> RetrievalService:
        """This index as ``scope`` may read it (module docstring); views are cached per scope.
        ``None`` = this service unchanged (internal callers: evaluations, the command line)."""
        if scope is None:
            return self
        key = (scope.cache_key, scope.key_id)
        with self._lock:
            view = self._views.get(key)
        if view is not None:
            return view
        view = copy.copy(self)
        view.scope = scope
        view._views = {}
        if scope.restricted:
            allowed = {i for i, c in enumerate(self.collections) if scope.allows(c)}
            view.row_of = {c: i for c, i in self.row_of.items() if i in allowed}
            view.doc_rows = {d: rows for d, rows in self.doc_rows.items() if rows[0] in allowed}
            view._mask = self.searcher.row_mask(scope.collections)
        with self._lock:
            if len(self._views) > 256:
                self._views.clear()
            self._views[key] = view
        return view

    def withdraw(self, doc_ids) -> int:
        """Stop serving these documents (retracted) from this loaded index; returns how many of them
        it holds. Effective at once for this service and all its scoped views."""
        held = {d for d in doc_ids if d in self.doc_rows}
        with self._lock:
            self.withdrawn |= held
            self._scache.clear()
        return len(held)

    def _served(self, row: int) -> bool:
        return not self.withdrawn or self.doc_ids[row] not in self.withdrawn

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    # -- vectors
    def query_vector(self, text: str) -> np.ndarray:
        """The first-stage encoder's unit vector of ``text`` (float32, ``(dim,)``), from the searcher's
        query-vector cache (``Searcher.encode_query``: the search itself encoded the same text)."""
        return np.asarray(self.searcher.encode_query(text), dtype=np.float32)

    def vector(self, row: int) -> np.ndarray:
        """The dense vector of one passage row (encoded on demand while only the lexical stage is live)."""
        if self._vectors is not None:
            return self._vectors[row]
        if getattr(self.searcher, "faiss", None) is None:
            return self.searcher.passage_vectors([int(row)])[0]
        return self.searcher.faiss.reconstruct(int(row))

    @property
    def search_stages(self) -> dict[str, bool]:
        """Which search stages answer (``Searcher.live_stages``); all live for a searcher without the notion."""
        stages = getattr(self.searcher, "live_stages", None)
        return dict(stages) if stages is not None else {"lexical": True, "dense": True, "rerank": True}

    def similarity(self, qvec: np.ndarray, rows: list[int]) -> list[float]:
        """Raw cosine (unit vectors) of the query with each row: comparable across queries,
        unlike fused/min-max-normalised ranking scores (``Searcher.cosine``: the index's vectors
        in memory, or PostgreSQL for the pgvector backend)."""
        if not rows:
            return []
        return [round(float(s), 4) for s in self.searcher.cosine(qvec, rows)]

    # -- records
    def record(self, row: int, *, text: bool = True) -> dict:
        rec = {
            "chunk_id": self.chunk_ids[row],
            "doc_id": self.doc_ids[row],
            "title": self.titles[row],
            "source_path": self.paths[row],
            "page": self.page_start[row],
            "page_end": self.page_end[row],
            "phenomenon": self.phenomena[row],
            "language": self.languages[row],
        }
        if text:
            rec["text"] = self.texts[row]
        rec["politica"] = self.scope.policy(self.collections[row])
        return rec

    def chunk(self, chunk_id: str) -> dict | None:
        row = self.row_of.get(normalize_id(chunk_id))
        return None if row is None or not self._served(row) else self.record(row)

    def documents_naming(self, names: list[str], limit: int = 4) -> list[str]:
        """The documents of this view with a passage that names one of ``names`` verbatim (case,
        hyphen or space between its parts aside: "Cosmos 1408", "COSMOS-1408"), most passages
        first, at most ``limit``; ``[]`` for no name. For a designation the ranked search does not
        bring up (a satellite's number, an alert's code: "1408", "018-18" are single rare tokens the
        fused ranking drowns among "Cosmos …" tables), so that a search restricted to these
        documents (``search_passages(doc_ids=…)``) finds its passages. A plain scan of the passage
        texts, pre-filtered on a literal of each name (its longest run of digits, else the name in
        lower, title and upper case): tens of milliseconds on 50,000 passages; cached per view."""
        names = [n.strip() for n in names if n and len(n.strip()) >= 3]
        if not names:
            return []
        key = (self.scope.cache_key, "naming", tuple(names), limit)
        with self._lock:
            if key in self._scache:
                return self._scache[key]
        # the same verbatim-naming rule as identifier priority (``retrieval.identifiers``)
        checks = [(naming_needles(n), naming_pattern(n)) for n in names]
        counts: dict[str, int] = {}
        for row, text in enumerate(self.texts):
            if any(any(nd in text for nd in needles) and rx.search(text) for needles, rx in checks):
                d = self.doc_ids[row]
                if d in self.doc_rows and self._served(row) and self.chunk_ids[row] in self.row_of:
                    counts[d] = counts.get(d, 0) + 1
        out = sorted(counts, key=lambda d: -counts[d])[:limit]
        with self._lock:
            self._scache[key] = out
            while len(self._scache) > 256:
                self._scache.popitem(last=False)
        return out

    # -- search
    def _search(self, query: str, budget: EncodeBudget | None = None, collections: frozenset[str] | None = None):
        """The searcher's ``SearchResult`` for ``query`` in this view, cached per (scope, query,
        query-time encoding limit, collections). With ``budget``, the limit is the budget's grant for
        the query and what the search encoded is spent from it (nothing on a cache hit). With
        ``collections`` (already intersected with the view's scope), only their rows are ranked."""
        cfg = self.searcher.config
        limit = cfg.rerank_encode_limit if budget is None else budget.grant(query, cfg.rerank_encode_limit)
        key = (self.scope.cache_key, query, limit, tuple(sorted(collections)) if collections is not None else None)
        with self._lock:
            if key in self._scache:
                self._scache.move_to_end(key)
                return self._scache[key]
        if limit != cfg.rerank_encode_limit:
            cfg = cfg.with_(rerank_encode_limit=limit)
        mask = self._mask if collections is None else self.searcher.row_mask(collections)
        res = self.searcher.search(query, cfg, allowed=mask)
        if budget is not None:
            budget.spend(getattr(res, "rerank_encoded", 0))
        with self._lock:
            self._scache[key] = res
            while len(self._scache) > 256:
                self._scache.popitem(last=False)
        return res

    def search_passages(
        self,
        query: str,
        k: int = 10,
        doc_ids: list[str] | None = None,
        budget: EncodeBudget | None = None,
        collections: list[str] | None = None,
    ) -> list[dict]:
        """Top passages for ``query`` (the retrieval policy's ranking) with ``similarity`` = raw
        cosine. With ``doc_ids``, ranks only those documents' passages: those naming a designation of the
        query verbatim first (``_codes``: "1408", "018-18"; ``_written_names``: "KaGeM", "MSS"; a query that
        is one proper name, ``_whole_name``: "San Onofre"), then by cosine. With ``collections``
        (source collections: the institution code of a Codefest id, "CSET", "ESA"), the same ranking
        over those collections' passages only, inside this view's scope (a collection the scope
        does not allow adds nothing; none left: ``[]``). ``budget``: the caller's ``EncodeBudget``
        of query-time re-ranker encodings (None: the per-search limit alone). Raises ``ValueError``
        on an empty query."""
        if not query or not query.strip():
            raise ValueError("empty query")
        wanted = None
        if collections:
            wanted = frozenset(c for c in collections if self.scope.allows(c))
            if not wanted:
                return []
        qvec = self.query_vector(query)
        if doc_ids:
            rows = [r for d in doc_ids for r in self.doc_rows.get(d, []) if self._served(r)]
            # a designation the query names ("Cosmos 1408", "018-18") found verbatim in a passage of
            # these documents puts it first: one rare token weighs little in a sentence embedding
            codes = [re.compile(rf"(?<![\w]){re.escape(c)}(?![\w])", re.IGNORECASE) for c in _codes(query)]
            # so does a name written as no common word is ("KaGeM", "MSS"), matched as written
            codes += [re.compile(rf"(?<![\w-]){re.escape(n)}(?![\w-])") for n in _written_names(query)]
            # and a query that is one proper name ("San Onofre"): its passages, case aside
            codes += [re.compile(rf"(?<![\w-]){re.escape(n)}(?![\w-])", re.IGNORECASE) for n in _whole_name(query)]
            first = {r for r in rows if codes and any(c.search(self.texts[r]) for c in codes)}
            rows = self._encodable(query, rows, first)
            sims = self.similarity(qvec, rows)
            order = sorted(zip(rows, sims, strict=False), key=lambda t: (t[0] not in first, -t[1]))[:k]
            return [{"rank": i, **self.record(r), "score": s, "similarity": s} for i, (r, s) in enumerate(order, 1)]
        res = self._search(query, budget, wanted)
        hits = [p for p in res.passages if p["doc_id"] not in self.withdrawn][:k]
        rows = [self.row_of[p["chunk_id"]] for p in hits]
        sims = self.similarity(qvec, rows)
        return [
            {
                "rank": p["rank"],
                **self.record(r),
                "score": float(p["score"]),
                "similarity": s,
                # the score's parts: ranking + identifier priority (``Searcher.identifier_priority``)
                "score_components": p.get("score_components") or {"ranking": float(p["score"]), "identifier": 0.0},
                "identifiers": list(p.get("identifiers") or []),
            }
            for p, r, s in zip(hits, rows, sims, strict=False)
        ]

    def _encodable(self, query: str, rows: list[int], first: set[int]) -> list[int]:
        """``rows`` to score by cosine, at most ``ONTHEFLY_ROWS`` of them while the dense index is not
        built (the searcher encodes each row's vector at query time then: a long document's 300
        passages took 86–200 s on 2 cores). Those kept: the rows naming the query's designations
        (``first``), then those sharing the most of the query's words (five-letter stems, folded),
        in document order among equals. All rows when the vectors are in memory or in PostgreSQL."""
        if len(rows) <= ONTHEFLY_ROWS or not getattr(self.searcher, "encodes_at_query_time", False):
            return rows
        stems = {w[:5] for w in re.findall(r"\w{4,}", fold_question(query))}
        overlap = {r: len(stems & {w[:5] for w in re.findall(r"\w{4,}", fold_question(self.texts[r]))}) for r in rows}
        return sorted(rows, key=lambda r: (r not in first, -overlap[r]))[:ONTHEFLY_ROWS]

    def question_identifiers(self, query: str) -> list[dict]:
        """The identifiers ``query`` names exactly (``Searcher.identifiers``: ``{text, kind, key}``),
        those whose passages the search puts first; ``[]`` when the configuration turns the
        priority off or the searcher does not read identifiers."""
        cfg = self.searcher.config
        reader = getattr(self.searcher, "identifiers", None)
        if reader is None or not getattr(cfg, "identifier_weight", 0):
            return []
        return [i.as_dict() for i in reader(query)]

    def search_documents(self, query: str, k: int = 3, budget: EncodeBudget | None = None) -> list[dict]:
        """Top ``k`` documents for ``query`` (the policy's document ranking of the same search as
        ``search_passages``, shared through the cache); ``budget`` as there. Raises ``ValueError``
        on an empty query."""
        if not query or not query.strip():
            raise ValueError("empty query")
        res = self._search(query, budget)
        out = []
        for d in [d for d in res.documents if d["doc_id"] not in self.withdrawn][:k]:
            rows = self.doc_rows.get(d["doc_id"], [])
            out.append(
                {
                    "rank": d["rank"],
                    "doc_id": d["doc_id"],
                    "source_path": d["source_path"],
                    "title": self.titles[rows[0]] if rows else None,
                    "n_passages": len(rows),
                    "score": float(d["score"]),
                }
            )
        return out

    def outline(self, doc_id: str, max_entries: int = 30) -> dict | None:
        rows = self.doc_rows.get(normalize_id(doc_id))
        if not rows or not self._served(rows[0]):
            return None
        step = max(1, -(-len(rows) // max_entries))
        picked = rows[::step][:max_entries]
        return {
            "doc_id": self.doc_ids[rows[0]],
            "title": self.titles[rows[0]],
            "source_path": self.paths[rows[0]],
            "n_passages": len(rows),
            "pages": [self.page_start[rows[0]], self.page_end[rows[-1]]],
            "entries": [
                {
                    "chunk_id": self.chunk_ids[r],
                    "page": self.page_start[r],
                    "opening": " ".join(self.texts[r].split())[:140],
                }
                for r in picked
            ],
        }

    def window(self, chunk_id: str, size: int = 80) -> dict | None:
        """``size`` consecutive passages of the chunk's document centred on it (evidence panel)."""
        row = self.row_of.get(normalize_id(chunk_id))
        if row is None or not self._served(row):
            return None
        rows = self.doc_rows[self.doc_ids[row]]
        pos = rows.index(row)
        start = max(0, min(pos - size // 2, len(rows) - size))
        sel = rows[start : start + size]
        return {
            "doc_id": self.doc_ids[row],
            "title": self.titles[row],
            "source_path": self.paths[row],
            "chunk_id": self.chunk_ids[row],
            "position": pos,
            "n_passages": len(rows),
            "first_position": start,
            "passages": [{**self.record(r), "position": start + i, "is_target": r == row} for i, r in enumerate(sel)],
        }

    def publications(self, query: PublicationQuery, reader: PrecomputeReader | None = None) -> dict:
        """Publications (one per document) by date range, collection and phenomenon, newest first.

        ``query`` is a ``publications.PublicationQuery``; ``reader`` the precompute reader whose
        ``publication_dates`` date them (None, or the table not materialized: dated from the paths).
        See ``publications.list_publications`` for the result; raises ``ValueError`` on a bad range.
        """
        return list_publications(self, query, reader)

    def neighbours(self, row: int, window: int) -> list[int]:
        if window <= 0:
            return [row]
        rows = self.doc_rows[self.doc_ids[row]]
        pos = rows.index(row)
        return rows[max(0, pos - window) : pos + window + 1]
