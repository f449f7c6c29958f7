"""source_files → documents + pages, partitioned by content bucket (``assets.partitions``)."""

import dagster as dg
import sqlalchemy as sa

from assets._meta import md_table, to_metadata
from assets.executor import PRODUCER_OP_TAGS
from assets.partitions import CONTENT_PARTITIONS, EAGER, buckets_of
from radar_pipeline import db
from radar_pipeline.stages import extract_documents, sync_source_files
from resources import CorpusResource, DatabaseResource, OcrResource


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="ingestion",
    kinds={"postgres", "python"},
    partitions_def=CONTENT_PARTITIONS,
    description="Every file under the corpus root: relative path, size, SHA-256, content-derived doc_id, "
    "extension, phenomenon from its folder, publication-date hint from its path. Partition = content bucket "
    "(first hex digit of the SHA-256); started by the corpus_sensor for the buckets a change touches.",
)
def source_files(
    context: dg.AssetExecutionContext, database: DatabaseResource, corpus: CorpusResource
) -> dg.MaterializeResult:
    engine = database.engine()
    stats = sync_source_files(engine, corpus.root, log=context.log.info, buckets=buckets_of(context))
    with engine.begin() as conn:
        sample = [
            r._asdict()
            for r in conn.execute(
                sa.select(
                    db.source_files.c.path,
                    db.source_files.c.doc_id,
                    db.source_files.c.phenomenon,
                    db.source_files.c.date_hint,
                ).limit(5)
            )
        ]
    return dg.MaterializeResult(
        metadata={
            **to_metadata(stats),
            "dagster/row_count": stats["files"],
            "corpus_dir": str(corpus.root),
            "sample": md_table(sample),
        }
    )


@dg.multi_asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name="ingestion",
    partitions_def=CONTENT_PARTITIONS,
    specs=[
        dg.AssetSpec(
            "documents",
            kinds={"postgres"},
            skippable=False,
            deps=[source_files],
            automation_condition=EAGER,
            description="One row per distinct content: format, status (ok/partial/damaged/encrypted/corrupt/"
            "empty/unsupported) and reason, language, pages, source paths.",
        ),
        dg.AssetSpec(
            "pages",
            kinds={"postgres"},
            deps=[source_files],
            automation_condition=EAGER,
            description="Normalized text per PDF page (text layer or OCR, with the reason) or per record "
            "of a tabular file.",
        ),
    ],
)
def documents_and_pages(
    context: dg.AssetExecutionContext, database: DatabaseResource, corpus: CorpusResource, ocr: OcrResource
):
    engine = database.engine()
    stats = extract_documents(
        engine,
        corpus.root,
        ocr.settings(),
        workers=corpus.worker_count(),
        log=context.log.info,
        buckets=buckets_of(context),
    )
    with engine.begin() as conn:
        sample = [
            r._asdict()
            for r in conn.execute(
                sa.select(
                    db.documents.c.doc_id,
                    db.documents.c.primary_path,
                    db.documents.c.format,
                    db.documents.c.status,
                    db.documents.c.language,
                    db.documents.c.n_pages,
                )
                .order_by(db.documents.c.doc_id)
                .limit(5)
            )
        ]
        by_source = dict(conn.execute(sa.select(db.pages.c.source, sa.func.count()).group_by(db.pages.c.source)).all())
    doc_meta = {k: v for k, v in stats.items() if k not in ("pages", "ocr_pages")}
    yield dg.MaterializeResult(
        asset_key="documents",
        metadata={**to_metadata(doc_meta), "dagster/row_count": stats["documents"], "sample": md_table(sample)},
    )
    yield dg.MaterializeResult(
        asset_key="pages",
        metadata={
            "dagster/row_count": stats["pages"],
            "ocr_pages": stats["ocr_pages"],
            "pages_by_source": dg.MetadataValue.json(by_source),
        },
    )
