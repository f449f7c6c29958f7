"""Precomputes (SPEC "Stage 1b"): entities, places, dates, early warnings, armed presence and the
dashboard aggregates — every figure computed once, downstream of the knowledge base, with the
``doc_id``/``chunk_id`` of the passages it counts. No generative model, no invented score.

Thin assets: each calls one ``radar_pipeline.precompute.pipeline`` function and attaches its
stats and a sample. Tables keep history (``valid_from``/``valid_to``, ``run_id``, ``producer``);
read the ``<table>_current`` views for the current state.
"""

import json

import dagster as dg
import sqlalchemy as sa
from dagster import AssetCheckExecutionContext, AssetExecutionContext

from assets._meta import md_table, to_metadata
from assets.checks import pandera_contract_check
from assets.executor import PRODUCER_OP_TAGS
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.evidence import verify_evidence
from radar_pipeline.precompute.pipeline import (
    CODE_VERSION,
    materialize_aggregates,
    materialize_armed_presence,
    materialize_early_warnings,
    materialize_entity_dictionary,
    materialize_gazetteer,
    materialize_mentions,
    materialize_publication_dates,
)
from radar_pipeline.precompute.schemas import PRECOMPUTE_QUERIES, PRECOMPUTE_SCHEMAS
from resources import DatabaseResource, PrecomputeResource

GROUP = "precomputes"
KB = ["documents", "pages", "chunks"]


def _engine(database: DatabaseResource) -> sa.Engine:
    engine = database.engine()
    T.ensure_precompute_schema(engine)
    return engine


def _sample(engine: sa.Engine, sql: str, width: int = 160) -> dg.MetadataValue:
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(sa.text(sql))]
    return md_table(rows, limit=5, width=width)


def _meta(stats: dict, table: str, rows_key: str | None = None) -> dict:
    out = to_metadata({k: v for k, v in stats.items() if not k.startswith(tuple(T.VERSIONED_TABLES))})
    out["dagster/row_count"] = dg.MetadataValue.int(int(stats.get(rows_key or f"{table}.rows_current", 0)))
    for k in ("rows_inserted", "rows_superseded", "rows_unchanged"):
        if f"{table}.{k}" in stats:
            out[k] = dg.MetadataValue.int(int(stats[f"{table}.{k}"]))
    return out


# ---------------------------------------------------------------------- dictionary and gazetteer
@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    kinds={"postgres", "yaml"},
    code_version=CODE_VERSION,
    description="The reviewed entity dictionary (radar_pipeline/precompute/data/entities.yaml): actors, "
    "programs, technologies and armed groups per phenomenon, aliases es/en/pt, decoys, version.",
)
def entity_dictionary(database: DatabaseResource, precompute: PrecomputeResource) -> dg.MaterializeResult:
    engine = _engine(database)
    cfg = precompute.config()
    st = materialize_entity_dictionary(engine, cfg.dictionary())
    return dg.MaterializeResult(
        metadata={
            **_meta(st, "entity_dictionary"),
            "sample": _sample(
                engine,
                "SELECT entity_id, category, phenomenon, jsonb_array_length(aliases) AS aliases, dictionary_version "
                "FROM entity_dictionary_current ORDER BY random() LIMIT 5",
            ),
        }
    )


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    kinds={"postgres", "geojson"},
    code_version=CODE_VERSION,
    description="Countries (Natural Earth, ISO codes), Colombian departments and municipalities (DIVIPOLA; "
    "Bogotá D.C. = 11/11001, not Cundinamarca) from ../shared/geo plus data/places.yaml.",
)
def place_gazetteer(database: DatabaseResource, precompute: PrecomputeResource) -> dg.MaterializeResult:
    engine = _engine(database)
    st = materialize_gazetteer(engine, precompute.config().gazetteer())
    return dg.MaterializeResult(
        metadata={
            **_meta(st, "place_gazetteer"),
            "sample": _sample(
                engine,
                "SELECT place_id, name, country_code, department_code, context_required, has_shape "
                "FROM place_gazetteer_current WHERE place_id IN ('municipality:11001','department:11','department:25',"
                "'country:COL','municipality:18001')",
            ),
        }
    )


# ---------------------------------------------------------------------- mentions
# ``reviewer_decisions`` (an external asset: the sensor ``review_sensor`` records each reviewer's
# decision or undo as its materialization) makes the mentions follow a reviewer (issue 25 §1).
_MENTION_DEPS = [entity_dictionary, place_gazetteer, *KB, "reviewer_decisions"]


@dg.multi_asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    code_version=CODE_VERSION,
    specs=[
        dg.AssetSpec(
            "entity_mentions",
            kinds={"postgres"},
            deps=_MENTION_DEPS,
            description="Dictionary matches per passage: entity id, doc_id, chunk_id, character span, "
            "matched form (word boundaries, case/accent folded, decoys and boilerplate removed); an alias a "
            "reviewer decided is not its entity is not counted.",
        ),
        dg.AssetSpec(
            "place_mentions",
            kinds={"postgres"},
            deps=_MENTION_DEPS,
            description="Place names per passage, same row shape; ambiguous names resolved by a cue or the "
            "department named nearby, else `unresolved` with their candidates — unless a reviewer decided "
            "the name (`resolution = reviewer`, or not counted when it is none of them).",
        ),
    ],
)
def mentions(context: AssetExecutionContext, database: DatabaseResource, precompute: PrecomputeResource):
    engine = _engine(database)
    st = materialize_mentions(engine, precompute.config(), log=context.log.info)
    yield dg.MaterializeResult(
        asset_key="entity_mentions",
        metadata={
            **_meta(st, "entity_mentions"),
            "sample": _sample(
                engine,
                "SELECT entity_id, chunk_id, char_start, char_end, matched FROM entity_mentions_current "
                "ORDER BY random() LIMIT 5",
            ),
        },
    )
    yield dg.MaterializeResult(
        asset_key="place_mentions",
        metadata={
            **_meta(st, "place_mentions"),
            "sample": _sample(
                engine,
                "SELECT place_id, resolution, chunk_id, char_start, matched FROM place_mentions_current "
                "ORDER BY random() LIMIT 5",
            ),
        },
    )


# ---------------------------------------------------------------------- dates, alerts, presence
@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    kinds={"postgres"},
    code_version=CODE_VERSION,
    deps=["documents"],
    description="Publication date per document from source metadata only (file name, folder, alert number, "
    "ISO/compact date, year folder; Codefest names from manifests/codefest_inventory.csv), with the "
    "rule that produced it; undated documents are rows with date NULL, never guessed.",
)
def publication_dates(database: DatabaseResource, precompute: PrecomputeResource) -> dg.MaterializeResult:
    engine = _engine(database)
    st = materialize_publication_dates(engine, precompute.config())
    return dg.MaterializeResult(
        metadata={
            **_meta(st, "publication_dates"),
            "sample": _sample(
                engine,
                "SELECT doc_id, date, rule, source_value FROM publication_dates_current ORDER BY random() LIMIT 5",
            ),
        }
    )


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    kinds={"postgres"},
    code_version=CODE_VERSION,
    deps=["entity_mentions", "place_mentions", publication_dates, "chunks"],
    description="One row per Ombudsman early-warning alert: code, date, imminent/structural when the source "
    "says so (never added together), armed groups and places named, and the passages that say so.",
)
def early_warnings(database: DatabaseResource, precompute: PrecomputeResource) -> dg.MaterializeResult:
    engine = _engine(database)
    st = materialize_early_warnings(engine, precompute.config())
    return dg.MaterializeResult(
        metadata={
            **_meta(st, "early_warnings"),
            "sample": _sample(
                engine,
                "SELECT alert_code, date, alert_type, armed_groups, department_codes FROM early_warnings_current "
                "ORDER BY random() LIMIT 5",
            ),
        }
    )


@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    kinds={"postgres"},
    code_version=CODE_VERSION,
    deps=KB,
    description="Armed-group presence per municipality from the Amazon Underworld records in the corpus "
    "(present / absent / no_info — unknown never shown as absent), deduplicated by municipality id, "
    "joined to boundaries by code then by name within the department.",
)
def armed_presence(database: DatabaseResource, precompute: PrecomputeResource) -> dg.MaterializeResult:
    engine = _engine(database)
    st = materialize_armed_presence(engine, precompute.config())
    return dg.MaterializeResult(
        metadata={
            **_meta(st, "armed_presence"),
            "sample": _sample(
                engine,
                "SELECT municipality_id, level2, group_key, state, shape_match FROM armed_presence_current "
                "WHERE state = 'present' ORDER BY random() LIMIT 5",
            ),
        }
    )


# ---------------------------------------------------------------------- aggregates
_AGG_DESCRIPTIONS = {
    "agg_documents_per_place": "Documents naming each place (country, department, municipality), per phenomenon.",
    "agg_alerts_per_department": "Ombudsman alerts naming a place in each department, split by alert type.",
    "agg_timeline": "Documents per month/year per phenomenon (and per entity), with the count of undated documents.",
    "agg_entity_network": "Entity co-occurrence in the same passage (nodes and edges).",
    "agg_entity_heatmap": "Entity × category matrix (document phenomenon, source collection).",
    "agg_entity_quadrant": "Intensity (dated documents naming the entity) vs trend (share after the median date); "
    "axes split at their medians.",
}


_AGG_DEPS = ["entity_mentions", "place_mentions", publication_dates, early_warnings, entity_dictionary, place_gazetteer]


AGGREGATE_KEYS = tuple(_AGG_DESCRIPTIONS)  # the asset keys of dashboard_aggregates


@dg.multi_asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    code_version=CODE_VERSION,
    can_subset=True,
    specs=[
        dg.AssetSpec(
            name,
            kinds={"postgres"},
            deps=_AGG_DEPS,
            skippable=True,
            description=d + " Every row lists the (doc_id, chunk_id) it counts.",
        )
        for name, d in _AGG_DESCRIPTIONS.items()
    ],
)
def dashboard_aggregates(context: AssetExecutionContext, database: DatabaseResource, precompute: PrecomputeResource):
    engine = _engine(database)
    selected = [k.path[-1] for k in context.selected_asset_keys]
    st = materialize_aggregates(engine, precompute.config(), tables=selected, log=context.log.info)
    for name in selected:
        yield dg.MaterializeResult(
            asset_key=name,
            metadata={
                **_meta(st, name),
                "sample": _sample(
                    engine,
                    f"SELECT *, jsonb_array_length(evidence) AS n_evidence FROM {name}_current "
                    f"ORDER BY random() LIMIT 3",
                    width=100,
                ),
            },
        )


# ---------------------------------------------------------------------- evaluation
@dg.asset(
    op_tags=PRODUCER_OP_TAGS,
    group_name=GROUP,
    kinds={"python"},
    code_version=CODE_VERSION,
    deps=[*_AGG_DESCRIPTIONS, armed_presence, entity_dictionary, place_gazetteer],
    description="Precision/recall of entity and place mentions per language on evals/labelled (150 passages), "
    "and the share of aggregate rows whose cited passages contain the counted mention (must be 1.0).",
)
def precompute_evaluation(
    context: AssetExecutionContext, database: DatabaseResource, precompute: PrecomputeResource
) -> dg.MaterializeResult:
    from evals.precompute_eval import evaluate_with_evidence

    engine = _engine(database)
    cfg = precompute.config()
    dictionary = cfg.dictionary()
    report = evaluate_with_evidence(
        engine,
        dictionary=dictionary,
        gazetteer=cfg.gazetteer().with_decoys(dictionary.alias_phrases()),
        boilerplate=cfg.boilerplate(),
    )
    from radar_pipeline.config import StorageSettings

    out = StorageSettings().reports / "precompute_eval.json"  # <home>/reports, never the checkout
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    table = [
        {
            "language": lang,
            "kind": kind,
            "precision": v["strict"]["precision"],
            "recall": v["strict"]["recall"],
            "f1": v["strict"]["f1"],
            "lenient_p": v["lenient"]["precision"],
            "lenient_r": v["lenient"]["recall"],
        }
        for lang, kinds in {**report["by_language"], "all": report["overall"]}.items()
        for kind, v in kinds.items()
    ]
    overall = report["overall"]["all"]["strict"]
    return dg.MaterializeResult(
        metadata={
            "precision": dg.MetadataValue.float(float(overall["precision"] or 0.0)),
            "recall": dg.MetadataValue.float(float(overall["recall"] or 0.0)),
            "evidence_share_rows_ok": dg.MetadataValue.float(float(report["evidence"]["share_rows_ok"])),
            "passages": report["passages"],
            "gold_mentions": report["gold_mentions"],
            "by_language": md_table(table, limit=len(table)),
            "errors_sample": md_table(
                [{k: e.get(k) for k in ("passage", "type", "kind", "id", "text")} for e in report["errors"]], limit=15
            ),
            "report_path": dg.MetadataValue.path(str(out)),
        }
    )


# ---------------------------------------------------------------------- checks
_EVIDENCE_TABLES = [*_AGG_DESCRIPTIONS, "armed_presence"]


@dg.multi_asset_check(
    specs=[
        dg.AssetCheckSpec(
            "cited_passages_contain_counted_mention",
            asset=t,
            blocking=True,
            description="every evidence item is a passage of its document that really holds what the "
            "row counts (span text re-read from chunks)",
        )
        for t in _EVIDENCE_TABLES
    ],
    can_subset=True,
)
def evidence_checks(context: AssetCheckExecutionContext, database: DatabaseResource):
    engine = _engine(database)
    selected = [k.asset_key.path[-1] for k in context.selected_asset_check_keys]
    report = verify_evidence(engine, tables=tuple(selected))
    for table in selected:
        r = report["tables"].get(
            table, {"rows": 0, "rows_ok": 0, "items": 0, "items_failed": 0, "failures": [], "share_rows_ok": 1.0}
        )
        yield dg.AssetCheckResult(
            asset_key=table,
            check_name="cited_passages_contain_counted_mention",
            passed=r["rows_ok"] == r["rows"] and report["mentions_bad_span"] == 0,
            metadata={
                "rows": r["rows"],
                "rows_ok": r["rows_ok"],
                "items": r["items"],
                "items_failed": r["items_failed"],
                "share_rows_ok": float(r["share_rows_ok"]),
                "failures": dg.MetadataValue.json(r["failures"][:5]),
            },
        )


@dg.multi_asset_check(
    specs=[
        dg.AssetCheckSpec(
            "spans_hold_matched_text",
            asset=t,
            blocking=True,
            description="chunks.text[char_start:char_end] equals `matched` for every current row",
        )
        for t in ("entity_mentions", "place_mentions")
    ],
)
def span_checks(database: DatabaseResource):
    engine = _engine(database)
    out = {}
    with engine.connect() as conn:
        for t in ("entity_mentions", "place_mentions"):
            n, bad = conn.execute(
                sa.text(
                    f"SELECT count(*), count(*) FILTER (WHERE substr(c.text, m.char_start + 1, m.char_end - m.char_start) "
                    f"<> m.matched OR c.doc_id <> m.doc_id) FROM {t} m JOIN chunks c USING (chunk_id) "
                    f"WHERE m.valid_to IS NULL"
                )
            ).one()
            missing = conn.execute(
                sa.text(
                    f"SELECT count(*) FROM {t} m WHERE m.valid_to IS NULL AND NOT EXISTS "
                    f"(SELECT 1 FROM chunks c WHERE c.chunk_id = m.chunk_id)"
                )
            ).scalar()
            out[t] = (int(n), int(bad), int(missing))
    for t, (n, bad, missing) in out.items():
        yield dg.AssetCheckResult(
            asset_key=t,
            check_name="spans_hold_matched_text",
            passed=bad == 0 and missing == 0,
            metadata={"rows": n, "bad_spans": bad, "missing_chunks": missing},
        )


@dg.asset_check(
    asset=publication_dates,
    name="every_document_dated_or_counted",
    blocking=True,
    description="one row per document: dated by a metadata rule, or counted as undated",
)
def publication_dates_cover_documents(database: DatabaseResource) -> dg.AssetCheckResult:
    engine = _engine(database)
    with engine.connect() as conn:
        docs, rows, dated = conn.execute(
            sa.text(
                "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM publication_dates_current), "
                "(SELECT count(*) FROM publication_dates_current WHERE date IS NOT NULL)"
            )
        ).one()
    return dg.AssetCheckResult(
        passed=int(docs) == int(rows),
        metadata={"documents": int(docs), "rows": int(rows), "dated": int(dated), "undated": int(rows) - int(dated)},
    )


precompute_checks = [
    *(
        pandera_contract_check(
            t,
            PRECOMPUTE_SCHEMAS[t],
            PRECOMPUTE_QUERIES[t],
            _engine,
            f"pandera contract of `{t}` holds on every current row",
        )
        for t in PRECOMPUTE_SCHEMAS
    ),
    evidence_checks,
    span_checks,
    publication_dates_cover_documents,
]
