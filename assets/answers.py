"""Past answers against today's knowledge base (issue 25 §2): the ``stale_answers`` asset flags every
stored /chat answer that cites a passage a later materialization closed (superseded or retracted),
and its check counts them. Thin over ``radar_pipeline.agent.staleness``.

It depends on ``documents`` and ``chunks`` (every content bucket), so the background automation
sensor runs it eagerly after any run that may have closed a passage; a retraction flags at once
(``precompute.pipeline.propagate_retraction``).
"""

import dagster as dg
import sqlalchemy as sa
from dagster import AssetExecutionContext

from assets._meta import md_table, to_metadata
from radar_pipeline.agent.staleness import flag_stale_answers, stale_counts
from resources import DatabaseResource

GROUP = "knowledge"
CODE_VERSION = "1"


@dg.asset(
    group_name=GROUP,
    kinds={"postgres"},
    code_version=CODE_VERSION,
    deps=["documents", "chunks"],
    description="Citations of past /chat answers whose passage is no longer current: which citation, why "
    "(superseded: new bytes, removed file or re-extraction; retracted) and what replaced it (the current "
    "passage with the same text, else at the same position; whether its text differs from the one the "
    "answer read). GET /runs/{id}, the trace and the dashboard show the answer as stale.",
)
def stale_answers(context: AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
    engine = database.engine()
    st = flag_stale_answers(engine, detected_by=f"dagster:{context.run.run_id}")
    meta = to_metadata(st)
    meta["dagster/row_count"] = dg.MetadataValue.int(int(st["stale_citations"]))
    with engine.connect() as conn:
        rows = [
            dict(r._mapping)
            for r in conn.execute(
                sa.text(
                    "SELECT run_id, n, chunk_id, reason, replaced_by, text_changed FROM answer_stale_citations "
                    "WHERE cleared_at IS NULL ORDER BY detected_at DESC LIMIT 5"
                )
            )
        ]
    meta["sample"] = md_table(rows, width=60)
    context.log.info(
        f"stale answers: {st['stale_answers']} ({st['stale_citations']} citations; {st['flagged']} new, "
        f"{st['cleared']} cleared)"
    )
    return dg.MaterializeResult(metadata=meta)


@dg.asset_check(
    asset=stale_answers,
    name="stale_answers_counted",
    blocking=False,
    description="how many past answers cite a passage that is no longer current (warns while any does: "
    "re-ask them, or read `radar trace RUN_ID` / GET /runs/{id} for what replaced each citation)",
)
def stale_answers_check(database: DatabaseResource) -> dg.AssetCheckResult:
    c = stale_counts(database.engine())
    return dg.AssetCheckResult(
        passed=c["stale_answers"] == 0,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "stale_answers": dg.MetadataValue.int(c["stale_answers"]),
            "stale_citations": dg.MetadataValue.int(c["stale_citations"]),
            "by_reason": dg.MetadataValue.json(c["by_reason"]),
            "examples": dg.MetadataValue.text("; ".join(c["examples"]) or "-"),
        },
    )


answers_checks = [stale_answers_check]
