"""The Definitions object that workspace.yaml loads: all assets, checks and resources."""

import os

import dagster as dg

from assets import checks, evals, indexes, ingestion, knowledge_base, precompute
from radar_pipeline.config import EncoderSpec, RerankerSpec, get_settings
from resources import (CorpusResource, DatabaseResource, EncoderResource, IndexStoreResource, OcrResource,
                       RerankerResource)

_s = get_settings()

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([ingestion, knowledge_base, indexes, precompute, evals]),
    asset_checks=[*checks.contract_checks, *precompute.precompute_checks, *evals.eval_checks],
    jobs=[
        dg.define_asset_job("knowledge_base_job", selection=dg.AssetSelection.groups("ingestion", "knowledge_base", "indexes"),
                            description="Everything from source files to indexes."),
        dg.define_asset_job("precompute_job", selection=dg.AssetSelection.groups("precomputes"),
                            description="Entities, places, dates, alerts, armed presence and dashboard aggregates."),
        dg.define_asset_job("evaluation_job", selection=dg.AssetSelection.groups("evaluation"),
                            description="Codefest dev and XQuAD evaluations of the default retrieval configuration."),
    ],
    resources={
        "database": DatabaseResource(
            database_url=dg.EnvVar("DATABASE_URL") if os.environ.get("DATABASE_URL") else None,
            pgdata=str(_s.pgdata)),
        "corpus": CorpusResource(corpus_dir=str(_s.corpus), workers=_s.workers),
        "ocr": OcrResource(languages=_s.ocr_languages, dpi=_s.ocr_dpi),
        "encoder": EncoderResource(**EncoderSpec().model_dump(exclude={"max_seq_length"})),
        "reranker": RerankerResource(**RerankerSpec().model_dump(exclude={"max_seq_length"})),
        "index_store": IndexStoreResource(index_dir=str(_s.index_dir)),
    },
)
