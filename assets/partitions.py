"""The partitions of the per-file stages and the automation conditions the pipeline runs by.

Per-file stages (``source_files``, ``documents``/``pages``, ``chunks``, ``embeddings``,
``rerank_vectors``) are partitioned by content bucket: the first hex digit of the content id
(``radar_pipeline.corpus.CONTENT_BUCKETS``, 16 static partitions). A new file's bucket is known
from its bytes, so the corpus sensor (``assets.automation``) requests exactly the buckets a change
touches; a backfill or the retry of a failed bucket is an ordinary Dagster partition run; and
``radar materialize`` runs the whole range ``0...f`` in one run (``BackfillPolicy.single_run``,
set on every asset by ``assets.definitions``). Why buckets and not dynamic partitions per file or
per collection: ARCHITECTURE.md, "Partitions".

Everything downstream of a per-file stage follows by declarative automation: ``EAGER`` (run as
soon as a dependency updated, or while missing, once none is missing or in progress); the
evaluations follow ``EVALUATION_CRON``.
"""

from __future__ import annotations

import dagster as dg

from radar_pipeline.corpus import CONTENT_BUCKETS

CONTENT_PARTITIONS = dg.StaticPartitionsDefinition(list(CONTENT_BUCKETS))
FULL_RANGE = f"{CONTENT_BUCKETS[0]}...{CONTENT_BUCKETS[-1]}"  # `--partition-range` of a whole-corpus run

# Dagster's ``eager()`` starts an asset that *becomes* missing, never one that was already missing
# when the condition was first evaluated (its ``newly_missing`` guard against a flood of runs when a
# sensor is turned on). On an empty home (``make up`` on a fresh clone) that left the precomputes
# without dependencies among the per-file stages (the entity dictionary and the gazetteer, read
# from Radar's own YAML) unbuilt for ever, and everything downstream of them (mentions, alerts,
# aggregates, claims) with them. ``MISSING`` builds a missing asset once nothing it reads is missing
# or in progress; a failed execution is not retried in a loop (``execution_failed``: the next
# upstream update or a manual run retries it).
MISSING = (
    dg.AutomationCondition.missing()
    & ~dg.AutomationCondition.in_progress()
    & ~dg.AutomationCondition.execution_failed()
    & ~dg.AutomationCondition.any_deps_missing()
    & ~dg.AutomationCondition.any_deps_in_progress()
).with_label("missing")
EAGER = (dg.AutomationCondition.eager() | MISSING).with_label("eager or missing")
# The mentions read the reviewers' alias decisions too (issue 25 §1): the external asset
# ``reviewer_decisions`` (``assets.automation.review_sensor`` records each decision or undo). It may
# never have been recorded (no reviewer yet), so it is ignored when ``EAGER`` asks whether a dependency
# is missing, and a new record of it is a reason of its own to run.
REVIEW = dg.AssetSelection.assets("reviewer_decisions")
REVIEWED = (
    dg.AutomationCondition.eager().ignore(REVIEW)
    | MISSING.replace("any_deps_missing", dg.AutomationCondition.any_deps_missing().ignore(REVIEW))
    | (
        dg.AutomationCondition.any_deps_updated().allow(REVIEW)
        & ~dg.AutomationCondition.in_progress()
        & ~dg.AutomationCondition.any_deps_in_progress()
    ).with_label("a reviewer decided")
).with_label("eager, missing, or a reviewer decided")
# The evaluations re-run at 03:00 (server time) once every dependency has updated since the
# previous tick; the weekly schedule in assets.automation re-runs them regardless.
EVALUATION_CRON = "0 3 * * *"
ON_EVALUATION_CRON = dg.AutomationCondition.on_cron(EVALUATION_CRON)


def buckets_of(context: dg.AssetExecutionContext) -> list[str]:
    """The content buckets a partitioned run covers (one key, or a range in a single-run backfill)."""
    return list(context.partition_keys)
