"""Search over the materialized indexes: the engine behind ``radar search``, the evals and the API.

Loads one encoder's row-aligned passage table, FAISS index, BM25 index and phenomenon centroids
from the index directory (no raw corpus, no PostgreSQL), then:

1. candidates: top ``candidates`` rows from each enabled ranker (dense FAISS; BM25 on the
   question plus its glossary expansion);
2. every candidate gets both rankers' exact scores (dense by dot product with its stored vector,
   BM25 from the full score vector), each min–max normalised over that ranker's own top list and
   clipped to [0, 1], then fused (convex combination or RRF);
3. optional second stage: the top ``rerank_k`` fused candidates (distinct texts) re-scored by a
   second encoder (multilingual-e5-small over each passage's first words) and interpolated with
   the fused score (``fusion.rerank``); their vectors come from ``rerank/<encoder>.npz`` in the
   index (``stores.rerank_vectors``) when the ``rerank_vectors`` asset has precomputed them, else they are encoded on the
   fly and kept in this searcher's own cache;
4. phenomenon boost (× ``phenomenon_boost`` for passages of the predicted phenomenon, never a
   filter);
5. ``policy``: passages (dedupe, ≤ 3 per document, top 10) and documents (mean of best 2, top 3).

Stages: a searcher serves what the index holds (``stores.integrity.live_stages``): lexical only
(passage table + BM25, before any embedding exists: dense candidates are skipped, cosines of the
few passages shown are encoded on demand), then dense + lexical once ``faiss_index`` vouches for
a FAISS index over the same table, then the second stage with precomputed vectors.
``Searcher.live_stages`` says which are live.

Access: ``search``/``candidates`` take an optional ``RowMask`` (``Searcher.row_mask(collections)``):
the rows of the caller's collections. It restricts the candidates themselves, before any ranking:
FAISS scans only those rows (an ``IDSelectorBatch``), the BM25 score vector is zeroed outside them,
so every list above is built from allowed rows only (never a filtered top-k).

Every rule is a field of ``RetrievalConfig`` so evaluations can switch it off and measure it.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import polars as pl

from radar_pipeline.encoders import Encoder
from radar_pipeline.retrieval.fusion import rerank, rrf, top_distinct
from radar_pipeline.retrieval.glossary import expand_query, induced_terms
from radar_pipeline.retrieval.identifiers import (
    RARE_SHARE,
    Identifier,
    alert_code_rows,
    naming_rows,
    question_identifiers,
    token_plan,
)
from radar_pipeline.retrieval.phenomenon import predict_phenomenon
from radar_pipeline.retrieval.policy import Candidate, PolicyConfig, rank_documents, rank_passages
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index, tokenize
from radar_pipeline.stores.centroids import load_centroids
from radar_pipeline.stores.integrity import live_stages, verify_index
from radar_pipeline.stores.passages import load_passages
from radar_pipeline.stores.rerank_vectors import load_rerank_vectors, passage_fingerprint
from radar_pipeline.stores.sentence_vectors import load_sentence_vectors


@dataclass(frozen=True)
class RetrievalConfig:
    """A named, switchable retrieval configuration (see evals/README.md for measurements)."""

    # Defaults = "hybrid_rrf_gd_lex_rr200" in evals/README.md ("Known-item misses"): dense + BM25
    # fused by RRF with BM25 at full weight and the induced es→en lexicon added to the BM25 query, the
    # glossary on both rankers, no phenomenon boost (the boost measured -0.001 NDCG@10 on Codefest
    # dev, p > 0.5, so it is kept as a switch, off); then the top 200 re-scored by
    # multilingual-e5-small at weight 0.7 (Codefest NDCG@10 +0.068, p = 0.011 on the development
    # index; +0.076, p = 0.001 on a clean one). BM25 at full weight + lexicon replaced BM25 at half
    # weight (the default until 2026-12-07, "hybrid_rrf_gd_b05_rr200"): on 95 analyst questions with a
    # located source passage (full corpus; evals/known_item.py), the source in the top 10 for 63
    # instead of 49 (+14 −0, sign test p = 0.0001, Holm over 3 comparisons 0.0002); deepened Codefest
    # NDCG@10 0.548 vs 0.527 (p = 0.23, within noise), Judged@10 1.000 / 0.996.
    name: str = "default"
    candidates: int = 200  # per ranker; SPEC: measured saturation point of the original
    dense_weight: float = 1.0
    bm25_weight: float = 1.0
    fusion: str = "rrf"  # "convex" | "rrf"
    glossary_bm25: bool = True  # add glossary English terms to the BM25 query
    glossary_dense: bool = True  # also encode "question + English terms" for the dense query
    phenomenon_boost: float = 1.0  # × on passages of the question's phenomenon; 1.0 = off
    passage_ranking: str = "fused"  # "fused" | "dense": which score orders passages
    # Pseudo-relevance feedback from the first dense ranking (Rocchio 1971 for vectors;
    # RM3-style term selection, Abdul-Jaleel et al. 2004, for the lexical query). The dense top
    # passages are English even when the question is Spanish, so feedback "translates" the query.
    dense_prf_k: int = 0  # top dense passages averaged into the query vector; 0 = off
    dense_prf_alpha: float = 0.0  # weight of their mean vector
    bm25_prf_k: int = 0  # top dense passages whose terms are added to the BM25 query
    bm25_prf_terms: int = 0  # how many terms (by feedback frequency × idf)
    # Multi-granularity dense score (max-sim over a passage's sentences, as in late-interaction
    # retrievers, Khattab & Zaharia 2020, at sentence level): dense = (1-w)·passage + w·max
    # sentence cosine. Used only where the index holds sentence vectors (``sentence_vectors.npy``).
    sentence_weight: float = 0.0
    # Second stage: re-score the top ``rerank_k`` fused candidates with the searcher's re-ranker
    # encoder (0 = off, or when the searcher has no re-ranker); ``rerank_weight`` = its share.
    rerank_k: int = 200
    rerank_weight: float = 0.7
    glossary_rerank: bool = True  # the re-ranker's query is "question + glossary English terms"
    # At most this many of the top-k without a precomputed vector are encoded per query (the best
    # first-stage ones; ~0.3 s per 128-word passage on one core); the others take their first-stage score mapped
    # onto the re-ranker's range. 0 = never encode at query time.
    rerank_encode_limit: int = 8
    # Same-language pull (a Spanish question meets Spanish text on both rankers, English sources
    # lose; evals/README.md "Same-language pull"). ``glossary_query_weight``: the question's English
    # glossary terms (``expand_query``) searched as a query of their own — a dense run and a BM25
    # run — fused into the RRF at this weight (0 = off; structured query translation, Pirkola 1998;
    # separate-query fusion as in Rahimi et al. 2016 rather than one mixed query).
    glossary_query_weight: float = 0.0
    # Candidate balancing by language: at most this share of Spanish-language passages among the
    # first ``k_passages`` distinct passages of the final ranking (1.0 = off); surplus Spanish
    # passages move below the kept ones, order otherwise unchanged. Applied only to questions whose
    # predicted phenomenon is in ``spanish_cap_phenomena`` (empty = every question).
    spanish_cap: float = 1.0
    spanish_cap_phenomena: tuple[str, ...] = ()
    # Add the unreviewed induced es→en lexicon's translations of the question's tokens to the BM25
    # query (``glossary.induced_terms``; evals/induce_lexicon.py). On by default since it measured
    # better on known items (above); the lexicon itself is unreviewed (mutual nearest neighbours).
    induced_lexicon: bool = True
    # Identifier priority (issue 26 §4; ``retrieval.identifiers``): a passage naming an identifier
    # the question names exactly (an alert code, a designation, a programme or treaty) gets
    # ``identifier_weight`` × (share of the question's identifiers it names) added to its score,
    # reported apart as its ``identifier`` component. 2.0 is the width of the default's score range
    # ([0, 2] after the second stage; RRF scores are far smaller), so a passage naming every
    # identifier of the question ranks above every passage naming none: priority, not a nudge.
    # Passages naming one outside the candidate pool join it (at most ``identifier_new``, by cosine),
    # below the pool before the component. 0 = off. Measured in evals/README.md ("Identifiers").
    identifier_weight: float = 2.0
    identifier_new: int = 50
    policy: PolicyConfig = field(default_factory=PolicyConfig)

    def with_(self, **changes) -> RetrievalConfig:
        return replace(self, **changes)


def retrieval_fingerprint_config(config: RetrievalConfig | None = None) -> dict:
    """The retrieval configuration as the index fingerprint and the traces record it: every field
    of ``config`` (default ``RetrievalConfig()``) plus the configured re-ranker's kind and model
    (``RerankerSpec``, from the environment)."""
    from radar_pipeline.config import RerankerSpec

    spec = RerankerSpec()
    return {**asdict(config or RetrievalConfig()), "reranker": {"kind": spec.kind, "model": spec.model}}


@dataclass
class SearchResult:
    """The ``radar search`` contract: top documents and top passages, ranks 1-based."""

    query: str
    documents: list[dict] = field(default_factory=list)
    passages: list[dict] = field(default_factory=list)
    phenomenon: str | None = None
    # identifiers the question names exactly (``retrieval.identifiers``: text, kind, key)
    identifiers: list[dict] = field(default_factory=list)
    latency_ms: float = 0.0
    # re-ranker passage vectors this search encoded at query time (``Searcher.rerank_vectors``)
    rerank_encoded: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


# Re-ranker vectors encoded at query time by the search running in this context (``Searcher.search``
# sets a counter, ``Searcher.rerank_vectors`` adds to it): a per-search count without a lock.
_ENCODED: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("radar_rerank_encoded", default=None)


class QueryVectors:
    """An LRU of query vectors per encoder and text (thread-safe), so one query text is encoded once
    per process whichever step asks for it: the dense query and its glossary variant, the English
    glossary run, the cosines the tools report and the re-ranker's query. ``size`` texts per encoder
    (default 2,048; a USE vector is 2 KiB, an e5 one 1.5 KiB)."""

    def __init__(self, size: int = 2048):
        self.size = size
        self._lock = threading.Lock()
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def get(self, encoder: Encoder, texts: Sequence[str], lock: threading.Lock | None = None) -> np.ndarray:
        """The unit query vectors of ``texts`` by ``encoder`` (float32, ``(len(texts), dim)``): cached
        ones from the LRU, the others encoded now, one ``encode_queries`` call per text (under
        ``lock`` when given: a native encoder whose calls must be serialised)."""
        name = getattr(encoder, "name", str(id(encoder)))
        out: list[np.ndarray | None] = []
        with self._lock:
            for t in texts:
                v = self._data.get((name, t))
                if v is not None:
                    self._data.move_to_end((name, t))
                out.append(v)
        todo = list(dict.fromkeys(t for t, v in zip(texts, out, strict=True) if v is None))
        if todo:
            # one text per call: a batch pads, and USE's vectors then differ in the 7th decimal,
            # enough to reorder exact ties; per-text vectors are bit-identical to uncached ones
            with lock if lock is not None else contextlib.nullcontext():
                vecs = [encoder.encode_queries([t])[0] for t in todo]
            new = {t: np.asarray(v, dtype=np.float32) for t, v in zip(todo, vecs, strict=True)}
            with self._lock:
                for t, v in new.items():
                    self._data[(name, t)] = v
                while len(self._data) > self.size:
                    self._data.popitem(last=False)
            out = [v if v is not None else new[t] for t, v in zip(texts, out, strict=True)]
        dim = getattr(encoder, "dim", 0)
        return np.vstack(out) if out else np.zeros((0, dim), dtype=np.float32)


@dataclass(frozen=True)
class RowMask:
    """The passage-table rows a caller may read: ``mask`` (bool, (n,)), ``rows`` (their int64 ids)
    and ``params`` (FAISS search parameters selecting those ids)."""

    mask: np.ndarray
    rows: np.ndarray
    params: object

    @property
    def size(self) -> int:
        return int(self.rows.size)


class Searcher:
    """Query-time view of one encoder's indexes. The indexes are read-only after construction;
    the only mutable state is the cache of re-ranker vectors encoded at query time (guarded by a
    lock, bounded by ``rerank_cache_size``). A re-materialized index is seen by a new Searcher.

    Construction raises ``FileNotFoundError`` when the index was never built and ``ValueError``
    when the passage table is damaged, or both FAISS and BM25 are (``stores.integrity.verify_index``,
    read errors, row mismatch); a damaged FAISS or BM25 index alone is skipped and named in ``problems``. An index
    whose manifest vouches only for the lexical stage loads without FAISS (``faiss`` and
    ``vectors`` None, lexical-only search)."""

    def __init__(
        self,
        index_dir: Path,
        encoder: Encoder,
        config: RetrievalConfig | None = None,
        reranker: Encoder | None = None,
        rerank_cache_size: int = 50_000,
    ):
        self.index_dir = index_dir
        self.encoder = encoder
        self.config = config or RetrievalConfig()
        self.reranker = reranker
        # A FAISS index or passage table that its manifest does not vouch for (truncated, damaged,
        # from another build) is never read: answering from it could cite the wrong passage. A broken
        # passage table refuses the index; a broken FAISS index leaves lexical-only search, a broken
        # BM25 index dense-only search, each named in ``self.problems``.
        self.problems: dict[str, str] = verify_index(index_dir)
        # a damaged FAISS index alone is left out (lexical-only search over the vouched passage table)
        broken = {k: v for k, v in self.problems.items() if k == "passages"}
        if broken:
            raise ValueError("índice dañado: " + "; ".join(f"{k}: {v}" for k, v in broken.items()))
        on_disk = live_stages(index_dir)
        if not on_disk["dense"] and not on_disk["lexical"]:
            faiss_store.load_index(index_dir)  # raises FileNotFoundError/ValueError naming what is missing
        self.passages: pl.DataFrame = load_passages(index_dir)
        self.faiss = None
        self.vectors: np.ndarray | None = None
        if on_disk["dense"]:
            self.faiss = faiss_store.load_index(index_dir)
            if self.faiss.ntotal != self.passages.height:
                raise ValueError(f"index/passage table mismatch: {self.faiss.ntotal} vs {self.passages.height} rows")
            self.vectors = self.faiss.reconstruct_n(0, self.faiss.ntotal)
        self.bm25: Bm25Index | None = None
        if "bm25" not in self.problems:
            try:
                self.bm25 = Bm25Index.load(index_dir)
            except FileNotFoundError:
                pass
            except ValueError as exc:
                self.problems["bm25"] = str(exc)
        if self.bm25 is not None and self.bm25.size != self.passages.height:
            self.problems["bm25"] = f"BM25 index has {self.bm25.size} rows, passage table {self.passages.height}"
            self.bm25 = None
        if self.faiss is None and self.bm25 is None:
            raise ValueError("índice sin etapa utilizable: " + "; ".join(f"{k}: {v}" for k, v in self.problems.items()))
        self.centroids = load_centroids(index_dir)
        self.sentence_vectors, self.sentence_owner = load_sentence_vectors(index_dir)
        # document frequency per vocabulary id (bm25s keeps a CSC matrix: one column per term)
        self._df = np.diff(self.bm25.retriever.scores["indptr"]) if self.bm25 is not None else None
        p = self.passages
        self._chunk_ids = p["chunk_id"].to_list()
        self._doc_ids = p["doc_id"].to_list()
        self._paths = p["source_path"].to_list()
        self._texts = p["text"].to_list()
        self._pages = p["page_start"].to_list()
        self._titles = p["title"].to_list()
        self._phen = np.array([x or "" for x in p["phenomenon"].to_list()])
        self._langs = np.array([x or "" for x in p["language"].to_list()])
        self._collections = np.array([x or "" for x in p["collection"].to_list()], dtype=object)
        self._masks: dict[frozenset, RowMask] = {}
        self._ident_lock = threading.Lock()
        self._ident_cache: OrderedDict[tuple, object] = OrderedDict()
        self._rerank_lock = threading.Lock()
        self._rerank_cache: dict[int, np.ndarray] = {}
        self._rerank_cache_size = rerank_cache_size
        self._rerank_pre, self._rerank_have = (None, None)
        if reranker is not None:
            self._rerank_pre, self._rerank_have = load_rerank_vectors(
                index_dir, reranker.name, passage_fingerprint(self._texts), reranker.dim
            )

    def provenance(self) -> dict:
        """What a trace must record to say which index answered (``radar replay``): ``index_version``
        (the manifest's, ``stores.integrity.index_version_of``), ``encoder`` and ``encoder_version``,
        ``reranker`` and ``reranker_version`` (None when off), ``retrieval`` (this searcher's
        configuration, ``asdict``) and ``passages`` (rows)."""
        from radar_pipeline.stores.integrity import index_version_of

        rr = self.reranker
        return {
            "index_version": index_version_of(self.index_dir),
            "encoder": self.encoder.name,
            "encoder_version": getattr(self.encoder, "version", None),
            "reranker": rr.name if rr is not None else None,
            "reranker_version": getattr(rr, "version", None) if rr is not None else None,
            "retrieval": asdict(self.config),
            "passages": self.passages.height,
        }

    @property
    def query_vectors(self) -> QueryVectors:
        """This searcher's cache of query vectors (``QueryVectors``), made on first use (so a subclass
        that does not call ``Searcher.__init__``, like ``PgSearcher``, has one too)."""
        qv = self.__dict__.get("_query_vectors")
        if qv is None:
            qv = self.__dict__.setdefault("_query_vectors", QueryVectors())
        return qv

    def encode_query(self, text: str) -> np.ndarray:
        """The first-stage encoder's unit vector of the query ``text`` (float32, ``(dim,)``), cached."""
        return self.query_vectors.get(self.encoder, [text])[0]

    @property
    def has_dense(self) -> bool:
        """Whether dense candidates exist: here a loaded FAISS index; ``PgSearcher``: HNSW in PostgreSQL."""
        return self.faiss is not None

    @property
    def has_lexical(self) -> bool:
        """Whether lexical candidates exist: here a loaded bm25s index; ``PgSearcher``: the BM25 tables."""
        return self.bm25 is not None

    @property
    def live_stages(self) -> dict[str, bool]:
        """The search stages this searcher serves: ``lexical`` (BM25), ``dense`` (FAISS or HNSW),
        ``rerank`` (second stage with precomputed vectors for at least some passages)."""
        return {
            "lexical": self.has_lexical,
            "dense": self.has_dense,
            "rerank": self.reranker is not None and self.rerank_coverage > 0,
        }

    def passage_vectors(self, rows: list[int]) -> np.ndarray:
        """Dense vectors (float32, (len(rows), dim)) of passage rows: from the FAISS index, or
        encoded now when only the lexical stage is live (a handful of passages per answer)."""
        if self.vectors is not None:
            return self.vectors[np.asarray(rows, dtype=np.int64)]
        if not rows:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        with self._rerank_lock:  # one native encoder per searcher: serialise its calls
            return np.asarray(self.encoder.encode_passages([self._texts[r] for r in rows]), dtype=np.float32)

    def row_mask(self, collections: frozenset[str]) -> RowMask:
        """The ``RowMask`` of the rows whose collection is in ``collections`` (cached per set;
        rows without a collection are in no set)."""
        key = frozenset(collections)
        got = self._masks.get(key)
        if got is None:
            mask = np.isin(self._collections, list(key)) & (self._collections != "")
            rows = np.flatnonzero(mask).astype(np.int64)
            got = RowMask(mask, rows, faiss_store.selector(rows))
            if len(self._masks) > 256:
                self._masks.clear()
            self._masks[key] = got
        return got

    # ------------------------------------------------------------------ second stage
    @property
    def rerank_coverage(self) -> float:
        """Share (0–1) of passages with a precomputed re-ranker vector; 0.0 without any."""
        return float(self._rerank_have.mean()) if self._rerank_have is not None and self._rerank_have.size else 0.0

    @property
    def encoded_at_query_time(self) -> int:
        """How many re-ranker passage vectors this searcher has encoded at query time (cached)."""
        return len(self._rerank_cache)

    def rerank_vectors(self, rows: list[int], encode_limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Re-ranker passage vectors for ``rows`` (passage-table row numbers): ``(vectors
        (len(rows), dim) float32, found (len(rows),) bool)``. Precomputed ones come from the index,
        then this searcher's cache; up to ``encode_limit`` (None = all) of the rest, first ones
        first, are encoded now (one batch, ~0.1–0.6 s per passage on one core) and cached; rows
        left without a vector have ``found`` False and a zero vector. Raises ``AssertionError``
        without a re-ranker and ``IndexError`` for a row outside the passage table."""
        assert self.reranker is not None
        found = np.ones(len(rows), dtype=bool)
        out, pre = self.precomputed_rerank_vectors(rows)
        missing = []
        for i in np.flatnonzero(~pre):
            v = self._rerank_cache.get(rows[i])  # .get: another thread may clear the cache
            if v is not None:
                out[i] = v
            else:
                missing.append(int(i))
        if encode_limit is not None and len(missing) > encode_limit:
            found[missing[encode_limit:]] = False
            missing = missing[:encode_limit]
        if missing:
            with self._rerank_lock:  # one native encoder per searcher: serialise its calls
                vecs = self.reranker.encode_passages([self._texts[rows[i]] for i in missing])
                if len(self._rerank_cache) + len(missing) > self._rerank_cache_size:
                    self._rerank_cache.clear()
                for i, v in zip(missing, vecs, strict=False):
                    out[i] = v
                    self._rerank_cache[rows[i]] = v
            counter = _ENCODED.get()
            if counter is not None:
                counter[0] += len(missing)
        return out, found

    def precomputed_rerank_vectors(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The stored re-ranker vectors of ``rows``: ``(vectors (len(rows), dim) float32, have
        (len(rows),) bool)``, zero where none is stored. Here: the row-aligned export of the index
        directory (``rerank/<encoder>.npz``); the PostgreSQL searcher reads the ``embeddings`` table."""
        out = np.zeros((len(rows), self.reranker.dim), dtype=np.float32)
        idx = np.asarray(rows, dtype=np.int64)
        pre = self._rerank_have[idx] if self._rerank_have is not None else np.zeros(len(rows), dtype=bool)
        if pre.any():
            out[pre] = self._rerank_pre[idx[pre]]
        return out, pre

    def second_stage(self, question: str, fused: dict[int, float], cfg: RetrievalConfig) -> dict[int, float]:
        """``fused`` (row → first-stage score) with its top ``cfg.rerank_k`` distinct texts
        re-scored by ``fusion.rerank``: re-scored rows land in [1, 2], every other row in [0, 1);
        a row whose text repeats a re-scored one gets the same score (so duplicate copies rank
        together). Rows without a vector (past ``cfg.rerank_encode_limit``) get an imputed
        re-ranker score: their first-stage score mapped linearly onto the range of the scored
        ones. Calls into the native encoder are serialised by a lock."""
        if not cfg.rerank_k or self.reranker is None or not fused:
            return fused
        top = top_distinct(fused, self._texts.__getitem__, cfg.rerank_k)
        extra = expand_query(question) if cfg.glossary_rerank else ""
        qv = self.query_vectors.get(self.reranker, [f"{question} {extra}" if extra else question], self._rerank_lock)[0]
        vecs, found = self.rerank_vectors(top, cfg.rerank_encode_limit)
        sims = vecs @ qv
        if not found.all():
            # rows without a vector: the re-ranker's score is imputed from the first stage, mapped
            # linearly from the first-stage range of the scored rows onto their re-ranker range
            f = np.array([fused[r] for r in top])
            if found.any():
                fk, sk = f[found], sims[found]
                span_f = float(fk.max() - fk.min()) or 1.0
                sims = np.where(found, sims, sk.min() + (f - fk.min()) / span_f * float(sk.max() - sk.min()))
            else:
                sims = f
        out = rerank(fused, {r: float(s) for r, s in zip(top, sims, strict=False)}, cfg.rerank_weight)
        by_text = {self._texts[r]: out[r] for r in top}
        return {r: by_text.get(self._texts[r], s) for r, s in out.items()}

    # ------------------------------------------------------------------ rankers
    def query_vector(self, question: str, cfg: RetrievalConfig) -> np.ndarray:
        extra = expand_query(question) if cfg.glossary_dense else ""
        texts = [question, f"{question} {extra}"] if extra else [question]
        vecs = self.query_vectors.get(self.encoder, texts)  # each text encoded once per process
        q = vecs[0]
        if extra:
            q = q + vecs[1]
            q = q / (np.linalg.norm(q) or 1.0)
        return q.astype(np.float32)

    def dense_run(
        self, qvec: np.ndarray, k: int, sentence_weight: float = 0.0, allowed: RowMask | None = None
    ) -> dict[int, float]:
        """Top ``k`` rows by dense score (only rows of ``allowed`` when given)."""
        if (allowed is not None and allowed.size == 0) or self.faiss is None:
            return {}
        if sentence_weight > 0 and self.sentence_vectors is not None:
            full = self.vectors @ qvec
            best = np.full(full.shape[0], -1.0, dtype=np.float32)
            np.maximum.at(best, self.sentence_owner, self.sentence_vectors @ qvec)
            best = np.where(best < -0.5, full, best)  # passages without sentence vectors
            combined = (1 - sentence_weight) * full + sentence_weight * best
            if allowed is not None:
                top = self._top(np.where(allowed.mask, combined, -np.inf), min(k, allowed.size), positive_only=False)
                return {r: s for r, s in top.items() if allowed.mask[r]}
            return self._top(combined, k, positive_only=False)
        if allowed is not None:
            scores, rows = faiss_store.search(self.faiss, qvec[None, :], k, allowed.params, allowed.size)
        else:
            scores, rows = faiss_store.search(self.faiss, qvec[None, :], k)
        return {int(r): float(s) for s, r in zip(scores[0], rows[0], strict=False) if r >= 0}

    def prf_terms(self, rows: list[int], n_terms: int) -> list[str]:
        """Top ``n_terms`` tokens of the feedback passages by (passages containing it) × idf."""
        if self.bm25 is None or not rows or n_terms <= 0:
            return []
        df_feedback: dict[str, int] = {}
        for r in rows:
            for t in set(tokenize(self._texts[r])):
                if t in self.bm25.vocab and not t.isdigit():
                    df_feedback[t] = df_feedback.get(t, 0) + 1
        n = self.passages.height
        weight = {t: c * np.log(1 + n / (1 + self._df[self.bm25.vocab[t]])) for t, c in df_feedback.items()}
        return sorted(weight, key=lambda t: -weight[t])[:n_terms]

    def exact_dense(
        self,
        qvec: np.ndarray,
        rows: set[int],
        sentence_weight: float,
        known: dict[int, float],
        allowed: RowMask | None = None,
    ) -> dict[int, float]:
        """Dense scores of ``rows`` on the same scale as ``dense_run`` (reusing ``known`` ones)."""
        missing = np.fromiter((r for r in rows if r not in known), dtype=np.int64)
        out = {r: known[r] for r in rows if r in known}
        if missing.size == 0:
            return out
        if sentence_weight > 0 and self.sentence_vectors is not None:
            # full-corpus pass is cheap at the sizes where sentence vectors exist
            combined = self.dense_run(qvec, self.passages.height, sentence_weight, allowed)
            out.update({int(r): combined[int(r)] for r in missing})
        else:
            sims = self.cosine(qvec, missing.tolist())
            out.update({int(r): float(s) for r, s in zip(missing, sims, strict=False)})
        return out

    def bm25_scores(
        self, question: str, cfg: RetrievalConfig, extra_terms: list[str] | None = None
    ) -> np.ndarray | None:
        if self.bm25 is None:
            return None
        text = f"{question} {expand_query(question)}" if cfg.glossary_bm25 else question
        toks = [t for t in tokenize(text) if t in self.bm25.vocab] + list(extra_terms or [])
        if cfg.induced_lexicon:
            toks += [t for t in induced_terms(tokenize(question)) if t in self.bm25.vocab and t not in toks]
        if not toks:
            return np.zeros(self.passages.height, dtype=np.float32)
        return np.asarray(self.bm25.retriever.get_scores(toks), dtype=np.float32)

    def lexical_run(
        self, question: str, cfg: RetrievalConfig, extra_terms: list[str], allowed: RowMask | None = None
    ) -> tuple[dict[int, float], Callable[[set[int]], dict[int, float]]] | None:
        """The lexical ranker: ``(top cfg.candidates rows → BM25 score (positive only), exact
        BM25 scores of any row set)``, only rows of ``allowed`` when given; ``None`` without a
        lexical index. Here bm25s over the on-disk index; ``PgSearcher`` asks PostgreSQL."""
        bm25_all = self.bm25_scores(question, cfg, extra_terms)
        if bm25_all is None:
            return None
        if allowed is not None:
            bm25_all = np.where(allowed.mask, bm25_all, 0.0).astype(np.float32)  # positives only: masked out
        return self._top(bm25_all, cfg.candidates), lambda rows: {r: float(bm25_all[r]) for r in rows}

    def cosine(self, qvec: np.ndarray, rows: list[int]) -> np.ndarray:
        """Raw cosine (unit vectors) of ``qvec`` with each row's dense vector, float32 ``(len(rows),)``."""
        if not rows:
            return np.zeros(0, dtype=np.float32)
        return self.dense_vectors(rows) @ qvec

    @property
    def encodes_at_query_time(self) -> bool:
        """True while only the lexical stage is live: ``dense_vectors`` encodes each row it is asked
        for now (``passage_vectors``), so a caller scoring many rows should score fewer."""
        return self.vectors is None

    def dense_vectors(self, rows: list[int]) -> np.ndarray:
        """The dense (first-stage) vectors of ``rows``, float32 ``(len(rows), dim)``: here from the
        FAISS index in memory (encoded now while only the lexical stage is live,
        ``passage_vectors``); ``PgSearcher`` reads them from PostgreSQL."""
        return self.passage_vectors(rows)

    @staticmethod
    def _top(scores: np.ndarray, k: int, positive_only: bool = True) -> dict[int, float]:
        k = min(k, scores.shape[0])
        idx = np.argpartition(-scores, k - 1)[:k]
        # best first, equal scores by row: a deterministic order, the one PostgreSQL's ORDER BY gives
        idx = sorted(idx.tolist(), key=lambda i: (-scores[i], i))
        return {int(i): float(scores[i]) for i in idx if scores[i] > 0 or not positive_only}

    # ------------------------------------------------------------------ search
    def candidates(
        self, question: str, cfg: RetrievalConfig | None = None, allowed: RowMask | None = None
    ) -> tuple[list[Candidate], list[Candidate], str | None]:
        """``(fused candidates, dense-ordered candidates, predicted phenomenon)``; scores include the
        boost. With ``allowed``, every candidate is an allowed row (module docstring)."""
        cfg = cfg or self.config
        qvec = self.query_vector(question, cfg)
        runs, weights = [], []
        dense = self.dense_run(qvec, cfg.candidates, cfg.sentence_weight, allowed)
        feedback = sorted(dense, key=lambda r: -dense[r])
        if cfg.dense_prf_k and cfg.dense_prf_alpha:
            qvec = qvec + cfg.dense_prf_alpha * self.dense_vectors(feedback[: cfg.dense_prf_k]).mean(axis=0)
            qvec = (qvec / (np.linalg.norm(qvec) or 1.0)).astype(np.float32)
            dense = self.dense_run(qvec, cfg.candidates, cfg.sentence_weight, allowed)
        extra = self.prf_terms(feedback[: cfg.bm25_prf_k], cfg.bm25_prf_terms) if cfg.bm25_prf_k else []
        lexical = self.lexical_run(question, cfg, extra, allowed) if cfg.bm25_weight > 0 else None
        bm25 = lexical[0] if lexical is not None else {}
        union = set(dense) | set(bm25)
        if cfg.dense_weight > 0 and self.has_dense:
            # exact dense scores for BM25-only candidates, normalised on the dense list's range
            lo, hi = (min(dense.values()), max(dense.values())) if dense else (0.0, 1.0)
            if cfg.fusion == "convex":
                full = self.exact_dense(qvec, union, cfg.sentence_weight, dense, allowed)
                runs.append(_clip_norm(full, lo, hi))
            else:
                runs.append(dense)
            weights.append(cfg.dense_weight)
        if cfg.bm25_weight > 0 and lexical is not None:
            lo, hi = (min(bm25.values()), max(bm25.values())) if bm25 else (0.0, 1.0)
            runs.append(_clip_norm(lexical[1](union), lo, hi) if cfg.fusion == "convex" else bm25)
            weights.append(cfg.bm25_weight)
        if cfg.glossary_query_weight > 0 and cfg.fusion == "rrf":
            for run in self.english_runs(question, cfg, allowed):
                runs.append(run)
                weights.append(cfg.glossary_query_weight)
        fused = (
            rrf(runs, weights=weights)
            if cfg.fusion == "rrf"
            else {r: sum(w * run.get(r, 0.0) for run, w in zip(runs, weights, strict=False)) for r in union}
        )
        fused = self.second_stage(question, fused, cfg)
        ident: dict[int, tuple[float, tuple[str, ...]]] = {}
        if cfg.identifier_weight > 0:
            fused, ident = self.identifier_priority(question, qvec, fused, cfg, allowed)
        needs_phen = cfg.phenomenon_boost != 1.0 or (cfg.spanish_cap < 1.0 and cfg.spanish_cap_phenomena)
        phen = predict_phenomenon(question, qvec, self.centroids) if needs_phen else None
        if cfg.spanish_cap < 1.0 and (not cfg.spanish_cap_phenomena or phen in cfg.spanish_cap_phenomena):
            fused = self.cap_spanish(fused, cfg.spanish_cap, cfg.policy.k_passages)
        if cfg.phenomenon_boost == 1.0:
            phen = None  # the boost is off: report no phenomenon, as before

        def boost(r: int) -> float:
            return cfg.phenomenon_boost if phen and self._phen[r] == phen else 1.0

        fused_c = [
            self._candidate(r, s * boost(r), *ident[r]) if r in ident else self._candidate(r, s * boost(r))
            for r, s in fused.items()
        ]
        dense_c = [self._candidate(r, s * boost(r)) for r, s in dense.items()]
        return fused_c, dense_c, phen

    def english_runs(
        self, question: str, cfg: RetrievalConfig, allowed: RowMask | None = None
    ) -> list[dict[int, float]]:
        """The question's English glossary terms searched on their own: ``[dense run, BM25 run]``
        (top ``cfg.candidates`` each; a ranker that is off or finds nothing is left out); ``[]``
        when the glossary matches nothing in the question."""
        english = expand_query(question)
        if not english:
            return []
        out = []
        if cfg.dense_weight > 0:
            qv = self.encode_query(english)
            out.append(self.dense_run(qv, cfg.candidates, 0.0, allowed))
        if cfg.bm25_weight > 0 and self.bm25 is not None:
            toks = [t for t in tokenize(english) if t in self.bm25.vocab]
            if toks:
                scores = np.asarray(self.bm25.retriever.get_scores(toks), dtype=np.float32)
                if allowed is not None:
                    scores = np.where(allowed.mask, scores, 0.0).astype(np.float32)
                out.append(self._top(scores, cfg.candidates))
        return [r for r in out if r]

    def cap_spanish(self, fused: dict[int, float], share: float, k: int) -> dict[int, float]:
        """``fused`` re-ordered so that at most ``floor(share · k)`` Spanish-language passages
        (distinct texts) stand among the first ``k`` distinct texts; the surplus Spanish rows move
        right below them, every other order unchanged. Scores are replaced by rank-preserving ones
        in (0, 2] (the policy and document ranking read only the order and relative scores)."""
        allowed_es = int(share * k)
        order = sorted(fused, key=lambda r: -fused[r])
        kept, surplus, seen, n_es, n_texts = [], [], {}, 0, 0
        for r in order:
            t = self._texts[r]
            if t in seen:  # a copy follows its text
                (kept if seen[t] else surplus).append(r)
                continue
            spanish = self._langs[r] == "es"
            ok = n_texts >= k or not spanish or n_es < allowed_es
            if n_texts < k and ok:
                n_texts += 1
                n_es += int(spanish)
            seen[t] = ok
            (kept if ok else surplus).append(r)
        # kept rows until k texts are filled, then the surplus, then the rest in their order
        head, tail, texts = [], [], set()
        for r in kept:
            if len(texts) < k or self._texts[r] in texts:
                head.append(r)
                texts.add(self._texts[r])
            else:
                tail.append(r)
        new_order = head + surplus + tail
        n = len(new_order)
        return {r: 2.0 * (n - i) / n for i, r in enumerate(new_order)}

    def _candidate(self, row: int, score: float, identifier: float = 0.0, named: tuple[str, ...] = ()) -> Candidate:
        return Candidate(
            row,
            self._chunk_ids[row],
            self._doc_ids[row],
            self._paths[row],
            self._texts[row],
            float(score),
            float(identifier),
            named,
        )

    # ------------------------------------------------------------------ identifiers
    def is_rare(self, word: str) -> bool:
        """Whether every BM25 token of ``word`` is in at most ``RARE_SHARE`` of the passages, or in
        one (a stop word, or a word with no token, is not rare; without a BM25 index nothing is)."""
        if self._df is None or self.bm25 is None:
            return False
        toks = tokenize(word)
        limit = max(1.0, RARE_SHARE * len(self._texts))  # in one passage is rare in any index
        return bool(toks) and all(
            (self.bm25.vocab.get(t) is None or self._df[self.bm25.vocab[t]] <= limit) for t in toks
        )

    def identifiers(self, question: str) -> list[Identifier]:
        """The identifiers ``question`` names (``retrieval.identifiers.question_identifiers``, names
        judged rare on this index's BM25 document frequencies); cached per question."""
        key = ("q", question)
        with self._ident_lock:
            if key in self._ident_cache:
                return self._ident_cache[key]  # type: ignore[return-value]
        out = question_identifiers(question, rare=self.is_rare if self._df is not None else None)
        self._cache_ident(key, out)
        return out

    def _cache_ident(self, key: tuple, value: object) -> None:
        with self._ident_lock:
            self._ident_cache[key] = value
            while len(self._ident_cache) > 512:
                self._ident_cache.popitem(last=False)

    def rows_naming(self, idents: Sequence[Identifier]) -> dict[int, list[str]]:
        """Row → keys of ``idents`` its passage names, over the whole passage table (a
        pre-filtered scan, ``identifiers.naming_rows``), cached per identifier set."""
        key = ("rows", tuple(i.key for i in idents))
        with self._ident_lock:
            if key in self._ident_cache:
                return self._ident_cache[key]  # type: ignore[return-value]
        out = naming_rows(idents, self._texts, self._paths, rows=self._identifier_candidates(idents))
        self._cache_ident(key, out)
        return out

    def _identifier_candidates(self, idents: Sequence[Identifier]) -> list[int] | None:
        """The rows that may name one of ``idents``, from the BM25 postings of each identifier's
        ``token_plan`` (and, for alert codes, the rows of files named with the code); ``None``
        (scan every row) without a BM25 index or for an identifier without a plan. A superset of
        the naming rows, so the exact test decides (tens of rows instead of the whole table)."""
        if self.bm25 is None:
            return None
        sc = self.bm25.retriever.scores
        indices, indptr = sc["indices"], sc["indptr"]

        def posting(tok: str) -> set[int]:
            t = self.bm25.vocab.get(tok)
            return set() if t is None else set(indices[indptr[t] : indptr[t + 1]].tolist())

        rows: set[int] = set()
        for ident in idents:
            plan = token_plan(ident)
            if plan is None:
                return None
            for toks in plan:
                got = posting(toks[0])
                for t in toks[1:]:
                    got &= posting(t)
                rows |= got
            if ident.kind == "alert_code":
                if getattr(self, "_alert_paths", None) is None:
                    self._alert_paths = alert_code_rows(self._paths)
                rows |= set(self._alert_paths.get(ident.key.split(":", 1)[1], []))
        return sorted(rows)

    def identifier_priority(
        self,
        question: str,
        qvec: np.ndarray,
        fused: dict[int, float],
        cfg: RetrievalConfig,
        allowed: RowMask | None = None,
    ) -> tuple[dict[int, float], dict[int, tuple[float, tuple[str, ...]]]]:
        """``(scores, components)``: ``fused`` with the identifier component added (the
        ``identifier_weight`` rule of ``RetrievalConfig``), and row → ``(component, keys of the
        identifiers it names)`` for every row that got one. Rows naming an identifier outside
        ``fused`` join it (the ``identifier_new`` best by dense cosine, only rows of ``allowed``)
        with a base score just below the pool's lowest, in cosine order. ``fused`` unchanged and
        ``{}`` when the question names no identifier or no passage names one."""
        idents = self.identifiers(question)
        if not idents:
            return fused, {}
        named = self.rows_naming(idents)
        if allowed is not None:
            named = {r: k for r, k in named.items() if allowed.mask[r]}
        if not named:
            return fused, {}
        out = dict(fused)
        new = [r for r in named if r not in fused]
        if new and cfg.identifier_new > 0:
            cos = self.cosine(qvec, new) if self.has_dense else np.zeros(len(new))
            order = sorted(zip(new, (float(c) for c in cos), strict=False), key=lambda t: (-t[1], t[0]))
            floor = min(fused.values()) if fused else 0.0
            for r, c in order[: cfg.identifier_new]:
                out[r] = floor - 1e-3 * (1.0 - c)  # below the pool, in cosine order
        comp: dict[int, tuple[float, tuple[str, ...]]] = {}
        for r, keys in named.items():
            if r in out:
                value = cfg.identifier_weight * len(keys) / len(idents)
                out[r] += value
                comp[r] = (value, tuple(keys))
        return out, comp

    def search(self, question: str, cfg: RetrievalConfig | None = None, allowed: RowMask | None = None) -> SearchResult:
        """Top documents and passages for one question, from the rows of ``allowed`` only when
        given. Raises ``ValueError`` on an empty question."""
        if not question or not question.strip():
            raise ValueError("empty question")
        cfg = cfg or self.config
        t0 = time.perf_counter()
        counter = [0]
        token = _ENCODED.set(counter)
        try:
            found = self.candidates(question, cfg, allowed)
        finally:
            _ENCODED.reset(token)
        res = self.apply_policy(question, *found, cfg, started=t0)
        res.rerank_encoded = counter[0]
        return res

    def apply_policy(
        self,
        question: str,
        fused: list[Candidate],
        dense: list[Candidate],
        phen: str | None,
        cfg: RetrievalConfig,
        started: float | None = None,
    ) -> SearchResult:
        """The ``SearchResult`` of ``candidates()``' output under ``cfg.policy`` (so a caller that
        also needs the candidate pool, like the evaluation, computes it once). ``started`` is the
        ``time.perf_counter()`` the latency is measured from (default: now)."""
        t0 = time.perf_counter() if started is None else started
        passages = rank_passages(dense if cfg.passage_ranking == "dense" else fused, cfg.policy)
        docs = rank_documents(fused, cfg.policy)
        res = SearchResult(query=question, phenomenon=phen)
        if cfg.identifier_weight > 0:
            res.identifiers = [i.as_dict() for i in self.identifiers(question)]
        res.documents = [
            {"rank": i, "doc_id": d.doc_id, "source_path": d.source_path, "score": round(d.score, 6)}
            for i, d in enumerate(docs, 1)
        ]
        res.passages = [
            {
                "rank": i,
                "chunk_id": c.chunk_id,
                "doc_id": c.doc_id,
                "source_path": c.source_path,
                "page": self._pages[c.row],
                "title": self._titles[c.row],
                "text": c.text,
                "score": round(c.score, 6),
                # the score is their sum: ranking (fusion / second stage) + identifier priority
                "score_components": {
                    "ranking": round(c.score - c.identifier, 6),
                    "identifier": round(c.identifier, 6),
                },
                "identifiers": list(c.identifiers),
            }
            for i, c in enumerate(passages, 1)
        ]
        res.latency_ms = round((time.perf_counter() - t0) * 1000, 2)
        return res


def _clip_norm(scores: dict[int, float], lo: float, hi: float) -> dict[int, float]:
    span = hi - lo
    if span <= 1e-12:
        return {r: 1.0 if s >= hi else 0.0 for r, s in scores.items()}
    return {r: min(1.0, max(0.0, (s - lo) / span)) for r, s in scores.items()}
