"""Partitions of the per-file stages, run through Dagster on a real PostgreSQL: one content bucket
materializes only its own rows, and re-running (retrying) one bucket leaves every other bucket's
rows untouched (same PostgreSQL row versions, ``xmin``)."""

from __future__ import annotations

import dagster as dg
import pytest
import sqlalchemy as sa

from assets import ingestion, knowledge_base
from radar_pipeline.corpus import content_bucket, sha256_file
from resources import ChunkingResource, CorpusResource, DatabaseResource, OcrResource

TOPICS = ["drones armados", "minería ilegal", "basura espacial", "deforestación", "ciberataques", "narcotráfico"]


@pytest.fixture()
def corpus(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    for i in range(24):
        text = " ".join(
            f"El informe {i} trata sobre {TOPICS[(i + j) % len(TOPICS)]} en la región {j}." for j in range(30)
        )
        (root / f"informe_{i:02d}.txt").write_text(text + "\n", encoding="utf-8")
    return root


def _run(resources, partition_key=None, *, all_buckets=False) -> dg.ExecuteInProcessResult:
    assets = [
        a
        for a in dg.load_assets_from_modules(
            [ingestion, knowledge_base], backfill_policy=dg.BackfillPolicy.single_run()
        )
        if "embeddings" not in {k.to_user_string() for k in a.keys}
    ]
    tags = (
        {"dagster/asset_partition_range_start": "0", "dagster/asset_partition_range_end": "f"} if all_buckets else None
    )
    return dg.materialize(assets, resources=resources, partition_key=partition_key, tags=tags)


def _rows(engine, table: str) -> dict[str, str]:
    key = {"source_files": "path", "documents": "doc_id", "chunks": "chunk_id"}[table]
    with engine.connect() as conn:
        return {r[0]: (r[1], str(r[2])) for r in conn.execute(sa.text(f"SELECT {key}, doc_id, xmin FROM {table}"))}


def test_one_bucket_then_all_then_a_retry_of_one_bucket_touches_no_other(engine, pg_url, corpus, tmp_path):
    resources = {
        "database": DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused")),
        "corpus": CorpusResource(corpus_dir=str(corpus), workers=1),
        "ocr": OcrResource(),
        "chunking": ChunkingResource(workers=1),
    }
    bucket_of = {p.name: content_bucket(sha256_file(p)) for p in corpus.iterdir()}
    buckets = sorted(set(bucket_of.values()))
    assert len(buckets) >= 4
    first = buckets[0]

    # a backfill of one partition: only that bucket's files, documents and chunks exist
    assert _run(resources, first).success
    for table in ("source_files", "documents", "chunks"):
        rows = _rows(engine, table)
        assert rows and {content_bucket(d) for d, _ in rows.values()} == {first}, table
    assert len(_rows(engine, "documents")) == sum(1 for b in bucket_of.values() if b == first)

    # the whole range in one run
    assert _run(resources, all_buckets=True).success
    before = {t: _rows(engine, t) for t in ("source_files", "documents", "chunks")}
    assert {content_bucket(d) for d, _ in before["documents"].values()} == set(buckets)

    # one file changes within its bucket; retrying that bucket rewrites its rows and no other
    name = next(n for n, b in bucket_of.items() if b == first)
    for k in range(200):
        new_text = f"Informe revisado {k}: minería ilegal y deforestación en la Amazonía."
        (corpus / name).write_text(new_text + "\n", encoding="utf-8")
        if content_bucket(sha256_file(corpus / name)) == first:
            break
    assert content_bucket(sha256_file(corpus / name)) == first
    result = _run(resources, first)
    assert result.success
    after = {t: _rows(engine, t) for t in ("source_files", "documents", "chunks")}
    for table in after:
        others_before = {k: v for k, v in before[table].items() if content_bucket(v[0]) != first}
        others_after = {k: v for k, v in after[table].items() if content_bucket(v[0]) != first}
        assert others_after == others_before, table  # same rows, same row versions
    assert after["source_files"][name] != before["source_files"][name]
    mats = {m.asset_key.to_user_string(): m for m in result.get_asset_materialization_events()}
    docs_meta = mats["documents"].materialization.metadata
    assert docs_meta["extracted_now"].value == 1 and docs_meta["removed"].value == 1
