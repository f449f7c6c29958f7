"""The Definitions object that workspace.yaml loads: all assets, checks, jobs and resources.

Every asset runs with ``BackfillPolicy.single_run()``: a partition range of the per-file stages
(``radar materialize``: ``0...f``) is one run, as before partitions. Automation (sensors, the
schedule, the automation conditions): ``assets.automation`` and ``assets.partitions``.

Loading it evaluates no settings: every resource is built with its fields unset and reads them
from the environment (``radar_pipeline.config``) when a run uses it, so the same code location
serves any ``RADAR_HOME``/``DATABASE_URL``/... and tests can vary them. The one exception is the
executor, part of the definitions: ``RADAR_EXECUTOR`` (``assets.executor``) picks the local executor
(Dagster's default, which also reads the daemon's run tags) or Celery workers when the code location
loads.
"""

import dagster as dg

from assets import answers, checks, claims, evals, indexes, ingestion, knowledge_base, precompute
from assets.automation import (
    automation_sensor,
    background_automation_sensor,
    corpus_sensor,
    evaluation_schedule,
    index_automation_sensor,
    long_automation_sensor,
    review_sensor,
    reviewer_decisions,
)
from assets.executor import radar_executor
from assets.partitions import EAGER, ON_EVALUATION_CRON, REVIEWED
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

_SINGLE_RUN = dg.BackfillPolicy.single_run()
_MENTIONS = {dg.AssetKey("entity_mentions"), dg.AssetKey("place_mentions")}


def _follow_reviewers(a: dg.AssetsDefinition) -> dg.AssetsDefinition:
    """The mentions also run when a reviewer decides (``REVIEWED``); every other asset keeps ``EAGER``."""
    if not set(a.keys) & _MENTIONS:
        return a
    return a.map_asset_specs(lambda s: s.replace_attributes(automation_condition=REVIEWED))


defs = dg.Definitions(
    assets=[
        # per-file stages and indexes carry their own automation conditions (the corpus sensor
        # starts source_files); precomputes and claims follow eagerly, evaluations on their cron
        *dg.load_assets_from_modules([ingestion, knowledge_base, indexes], backfill_policy=_SINGLE_RUN),
        *map(
            _follow_reviewers,
            dg.load_assets_from_modules(
                [precompute, claims, answers], backfill_policy=_SINGLE_RUN, automation_condition=EAGER
            ),
        ),
        reviewer_decisions,
        *dg.load_assets_from_modules([evals], backfill_policy=_SINGLE_RUN, automation_condition=ON_EVALUATION_CRON),
    ],
    asset_checks=[
        *checks.contract_checks,
        *checks.version_checks,
        *precompute.precompute_checks,
        *claims.claims_checks,
        *answers.answers_checks,
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
            description="Claims with evidence and two times, alias decisions, their evaluation, and the stale-answer flags.",
        ),
        dg.define_asset_job(
            "evaluation_job",
            selection=dg.AssetSelection.groups("evaluation"),
            description="Codefest dev and XQuAD evaluations of the default retrieval configuration.",
        ),
    ],
    sensors=[
        corpus_sensor,
        index_automation_sensor,
        automation_sensor,
        background_automation_sensor,
        long_automation_sensor,
        review_sensor,
    ],
    schedules=[evaluation_schedule],
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
