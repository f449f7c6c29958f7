"""pgvector: the HNSW partial index is created once and answers like exact search on small data."""

import numpy as np
import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.chunking import text_sha
from radar_pipeline.stores.pg_store import ensure_hnsw_index, hnsw_index_name, search_pgvector


def test_hnsw_index_and_search(engine, use_encoder):
    texts = [
        "Anti-satellite tests create orbital debris.",
        "Illegal gold mining finances armed groups.",
        "Drone swarms and loitering munitions in Ukraine.",
        "Anti-satellite tests create orbital debris.",
    ]
    with engine.begin() as conn:
        conn.execute(
            db.documents.insert(),
            [
                dict(
                    doc_id="d" * 16,
                    sha256="s" * 64,
                    source_paths=["x"],
                    primary_path="x",
                    title="x",
                    format="txt",
                    status="ok",
                    reason=None,
                    encoding=None,
                    language="en",
                    phenomenon=None,
                    is_tabular=False,
                    n_pages=1,
                    n_pages_total=1,
                    n_ocr_pages=0,
                    n_chars=1,
                    size_bytes=1,
                    extractor_version="t",
                    extract_seconds=0.0,
                    chunker_version="t",
                    metadata={},
                    warnings=[],
                )
            ],
        )
        conn.execute(
            db.chunks.insert(),
            [
                dict(
                    chunk_id=f"{'d' * 16}-{i}",
                    doc_id="d" * 16,
                    seq=i,
                    text=t,
                    text_sha=text_sha(t),
                    page_start=1,
                    page_end=1,
                    n_tokens=5,
                    n_sentences=1,
                    language="en",
                    phenomenon=None,
                    chunker_version="t",
                    collection="a" if i < 3 else "b",
                )
                for i, t in enumerate(texts)
            ],
        )
        vecs = use_encoder.encode_passages(texts[:3])
        conn.execute(
            db.embeddings.insert(),
            [
                dict(text_sha=text_sha(t), encoder="usem3", dim=512, embedding=v)
                for t, v in zip(texts[:3], vecs, strict=False)
            ],
        )
    assert ensure_hnsw_index(engine, "usem3", 512) is True
    assert ensure_hnsw_index(engine, "usem3", 512) is False
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT to_regclass(:n) IS NOT NULL"), {"n": hnsw_index_name("usem3")}).scalar()
    q = use_encoder.encode_queries(["pruebas antisatélite y desechos orbitales"])[0]
    hits = search_pgvector(engine, "usem3", 512, q, k=2)
    # the duplicated text comes back once per chunk that holds it, with the same score
    assert {h[0] for h in hits[:2]} == {f"{'d' * 16}-0", f"{'d' * 16}-3"}
    assert abs(hits[0][1] - float(vecs[0] @ q)) < 1e-4
    assert np.isclose(hits[0][1], hits[1][1])
    # collections restrict inside the query: chunk 3 (collection b) shares chunk 0's text
    only_b = search_pgvector(engine, "usem3", 512, q, k=2, collections=frozenset({"b"}))
    assert [h[0] for h in only_b] == [f"{'d' * 16}-3"]
    only_a = search_pgvector(engine, "usem3", 512, q, k=2, collections=frozenset({"a"}))
    assert len(only_a) == 2 and f"{'d' * 16}-3" not in {h[0] for h in only_a}  # k filled with allowed texts
    assert search_pgvector(engine, "usem3", 512, q, k=2, collections=frozenset()) == []
