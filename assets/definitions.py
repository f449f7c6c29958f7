"""The Definitions object that workspace.yaml loads: all assets, checks, jobs and resources.

Loading it evaluates no settings: every resource is built with its fields unset and reads them
from the environment (``radar_pipeline.config``) when a run uses it, so the same code location
serves any ``RADAR_HOME``/``DATABASE_URL``/... and tests can vary them. The one exception is the
executor, part of the definitions: ``RADAR_EXECUTOR`` (``assets.executor``) picks Dagster's default
or Celery workers when the code location loads.
"""

import dagster as dg

from assets import checks, evals, indexes, ingestion, knowledge_base, precompute
from assets.executor import radar_executor
from resources import (
    ChunkingResource,
    CorpusResource,
    DatabaseResource,
    EncoderResource,
    IndexStoreResource,
    OcrResource,
    PrecomputeResource,
    RerankerResource,
)

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([ingestion, knowledge_base, indexes, precompute, evals]),
    asset_checks=[*checks.contract_checks, *precompute.precompute_checks, *evals.eval_checks],
    jobs=[
        dg.define_asset_job(
            "knowledge_base_job",
            selection=dg.AssetSelection.groups("ingestion", "knowledge_base", "indexes"),
            description="Everything from source files to indexes.",
        ),
        dg.define_asset_job(
            "precompute_job",
            selection=dg.AssetSelection.groups("precomputes"),
            description="Entities, places, dates, alerts, armed presence and dashboard aggregates.",
        ),
        dg.define_asset_job(
            "evaluation_job",
            selection=dg.AssetSelection.groups("evaluation"),
            description="Codefest dev and XQuAD evaluations of the default retrieval configuration.",
        ),
    ],
    resources={
        "database": DatabaseResource(),
        "corpus": CorpusResource(),
        "ocr": OcrResource(),
        "chunking": ChunkingResource(),
        "encoder": EncoderResource(),
        "reranker": RerankerResource(),
        "index_store": IndexStoreResource(),
        "precompute": PrecomputeResource(),
    },
    executor=radar_executor(),
)
