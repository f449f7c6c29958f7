"""Query-time costs of the search: query vectors encoded once, re-ranker encodings counted per search
and bounded per caller (``EncodeBudget``), on a real index (real USE, FAISS, BM25, real e5)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from radar_pipeline.retrieval.search import QueryVectors, RetrievalConfig, Searcher
from radar_pipeline.retrieval.service import EncodeBudget, RetrievalService
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.passages import PASSAGE_COLUMNS, save_passages

TEXTS = [
    "Anti-satellite missile tests create clouds of orbital debris that threaten satellites in low orbit.",
    "GPS jamming and spoofing incidents have disrupted satellite navigation in the Baltic region.",
    "Illegal gold mining in Chocó finances armed groups such as the Clan del Golfo.",
    "Loitering munitions and drone swarms changed targeting in the war in Ukraine.",
    "Project Maven applied computer vision to intelligence analysis of drone footage.",
    "La minería ilegal de oro en Antioquia financia a grupos armados ilegales.",
    "Los drones comerciales modificados se usan para lanzar explosivos en el Cauca.",
    "Space debris mitigation guidelines ask operators to deorbit satellites within 25 years.",
    "Cyber attacks on satellite ground stations can deny communications to military users.",
    "Autonomous weapons raise questions of meaningful human control over the use of force.",
    "El narcotráfico y la minería ilegal son economías ilícitas que sostienen a las disidencias.",
    "Counter-drone systems combine radar, radio-frequency sensors and jammers.",
]


class Counting:
    """A real encoder that counts what it is asked to encode (passages, and query texts)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.version, self.dim = inner.name, "1", inner.dim
        self.passages = 0
        self.queries: list[str] = []

    def encode_passages(self, texts):
        self.passages += len(texts)
        return self.inner.encode_passages(texts)

    def encode_queries(self, texts):
        self.queries += list(texts)
        return self.inner.encode_queries(texts)


@pytest.fixture(scope="module")
def small_index(tmp_path_factory, use_encoder):
    d = tmp_path_factory.mktemp("budget_idx")
    n = len(TEXTS)
    frame = pl.DataFrame(
        {
            "chunk_id": [f"{i:016x}-0" for i in range(n)],
            "doc_id": [f"{i:016x}" for i in range(n)],
            "source_path": [f"f{i}.txt" for i in range(n)],
            "title": [f"t{i}" for i in range(n)],
            "page_start": [1] * n,
            "page_end": [1] * n,
            "phenomenon": ["space_security"] * n,
            "language": ["en"] * n,
            "text": TEXTS,
        }
    ).select(PASSAGE_COLUMNS)
    save_passages(frame, d)
    faiss_store.save_index(faiss_store.build_flat_ip(use_encoder.encode_passages(TEXTS)), d)
    Bm25Index.build(TEXTS).save(d)
    return d


def test_encode_budget_grants_and_spends():
    b = EncodeBudget(5)
    assert b.grant("drones", 8) == 5  # capped by what is left
    b.spend(3)
    assert b.grant("drones", 8) == 5  # the same query keeps its grant (one cached search)
    assert b.grant("minería ilegal", 8) == 2 and b.remaining == 2
    b.spend(2)
    assert b.grant("satélites", 8) == 0 and b.remaining == 0
    assert EncodeBudget(10).grant("q", 3) == 3  # never above the per-search limit
    b.spend(-4)  # a negative count is no refund
    assert b.spent == 5
    with pytest.raises(ValueError):
        EncodeBudget(-1)


def test_query_vectors_are_encoded_once_and_identical(use_encoder):
    counting = Counting(use_encoder)
    cache = QueryVectors(size=2)
    q = ["¿Qué riesgos plantea la basura espacial?", "drones armados en Colombia"]
    first = cache.get(counting, q)
    assert counting.queries == q
    again = cache.get(counting, q[::-1])
    assert counting.queries == q  # both from the cache, in the order asked
    np.testing.assert_array_equal(again, first[::-1])
    # bit-identical to an uncached single encoding (no batch padding)
    np.testing.assert_array_equal(first[0], use_encoder.encode_queries([q[0]])[0])
    cache.get(counting, ["tercera pregunta"])  # size 2: the least recently used one (q[1]) goes
    cache.get(counting, q)
    assert counting.queries.count(q[0]) == 1 and counting.queries.count(q[1]) == 2


def test_search_counts_its_query_time_encodings_and_caches_queries(small_index, use_encoder, e5_encoder):
    enc, rr = Counting(use_encoder), Counting(e5_encoder)
    s = Searcher(small_index, enc, reranker=rr)
    cfg = RetrievalConfig(rerank_k=6, rerank_encode_limit=4)
    q = "¿Cómo financia la minería ilegal a los grupos armados?"
    res = s.search(q, cfg)
    assert res.rerank_encoded == 4 == rr.passages  # no stored vectors: the per-search limit
    n_queries = len(enc.queries)
    again = s.search(q, cfg)
    assert len(again.passages) == len(res.passages)
    assert len(enc.queries) == n_queries  # the question (and its glossary form) encoded once
    assert rr.queries.count(rr.queries[0]) == 1  # the re-ranker's query too
    # the 4 already encoded are cached: the next search encodes the 2 others of its top 6
    assert again.rerank_encoded == 2 and rr.passages == 6
    # the service's cosines read the same cached query vector
    svc = RetrievalService(s)
    svc.search_passages(q, 5)
    assert len(enc.queries) == n_queries


def test_service_budget_bounds_a_callers_encodings(small_index, use_encoder, e5_encoder):
    rr = Counting(e5_encoder)
    svc = RetrievalService(Searcher(small_index, use_encoder, reranker=rr, config=RetrievalConfig(rerank_k=8)))
    budget = EncodeBudget(5)
    queries = [
        "drones armados y municiones merodeadoras",
        "basura espacial y satélites",
        "minería ilegal de oro y grupos armados",
    ]
    docs = svc.search_documents(queries[0], 3, budget=budget)
    hits = svc.search_passages(queries[0], 5, budget=budget)  # same query: the same cached search
    assert docs and hits and rr.passages == budget.spent == 5
    for q in queries[1:]:
        assert svc.search_passages(q, 5, budget=budget)  # nothing left: imputed, still ranked
    assert rr.passages == 5 and budget.remaining == 0
    # without a budget the per-search limit (8) alone applies, as for /search
    fresh = RetrievalService(Searcher(small_index, use_encoder, reranker=Counting(e5_encoder)))
    for q in queries:
        fresh.search_passages(q, 5)
    assert fresh.searcher.reranker.passages > 5
