"""chunks → embeddings, partitioned by content bucket (``assets.partitions``)."""

import dagster as dg
import sqlalchemy as sa

from assets._meta import md_table, to_metadata
from assets.executor import PRODUCER_OP_TAGS
from assets.partitions import CONTENT_PARTITIONS, EAGER, buckets_of
from radar_pipeline import db
from radar_pipeline.stages import chunk_documents, embed_chunks
from resources import ChunkingResource, DatabaseResource, EncoderResource


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="knowledge_base",
    kinds={"postgres", "python"},
    deps=["pages"],
    partitions_def=CONTENT_PARTITIONS,
    automation_condition=EAGER,
    description="Sentence-bounded passages (~500 tokens, ~15 % sentence overlap; ≤ 400 per tabular file) "
    "with stable chunk_ids <doc_id>-<n>.",
)
def chunks(
    context: dg.AssetExecutionContext, database: DatabaseResource, chunking: ChunkingResource
) -> dg.MaterializeResult:
    s = chunking.settings()
    engine = database.engine()
    stats = chunk_documents(
        engine,
        budget=s.chunk_tokens,
        overlap=s.chunk_overlap,
        tabular_max_chunks=s.tabular_max_chunks,
        workers=chunking.worker_count(),
        log=context.log.info,
        buckets=buckets_of(context),
    )
    with engine.begin() as conn:
        sample = [
            r._asdict()
            for r in conn.execute(
                sa.select(db.chunks.c.chunk_id, db.chunks.c.n_tokens, db.chunks.c.text)
                .order_by(sa.func.random())
                .limit(3)
            )
        ]
    return dg.MaterializeResult(
        metadata={**to_metadata(stats), "dagster/row_count": stats["chunks"], "sample": md_table(sample, width=300)}
    )


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="knowledge_base",
    kinds={"postgres", "pgvector"},
    deps=[chunks],
    partitions_def=CONTENT_PARTITIONS,
    automation_condition=EAGER,
    description="Unit-normalized dense vectors per chunk and encoder (cached by chunk text hash).",
)
def embeddings(
    context: dg.AssetExecutionContext, database: DatabaseResource, encoder: EncoderResource
) -> dg.MaterializeResult:
    engine = database.engine()
    enc = encoder.get_encoder()
    from radar_pipeline.config import EmbeddingSettings

    stats = embed_chunks(
        engine,
        enc,
        batch_size=EmbeddingSettings().embed_commit_rows,
        log=context.log.info,
        workers=encoder.worker_count(),
        spec=encoder.spec(),
        buckets=buckets_of(context),
    )
    return dg.MaterializeResult(metadata={**to_metadata(stats), "dagster/row_count": stats["vectors"]})
