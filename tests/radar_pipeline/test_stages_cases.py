"""Ingestion cases through the real stages and PostgreSQL (the downstream half of CASES.md):
01 indexed and found by BM25 alone, 05 recorded as encrypted in the same run, 20/22 stored with
JSON-safe metadata and no NUL, 11 chunked quickly with its text preserved."""

import json
import shutil
import time

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.stages import (
    build_bm25_index,
    build_faiss_index,
    chunk_documents,
    embed_chunks,
    extract_documents,
    sync_source_files,
)
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.passages import load_passages

CASES = [
    "01_ligatures.pdf",
    "05_user-password.pdf",
    "11_sbd-numeric-backtracking.pdf",
    "20_nan-infinity.json",
    "22_nul-escapes.json",
]


def test_cases_in_one_materialization(engine, shared_dir, tmp_path, use_encoder):
    root = tmp_path / "corpus"
    root.mkdir()
    for name in CASES:
        shutil.copy(shared_dir / "cases" / "ingestion" / name, root / name)
    sync_source_files(engine, root)
    stats = extract_documents(engine, root, OcrSettings(), workers=2)
    t0 = time.perf_counter()
    chunk_documents(engine)
    chunk_seconds = time.perf_counter() - t0
    embed_chunks(engine, use_encoder)
    index_dir = tmp_path / "idx"
    build_faiss_index(engine, use_encoder.name, index_dir)
    build_bm25_index(index_dir)

    with engine.begin() as conn:
        docs = {r.primary_path: r for r in conn.execute(sa.select(db.documents))}
        texts = {
            p: conn.execute(
                sa.text("SELECT string_agg(text, ' ' ORDER BY seq) FROM chunks WHERE doc_id = :d"), {"d": r.doc_id}
            ).scalar()
            or ""
            for p, r in docs.items()
        }
        any_nul = conn.execute(sa.text("SELECT count(*) FROM pages WHERE position(chr(1) in text) > 0")).scalar()
    assert stats["documents"] == len(CASES)
    # 05: encrypted, with a reason, no chunks; the others went on
    assert docs["05_user-password.pdf"].status == "encrypted" and docs["05_user-password.pdf"].reason
    assert texts["05_user-password.pdf"] == ""
    # 01: no ligature code point anywhere, words restored, found by BM25 alone
    t01 = texts["01_ligatures.pdf"]
    assert "financiación" in t01 and "oficina" in t01 and not any(0xFB00 <= ord(c) <= 0xFB06 for c in t01)
    passages = load_passages(index_dir)
    scores, rows = Bm25Index.load(index_dir).search("financiación", k=3)
    top_docs = [passages["doc_id"][int(r)] for r in rows]
    assert docs["01_ligatures.pdf"].doc_id in top_docs
    # 11: the backtracking trap is chunked fast and its text kept
    assert chunk_seconds < 5
    assert "412] y 14 sin dato" in texts["11_sbd-numeric-backtracking.pdf"]
    # 20/22: stored, JSON-safe metadata, NUL stripped
    for name in ("20_nan-infinity.json", "22_nul-escapes.json"):
        assert docs[name].status == "ok"
        json.dumps(docs[name].metadata, allow_nan=False)
    assert "Tumaco" in texts["22_nul-escapes.json"] and "\x00" not in texts["22_nul-escapes.json"]
    assert any_nul == 0
