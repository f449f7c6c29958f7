"""The one reader of the precompute tables, typed against their definitions in ``tables.py``.

``PrecomputeReader`` serves the ``/aggregates`` endpoints, the agent (materialization status of
the visualizer's components, mentions in the evidence window) and the dashboard
(``api/dashboard/data``, over ``views.py``). It reads only the current rows (``valid_to IS NULL``) of the
``sqlalchemy`` ``Table`` objects of ``tables.py``; nothing is reflected and no column name is
guessed. A table that does not exist yet is answered with a structured ``materialized: False``
result (``read``) or ``NotMaterialized`` (``rows``, for callers that compose their own queries),
never a database error.

``AGGREGATES`` is the closed list of names the API and the visualizer may use; each one says,
column by column, which of the ``Filters`` its table can apply. A filter a table has no column
for is reported in ``filters_ignored``.

Every read takes the caller's ``AccessScope``: the rows of the collections it may read, folded
into one row per key inside the query (``scoped.py``), so a collection-restricted caller counts
only its collections and an unrestricted one all of them.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.aggregates import quadrant_rows
from radar_pipeline.precompute.alerts import names_place
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.places.subregions import is_place_set, municipalities_of
from radar_pipeline.precompute.scoped import FOLDS, folded_evidence, in_scope, scoped
from radar_pipeline.textfold import fold_phrase

_ACCENTS = ("áéíóúüñàèìòùâêîôûãõç", "aeiouunaeiouaeiouaoc")
# a gazetteer place id, or a place set (a subregion id or municipality ids joined by ",": ``subregions.PLACE_SET``)
PLACE_ID = re.compile(
    r"^(?:(?:country|department|municipality):[A-Za-z0-9]{2,5}"
    r"|subregion:[a-z_]{2,60}|municipality:\d{5}(?:,municipality:\d{5}){1,199})$"
)
_CACHE_S = 30.0


class NotMaterialized(Exception):
    """A precompute table has not been materialized yet; ``str(exc)`` is the table name."""


@dataclasses.dataclass(frozen=True)
class Aggregate:
    """One readable aggregate: its table and the columns each filter applies to.

    ``phenomenon``: the phenomenon column; ``dated``: a text column starting with ``YYYY``
    (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``) the year range reads; ``entity`` / ``place``: the
    columns an entity / place filter matches (any of them; case-folded, places also accent-folded).
    ``place_code``: how a gazetteer place id (``department:52``, ``municipality:52835``) narrows
    the table, ``(columns, level, code) -> condition`` over the columns read (``None``: the place
    does not apply to this table).
    """

    table: sa.Table
    title: str
    phenomenon: sa.Column | None = None
    dated: sa.Column | None = None
    entity: tuple[sa.Column, ...] = ()
    place: tuple[sa.Column, ...] = ()
    place_code: Callable[[Any, str, str], Any] | None = None
    place_rows: Callable[[PrecomputeReader, str, AccessScope | None], Callable[[dict], dict | None]] | None = None
    """For a municipality the table has no column for (the per-department alerts): a row rewriter
    built from other current tables of the caller's collections (``None`` from it drops the row);
    without it, ``place_code``."""

    @property
    def table_name(self) -> str:
        return self.table.name

    def narrows_rows(self, f: Filters) -> bool:
        """Whether ``f``'s place is a municipality (or a set of them: a subregion) this aggregate
        narrows row by row (``place_rows``)."""
        return self.place_rows is not None and municipalities_of(f.place) is not None

    def select(
        self, f: Filters, limit: int, scope: AccessScope | None = None, evidence: bool = True
    ) -> tuple[sa.Select, dict[str, Any], list[str]]:
        """``(statement, filters applied, filters ignored)``: current rows readable under
        ``scope`` (folded per key, ``scoped.scoped``; ``evidence=False``: ``member_ids`` instead of
        a folded table's evidence) narrowed by ``f``, ordered by ``id``, at most ``limit + 1``
        rows (the extra one tells truncation). A place narrowed row by row (``narrows_rows``) is
        left to the caller."""
        t = scoped(self.table, scope, evidence)
        conds: list[Any] = [t.c.valid_to.is_(None)]
        col = lambda c: t.c[c.name]  # noqa: E731 - the spec's column in the scoped rows
        applied: dict[str, Any] = {}
        ignored: list[str] = []
        if f.phenomenon is not None:
            if self.phenomenon is not None:
                conds.append(col(self.phenomenon) == f.phenomenon)
                applied["phenomenon"] = f.phenomenon
            else:
                ignored.append("phenomenon")
        if f.period:
            years = [(k, v) for k, v in (("year_from", f.year_from), ("year_to", f.year_to)) if v is not None]
            if self.dated is not None:
                text = sa.cast(col(self.dated), sa.Text)
                year = sa.cast(sa.func.substr(text, 1, 4), sa.Integer)
                digits = text.op("~")(r"^[0-9]{4}")
                if f.year_from is not None:
                    conds.append(sa.and_(digits, year >= f.year_from))
                if f.year_to is not None:
                    conds.append(sa.and_(digits, year <= f.year_to))
                applied.update(years)
            else:
                ignored += [k for k, _ in years]
        if f.entity is not None:
            if self.entity:
                conds.append(
                    sa.or_(*[sa.func.lower(sa.cast(col(c), sa.Text)) == f.entity.lower() for c in self.entity])
                )
                applied["entity"] = f.entity
            else:
                ignored.append("entity")
        if self.narrows_rows(f) and PLACE_ID.match(f.place):
            applied["place"] = f.place
        elif is_place_set(f.place):
            # a subregion or a list of municipalities: any of its municipalities
            members = municipalities_of(f.place) or ()
            parts = [self.place_code(t.c, "municipality", m.split(":")[1]) for m in members] if self.place_code else []
            parts = [p for p in parts if p is not None]
            if parts:
                conds.append(sa.or_(*parts))
                applied["place"] = f.place
            else:
                ignored.append("place")
        elif f.place is not None and PLACE_ID.match(f.place) and self.place_code is not None:
            level, code = f.place.split(":", 1)
            cond = self.place_code(t.c, level, code)
            if cond is not None:
                conds.append(cond)
                applied["place"] = f.place
            else:
                ignored.append("place")
        elif f.place is not None:
            if self.place:
                folded = f.place.lower().translate(str.maketrans(*_ACCENTS))
                conds.append(
                    sa.or_(
                        *[
                            sa.func.translate(sa.func.lower(sa.cast(col(c), sa.Text)), *_ACCENTS) == folded
                            for c in self.place
                        ]
                    )
                )
                applied["place"] = f.place
            else:
                ignored.append("place")
        return sa.select(t).where(*conds).order_by(t.c.id).limit(limit + 1), applied, ignored


AGGREGATES: dict[str, Aggregate] = {
    "documents_per_place": Aggregate(
        T.agg_documents_per_place,
        "Documentos que nombran cada lugar",
        phenomenon=T.agg_documents_per_place.c.phenomenon,
        place=(T.agg_documents_per_place.c.name,),
        place_code=lambda c, level, code: c.place_id == f"{level}:{code}",
    ),
    "alerts_per_department": Aggregate(
        T.agg_alerts_per_department,
        "Alertas tempranas por departamento",
        place=(T.agg_alerts_per_department.c.department_name,),
        # a department is its own row; a municipality keeps, in every row, the alerts naming it
        # (``alerts_naming``: the definition the dashboard's alerts map uses too)
        place_code=lambda c, level, code: c.department_code == code[:2] if level != "country" else None,
        place_rows=lambda reader, place_id, scope: reader.alerts_naming(place_id, scope),
    ),
    "timeline": Aggregate(
        T.agg_timeline,
        "Línea de tiempo de documentos",
        phenomenon=T.agg_timeline.c.phenomenon,
        dated=T.agg_timeline.c.period,
        entity=(T.agg_timeline.c.entity_id,),
    ),
    "entity_network": Aggregate(
        T.agg_entity_network,
        "Red de coocurrencia de entidades",
        phenomenon=T.agg_entity_network.c.phenomenon,
        entity=(T.agg_entity_network.c.entity_a, T.agg_entity_network.c.entity_b),
    ),
    "entity_heatmap": Aggregate(
        T.agg_entity_heatmap, "Matriz entidad × categoría", entity=(T.agg_entity_heatmap.c.entity_id,)
    ),
    "entity_quadrant": Aggregate(
        T.agg_entity_quadrant,
        "Cuadrante intensidad–tendencia",
        phenomenon=T.agg_entity_quadrant.c.phenomenon,
        entity=(T.agg_entity_quadrant.c.entity_id,),
    ),
    "armed_presence": Aggregate(
        T.armed_presence,
        "Presencia declarada de grupos armados por municipio",
        entity=(T.armed_presence.c.entity_id, T.armed_presence.c.group_key),
        place=(T.armed_presence.c.level1, T.armed_presence.c.level2),
        place_code=lambda c, level, code: (
            c.divipola_code == code
            if level == "municipality"
            else c.divipola_code.startswith(code)
            if level == "department"
            else c.country == code
        ),
    ),
    "early_warnings": Aggregate(T.early_warnings, "Alertas tempranas de la Defensoría", dated=T.early_warnings.c.date),
    "entity_mentions": Aggregate(
        T.entity_mentions,
        "Menciones de entidades",
        phenomenon=T.entity_mentions.c.phenomenon,
        entity=(T.entity_mentions.c.entity_id,),
    ),
    "place_mentions": Aggregate(T.place_mentions, "Menciones de lugares", phenomenon=T.place_mentions.c.phenomenon),
}


def current(table: sa.Table) -> sa.ColumnElement[bool]:
    """The condition selecting the current rows of a versioned table (``valid_to IS NULL``)."""
    return table.c.valid_to.is_(None)


def jsonable(v: Any) -> Any:
    """``v`` with dates as ISO strings and anything unknown as ``str`` (JSON-serializable)."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def _no_nul(v: str | None) -> str | None:
    return None if v is None else v.replace("\x00", "")


class PrecomputeReader:
    """Reads the precompute tables through ``engine`` (thread-safe).

    Which tables exist is remembered for 30 s (only found tables, so a new materialization shows
    up at once); a table dropped in the meantime (re-materialization) is re-checked once.
    """

    def __init__(self, engine: sa.Engine):
        self.engine = engine
        self._lock = threading.Lock()
        self._found: dict[str, float] = {}
        self._quadrants: dict[tuple, tuple[tuple, list[dict]]] = {}

    def versions(self) -> dict[str, dict]:
        """The newest finished run per precompute asset (``versioning.run_versions``): the
        ``precompute_version`` of what this reader reads now; ``{}`` before any precompute."""
        from radar_pipeline.precompute.versioning import run_versions

        if not self.materialized(T.precompute_runs):
            return {}
        return run_versions(self.engine)

    # ------------------------------------------------------------------ existence
    def materialized(self, table: sa.Table) -> bool:
        """Whether ``table`` exists in the database."""
        now = time.monotonic()
        with self._lock:
            if now - self._found.get(table.name, -_CACHE_S) < _CACHE_S:
                return True
        with self.engine.connect() as conn:
            found = sa.inspect(conn).has_table(table.name)
        if found:
            with self._lock:
                self._found[table.name] = now
        return found

    def _forget(self, tables: Iterable[sa.Table]) -> None:
        with self._lock:
            for t in tables:
                self._found.pop(t.name, None)

    def status(self) -> dict[str, bool]:
        """``{aggregate name: materialized?}`` for every name in ``AGGREGATES``."""
        return {name: self.materialized(spec.table) for name, spec in AGGREGATES.items()}

    def rows(self, stmt: sa.Executable, *tables: sa.Table) -> list[dict]:
        """The rows of ``stmt`` as dicts (values as the driver returns them). Raises
        ``NotMaterialized(table name)`` when one of ``tables`` (the precompute tables the statement
        reads) does not exist; other database errors propagate."""
        for attempt in (0, 1):
            for t in tables:
                if not self.materialized(t):
                    raise NotMaterialized(t.name)
            try:
                with self.engine.connect() as conn:
                    return [dict(r) for r in conn.execute(stmt).mappings()]
            except (sa.exc.ProgrammingError, sa.exc.NoSuchTableError):
                if attempt or not tables:
                    raise
                self._forget(tables)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ scope
    @staticmethod
    def scoped(table: sa.Table, scope: AccessScope | None = None) -> sa.FromClause:
        """``table``'s current rows readable under ``scope``, folded per key (``scoped.scoped``);
        select from it with the table's column names."""
        return scoped(table, scope)

    @staticmethod
    def in_scope(column: sa.ColumnElement, scope: AccessScope | None) -> sa.ColumnElement[bool]:
        """The condition that a ``collection`` column (of ``documents``, ``chunks`` …) is readable
        under ``scope``."""
        return in_scope(column, scope)

    def quadrant(
        self, scope: AccessScope | None = None, phenomenon: str | None = None, evidence: bool = False
    ) -> list[dict]:
        """The intensity–trend quadrant over the collections ``scope`` may read, classified by
        ``aggregates.quadrant_rows`` (its medians and cut-off are the caller's corpus's: they do not
        add up across collections). ``phenomenon``: one scope (a phenomenon or ``all``), else every
        scope. Rows as ``agg_entity_quadrant`` rows with ``id`` (the folded row's), ordered by
        scope and entity; ``evidence`` only when asked. Raises ``NotMaterialized``.

        The classification is remembered per (scope, phenomenon, evidence) while the quadrant and
        date tables are unchanged (their newest id and current row count): a new materialization
        is classified again on the next read."""
        q, pd = T.agg_entity_quadrant, T.publication_dates
        version = tuple(
            self.rows(
                sa.select(
                    sa.select(sa.func.max(q.c.id)).scalar_subquery().label("q_id"),
                    sa.select(sa.func.count()).where(current(q)).scalar_subquery().label("q_n"),
                    sa.select(sa.func.max(pd.c.id)).scalar_subquery().label("d_id"),
                    sa.select(sa.func.count()).where(current(pd)).scalar_subquery().label("d_n"),
                ),
                q,
                pd,
            )[0].values()
        )
        key = (scope.cache_key if scope is not None else ("*",), phenomenon, evidence)
        with self._lock:
            hit = self._quadrants.get(key)
        if hit is not None and hit[0] == version:
            return [dict(r) for r in hit[1]]
        out = self._classify_quadrant(scope, phenomenon, evidence)
        with self._lock:
            self._quadrants[key] = (version, out)
        return [dict(r) for r in out]

    def _classify_quadrant(self, scope: AccessScope | None, phenomenon: str | None, evidence: bool) -> list[dict]:
        q = scoped(T.agg_entity_quadrant, scope)
        stmt = sa.select(q.c.id, q.c.entity_id, q.c.entity_category, q.c.phenomenon, q.c.evidence)
        if phenomenon is not None:
            stmt = stmt.where(q.c.phenomenon == phenomenon)
        folded = self.rows(stmt, T.agg_entity_quadrant)
        pd, d, c = T.publication_dates, db.documents, db.chunks
        dates = self.rows(
            sa.select(pd.c.doc_id, pd.c.date, d.c.phenomenon)
            .select_from(pd.join(d, d.c.doc_id == pd.c.doc_id))
            .where(
                current(pd),
                pd.c.date.is_not(None),
                in_scope(pd.c.collection, scope),
                sa.exists(sa.select(c.c.chunk_id).where(c.c.doc_id == pd.c.doc_id)),
            ),
            T.publication_dates,
        )
        out = []
        for sc in sorted({r["phenomenon"] for r in folded}):
            rows = [r for r in folded if r["phenomenon"] == sc]
            naming: dict[str, dict[str, list[str]]] = {}
            for r in rows:
                for e in r["evidence"]:
                    naming.setdefault(r["entity_id"], {}).setdefault(e["doc_id"], []).append(e["chunk_id"])
            dated = {x["doc_id"]: x["date"] for x in dates if sc == "all" or x["phenomenon"] == sc}
            ids = {r["entity_id"]: r["id"] for r in rows}
            cats = {r["entity_id"]: r["entity_category"] for r in rows}
            for r in quadrant_rows(sc, dated, naming, cats):
                r = {"id": ids[r["entity_id"]], **r}
                if not evidence:
                    r.pop("evidence")
                out.append(r)
        return out

    # ------------------------------------------------------------------ aggregates
    def read(self, name: str, filters: Filters = Filters(), limit: int = 500, scope: AccessScope | None = None) -> dict:
        """Current rows of one aggregate over the collections ``scope`` may read (None: all),
        narrowed by the ``filters`` its table has columns for. Raises ``KeyError`` on an unknown name.

        Returns ``{aggregate, table, title, materialized, rows, n_rows, truncated, filters_applied,
        filters_ignored, message}``; rows are JSON-serializable dicts of every column (a folded
        row: ``scoped.py``), ordered by ``id``, at most ``limit``.
        """
        spec = AGGREGATES[name]
        f = dataclasses.replace(filters, entity=_no_nul(filters.entity), place=_no_nul(filters.place))
        base = {"aggregate": name, "table": spec.table_name, "title": spec.title}
        if spec.narrows_rows(f):
            try:
                rewrite = spec.place_rows(self, f.place, scope)
            except NotMaterialized:  # what narrows it is missing: the place's department, as a column
                spec = dataclasses.replace(spec, place_rows=None)
        # a folded table's evidence is unioned for the rows read only (the union is the costly part)
        lazy = spec.table.name in FOLDS and "evidence" in spec.table.c
        stmt, applied, ignored = spec.select(f, limit if not spec.narrows_rows(f) else 100_000, scope, not lazy)
        try:
            if spec.table is T.agg_entity_quadrant:
                rows = [
                    r
                    for r in self.quadrant(scope, f.phenomenon, evidence=True)
                    if f.entity is None or r["entity_id"].lower() == f.entity.lower()
                ]
                rows.sort(key=lambda r: r["id"])
                rows = rows[: limit + 1]
            else:
                rows = self.rows(stmt, spec.table)
                if lazy:
                    members = [i for r in rows for i in r.pop("member_ids")]
                    ev = {e["id"]: e["evidence"] for e in self.rows(folded_evidence(spec.table, members), spec.table)}
                    for r in rows:
                        r["evidence"] = ev[r["id"]]
            if spec.narrows_rows(f):
                rows = [x for r in rows if (x := rewrite(r)) is not None]
        except NotMaterialized:
            return {
                **base,
                "materialized": False,
                "rows": [],
                "n_rows": 0,
                "truncated": False,
                "filters_applied": {},
                "filters_ignored": sorted(f.requested()),
                "message": f"'{name}' no está materializado todavía (tabla {spec.table_name} ausente)",
            }
        truncated = len(rows) > limit
        rows = [{k: jsonable(v) for k, v in r.items()} for r in rows[:limit]]
        return {
            **base,
            "materialized": True,
            "rows": rows,
            "n_rows": len(rows),
            "truncated": truncated,
            "filters_applied": applied,
            "filters_ignored": ignored,
            "message": None,
        }

    def alerts_naming(self, place_id: str, scope: AccessScope | None = None) -> Callable[[dict], dict | None]:
        """A rewriter of ``agg_alerts_per_department`` rows that keeps only the alerts naming
        ``place_id`` among their places (``alerts.names_place``) in the collections ``scope`` may
        read, with ``n_alerts`` and the evidence recounted; a row left with none is dropped
        (``None``). Raises ``NotMaterialized`` without ``early_warnings``."""
        t = scoped(T.early_warnings, scope)
        rows = self.rows(sa.select(t.c.alert_code, t.c.places, t.c.evidence).where(current(t)), t)
        members = municipalities_of(place_id) or (place_id,)  # a subregion: any of its municipalities
        kept = {r["alert_code"]: r for r in rows if any(names_place(r, m) for m in members)}
        evidence = {(e.get("doc_id"), e.get("chunk_id")) for r in kept.values() for e in r["evidence"] or []}

        def rewrite(row: dict) -> dict | None:
            codes = [c for c in row["alert_codes"] or [] if c in kept]
            if not codes:
                return None
            ev = [e for e in row.get("evidence") or [] if (e.get("doc_id"), e.get("chunk_id")) in evidence]
            return {**row, "alert_codes": codes, "n_alerts": len(codes), "evidence": ev}

        return rewrite

    def mentions_for_chunks(
        self,
        chunk_ids: list[str],
        tables: tuple[sa.Table, ...] = (T.entity_mentions, T.place_mentions),
        limit: int = 2000,
    ) -> dict[str, list[dict]]:
        """Current rows of the mention tables that point at ``chunk_ids``, JSON-serializable:
        ``{table name: [row, ...]}`` in text order (chunk, then offset), at most ``limit`` per table:
        the first ``limit`` in that order, not whichever rows the database happens to return first
        (tables not materialized are left out)."""
        out: dict[str, list[dict]] = {}
        if not chunk_ids:
            return out
        for t in tables:
            stmt = (
                sa.select(t)
                .where(t.c.chunk_id.in_(chunk_ids), current(t))
                .order_by(t.c.chunk_id, t.c.char_start, t.c.char_end, t.c.id)
                .limit(limit)
            )
            try:
                out[t.name] = [{k: jsonable(v) for k, v in r.items()} for r in self.rows(stmt, t)]
            except NotMaterialized:
                continue
        return out

    # ------------------------------------------------------------------ publication dates
    def publication_dates(self) -> dict[str, dict] | None:
        """Current ``publication_dates`` rows by ``doc_id`` (``date``, ``year``, ``precision``,
        ``rule``, ``source_kind``); None when the table is not materialized."""
        t = T.publication_dates
        stmt = sa.select(t.c.doc_id, t.c.date, t.c.year, t.c.precision, t.c.rule, t.c.source_kind).where(current(t))
        try:
            return {r["doc_id"]: r for r in self.rows(stmt, t)}
        except NotMaterialized:
            return None

    def newest_year(self) -> int | None:
        """Year of the newest dated document (current ``publication_dates``): the reference of
        relative periods such as "los últimos cinco años"; None when nothing is dated or the table
        is not materialized."""
        t = T.publication_dates
        try:
            rows = self.rows(sa.select(sa.func.max(t.c.year).label("y")).where(current(t)), t)
        except NotMaterialized:
            return None
        return int(rows[0]["y"]) if rows and rows[0]["y"] is not None else None

    # ------------------------------------------------------------------ dictionary and gazetteer
    def find_entity(self, text: str) -> str | None:
        """The ``entity_id`` of the current dictionary entry whose id, name or an alias folds to
        ``text`` folded (or whose id is ``text``); ``None`` when none does or the dictionary is not
        materialized. An alias of several entries gives the smallest ``entity_id`` of them (entries in
        id order: the answer does not depend on the order the database keeps its rows in)."""
        key = fold_phrase(text)
        t = T.entity_dictionary
        try:
            ents = self.rows(
                sa.select(t.c.entity_id, t.c.name, t.c.aliases).where(current(t)).order_by(t.c.entity_id), t
            )
        except NotMaterialized:
            return None
        for e in ents:
            names = {fold_phrase(e["entity_id"].replace("_", " ")), fold_phrase(e["name"]), e["entity_id"]}
            for al in e["aliases"] or []:
                alias = al.get("text") if isinstance(al, dict) else al
                if alias:
                    names.add(fold_phrase(alias))
            if key in names or text == e["entity_id"]:
                return e["entity_id"]
        return None

    def has_place(self, place_id: str) -> bool:
        """Whether the current gazetteer has ``place_id`` (False when it is not materialized)."""
        t = T.place_gazetteer
        try:
            return bool(self.rows(sa.select(sa.literal(1)).where(t.c.place_id == place_id, current(t)), t))
        except NotMaterialized:
            return False

    def find_place(self, key: str, levels: tuple[str, ...]) -> str | None:
        """The ``place_id`` of the first place (by level, in the order of ``levels``) whose name or
        an alias folds to ``key`` (already folded with ``fold_phrase``); ``None`` when none does or
        the gazetteer is not materialized. A name several places of one level share (71 in the
        Colombian gazetteer: "La Unión" names four municipalities) gives the smallest ``place_id`` of
        them: places in id order, so the answer does not depend on the order the database keeps its
        rows in (which a re-materialization changes)."""
        t = T.place_gazetteer
        stmt = (
            sa.select(t.c.place_id, t.c.level, t.c.name, t.c.aliases)
            .where(t.c.level.in_(levels), current(t))
            .order_by(t.c.place_id)
        )
        try:
            rows = self.rows(stmt, t)
        except NotMaterialized:
            return None
        for level in levels:
            for r in rows:
                if r["level"] != level:
                    continue
                names = {fold_phrase(r["name"])} | {
                    fold_phrase(a.get("text", "")) for a in r["aliases"] or [] if isinstance(a, dict)
                }
                if key in names:
                    return r["place_id"]
        return None
