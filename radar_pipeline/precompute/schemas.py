"""Pandera (polars) contracts of the precompute tables, checked on their *current* rows.

``PRECOMPUTE_QUERIES`` says what each check reads (JSONB lists are checked through their length,
e.g. ``n_evidence``); ``PRECOMPUTE_SCHEMAS`` holds the contracts. The asset checks in
``assets/precompute.py`` validate them after every materialization.
"""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from radar_pipeline.precompute.alerts import TYPES as ALERT_TYPES
from radar_pipeline.precompute.dates import RULES as DATE_RULES
from radar_pipeline.precompute.entities import CATEGORIES, PHENOMENA
from radar_pipeline.precompute.presence import GROUPS, STATES

__all__ = ["PRECOMPUTE_SCHEMAS", "PRECOMPUTE_QUERIES", "RESOLUTIONS", "LEVELS"]

RESOLUTIONS = [
    "unique",
    "cue",
    "nearby_department",
    "nearby_context",
    "country_default",
    "department_only",
    "unresolved",
    "reviewer",  # a reviewer decided which candidate the name means (claims.resolution.apply_reviewer_decisions)
]
LEVELS = ["country", "department", "municipality"]
SCOPES = ["all", *PHENOMENA]
_HASH = pa.Check.str_matches(r"^[0-9a-f]{40}$")
_LINEAGE = {
    "row_hash": pa.Column(pl.Utf8, [_HASH], unique=True),
    "run_id": pa.Column(pl.Utf8, pa.Check.str_length(min_value=1)),
    "producer": pa.Column(pl.Utf8, pa.Check.str_contains("@")),
}


def _rule(expr, name: str) -> pa.Check:
    """A dataframe-level check from a polars expression (pandera's polars backend passes a
    ``PolarsData``; the expression is evaluated on its lazy frame)."""
    return pa.Check(lambda data: data.lazyframe.select(expr.alias(name)), name=name)


def _schema(columns: dict, checks: list | None = None, unique: list[str] | None = None) -> pa.DataFrameSchema:
    return pa.DataFrameSchema({**_LINEAGE, **columns}, strict=False, checks=checks or [], unique=unique)


_SPAN_CHECKS = [
    _rule(pl.col("char_end") > pl.col("char_start"), "span_not_empty"),
    _rule(
        pl.col("char_end") - pl.col("char_start") == pl.col("matched").str.len_chars(), "span_length_is_matched_length"
    ),
    _rule(pl.col("chunk_id").str.starts_with(pl.col("doc_id")), "chunk_of_document"),
]

PRECOMPUTE_SCHEMAS: dict[str, pa.DataFrameSchema] = {
    "entity_dictionary": _schema(
        {
            "entity_id": pa.Column(pl.Utf8, unique=True),
            "category": pa.Column(pl.Utf8, pa.Check.isin(list(CATEGORIES))),
            "phenomenon": pa.Column(pl.Utf8, pa.Check.isin(list(PHENOMENA))),
            "n_aliases": pa.Column(pl.Int64, pa.Check.ge(1)),
            "dictionary_version": pa.Column(pl.Utf8, pa.Check.str_startswith("entities:")),
        }
    ),
    "entity_mentions": _schema(
        {
            "entity_id": pa.Column(pl.Utf8),
            "category": pa.Column(pl.Utf8, pa.Check.isin(list(CATEGORIES))),
            "doc_id": pa.Column(pl.Utf8),
            "chunk_id": pa.Column(pl.Utf8),
            "char_start": pa.Column(pl.Int64, pa.Check.ge(0)),
            "char_end": pa.Column(pl.Int64, pa.Check.ge(1)),
            "matched": pa.Column(pl.Utf8, pa.Check.str_length(min_value=1)),
        },
        checks=_SPAN_CHECKS,
        unique=["entity_id", "chunk_id", "char_start"],
    ),
    "place_gazetteer": _schema(
        {
            "place_id": pa.Column(pl.Utf8, unique=True),
            "level": pa.Column(pl.Utf8, pa.Check.isin(LEVELS)),
            "code": pa.Column(pl.Utf8),
            "country_code": pa.Column(pl.Utf8, pa.Check.str_length(3, 3)),
            "department_code": pa.Column(pl.Utf8, nullable=True),
        },
        checks=[
            _rule(pl.col("place_id") == pl.col("level") + ":" + pl.col("code"), "place_id_is_level_code"),
            # Bogotá D.C. is its own department (11), never Cundinamarca (25)
            _rule(
                (pl.col("place_id") != "municipality:11001") | (pl.col("department_code") == "11"),
                "bogota_is_department_11",
            ),
            _rule(
                (pl.col("level") != "municipality") | pl.col("code").str.starts_with(pl.col("department_code")),
                "municipality_code_in_department",
            ),
        ],
    ),
    "place_mentions": _schema(
        {
            "place_id": pa.Column(pl.Utf8, nullable=True),
            "level": pa.Column(pl.Utf8, pa.Check.isin(LEVELS), nullable=True),
            "doc_id": pa.Column(pl.Utf8),
            "chunk_id": pa.Column(pl.Utf8),
            "char_start": pa.Column(pl.Int64, pa.Check.ge(0)),
            "char_end": pa.Column(pl.Int64, pa.Check.ge(1)),
            "matched": pa.Column(pl.Utf8, pa.Check.str_length(min_value=1)),
            "resolution": pa.Column(pl.Utf8, pa.Check.isin(RESOLUTIONS)),
            "n_candidates": pa.Column(pl.Int64, pa.Check.ge(1)),
        },
        checks=_SPAN_CHECKS
        + [
            _rule(pl.col("place_id").is_null() == (pl.col("resolution") == "unresolved"), "unresolved_iff_no_place"),
        ],
        unique=["chunk_id", "char_start"],
    ),
    "publication_dates": _schema(
        {
            "doc_id": pa.Column(pl.Utf8, unique=True),
            "date": pa.Column(pl.Utf8, pa.Check.str_matches(r"^\d{4}(-\d{2}(-\d{2})?)?$"), nullable=True),
            "year": pa.Column(pl.Int64, pa.Check.in_range(1900, 2100), nullable=True),
            "precision": pa.Column(pl.Utf8, pa.Check.isin(["year", "month", "day"]), nullable=True),
            "rule": pa.Column(
                pl.Utf8,
                pa.Check(
                    lambda data: data.lazyframe.select(
                        pl.col(data.key).str.replace("^folder_", "").is_in(list(DATE_RULES))
                    ),
                    name="known_rule",
                ),
                nullable=True,
            ),
            "source_kind": pa.Column(pl.Utf8, pa.Check.isin(["codefest_inventory", "path"])),
        },
        checks=[
            _rule(pl.col("date").is_null() == pl.col("rule").is_null(), "date_iff_rule"),
            _rule(
                pl.col("date").is_null() | pl.col("date").str.starts_with(pl.col("year").cast(pl.Utf8)),
                "year_matches_date",
            ),
        ],
    ),
    "early_warnings": _schema(
        {
            "alert_code": pa.Column(pl.Utf8, [pa.Check.str_matches(r"^\d{3}-\d{2}$")], unique=True),
            "alert_type": pa.Column(pl.Utf8, pa.Check.isin(list(ALERT_TYPES))),
            "code_year": pa.Column(pl.Int64, pa.Check.in_range(2000, 2099)),
            "n_documents": pa.Column(pl.Int64, pa.Check.ge(1)),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(0)),
        }
    ),
    "armed_presence": _schema(
        {
            "municipality_id": pa.Column(pl.Utf8),
            "group_key": pa.Column(pl.Utf8, pa.Check.isin(list(GROUPS))),
            "state": pa.Column(pl.Utf8, pa.Check.isin(list(STATES))),
            "shape_match": pa.Column(pl.Utf8, pa.Check.isin(["code", "name", "none"])),
            "n_records": pa.Column(pl.Int64, pa.Check.ge(1)),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(1)),
        },
        checks=[
            _rule(
                pl.col("n_present") + pl.col("n_absent") + pl.col("n_no_info") == pl.col("n_records"), "states_add_up"
            ),
            # "no information" is never shown as absent
            _rule((pl.col("state") != "absent") | (pl.col("n_absent") > 0), "absent_is_declared"),
            _rule((pl.col("state") != "present") | (pl.col("n_present") > 0), "present_is_declared"),
        ],
        unique=["collection", "municipality_id", "group_key"],
    ),
    "agg_documents_per_place": _schema(
        {
            "level": pa.Column(pl.Utf8, pa.Check.isin(LEVELS)),
            "phenomenon": pa.Column(pl.Utf8, pa.Check.isin(SCOPES + ["none"])),
            "n_documents": pa.Column(pl.Int64, pa.Check.ge(1)),
            "n_documents_direct": pa.Column(pl.Int64, pa.Check.ge(0)),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(1)),
        },
        checks=[
            _rule(pl.col("n_documents_direct") <= pl.col("n_documents"), "direct_within_total"),
            _rule(pl.col("n_evidence") == pl.col("n_passages"), "evidence_is_passages"),
        ],
        unique=["collection", "place_id", "phenomenon"],
    ),
    "agg_alerts_per_department": _schema(
        {
            "department_code": pa.Column(pl.Utf8, pa.Check.str_matches(r"^\d{2}$")),
            "alert_type": pa.Column(pl.Utf8, pa.Check.isin(list(ALERT_TYPES))),
            "n_alerts": pa.Column(pl.Int64, pa.Check.ge(1)),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(1)),
        },
        unique=["collection", "department_code", "alert_type"],
    ),
    "agg_timeline": _schema(
        {
            "phenomenon": pa.Column(pl.Utf8, pa.Check.isin(SCOPES)),
            "granularity": pa.Column(pl.Utf8, pa.Check.isin(["year", "month"])),
            "period": pa.Column(pl.Utf8, pa.Check.str_matches(r"^\d{4}(-\d{2})?$"), nullable=True),
            "n_documents": pa.Column(pl.Int64, pa.Check.ge(0)),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(0)),
        },
        checks=[
            _rule(pl.col("period").is_null() == pl.col("undated"), "undated_iff_no_period"),
            _rule(pl.col("undated") | (pl.col("n_documents") >= 1), "dated_rows_count_something"),
        ],
        unique=["collection", "phenomenon", "entity_id", "granularity", "period"],
    ),
    "agg_entity_network": _schema(
        {
            "kind": pa.Column(pl.Utf8, pa.Check.isin(["node", "edge"])),
            "n_passages": pa.Column(pl.Int64, pa.Check.ge(1)),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(1)),
        },
        checks=[
            _rule((pl.col("kind") == "node") == pl.col("entity_b").is_null(), "edges_have_two_ends"),
            _rule(pl.col("entity_b").is_null() | (pl.col("entity_a") < pl.col("entity_b")), "edge_ends_ordered"),
            _rule(pl.col("n_evidence") == pl.col("n_passages"), "evidence_is_passages"),
        ],
        unique=["collection", "kind", "entity_a", "entity_b", "phenomenon"],
    ),
    "agg_entity_heatmap": _schema(
        {
            "column_kind": pa.Column(pl.Utf8, pa.Check.isin(["phenomenon", "source"])),
            "n_documents": pa.Column(pl.Int64, pa.Check.ge(1)),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(1)),
        },
        checks=[_rule(pl.col("n_evidence") == pl.col("n_passages"), "evidence_is_passages")],
        unique=["collection", "entity_id", "column_kind", "category"],
    ),
    "agg_entity_quadrant": _schema(
        {
            "intensity": pa.Column(pl.Int64, pa.Check.ge(1)),
            "n_recent": pa.Column(pl.Int64, pa.Check.ge(0)),
            "trend": pa.Column(pl.Float64, pa.Check.in_range(0.0, 1.0)),
            "quadrant": pa.Column(
                pl.Utf8, pa.Check.isin([f"{i}_intensity_{t}" for i in ("high", "low") for t in ("rising", "declining")])
            ),
            "n_evidence": pa.Column(pl.Int64, pa.Check.ge(1)),
        },
        checks=[_rule(pl.col("n_recent") <= pl.col("intensity"), "recent_within_intensity")],
        unique=["collection", "entity_id", "phenomenon"],
    ),
}

_L = "row_hash, run_id, producer"
_LC = _L + ", collection"  # tables whose grain is collection × keys
PRECOMPUTE_QUERIES: dict[str, str] = {
    "entity_dictionary": f"SELECT {_L}, entity_id, category, phenomenon, jsonb_array_length(aliases)::int4 AS n_aliases, "
    "dictionary_version FROM entity_dictionary WHERE valid_to IS NULL",
    "entity_mentions": f"SELECT {_LC}, entity_id, category, doc_id, chunk_id, char_start, char_end, matched "
    "FROM entity_mentions WHERE valid_to IS NULL",
    "place_gazetteer": f"SELECT {_L}, place_id, level, code, country_code, department_code FROM place_gazetteer "
    "WHERE valid_to IS NULL",
    "place_mentions": f"SELECT {_LC}, place_id, level, doc_id, chunk_id, char_start, char_end, matched, resolution, "
    "jsonb_array_length(candidates)::int4 AS n_candidates FROM place_mentions WHERE valid_to IS NULL",
    "publication_dates": f"SELECT {_LC}, doc_id, date, year, precision, rule, source_kind FROM publication_dates "
    "WHERE valid_to IS NULL",
    "early_warnings": f"SELECT {_LC}, alert_code, alert_type, code_year, jsonb_array_length(documents)::int4 AS n_documents, "
    "jsonb_array_length(evidence)::int4 AS n_evidence FROM early_warnings WHERE valid_to IS NULL",
    "armed_presence": f"SELECT {_LC}, municipality_id, group_key, state, shape_match, n_records, n_present, n_absent, "
    "n_no_info, jsonb_array_length(evidence)::int4 AS n_evidence FROM armed_presence "
    "WHERE valid_to IS NULL",
    "agg_documents_per_place": f"SELECT {_LC}, place_id, level, phenomenon, n_documents, n_documents_direct, n_passages, "
    "jsonb_array_length(evidence)::int4 AS n_evidence FROM agg_documents_per_place "
    "WHERE valid_to IS NULL",
    "agg_alerts_per_department": f"SELECT {_LC}, department_code, alert_type, n_alerts, "
    "jsonb_array_length(evidence)::int4 AS n_evidence FROM agg_alerts_per_department "
    "WHERE valid_to IS NULL",
    "agg_timeline": f"SELECT {_LC}, phenomenon, entity_id, granularity, period, undated, n_documents, "
    "jsonb_array_length(evidence)::int4 AS n_evidence FROM agg_timeline WHERE valid_to IS NULL",
    "agg_entity_network": f"SELECT {_LC}, kind, entity_a, entity_b, phenomenon, n_passages, "
    "jsonb_array_length(evidence)::int4 AS n_evidence FROM agg_entity_network WHERE valid_to IS NULL",
    "agg_entity_heatmap": f"SELECT {_LC}, entity_id, column_kind, category, n_documents, n_passages, "
    "jsonb_array_length(evidence)::int4 AS n_evidence FROM agg_entity_heatmap WHERE valid_to IS NULL",
    "agg_entity_quadrant": f"SELECT {_LC}, entity_id, phenomenon, intensity, n_recent, trend, quadrant, "
    "jsonb_array_length(evidence)::int4 AS n_evidence FROM agg_entity_quadrant WHERE valid_to IS NULL",
}
