"""faiss_index, pgvector_index, bm25_index and pg_bm25_index over the embedded chunks; the
re-ranker's vectors (``rerank_vectors``, per content bucket) and their row-aligned export
(``rerank_index``).

Every index depends on all partitions of the per-file stages (Dagster's default mapping from an
unpartitioned asset to a partitioned one) and follows them by ``AutomationCondition.eager()``."""

import time

import dagster as dg
from pydantic import Field

from assets._meta import to_metadata
from assets.executor import PRODUCER_OP_TAGS
from assets.partitions import CONTENT_PARTITIONS, EAGER, buckets_of
from radar_pipeline.config import RerankBudget
from radar_pipeline.retrieval.search import retrieval_fingerprint_config
from radar_pipeline.stages import (
    build_faiss_index,
    build_lexical_index,
    embed_chunks,
    export_pg_bm25,
    export_rerank_vectors,
)
from radar_pipeline.stores.integrity import index_write_lock
from radar_pipeline.stores.pg_store import ensure_hnsw_index, hnsw_index_name
from resources import DatabaseResource, EncoderResource, IndexStoreResource, RerankerResource

# The assets that write the index directory (files swapped in and sealed in one manifest) hold its
# writer lock (stores.integrity.index_write_lock): one at a time across runs, since the corpus
# sensor's runs and the index automation's may both build them. An OS file lock rather than a Dagster
# concurrency pool: a pool slot held by a run killed outright (kill -9 without run monitoring) was
# never released, and the next run waited for ever (tests/assets/test_faults.py).


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="indexes",
    kinds={"bm25"},
    deps=["chunks"],
    automation_condition=EAGER,
    description="The passage table (every chunk, in (doc_id, seq) order) and the bm25s lexical index over "
    "it. Needs no embeddings: the service answers, lexical-only, as soon as this exists.",
)
def bm25_index(
    context: dg.AssetExecutionContext,
    database: DatabaseResource,
    encoder: EncoderResource,
    index_store: IndexStoreResource,
) -> dg.MaterializeResult:
    name = encoder.get_encoder().name
    with index_write_lock(index_store.for_encoder(name)) as index_dir:
        stats = build_lexical_index(database.engine(), name, index_dir, log=context.log.info)
    return dg.MaterializeResult(metadata={**to_metadata(stats), "dagster/row_count": stats["rows"]})


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="indexes",
    kinds={"faiss"},
    deps=["embeddings", bm25_index],
    automation_condition=EAGER,
    description="FAISS IndexFlatIP (exact cosine on unit vectors), row-aligned with bm25_index's passage table.",
)
def faiss_index(
    context: dg.AssetExecutionContext,
    database: DatabaseResource,
    encoder: EncoderResource,
    index_store: IndexStoreResource,
) -> dg.MaterializeResult:
    enc = encoder.get_encoder()
    with index_write_lock(index_store.for_encoder(enc.name)) as index_dir:
        stats = build_faiss_index(
            database.engine(),
            enc.name,
            index_dir,
            log=context.log.info,
            encoder_version=enc.version,
            retrieval=retrieval_fingerprint_config(),
        )
    return dg.MaterializeResult(
        metadata={**to_metadata(stats), "encoder": enc.name, "dagster/row_count": stats["rows"]}
    )


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="indexes",
    kinds={"pgvector"},
    deps=["embeddings"],
    automation_condition=EAGER,
    description="HNSW (cosine) index on the encoder's vectors in PostgreSQL, for the service.",
)
def pgvector_index(
    context: dg.AssetExecutionContext, database: DatabaseResource, encoder: EncoderResource
) -> dg.MaterializeResult:
    enc = encoder.get_encoder()
    t0 = time.perf_counter()
    created = ensure_hnsw_index(database.engine(), enc.name, enc.dim)
    seconds = round(time.perf_counter() - t0, 3)
    context.log.info(f"pgvector_index: {'built' if created else 'already present'} in {seconds}s")
    return dg.MaterializeResult(
        metadata={
            "index": hnsw_index_name(enc.name),
            "created_now": created,
            "build_seconds": seconds,
            "encoder": enc.name,
            "dim": enc.dim,
        }
    )


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="indexes",
    kinds={"postgres"},
    deps=[bm25_index],
    automation_condition=EAGER,
    description="The BM25 index exported into PostgreSQL (bm25_terms, bm25_rows): the lexical ranker of "
    "RADAR_INDEX_BACKEND=pgvector, with the same weights as bm25_index.",
)
def pg_bm25_index(
    context: dg.AssetExecutionContext,
    database: DatabaseResource,
    encoder: EncoderResource,
    index_store: IndexStoreResource,
) -> dg.MaterializeResult:
    name = encoder.get_encoder().name
    stats = export_pg_bm25(database.engine(), name, index_store.for_encoder(name), log=context.log.info)
    return dg.MaterializeResult(metadata={**to_metadata(stats), "encoder": name, "dagster/row_count": stats["rows"]})


class RerankVectorsConfig(dg.Config):
    """How much encoding one materialization may do (the rest is encoded at query time, and by
    the next materialization)."""

    budget_minutes: float | None = Field(
        default=None, description="0 = no limit; unset: RADAR_RERANK_BUDGET_MINUTES, else 0"
    )
    workers: int | None = Field(
        default=None, description="encoding processes; unset: the reranker resource's workers (RADAR_WORKERS)"
    )


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="indexes",
    kinds={"postgres"},
    deps=["chunks"],
    partitions_def=CONTENT_PARTITIONS,
    automation_condition=EAGER,
    description="Second-stage (re-ranker) vectors: multilingual-e5-small over each passage's first words, "
    "stored in PostgreSQL by text hash, per content bucket. Resumable within a per-run time budget; "
    "passages without one are encoded at query time.",
)
def rerank_vectors(
    context: dg.AssetExecutionContext,
    config: RerankVectorsConfig,
    database: DatabaseResource,
    reranker: RerankerResource,
) -> dg.MaterializeResult:
    rr = reranker.get_reranker()
    if rr is None:
        context.log.info("rerank_vectors: re-ranker switched off (kind=none)")
        return dg.MaterializeResult(metadata={"encoder": "none"})
    minutes = config.budget_minutes if config.budget_minutes is not None else RerankBudget().rerank_budget_minutes
    budget = RerankBudget(rerank_budget_minutes=minutes).rerank_budget_seconds
    workers = config.workers if config.workers is not None else reranker.worker_count()
    emb = embed_chunks(
        database.engine(),
        rr,
        batch_size=64,
        log=context.log.info,
        workers=workers,
        spec=reranker.spec(),
        budget_seconds=budget,
        buckets=buckets_of(context),
    )
    return dg.MaterializeResult(metadata={**to_metadata(emb), "dagster/row_count": emb["vectors"]})


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="indexes",
    kinds={"numpy"},
    deps=[rerank_vectors, faiss_index],
    automation_condition=EAGER,
    description="The re-ranker vectors exported row-aligned with faiss_index (rerank/<encoder>.npz), matched "
    "by text hash; coverage = share of passages with a precomputed vector.",
)
def rerank_index(
    context: dg.AssetExecutionContext,
    database: DatabaseResource,
    encoder: EncoderResource,
    reranker: RerankerResource,
    index_store: IndexStoreResource,
) -> dg.MaterializeResult:
    rr = reranker.get_reranker()
    if rr is None:
        context.log.info("rerank_index: re-ranker switched off (kind=none)")
        return dg.MaterializeResult(metadata={"encoder": "none"})
    with index_write_lock(index_store.for_encoder(encoder.get_encoder().name)) as index_dir:
        out = export_rerank_vectors(database.engine(), rr.name, index_dir, log=context.log.info)
    return dg.MaterializeResult(metadata={**to_metadata(out), "dagster/row_count": out["rows"]})
