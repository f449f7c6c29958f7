"""The same-language pull switches on a tiny bilingual index (real USE encoder, real BM25): the
English glossary terms as their own query, and the cap on Spanish passages in the top k."""

import polars as pl
import pytest

from radar_pipeline.retrieval.glossary import expand_query
from radar_pipeline.retrieval.policy import PolicyConfig
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.passages import PASSAGE_COLUMNS, save_passages

# (language, text): Spanish civilian AI policy text next to English military AI sources
PASSAGES = [
    ("es", "La política nacional de inteligencia artificial promueve la innovación y la educación digital."),
    ("es", "El índice latinoamericano de inteligencia artificial mide la adopción de la IA en la región."),
    ("en", "Autonomous weapons systems raise accountability questions under international humanitarian law."),
    ("es", "La estrategia de inteligencia artificial del gobierno financia centros de datos y talento."),
    ("en", "Military AI targeting tools compress the kill chain; drone swarms challenge air defence."),
    ("en", "Satellite jamming and spoofing threaten navigation services used by armed forces."),
]
QUESTION = "¿Qué desafíos plantea el empleo de sistemas autónomos frente al Derecho Internacional Humanitario?"


@pytest.fixture(scope="module")
def bilingual_index(tmp_path_factory, use_encoder):
    d = tmp_path_factory.mktemp("bilingual")
    n = len(PASSAGES)
    frame = pl.DataFrame(
        {
            "chunk_id": [f"d{i}-0" for i in range(n)],
            "doc_id": [f"d{i}" for i in range(n)],
            "source_path": [f"f{i}.txt" for i in range(n)],
            "title": [f"t{i}" for i in range(n)],
            "page_start": [1] * n,
            "page_end": [1] * n,
            "phenomenon": ["ai_military"] * n,
            "language": [lang for lang, _ in PASSAGES],
            "text": [t for _, t in PASSAGES],
        }
    ).select(PASSAGE_COLUMNS)
    save_passages(frame, d)
    texts = [t for _, t in PASSAGES]
    faiss_store.save_index(faiss_store.build_flat_ip(use_encoder.encode_passages(texts)), d)
    Bm25Index.build(texts).save(d)
    return d


def test_english_glossary_terms_are_searched_as_their_own_query(bilingual_index, use_encoder):
    s = Searcher(bilingual_index, use_encoder)
    assert "international humanitarian law" in expand_query(QUESTION)
    cfg = RetrievalConfig(rerank_k=0, candidates=6)
    dense_en, bm25_en = s.english_runs(QUESTION, cfg)
    # the English-only BM25 run ranks the passage with the English terms first
    assert max(bm25_en, key=bm25_en.get) == 2
    # BM25 on the English terms cannot match Spanish text at all
    assert all(PASSAGES[r][0] == "en" for r in bm25_en)
    assert len(dense_en) == 6
    # the fused pool of the switch = the baseline's pool + those runs, fused by RRF
    fused_off, _, _ = s.candidates(QUESTION, cfg)
    fused_on, _, _ = s.candidates(QUESTION, cfg.with_(glossary_query_weight=1.0))
    off = {c.row: c.score for c in fused_off}
    on = {c.row: c.score for c in fused_on}
    assert on[2] > off[2]  # more RRF mass on the English passage both new runs rank first
    assert s.english_runs("¿Qué opina usted del clima de hoy?", cfg) == []


def test_spanish_cap_moves_surplus_spanish_passages_below_the_top_k(bilingual_index, use_encoder):
    s = Searcher(bilingual_index, use_encoder)
    fused = {r: 1.0 - 0.1 * r for r in range(len(PASSAGES))}  # order 0..5; languages es es en es en en
    out = s.cap_spanish(fused, share=0.34, k=3)  # at most one Spanish passage among the first 3
    assert sorted(out, key=lambda r: -out[r]) == [0, 2, 4, 1, 3, 5]
    # share 1.0 keeps the order
    same = s.cap_spanish(fused, share=1.0, k=3)
    assert sorted(same, key=lambda r: -same[r]) == list(range(6))


def test_spanish_cap_in_search_and_only_for_the_named_phenomena(bilingual_index, use_encoder):
    s = Searcher(bilingual_index, use_encoder)
    policy = PolicyConfig(k_passages=3, k_documents=3, max_per_doc=3)
    base = RetrievalConfig(rerank_k=0, candidates=6, policy=policy)
    q = "¿Qué mide el índice latinoamericano de inteligencia artificial y la política nacional de IA?"
    lang = {f"d{i}-0": lang for i, (lang, _) in enumerate(PASSAGES)}
    plain = [lang[p["chunk_id"]] for p in s.search(q, base).passages]
    assert plain.count("es") >= 2  # the same-language pull, on a question about Spanish documents
    capped = [lang[p["chunk_id"]] for p in s.search(q, base.with_(spanish_cap=0.34)).passages]
    assert capped.count("es") == 1 and len(capped) == 3
    # restricted to a phenomenon the question is not predicted to be about: unchanged
    other = base.with_(spanish_cap=0.34, spanish_cap_phenomena=("territorial",))
    assert [lang[p["chunk_id"]] for p in s.search(q, other).passages] == plain


def test_induced_lexicon_reads_its_tsv_and_feeds_the_bm25_query(bilingual_index, use_encoder, tmp_path):
    from radar_pipeline.retrieval.glossary import induced_terms, load_induced_lexicon
    from radar_pipeline.stores.bm25_store import tokenize

    tsv = tmp_path / "lex.tsv"
    tsv.write_text("# comment\narmas\tweapons\t0.908\ndesafios\tchallenges\t0.947\n", encoding="utf-8")
    assert load_induced_lexicon(tsv) == {"armas": "weapons", "desafios": "challenges"}
    assert induced_terms(tokenize("¿Qué desafíos plantean las armas y las armas?"), tsv) == ["challenges", "weapons"]
    assert load_induced_lexicon(tmp_path / "absent.tsv") == {}
    bad = tmp_path / "bad.tsv"
    bad.write_text("armas\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.tsv:1"):
        load_induced_lexicon(bad)
    # the shipped lexicon maps "armas" → "weapons": with the switch, a Spanish-only BM25 query
    # reaches the English passage about weapons (row 2), which it cannot match without it
    s = Searcher(bilingual_index, use_encoder)
    lex = RetrievalConfig(dense_weight=0.0, glossary_bm25=False, rerank_k=0, induced_lexicon=False)
    assert s.bm25_scores("armas", lex)[2] == 0
    assert RetrievalConfig().induced_lexicon  # on in the product default (evals/README.md, "Known-item misses")
    assert s.bm25_scores("armas", lex.with_(induced_lexicon=True))[2] > 0
