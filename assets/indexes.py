"""faiss_index, pgvector_index and bm25_index over the embedded chunks."""

import time

import dagster as dg

from assets._meta import to_metadata
from radar_pipeline.stages import build_bm25_index, build_faiss_index
from radar_pipeline.stores.pg_store import ensure_hnsw_index, hnsw_index_name
from resources import DatabaseResource, EncoderResource, IndexStoreResource


@dg.asset(group_name="indexes", kinds={"faiss"}, deps=["embeddings"],
          description="FAISS IndexFlatIP (exact cosine on unit vectors) + the row-aligned passages.parquet.")
def faiss_index(context: dg.AssetExecutionContext, database: DatabaseResource, encoder: EncoderResource,
                index_store: IndexStoreResource) -> dg.MaterializeResult:
    name = encoder.get_encoder().name
    stats = build_faiss_index(database.engine(), name, index_store.for_encoder(name), log=context.log.info)
    return dg.MaterializeResult(metadata={**to_metadata(stats), "encoder": name, "dagster/row_count": stats["rows"]})


@dg.asset(group_name="indexes", kinds={"bm25"}, deps=["chunks", faiss_index],
          description="bm25s lexical index over the same passages, rows aligned with faiss_index.")
def bm25_index(context: dg.AssetExecutionContext, encoder: EncoderResource, index_store: IndexStoreResource) -> dg.MaterializeResult:
    name = encoder.get_encoder().name
    stats = build_bm25_index(index_store.for_encoder(name), log=context.log.info)
    return dg.MaterializeResult(metadata={**to_metadata(stats), "dagster/row_count": stats["rows"]})


@dg.asset(group_name="indexes", kinds={"pgvector"}, deps=["embeddings"],
          description="HNSW (cosine) index on the encoder's vectors in PostgreSQL, for the service.")
def pgvector_index(context: dg.AssetExecutionContext, database: DatabaseResource, encoder: EncoderResource) -> dg.MaterializeResult:
    enc = encoder.get_encoder()
    t0 = time.perf_counter()
    created = ensure_hnsw_index(database.engine(), enc.name, enc.dim)
    seconds = round(time.perf_counter() - t0, 3)
    context.log.info(f"pgvector_index: {'built' if created else 'already present'} in {seconds}s")
    return dg.MaterializeResult(metadata={"index": hnsw_index_name(enc.name), "created_now": created,
                                          "build_seconds": seconds, "encoder": enc.name, "dim": enc.dim})
