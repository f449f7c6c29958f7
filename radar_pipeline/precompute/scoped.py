"""The precompute tables as one caller may read them: its collections folded into one row per key, in SQL.

Producers write every corpus-derived table at the grain collection × the table's own keys
(``tables.py``): each collection's rows are what a corpus of that collection alone would get.
``scoped(table, scope)`` returns a subquery with the table's column names holding, for the
collections ``scope`` may read (``AccessScope``: None = all), one current row per key:

* **row tables** (mentions, publication dates): a row belongs to one passage or document, so
  the rows of the allowed collections as they are;
* **folded tables** (``FOLDS``): grouped by the key columns; counts of documents or passages are
  summed (a document and its passages belong to one collection, so per-collection counts add up
  to the whole corpus's); JSON lists (evidence, alert codes, places, documents) are unioned
  without repeats and sorted (``COLLATE "C"``: Python's code-point order, as the builders sort);
  a few columns are derived from the folded ones (``n_alerts`` = the union's length; a
  presence ``state`` from the summed record counts, the rule of ``presence.aggregate_presence``;
  an alert's type from its types per collection, the rule of ``alerts._alert_type``).

Lineage of a folded row: ``id`` = the smallest id of its rows (stable, so the dashboard can ask
for a row's evidence by id), ``valid_from`` / ``run_id`` / ``producer`` / ``precompute_version``
the newest, ``valid_to``
NULL, ``collections`` the sorted collections it folds. The quadrant's medians do not add up:
its folded rows carry the keys and evidence, and ``reader.PrecomputeReader.quadrant`` classifies
them for the caller (``aggregates.quadrant_rows``).
"""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from radar_pipeline.collection import AccessScope

__all__ = ["FOLDS", "Fold", "folded_evidence", "scoped", "in_scope"]


@dataclasses.dataclass(frozen=True)
class Fold:
    """How one table's per-collection rows fold into one row per key.

    ``keys``: the grouping columns; ``sums``: integer columns summed; ``unions``: JSONB list
    columns unioned without repeats, each with the JSON paths its elements sort by (``()`` for a
    list of strings); ``stored_sorted``: the union columns a key of one collection reads as stored,
    without unnesting (the producer stores them in the union's order, or — presence evidence — in
    its own first-occurrence order, which one collection's records keep);
    ``firsts``: columns that agree across collections (the smallest value is
    kept); ``derived``: columns computed from the folded ones (SQL over the folded subquery's
    columns, as ``{column}`` placeholders). Columns in none of these are left out (the quadrant's
    classification: ``reader.PrecomputeReader.quadrant``).
    """

    keys: tuple[str, ...]
    sums: tuple[str, ...] = ()
    unions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    stored_sorted: tuple[str, ...] = ("evidence",)
    firsts: tuple[str, ...] = ()
    derived: tuple[tuple[str, str], ...] = ()
    special: tuple[tuple[str, str], ...] = ()  # column → SQL aggregate over ``src`` (early warnings)


_EV = (("evidence", ("doc_id", "chunk_id")),)
FOLDS: dict[str, Fold] = {
    "agg_documents_per_place": Fold(
        keys=("level", "place_id", "code", "name", "country_code", "department_code", "phenomenon"),
        sums=("n_documents", "n_documents_direct", "n_passages"),
        unions=_EV,
    ),
    "agg_alerts_per_department": Fold(
        keys=("department_code", "department_name", "alert_type"),
        unions=(("alert_codes", ()), *_EV),
        stored_sorted=("alert_codes", "evidence"),
        derived=(("n_alerts", "jsonb_array_length({alert_codes})"),),
    ),
    "agg_timeline": Fold(
        keys=("phenomenon", "entity_id", "granularity", "period", "undated"), sums=("n_documents",), unions=_EV
    ),
    "agg_entity_network": Fold(
        keys=("kind", "entity_a", "entity_b", "phenomenon"), sums=("n_passages", "n_documents"), unions=_EV
    ),
    "agg_entity_heatmap": Fold(
        keys=("entity_id", "entity_category", "column_kind", "category"),
        sums=("n_documents", "n_passages"),
        unions=_EV,
    ),
    "agg_entity_quadrant": Fold(keys=("entity_id", "entity_category", "phenomenon"), unions=_EV),
    "armed_presence": Fold(
        keys=("municipality_id", "group_key", "entity_id"),
        sums=("n_records", "n_present", "n_absent", "n_no_info"),
        firsts=("country", "level1", "level2", "divipola_code", "shape_match", "shape_key"),
        unions=(("evidence", ("doc_id", "chunk_id", "quote")),),
        derived=(
            (
                "state",
                "CASE WHEN {n_present} > 0 THEN 'present' WHEN {n_absent} > 0 THEN 'absent' ELSE 'no_info' END",
            ),
        ),
    ),
    "early_warnings": Fold(
        keys=("alert_code", "alert_number", "code_year"),
        stored_sorted=("armed_groups", "places", "department_codes", "documents"),
        unions=(
            ("armed_groups", ()),
            ("places", ("place_id",)),
            ("department_codes", ()),
            ("documents", ("doc_id", "role")),
            ("evidence", ("doc_id", "chunk_id", "role", "key")),
        ),
        special=(
            ("date", "max(src.date)"),
            ("date_rule", "(array_agg(src.date_rule ORDER BY src.date DESC NULLS LAST))[1]"),
            (
                "alert_type",
                "CASE WHEN bool_or(src.alert_type = 'conflicting') OR count(DISTINCT src.alert_type) "
                "FILTER (WHERE src.alert_type <> 'unspecified') > 1 THEN 'conflicting' "
                "ELSE coalesce(max(src.alert_type) FILTER (WHERE src.alert_type <> 'unspecified'), 'unspecified') END",
            ),
        ),
    ),
}
ROW_TABLES = ("entity_mentions", "place_mentions", "publication_dates")


def in_scope(column: sa.ColumnElement, scope: AccessScope | None) -> sa.ColumnElement[bool]:
    """The condition that a row's ``collection`` column is readable under ``scope`` (always true
    for an unrestricted scope; a restricted one never reads a row of no collection)."""
    if scope is None or scope.collections is None:
        return sa.true()
    if not scope.collections:
        return sa.false()
    return column.in_(sorted(scope.collections))


def _union(col: str, order: tuple[str, ...], stored_sorted: bool) -> str:
    keys = ", ".join(f"e->>'{k}' COLLATE \"C\"" for k in order) if order else "e #>> '{}' COLLATE \"C\""
    union = (
        f"(SELECT coalesce(jsonb_agg(e ORDER BY {keys}), '[]'::jsonb) FROM (SELECT DISTINCT e "
        f"FROM unnest(array_agg(src.{col})) AS x(v), jsonb_array_elements(x.v) AS e) AS u)"
    )
    # one collection's list, already stored without repeats in this order, is the union itself
    return f"(CASE WHEN count(*) = 1 THEN (array_agg(src.{col}))[1] ELSE {union} END)" if stored_sorted else union


def scoped(table: sa.Table, scope: AccessScope | None = None, evidence: bool = True) -> sa.Subquery | sa.Table:
    """``table``'s current rows readable under ``scope``, folded per key (module doc), as a
    subquery with the table's column names (``valid_to`` NULL). Tables without a ``collection``
    column (dictionary, gazetteer: reference data) are returned as they are.

    ``evidence=False`` leaves a folded table's ``evidence`` union out and gives ``member_ids``
    instead (the ids of the rows each folded row stands for), so a caller reading a page of rows
    unions the evidence of that page only (``folded_evidence``)."""
    if "collection" not in table.c:
        return table
    src = table.alias("src")
    where = [src.c.valid_to.is_(None), in_scope(src.c.collection, scope)]
    if table.name in ROW_TABLES:
        return sa.select(src).where(*where).subquery(table.name)
    fold = FOLDS[table.name]
    cols: list = [src.c[k] for k in fold.keys]
    cols += [
        sa.func.min(src.c.id).label("id"),
        sa.func.max(src.c.valid_from).label("valid_from"),
        sa.cast(sa.null(), src.c.valid_to.type).label("valid_to"),
        sa.func.max(src.c.run_id).label("run_id"),
        sa.func.max(src.c.producer).label("producer"),
        *([sa.func.max(src.c.precompute_version).label("precompute_version")] if "precompute_version" in src.c else []),
        sa.func.array_agg(sa.distinct(src.c.collection)).label("collections"),
    ]
    cols += [sa.cast(sa.func.sum(src.c[c]), sa.Integer).label(c) for c in fold.sums]
    cols += [sa.func.min(src.c[c]).label(c) for c in fold.firsts]
    cols += [
        sa.literal_column(_union(c, order, c in fold.stored_sorted), JSONB).label(c)
        for c, order in fold.unions
        if evidence or c != "evidence"
    ]
    if not evidence:
        cols.append(sa.func.array_agg(src.c.id).label("member_ids"))
    cols += [sa.literal_column(sql, src.c[c].type).label(c) for c, sql in fold.special]
    grouped = (
        sa.select(*cols)
        .where(*where)
        .group_by(*[src.c[k] for k in fold.keys])
        .subquery("folded" if fold.derived else table.name)
    )
    if not fold.derived:
        return grouped
    extra = []
    for name, sql in fold.derived:
        expr = sql.format(**{c.name: f"folded.{c.name}" for c in grouped.c})
        extra.append(sa.literal_column(expr, table.c[name].type).label(name))
    return sa.select(*grouped.c, *extra).subquery(table.name)


def folded_evidence(table: sa.Table, member_ids: list[int]) -> sa.Select:
    """``(id, evidence)`` of the folded rows made of the rows ``member_ids`` (``scoped(...,
    evidence=False)``): the same union as ``scoped``, over those rows only."""
    fold = FOLDS[table.name]
    order = dict(fold.unions)["evidence"]
    src = table.alias("src")
    return (
        sa.select(
            sa.func.min(src.c.id).label("id"),
            sa.literal_column(_union("evidence", order, "evidence" in fold.stored_sorted), JSONB).label("evidence"),
        )
        .where(src.c.id.in_(member_ids))
        .group_by(*[src.c[k] for k in fold.keys])
    )
