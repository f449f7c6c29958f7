"""Claims and entity resolution (issue 13, "Knowledge hygiene"): statements with evidence, stance
and two times, built by rules from the precomputes — no generative model — and alias decisions
that never force a merge. Thin assets over ``radar_pipeline.claims``.

Retraction is an input of the builder: the asset passes the ``retractions`` table
(``claims.links.retractions``), so a claim left without counting evidence is ``retracted``.
"""

import json
from pathlib import Path

import dagster as dg
import sqlalchemy as sa
from dagster import AssetExecutionContext

from assets._meta import md_table, to_metadata
from radar_pipeline.claims.build import CODE_VERSION, materialize_alias_decisions, materialize_claims
from radar_pipeline.claims.links import retractions
from radar_pipeline.claims.store import check_evidence, check_single_current, provenance_coverage
from resources import DatabaseResource

GROUP = "knowledge"
REPORT_NAME = "claims_eval.json"


def report_path() -> Path:
    """Where ``claims_evaluation`` writes its report: ``StorageSettings.reports`` (``<home>/reports``)."""
    from radar_pipeline.config import StorageSettings

    return StorageSettings().reports / REPORT_NAME


def _engine(database: DatabaseResource) -> sa.Engine:
    from radar_pipeline import db
    from radar_pipeline.precompute import tables as T

    engine = database.engine()
    db.ensure_schema(engine)
    T.ensure_precompute_schema(engine)
    return engine


def _sample(engine: sa.Engine, sql: str) -> dg.MetadataValue:
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(sa.text(sql))]
    return md_table(rows, limit=5, width=140)


@dg.asset(
    group_name=GROUP,
    kinds={"postgres"},
    code_version=CODE_VERSION,
    deps=[
        "armed_presence",
        "early_warnings",
        "entity_mentions",
        "place_mentions",
        "publication_dates",
        "entity_dictionary",
        "place_gazetteer",
        "chunks",
    ],
    description="Claims (subject, predicate, object over canonical ids) built by rules from the presence "
    "records, the Ombudsman early warnings and the entity mentions, with their claim_evidence (passage, "
    "stance supports/contradicts, quoted span); valid time from the sources' own dates, transaction time "
    "recorded_at/superseded_at; append-only (a changed claim closes its version). Conflicts: source "
    "authority, then recency (radar_pipeline/claims/policy.py).",
)
def claims(context: AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
    engine = _engine(database)
    st = materialize_claims(engine, retracted=retractions(engine), log=context.log.info)
    meta = to_metadata({k: v for k, v in st.items() if k not in ("write",)})
    meta.update({f"write_{k}": dg.MetadataValue.int(int(v)) for k, v in st["write"].items()})
    meta["dagster/row_count"] = dg.MetadataValue.int(int(st["write"]["current"]))
    meta["sample"] = _sample(
        engine,
        "SELECT claim_id, predicate, statement, status, valid_from, n_supporting, n_contradicting "
        "FROM claims WHERE superseded_at IS NULL ORDER BY random() LIMIT 5",
    )
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    group_name=GROUP,
    kinds={"postgres"},
    code_version=CODE_VERSION,
    deps=["entity_dictionary", "place_gazetteer", "armed_presence", "place_mentions"],
    description="Alias decisions for entities, armed groups and places: same / different / unresolved with "
    "the deciding signal (official code > curated dictionary > context rule); unresolved aliases go to "
    "the review queue (`radar review`), never merged; a reviewer's decision supersedes the automatic one.",
)
def alias_decisions(database: DatabaseResource) -> dg.MaterializeResult:
    engine = _engine(database)
    st = materialize_alias_decisions(engine)
    meta = to_metadata(st)
    meta["dagster/row_count"] = dg.MetadataValue.int(int(st.get("current", 0)))
    meta["sample"] = _sample(
        engine,
        "SELECT kind, alias, decision, signal, candidate_a, candidate_b FROM alias_decisions "
        "WHERE superseded_at IS NULL ORDER BY random() LIMIT 5",
    )
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    group_name=GROUP,
    kinds={"python"},
    code_version=CODE_VERSION,
    deps=[claims, alias_decisions],
    description="Provenance coverage of every claim version (evidence ids resolve; must be 1.0) and "
    "alias-cluster precision/recall against DIVIPOLA codes (evals/claims/aliases.py); the labelled claim "
    "precision is scored offline by evals/claims/score.py.",
)
def claims_evaluation(database: DatabaseResource) -> dg.MaterializeResult:
    from evals.claims import aliases

    engine = _engine(database)
    prov = provenance_coverage(engine)
    report = {
        "provenance": prov,
        "aliases": aliases.score(aliases.build_sample(engine), aliases.gazetteer_index(engine)),
    }
    out = report_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    a = report["aliases"]["with_department"]
    return dg.MaterializeResult(
        metadata={
            "provenance_coverage": dg.MetadataValue.float(float(prov["coverage"])),
            "claim_versions": dg.MetadataValue.int(prov["claim_versions"]),
            "alias_precision": dg.MetadataValue.float(float(a["precision"] or 0.0)),
            "alias_recall": dg.MetadataValue.float(float(a["recall"] or 0.0)),
            "report": dg.MetadataValue.json(report),
            "report_path": dg.MetadataValue.path(str(out)),
        }
    )


@dg.asset_check(
    asset=claims,
    name="every_claim_quotes_existing_evidence",
    blocking=True,
    description="every current claim has ≥ 1 evidence row; every evidence row's chunk exists in its "
    "document and chunks.text[span_start:span_end] equals the quoted span",
)
def claims_evidence_check(database: DatabaseResource) -> dg.AssetCheckResult:
    r = check_evidence(_engine(database))
    return dg.AssetCheckResult(
        passed=bool(r["ok"]),
        metadata={k: (dg.MetadataValue.json(v) if isinstance(v, list) else v) for k, v in r.items() if k != "ok"},
    )


@dg.asset_check(
    asset=claims,
    name="one_current_version_per_claim",
    blocking=True,
    description="no claim_id has two versions with superseded_at NULL",
)
def claims_single_current_check(database: DatabaseResource) -> dg.AssetCheckResult:
    r = check_single_current(_engine(database))
    return dg.AssetCheckResult(
        passed=bool(r["ok"]),
        metadata={"duplicated_claim_ids": r["duplicated_claim_ids"], "examples": dg.MetadataValue.json(r["examples"])},
    )


@dg.asset_check(
    asset=alias_decisions,
    name="no_forced_merge",
    blocking=True,
    description="one current decision per alias key; no automatic 'same' decided by a context rule "
    "while the alias has several candidates; every open review item is an unresolved alias",
)
def alias_no_forced_merge_check(database: DatabaseResource) -> dg.AssetCheckResult:
    engine = _engine(database)
    with engine.connect() as conn:
        dup, forced, stray = conn.execute(
            sa.text(
                "SELECT (SELECT count(*) FROM (SELECT decision_key FROM alias_decisions WHERE superseded_at IS NULL "
                "GROUP BY 1 HAVING count(*) > 1) d), "
                "(SELECT count(*) FROM alias_decisions WHERE superseded_at IS NULL AND decision = 'same' "
                "AND signal = 'context_rule' AND jsonb_array_length(candidates) > 1), "
                "(SELECT count(*) FROM alias_review r WHERE r.closed_at IS NULL AND NOT EXISTS (SELECT 1 FROM "
                "alias_decisions a WHERE a.decision_key = r.decision_key AND a.superseded_at IS NULL "
                "AND a.decision = 'unresolved'))"
            )
        ).one()
    return dg.AssetCheckResult(
        passed=dup == 0 and forced == 0 and stray == 0,
        metadata={"duplicate_current": int(dup), "forced_merges": int(forced), "open_items_not_unresolved": int(stray)},
    )


claims_checks = [claims_evidence_check, claims_single_current_check, alias_no_forced_merge_check]
