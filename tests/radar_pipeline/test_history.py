"""Versioned knowledge base: a changed, removed, re-chunked or retracted source closes its rows into
history (never deletes them), the current tables hold one version, and old ids still resolve."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

from radar_pipeline import db, history
from radar_pipeline.corpus import content_bucket, doc_id_for
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.stages import chunk_documents, extract_documents, sync_source_files

MINI = Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "codefest_mini_corpus"
FILES = ("F1-CSET-005.txt", "F1-ATLCOUNCIL-009.txt", "F3-RESDAL-094.txt")


def _run(engine, root: Path, budget: int = 120) -> dict:
    """sync → documents → chunks; returns the documents stage's stats."""
    sync_source_files(engine, root)
    stats = extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine, budget=budget)
    return stats


@pytest.fixture()
def corpus(tmp_path, shared_dir) -> Path:
    """Three files of the Codefest mini corpus, copied so a test may edit them."""
    root = tmp_path / "corpus"
    root.mkdir()
    for name in FILES:
        shutil.copy(shared_dir / "eval" / "codefest_mini_corpus" / name, root / name)
        (root / name).chmod(0o644)
    return root


def _doc_of(engine, path: str) -> str:
    with engine.connect() as conn:
        return conn.execute(sa.select(db.documents.c.doc_id).where(db.documents.c.primary_path == path)).scalar_one()


def _chunks_of(engine, doc_id: str) -> dict[str, str]:
    with engine.connect() as conn:
        return dict(
            conn.execute(
                sa.select(db.chunks.c.chunk_id, db.chunks.c.text_sha).where(db.chunks.c.doc_id == doc_id)
            ).all()
        )


def test_a_changed_file_closes_its_rows_and_old_ids_still_resolve(engine, corpus):
    _run(engine, corpus)
    old_doc = _doc_of(engine, FILES[0])
    old_chunks = _chunks_of(engine, old_doc)
    other = _doc_of(engine, FILES[1])
    other_chunks = _chunks_of(engine, other)
    assert len(old_chunks) >= 2

    path = corpus / FILES[0]
    path.write_text(path.read_text(encoding="utf-8") + "\nA correction added by the publisher.\n", encoding="utf-8")
    _run(engine, corpus)

    new_doc = _doc_of(engine, FILES[0])
    assert new_doc != old_doc
    assert _chunks_of(engine, other) == other_chunks  # an untouched file keeps its ids
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM chunks WHERE doc_id = :d"), {"d": old_doc}).scalar() == 0
        closed = conn.execute(
            sa.text("SELECT supersede_reason, superseded_by FROM documents_history WHERE doc_id = :d"), {"d": old_doc}
        ).all()
        assert [tuple(r) for r in closed] == [("source_changed", new_doc)]
        n_pages = conn.execute(
            sa.text("SELECT count(*) FROM pages_history WHERE doc_id = :d AND supersede_reason = 'source_changed'"),
            {"d": old_doc},
        ).scalar()
        assert n_pages >= 1
    for cid, sha in old_chunks.items():
        rec = history.resolve_chunk(engine, cid)
        assert rec is not None and rec["estado"] == "reemplazado"
        assert rec["text_sha"] == sha and rec["superseded_by"] == new_doc
        assert rec["supersede_reason"] == "source_changed"
        assert rec["replaced_by"] in _chunks_of(engine, new_doc)
        assert rec["source_path"] == FILES[0]
    first = sorted(old_chunks, key=lambda c: int(c.rsplit("-", 1)[1]))[0]
    assert history.resolve_chunk(engine, first)["replaced_by"] == f"{new_doc}-0"  # same text, same place
    window = history.superseded_window(engine, first, size=80)
    assert window["n_passages"] == len(old_chunks) and window["passages"][0]["is_target"]
    assert window["estado"] == "reemplazado"
    assert history.resolve_chunk(engine, f"{new_doc}-0")["estado"] == "vigente"
    assert history.version_violations(engine) == {
        "documents_same_path": [],
        "documents_retracted_current": [],
        "chunks_same_position": [],
    }


def _bucket_run(engine, root: Path, bucket: str) -> dict:
    """What one corpus-sensor run of a content bucket does: sync → documents → chunks there."""
    sync_source_files(engine, root, buckets={bucket})
    stats = extract_documents(engine, root, OcrSettings(enabled=False), workers=1, buckets={bucket})
    chunk_documents(engine, budget=120, buckets={bucket})
    return stats


@pytest.mark.parametrize("order", ["old_bucket_first", "new_bucket_first"])
def test_a_changed_file_whose_content_moves_bucket_is_superseded_by_its_new_version(engine, corpus, order):
    """The corpus sensor runs one content bucket per run: a file whose new bytes fall in another
    bucket is handled by two runs, in either order. Its old version must still be closed as
    ``source_changed`` with the new doc_id as successor (not ``source_removed``), so old citations
    lead to the new version, and the path never has two current versions in between (the blocking
    ``documents_one_current_version`` check of the first run)."""
    _run(engine, corpus)
    old_doc = _doc_of(engine, FILES[0])
    path = corpus / FILES[0]
    base = path.read_text(encoding="utf-8")
    for i in range(200):  # an appended note whose bytes move the content to another bucket
        text = base + f"\nNota de corrección {i}.\n"
        new_doc = doc_id_for(hashlib.sha256(text.encode("utf-8")).hexdigest())
        if content_bucket(new_doc) != content_bucket(old_doc):
            break
    path.write_text(text, encoding="utf-8")
    buckets = [content_bucket(old_doc), content_bucket(new_doc)]
    for b in buckets if order == "old_bucket_first" else buckets[::-1]:
        _bucket_run(engine, corpus, b)
        # between the two runs too: never two current versions of one path
        assert history.version_violations(engine)["documents_same_path"] == []
    assert _doc_of(engine, FILES[0]) == new_doc
    with engine.connect() as conn:
        closed = conn.execute(
            sa.text("SELECT supersede_reason, superseded_by FROM documents_history WHERE doc_id = :d"), {"d": old_doc}
        ).all()
    assert [tuple(r) for r in closed] == [("source_changed", new_doc)]
    first = f"{old_doc}-0"
    rec = history.resolve_chunk(engine, first)
    assert rec["supersede_reason"] == "source_changed" and rec["replaced_by"] == f"{new_doc}-0"


def test_a_removed_file_is_closed_as_source_removed(engine, corpus):
    _run(engine, corpus)
    gone = _doc_of(engine, FILES[2])
    n = len(_chunks_of(engine, gone))
    (corpus / FILES[2]).unlink()
    assert _run(engine, corpus)["closed_by_reason"] == {"source_removed": 1}
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM documents WHERE doc_id = :d"), {"d": gone}).scalar() == 0
        reasons = conn.execute(
            sa.text(
                "SELECT supersede_reason, superseded_by, count(*) FROM chunks_history WHERE doc_id = :d GROUP BY 1, 2"
            ),
            {"d": gone},
        ).all()
    assert [tuple(r) for r in reasons] == [("source_removed", None, n)]


def test_a_rechunk_keeps_unchanged_ids_and_never_reuses_an_id_for_another_text(engine, corpus):
    _run(engine, corpus, budget=120)
    doc = _doc_of(engine, FILES[0])
    before = _chunks_of(engine, doc)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE documents SET chunker_version = NULL WHERE doc_id = :d"), {"d": doc})
    chunk_documents(engine, budget=60)  # a new chunker setting: most passages change
    after = _chunks_of(engine, doc)
    for cid, sha in after.items():
        if cid in before:
            assert before[cid] == sha  # an id kept names the same text
    with engine.connect() as conn:
        hist = conn.execute(
            sa.text("SELECT chunk_id, text_sha, supersede_reason, superseded_by FROM chunks_history WHERE doc_id = :d"),
            {"d": doc},
        ).all()
    assert hist, "the changed passages were closed"
    assert {r.supersede_reason for r in hist} == {"extractor_changed"} and {r.superseded_by for r in hist} == {doc}
    closed = {r.chunk_id: r.text_sha for r in hist}
    assert set(closed) == {c for c, s in before.items() if after.get(c) != s}
    for cid in closed:
        assert cid not in after or after[cid] == closed[cid]
    # back to the first setting: the original texts get their original ids back
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE documents SET chunker_version = NULL WHERE doc_id = :d"), {"d": doc})
    chunk_documents(engine, budget=120)
    assert _chunks_of(engine, doc) == before
    assert history.version_violations(engine)["chunks_same_position"] == []


def test_assign_chunk_ids():
    used = {"d-0": {"a"}, "d-1": {"b"}, "d-2": {"c"}}
    # unchanged keeps, a changed text at d-1 gets a fresh number, a text seen before gets its old id back
    assert history.assign_chunk_ids("d", [(0, "a"), (1, "x"), (2, "b")], used) == ["d-0", "d-3", "d-1"]
    assert history.assign_chunk_ids("d", [(0, "a"), (1, "b"), (2, "c"), (3, "z")], used) == ["d-0", "d-1", "d-2", "d-3"]
    assert history.assign_chunk_ids("d", [], used) == []


def test_retraction_closes_the_document_and_it_is_not_re_extracted(engine, corpus):
    _run(engine, corpus)
    doc = _doc_of(engine, FILES[1])
    n = len(_chunks_of(engine, doc))
    out = history.retract_document(engine, doc, "Fuente fabricada", "revisora@radar")
    assert out["chunks"] == n and out["documents"] == 1 and out["primary_path"] == FILES[1]
    assert history.retracted_doc_ids(engine) == {doc}
    [row] = history.list_retractions(engine)
    assert (row["doc_id"], row["reason"], row["retracted_by"]) == (doc, "Fuente fabricada", "revisora@radar")
    assert _run(engine, corpus)["retracted_skipped"] == 1  # the file is still in the corpus: it stays retracted
    assert _chunks_of(engine, doc) == {}
    rec = history.resolve_chunk(engine, f"{doc}-0")
    assert rec["estado"] == "retractado" and rec["supersede_reason"] == "retracted"
    with pytest.raises(history.RetractionError, match="ya fue retractado"):
        history.retract_document(engine, doc, "otra vez", "x")
    with pytest.raises(history.RetractionError, match="motivo"):
        history.retract_document(engine, _doc_of(engine, FILES[0]), "  ", "x")
    with pytest.raises(history.RetractionError, match="no hay un documento"):
        history.retract_document(engine, "0" * 16, "motivo", "x")
    assert history.version_violations(engine)["documents_retracted_current"] == []


def test_the_chunks_contract_accepts_a_renumbered_passage_and_rejects_a_foreign_id():
    import polars as pl
    import pytest as _pytest
    from pandera.errors import SchemaError, SchemaErrors

    from radar_pipeline.schemas import ChunksSchema

    row = {"doc_id": "ab" * 8, "seq": 1, "text": "x", "n_tokens": 1, "page_start": 1, "page_end": 1}
    ChunksSchema.validate(pl.DataFrame([{**row, "chunk_id": "ab" * 8 + "-1"}, {**row, "chunk_id": "ab" * 8 + "-7"}]))
    with _pytest.raises((SchemaError, SchemaErrors)):
        ChunksSchema.validate(pl.DataFrame([{**row, "chunk_id": "cd" * 8 + "-1"}]), lazy=True)
    with _pytest.raises((SchemaError, SchemaErrors)):
        ChunksSchema.validate(pl.DataFrame([{**row, "chunk_id": "ab" * 8 + "-1x"}]), lazy=True)
