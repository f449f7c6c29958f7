"""Each ranking rule on tiny crafted data, and the Searcher on a tiny real index."""

import numpy as np
import polars as pl
import pytest

from evals.sentence_vectors import build_sentence_vectors
from radar_pipeline.retrieval.fusion import convex_fusion, minmax, rrf
from radar_pipeline.retrieval.glossary import expand_query, glossary_matches, load_glossary
from radar_pipeline.retrieval.phenomenon import predict_phenomenon
from radar_pipeline.retrieval.policy import Candidate, PolicyConfig, rank_documents, rank_passages
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index, tokenize
from radar_pipeline.stores.centroids import compute_centroids
from radar_pipeline.stores.passages import PASSAGE_COLUMNS, save_passages


def C(row, doc, score, text=None, path=None):
    return Candidate(row, f"{doc}-{row}", doc, path or f"{doc}.txt", text or f"text {row}", score)


def test_dedupe_and_per_document_cap():
    cands = [
        C(0, "a", 0.9),
        C(1, "a", 0.8),
        C(2, "a", 0.7),
        C(3, "a", 0.6),
        C(4, "b", 0.5, text="text 0"),
        C(5, "c", 0.4),
    ]
    out = rank_passages(cands, PolicyConfig(k_passages=10, max_per_doc=3))
    assert [c.row for c in out] == [0, 1, 2, 5]  # 3rd 'a' kept, 4th dropped; row 4 duplicates row 0's text
    out = rank_passages(cands, PolicyConfig(k_passages=2))
    assert [c.row for c in out] == [0, 1]
    assert len(rank_passages(cands, PolicyConfig(dedupe_texts=False, max_per_doc=10))) == 6


def test_document_score_is_mean_of_best_two():
    cands = [C(0, "a", 0.9), C(1, "a", 0.1), C(2, "b", 0.6), C(3, "b", 0.6), C(4, "c", 0.7)]
    docs = rank_documents(cands, PolicyConfig(k_documents=3, doc_top_n=2))
    # a = (.9+.1)/2 = .5, b = .6, c = .7 (single passage)
    assert [(d.doc_id, round(d.score, 3)) for d in docs] == [("c", 0.7), ("b", 0.6), ("a", 0.5)]


def test_fusion_functions():
    assert minmax({1: 2.0, 2: 4.0, 3: 3.0}) == {1: 0.0, 2: 1.0, 3: 0.5}
    assert minmax({1: 5.0}) == {1: 1.0}
    fused = convex_fusion([{1: 1.0, 2: 0.0}, {2: 10.0, 3: 0.0}], [0.7, 0.3])
    assert fused == pytest.approx({1: 0.7, 2: 0.3, 3: 0.0})
    r = rrf([{1: 3.0, 2: 2.0}, {2: 5.0}], k=60)
    assert r[2] == pytest.approx(1 / 62 + 1 / 61) and r[1] == pytest.approx(1 / 61)
    with pytest.raises(ValueError):
        convex_fusion([{1: 1.0}], [0.5, 0.5])


def test_glossary_expansion_is_deterministic_and_longest_first():
    assert len(load_glossary()) > 150
    q = "¿Cuál ha sido el impacto de las pruebas antisatélite sobre la generación de desechos orbitales?"
    exp = expand_query(q)
    assert "orbital debris" in exp and "ASAT" in exp and exp == expand_query(q)
    assert "CBRN" in expand_query("amenazas NBQR")
    # "minería ilegal de oro" wins over "minería ilegal" and "oro"
    assert [e.spanish for e in glossary_matches("la minería ilegal de oro")] == ["minería ilegal de oro"]
    assert expand_query("hola") == ""


def test_phenomenon_prediction_from_centroids_and_glossary():
    vecs = np.eye(3, dtype=np.float32)
    cents = {
        k: np.asarray(v, dtype=np.float32)
        for k, v in compute_centroids(vecs, ["ai_military", "space_security", "territorial"]).items()
    }
    assert predict_phenomenon("x", vecs[1], cents) == "space_security"
    # the glossary outvotes the centroid when it clearly names another phenomenon
    assert predict_phenomenon("minería ilegal, narcotráfico y grupos armados", vecs[1], cents) == "territorial"
    assert predict_phenomenon("hola", None, {}) is None


TEXTS = [
    ("space_security", "Anti-satellite missile tests create clouds of orbital debris that threaten satellites."),
    ("space_security", "GPS jamming and spoofing incidents have disrupted satellite navigation in the Baltic."),
    ("territorial", "Illegal gold mining in Chocó finances armed groups such as the Clan del Golfo."),
    ("ai_military", "Loitering munitions and drone swarms changed targeting in the war in Ukraine."),
    ("ai_military", "Project Maven applied computer vision to intelligence analysis of drone footage."),
]


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory, use_encoder):
    d = tmp_path_factory.mktemp("idx")
    texts = [t for _, t in TEXTS]
    frame = pl.DataFrame(
        {
            "chunk_id": [f"d{i}-0" for i in range(5)],
            "doc_id": [f"d{i}" for i in range(5)],
            "source_path": [f"f{i}.txt" for i in range(5)],
            "title": [f"t{i}" for i in range(5)],
            "page_start": [1] * 5,
            "page_end": [1] * 5,
            "phenomenon": [p for p, _ in TEXTS],
            "language": ["en"] * 5,
            "text": texts,
        }
    ).select(PASSAGE_COLUMNS)
    save_passages(frame, d)
    vecs = use_encoder.encode_passages(texts)
    faiss_store.save_index(faiss_store.build_flat_ip(vecs), d)
    Bm25Index.build(texts).save(d)
    from radar_pipeline.stores.centroids import save_centroids

    save_centroids(compute_centroids(vecs, [p for p, _ in TEXTS]), d)
    return d


def test_searcher_dense_bm25_and_boost(tiny_index, use_encoder):
    s = Searcher(tiny_index, use_encoder)
    dense = RetrievalConfig(bm25_weight=0.0, phenomenon_boost=1.0, passage_ranking="dense")
    res = s.search("¿Qué efectos tienen las pruebas antisatélite en los desechos orbitales?", dense)
    assert res.passages[0]["doc_id"] == "d0" and res.documents[0]["doc_id"] == "d0"
    # BM25 alone (with the glossary) finds the exact English terms of a Spanish question
    lex = RetrievalConfig(dense_weight=0.0, bm25_weight=1.0, glossary_bm25=True, phenomenon_boost=1.0)
    assert s.search("minería ilegal de oro", lex).passages[0]["doc_id"] == "d2"
    # without the glossary (and the induced lexicon), BM25 has nothing to match in Spanish
    nolex = lex.with_(glossary_bm25=False, induced_lexicon=False)
    assert (
        s.search("minería ilegal de oro", nolex).passages == []
        or s.search("minería ilegal de oro", nolex).passages[0]["score"] == 0
    )
    # the phenomenon boost multiplies scores of the predicted phenomenon's passages, never filters
    boosted = RetrievalConfig(bm25_weight=0.0, phenomenon_boost=1.05, passage_ranking="dense")
    r1 = s.search("interferencia de señales GPS de satélites", dense)
    r2 = s.search("interferencia de señales GPS de satélites", boosted)
    assert r2.phenomenon == "space_security"
    b = {p["doc_id"]: p["score"] for p in r2.passages}
    a = {p["doc_id"]: p["score"] for p in r1.passages}
    assert b["d1"] == pytest.approx(a["d1"] * 1.05, rel=1e-4) and b["d3"] == pytest.approx(a["d3"], rel=1e-4)
    assert len(r2.passages) == 5


def test_sentence_maxsim_uses_sentence_vectors(tiny_index, use_encoder, tmp_path):
    s = Searcher(tiny_index, use_encoder)
    assert s.sentence_vectors is None
    n = build_sentence_vectors(tiny_index, use_encoder, [t for _, t in TEXTS], ["en"] * 5)
    s2 = Searcher(tiny_index, use_encoder)
    assert n == 5 and s2.sentence_vectors.shape == (5, 512)
    cfg = RetrievalConfig(bm25_weight=0.0, phenomenon_boost=1.0, passage_ranking="dense", sentence_weight=0.5)
    res = s2.search("pruebas antisatélite", cfg)
    assert res.passages[0]["doc_id"] == "d0"
    for p in ("sentence_vectors.npy", "sentence_owner.npy"):
        (tiny_index / p).unlink()


def test_empty_question_is_rejected(tiny_index, use_encoder):
    with pytest.raises(ValueError):
        Searcher(tiny_index, use_encoder).search("   ")


def test_bm25_tokenizer_folds_accents_and_drops_stopwords():
    assert tokenize("La Antisatélite y the ASAT") == ["antisatelite", "asat"]


def test_default_configuration_is_the_measured_winner():
    """`radar search`, the API and the eval assets all use RetrievalConfig(); it must equal the
    configuration evals/README.md reports as the default."""
    from dataclasses import replace

    from evals.configs import CONFIGS, DEFAULT_NAME

    assert replace(CONFIGS[DEFAULT_NAME], name="default") == RetrievalConfig()


def test_rerank_keeps_the_reranked_top_above_the_rest():
    from radar_pipeline.retrieval.fusion import rerank

    first = {0: 0.9, 1: 0.8, 2: 0.7, 3: 0.1}
    out = rerank(first, {1: 0.2, 2: 0.9}, weight=1.0)  # only 1 and 2 were re-scored
    assert out[2] == pytest.approx(2.0) and out[1] == pytest.approx(1.0)
    assert min(out[1], out[2]) > max(out[0], out[3])  # re-ranked rows stay on top
    assert out[0] > out[3]  # the rest keeps its first-stage order
    # weight 0 = first-stage order within the re-ranked rows
    out0 = rerank(first, {1: 0.2, 2: 0.9}, weight=0.0)
    assert out0[1] > out0[2]
    with pytest.raises(ValueError):
        rerank(first, {1: 0.2}, weight=1.5)


class _CountingEncoder:
    """A real encoder (USE) that counts the passages it is asked to encode."""

    def __init__(self, inner):
        self.inner, self.calls = inner, 0
        self.name, self.version, self.dim = "counting_use", "1", inner.dim

    def encode_passages(self, texts):
        self.calls += len(texts)
        return self.inner.encode_passages(texts)

    def encode_queries(self, texts):
        return self.inner.encode_queries(texts)


def test_second_stage_reorders_top_k_and_caches_vectors(tiny_index, use_encoder, e5_encoder):
    """The e5 re-ranker moves the right passage up among the fused top-k; vectors are encoded once."""
    from radar_pipeline.stores.rerank_vectors import (
        load_rerank_vectors,
        passage_fingerprint,
        rerank_vector_path,
        save_rerank_vectors,
    )

    counting = _CountingEncoder(e5_encoder)
    counting.name, counting.dim = e5_encoder.name, e5_encoder.dim
    s = Searcher(tiny_index, use_encoder, reranker=counting)
    q = "¿Qué sistemas de visión por computador analizan las imágenes de drones?"
    base = RetrievalConfig(bm25_weight=0.0, glossary_dense=False, rerank_k=0)
    rr = base.with_(rerank_k=3, rerank_weight=1.0)
    top3 = [p["doc_id"] for p in s.search(q, base).passages[:3]]
    res = s.search(q, rr)
    assert counting.calls == 3
    assert res.passages[0]["doc_id"] == "d4" and "d4" in top3
    # the re-ranked rows are exactly the first-stage top 3, in a new order; the rest follows
    assert {p["doc_id"] for p in res.passages[:3]} == set(top3)
    s.search(q, rr)
    assert counting.calls == 3  # cached in this searcher
    # a per-query cap on encoding: the best first-stage row is encoded, the others are imputed
    capped = Searcher(tiny_index, use_encoder, reranker=counting)
    before = counting.calls
    res_capped = capped.search(q, rr.with_(rerank_encode_limit=1))
    assert counting.calls == before + 1 and len(res_capped.passages) == 5
    assert {p["doc_id"] for p in res_capped.passages[:3]} == set(top3)
    # precomputed, row-aligned vectors are used instead of encoding
    texts = [t for _, t in TEXTS]
    vecs = e5_encoder.encode_passages(texts)
    save_rerank_vectors(tiny_index, counting.name, vecs, np.ones(5, dtype=bool), passage_fingerprint(texts))
    s2 = Searcher(tiny_index, use_encoder, reranker=counting)
    before = counting.calls
    assert s2.search(q, rr).passages[0]["doc_id"] == "d4" and counting.calls == before
    # a file built for another passage table (or another dimension) is ignored, never misread
    fp = passage_fingerprint(texts)
    assert load_rerank_vectors(tiny_index, counting.name, fp, 384)[0] is not None
    assert load_rerank_vectors(tiny_index, counting.name, passage_fingerprint(texts[::-1]), 384) == (None, None)
    assert load_rerank_vectors(tiny_index, counting.name, fp, 512) == (None, None)
    save_rerank_vectors(tiny_index, counting.name, vecs[::-1], np.ones(5, dtype=bool), passage_fingerprint(texts[::-1]))
    s3 = Searcher(tiny_index, use_encoder, reranker=counting)
    assert s3._rerank_have is None
    # without a re-ranker the setting is inert
    assert [p["doc_id"] for p in Searcher(tiny_index, use_encoder).search(q, rr).passages[:3]] == top3
    rerank_vector_path(tiny_index, counting.name).unlink()


def test_duplicate_texts_share_the_second_stage_score(tiny_index, use_encoder, e5_encoder):
    """Two copies of one text (another file, same words) rank together after re-ranking."""
    from radar_pipeline.retrieval.search import Searcher as S

    s = S(tiny_index, use_encoder, reranker=e5_encoder)
    fused = {0: 0.9, 1: 0.5, 2: 0.4}
    s._texts = [TEXTS[0][1], TEXTS[1][1], TEXTS[0][1], TEXTS[3][1], TEXTS[4][1]]  # row 2 repeats row 0
    out = s.second_stage("pruebas antisatélite", fused, RetrievalConfig(rerank_k=1))
    assert out[0] == out[2] and out[0] >= 1.0 > out[1]
