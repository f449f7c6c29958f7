"""The searcher of the pgvector backend: the same retrieval policy, answered from PostgreSQL alone.

``PgSearcher`` is a ``Searcher`` whose rankers and vectors come from PostgreSQL instead of the
index directory, so any number of service processes, on any machine, read one shared index:

* passage table: ``stores.pg_store.load_pg_passages`` (the rows the FAISS index is built from);
* dense candidates: the encoder's HNSW index (``stores.pg_store.search_pgvector``, cosine,
  ``hnsw.ef_search`` = ``ef_search``), collections enforced inside the query;
* lexical candidates: the BM25 tables (``stores.pg_lexical``, the bm25s weights exported by the
  ``pg_bm25_index`` asset), collections enforced inside the query;
* vectors for raw cosine, exact dense scores (convex fusion), Rocchio feedback and the second
  stage's re-ranker: the ``embeddings`` table, by text hash; phenomenon centroids by ``avg(vector)``.

Fusion, the second stage, the boost and the policy are ``Searcher``'s own code, unchanged. Not
available here: sentence-level dense scores (``sentence_weight``, an on-disk file) and BM25
pseudo-relevance feedback terms (``bm25_prf_k``, which needs the vocabulary's document
frequencies): a configuration asking for them raises ``ValueError``. Dense candidates are
approximate (HNSW); a passage added to PostgreSQL after the searcher loaded its passage table is
ignored until a new searcher is built.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import sqlalchemy as sa

from radar_pipeline.encoders import Encoder
from radar_pipeline.retrieval.glossary import expand_query, induced_terms
from radar_pipeline.retrieval.search import RetrievalConfig, RowMask, Searcher
from radar_pipeline.stores import pg_lexical
from radar_pipeline.stores.bm25_store import tokenize
from radar_pipeline.stores.pg_store import (
    count_passages_with_vector,
    load_pg_passages,
    phenomenon_centroids,
    search_pgvector,
    vectors_by_sha,
)

DEFAULT_EF_SEARCH = 400


class PgSearcher(Searcher):
    """``Searcher`` over PostgreSQL (module docstring). ``ef_search`` is pgvector's
    ``hnsw.ef_search`` for the dense run (at least ``RetrievalConfig.candidates`` is needed to
    return that many candidates; measured in evals/README.md).

    Construction raises ``FileNotFoundError`` when PostgreSQL holds no vector of ``encoder`` (the
    ``embeddings`` asset never ran); without exported BM25 tables the search is dense-only and
    ``problems`` names the missing lexical index, as the FAISS searcher does for a broken BM25."""

    def __init__(
        self,
        engine: sa.Engine,
        encoder: Encoder,
        config: RetrievalConfig | None = None,
        reranker: Encoder | None = None,
        ef_search: int = DEFAULT_EF_SEARCH,
        rerank_cache_size: int = 50_000,
    ):
        self.engine = engine
        self.encoder = encoder
        self.config = config or RetrievalConfig()
        self.reranker = reranker
        self.ef_search = int(ef_search)
        self.index_dir = None
        self.faiss = None
        self.vectors = None
        self.bm25 = None  # no in-memory vocabulary: BM25 PRF terms are unavailable (module docstring)
        self._df = None
        self.sentence_vectors, self.sentence_owner = None, None
        self.problems: dict[str, str] = {}
        self.passages = load_pg_passages(engine, encoder.name)
        if self.passages.height == 0:
            raise FileNotFoundError(
                f"no vectors of encoder {encoder.name!r} in PostgreSQL: materialize embeddings first"
            )
        self._has_lexical = pg_lexical.bm25_size(engine, encoder.name) > 0
        if not self._has_lexical:
            self.problems["bm25"] = "no BM25 tables in PostgreSQL: materialize pg_bm25_index (dense-only search)"
        p = self.passages
        self._chunk_ids = p["chunk_id"].to_list()
        self._doc_ids = p["doc_id"].to_list()
        self._paths = p["source_path"].to_list()
        self._texts = p["text"].to_list()
        self._shas = p["text_sha"].to_list()
        self._pages = p["page_start"].to_list()
        self._titles = p["title"].to_list()
        self._phen = np.array([x or "" for x in p["phenomenon"].to_list()])
        self._collections = np.array([x or "" for x in p["collection"].to_list()], dtype=object)
        self._row_of = {c: i for i, c in enumerate(self._chunk_ids)}
        self._masks: dict[frozenset, RowMask] = {}
        self._ident_lock = threading.Lock()  # identifier priority (``Searcher.identifier_priority``)
        self._ident_cache: OrderedDict[tuple, object] = OrderedDict()
        self._centroids: dict[str, np.ndarray] | None = None
        self._rerank_lock = threading.Lock()
        self._rerank_cache: dict[int, np.ndarray] = {}
        self._rerank_cache_size = rerank_cache_size
        self._rerank_pre, self._rerank_have = None, None
        self._rerank_count = (
            count_passages_with_vector(engine, reranker.name, encoder.name) if reranker is not None else 0
        )

    # ------------------------------------------------------------------ what differs from Searcher
    @property
    def centroids(self) -> dict[str, np.ndarray]:
        """Phenomenon centroids, computed in PostgreSQL on first use (only the boost needs them)."""
        if self._centroids is None:
            self._centroids = phenomenon_centroids(self.engine, self.encoder.name, self.encoder.dim)
        return self._centroids

    @property
    def rerank_coverage(self) -> float:
        """Share (0–1) of passages with a re-ranker vector stored in PostgreSQL."""
        return self._rerank_count / self.passages.height if self.passages.height else 0.0

    def row_mask(self, collections: frozenset[str]) -> RowMask:
        """The ``RowMask`` of ``collections``; its ``params`` is the collection set itself, which
        the SQL of both rankers applies inside the query."""
        key = frozenset(collections)
        got = self._masks.get(key)
        if got is None:
            mask = np.isin(self._collections, list(key)) & (self._collections != "")
            got = RowMask(mask, np.flatnonzero(mask).astype(np.int64), key)
            if len(self._masks) > 256:
                self._masks.clear()
            self._masks[key] = got
        return got

    def _check(self, cfg: RetrievalConfig) -> None:
        if cfg.sentence_weight > 0 or cfg.bm25_prf_k:
            raise ValueError("the pgvector backend has no sentence vectors nor BM25 feedback terms")

    def candidates(self, question: str, cfg: RetrievalConfig | None = None, allowed: RowMask | None = None):
        """``Searcher.candidates``; raises ``ValueError`` for a switch this backend lacks (module docstring)."""
        self._check(cfg or self.config)
        return super().candidates(question, cfg, allowed)

    @property
    def has_dense(self) -> bool:
        """Dense candidates come from the HNSW index in PostgreSQL (no FAISS index is loaded)."""
        return True

    @property
    def has_lexical(self) -> bool:
        """Lexical candidates come from the BM25 tables in PostgreSQL (no bm25s index is loaded),
        when ``pg_bm25_index`` has been materialized."""
        return self._has_lexical

    def dense_run(
        self, qvec: np.ndarray, k: int, sentence_weight: float = 0.0, allowed: RowMask | None = None
    ) -> dict[int, float]:
        """Top ``k`` rows by cosine from the HNSW index (rows of ``allowed`` only, in the query).
        Chunks sharing a text share its score; ties are ordered by row."""
        if allowed is not None and allowed.size == 0:
            return {}
        hits = search_pgvector(
            self.engine,
            self.encoder.name,
            self.encoder.dim,
            qvec,
            k=k,
            ef_search=max(self.ef_search, k),
            collections=allowed.params if allowed is not None else None,
        )
        rows = sorted(((s, self._row_of[c]) for c, s in hits if c in self._row_of), key=lambda t: (-t[0], t[1]))
        return {r: s for s, r in rows[:k]}

    def lexical_run(
        self, question: str, cfg: RetrievalConfig, extra_terms: list[str], allowed: RowMask | None = None
    ) -> tuple[dict[int, float], Callable[[set[int]], dict[int, float]]] | None:
        """BM25 candidates from PostgreSQL (``stores.pg_lexical.search_bm25``), same tokens as the
        FAISS path (question + glossary English terms + the induced lexicon's terms when
        ``cfg.induced_lexicon``; a term outside the index's vocabulary scores nothing on either path)."""
        if not self.has_lexical:
            return None
        text = f"{question} {expand_query(question)}" if cfg.glossary_bm25 else question
        tokens = tokenize(text) + list(extra_terms or [])
        if cfg.induced_lexicon:
            tokens += [t for t in induced_terms(tokenize(question)) if t not in tokens]
        colls = allowed.params if allowed is not None else None
        name = self.encoder.name
        top = {
            self._row_of[c]: s
            for c, s in pg_lexical.search_bm25(self.engine, name, tokens, cfg.candidates, colls)
            if c in self._row_of
        }

        def exact(rows: set[int]) -> dict[int, float]:
            ids = [self._chunk_ids[r] for r in rows]
            got = dict(pg_lexical.search_bm25(self.engine, name, tokens, 0, colls, chunk_ids=ids))
            return {r: got.get(self._chunk_ids[r], 0.0) for r in rows}

        return top, exact

    @property
    def encodes_at_query_time(self) -> bool:
        """False: the vectors are read from PostgreSQL."""
        return False

    def dense_vectors(self, rows: list[int]) -> np.ndarray:
        """First-stage vectors of ``rows`` from the ``embeddings`` table."""
        got = vectors_by_sha(self.engine, self.encoder.name, [self._shas[r] for r in rows])
        out = np.zeros((len(rows), self.encoder.dim), dtype=np.float32)
        for i, r in enumerate(rows):
            v = got.get(self._shas[r])
            if v is not None:
                out[i] = v
        return out

    def precomputed_rerank_vectors(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The re-ranker's vectors of ``rows`` stored in the ``embeddings`` table (by text hash)."""
        out = np.zeros((len(rows), self.reranker.dim), dtype=np.float32)
        have = np.zeros(len(rows), dtype=bool)
        if self._rerank_count == 0:
            return out, have
        got = vectors_by_sha(self.engine, self.reranker.name, [self._shas[r] for r in rows])
        for i, r in enumerate(rows):
            v = got.get(self._shas[r])
            if v is not None:
                out[i], have[i] = v, True
        return out, have
