"""The Definitions object that workspace.yaml loads: all assets, checks, jobs and resources.

Loading it evaluates no settings: every resource is built with its fields unset and reads them
from the environment (``radar_pipeline.config``) when a run uses it, so the same code location
serves any ``RADAR_HOME``/``DATABASE_URL``/... and tests can vary them.
"""

import dagster as dg

from assets import checks, claims, evals, indexes, ingestion, knowledge_base, precompute
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
    assets=dg.load_assets_from_modules([ingestion, knowledge_base, indexes, precompute, claims, evals]),
    asset_checks=[
        *checks.contract_checks,
        *checks.version_checks,
        *precompute.precompute_checks,
        *claims.claims_checks,
        *evals.eval_checks,
    ],
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
            "claims_job",
            selection=dg.AssetSelection.groups("knowledge"),
            description="Claims with evidence and two times, alias decisions, and their evaluation.",
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
)
