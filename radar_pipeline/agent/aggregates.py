"""Read access to the precompute tables (Stage 1b) for the dashboard endpoints and the visualizer.

The tables are materialized by the precompute assets; this module only reads them, by reflection,
so it does not depend on their exact columns. A table that does not exist yet is answered with a
structured ``materialized: False`` result, never an exception. Filters (phenomenon, period,
entity) are applied only to columns the table actually has; the rest are reported as ignored.

``AGGREGATES`` is the closed list of names the API and the visualizer may use.
"""
from __future__ import annotations

import threading
import time
from typing import Any

import sqlalchemy as sa

AGGREGATES: dict[str, dict] = {
    "documents_per_place": {"table": "agg_documents_per_place", "title": "Documentos que nombran cada lugar"},
    "alerts_per_department": {"table": "agg_alerts_per_department", "title": "Alertas tempranas por departamento"},
    "timeline": {"table": "agg_timeline", "title": "Línea de tiempo de documentos"},
    "entity_network": {"table": "agg_entity_network", "title": "Red de coocurrencia de entidades"},
    "entity_heatmap": {"table": "agg_entity_heatmap", "title": "Matriz entidad × categoría"},
    "entity_quadrant": {"table": "agg_entity_quadrant", "title": "Cuadrante intensidad–tendencia"},
    "armed_presence": {"table": "armed_presence", "title": "Presencia declarada de grupos armados por municipio"},
    "early_warnings": {"table": "early_warnings", "title": "Alertas tempranas de la Defensoría"},
    "entity_mentions": {"table": "entity_mentions", "title": "Menciones de entidades"},
    "place_mentions": {"table": "place_mentions", "title": "Menciones de lugares"},
}

_PHEN_COLS = ("phenomenon", "fenomeno")
_YEAR_COLS = ("year", "anio", "period_year")
_DATE_COLS = ("period", "date", "published", "publication_date", "month", "period_start")
_ENTITY_COLS = ("entity", "entity_id", "entity_a", "entity_b", "entity_name", "group_key", "armed_group", "group_name", "actor")
_PLACE_COLS = ("name", "department_name", "level1", "level2", "place_name", "department", "municipality")
_ACCENTS = ("áéíóúüñàèìòùâêîôûãõç", "aeiouunaeiouaeiouaoc")
_CACHE_S = 30.0


def _jsonable(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


class AggregateReader:
    """Reads precompute tables through ``engine``; reflected tables are cached for 30 s."""

    def __init__(self, engine: sa.Engine):
        self.engine = engine
        self._lock = threading.Lock()
        self._tables: dict[str, tuple[float, sa.Table | None]] = {}

    def _table(self, table_name: str) -> sa.Table | None:
        now = time.monotonic()
        with self._lock:
            hit = self._tables.get(table_name)
            if hit and now - hit[0] < _CACHE_S:
                return hit[1]
        table = None
        if sa.inspect(self.engine).has_table(table_name):
            table = sa.Table(table_name, sa.MetaData(), autoload_with=self.engine)
            with self._lock:   # only found tables are cached: a new materialization shows up at once
                self._tables[table_name] = (now, table)
        return table

    def status(self) -> dict[str, bool]:
        """``{aggregate name: materialized?}`` for every name in ``AGGREGATES``."""
        return {name: self._table(spec["table"]) is not None for name, spec in AGGREGATES.items()}

    def read(self, name: str, *, phenomenon: str | None = None, year_from: int | None = None,
             year_to: int | None = None, entity: str | None = None, place: str | None = None, limit: int = 500) -> dict:
        """Current rows (``valid_to IS NULL`` when the table is versioned) of one aggregate with the
        applicable filters. Raises ``KeyError`` on an unknown name.

        Returns ``{aggregate, table, title, materialized, rows, n_rows, truncated, filters_applied,
        filters_ignored, message}``. A table dropped since it was reflected (re-materialization)
        is re-checked once.
        """
        try:
            return self._read(name, phenomenon, year_from, year_to, entity, place, limit)
        except (sa.exc.ProgrammingError, sa.exc.NoSuchTableError):
            with self._lock:
                self._tables.pop(AGGREGATES[name]["table"], None)
            return self._read(name, phenomenon, year_from, year_to, entity, place, limit)

    def _read(self, name, phenomenon, year_from, year_to, entity, place, limit) -> dict:
        spec = AGGREGATES[name]
        if entity is not None:
            entity = entity.replace("\x00", "")
        base = {"aggregate": name, "table": spec["table"], "title": spec["title"]}
        table = self._table(spec["table"])
        if place is not None:
            place = place.replace("\x00", "")
        requested = {"phenomenon": phenomenon, "year_from": year_from, "year_to": year_to, "entity": entity, "place": place}
        requested = {k: v for k, v in requested.items() if v is not None}
        if table is None:
            return {**base, "materialized": False, "rows": [], "n_rows": 0, "truncated": False,
                    "filters_applied": {}, "filters_ignored": sorted(requested),
                    "message": f"'{name}' no está materializado todavía (tabla {spec['table']} ausente)"}
        cols = {c.name: c for c in table.columns}
        conds, applied, ignored = [], {}, []
        if "valid_to" in cols:
            conds.append(cols["valid_to"].is_(None))
        if phenomenon is not None:
            col = next((cols[c] for c in _PHEN_COLS if c in cols), None)
            if col is not None:
                conds.append(col == phenomenon)
                applied["phenomenon"] = phenomenon
            else:
                ignored.append("phenomenon")
        if year_from is not None or year_to is not None:
            ycol = next((cols[c] for c in _YEAR_COLS if c in cols), None)
            dcol = next((cols[c] for c in _DATE_COLS if c in cols), None)
            if ycol is not None:
                if year_from is not None:
                    conds.append(ycol >= year_from)
                if year_to is not None:
                    conds.append(ycol <= year_to)
            elif dcol is not None:
                yexpr = sa.cast(sa.func.substr(sa.cast(dcol, sa.Text), 1, 4), sa.Integer)
                digits = sa.cast(dcol, sa.Text).op("~")(r"^[0-9]{4}")
                if year_from is not None:
                    conds.append(sa.and_(digits, yexpr >= year_from))
                if year_to is not None:
                    conds.append(sa.and_(digits, yexpr <= year_to))
            if ycol is not None or dcol is not None:
                applied.update({k: v for k, v in (("year_from", year_from), ("year_to", year_to)) if v is not None})
            else:
                ignored += [k for k in ("year_from", "year_to") if k in requested]
        if entity is not None:
            ecols = [cols[c] for c in _ENTITY_COLS if c in cols]
            if ecols:
                conds.append(sa.or_(*[sa.func.lower(sa.cast(c, sa.Text)) == entity.lower() for c in ecols]))
                applied["entity"] = entity
            else:
                ignored.append("entity")
        if place is not None:
            pcols = [cols[c] for c in _PLACE_COLS if c in cols]
            if pcols:
                folded = place.lower().translate(str.maketrans(*_ACCENTS))
                conds.append(sa.or_(*[sa.func.translate(sa.func.lower(sa.cast(c, sa.Text)), *_ACCENTS) == folded
                                      for c in pcols]))
                applied["place"] = place
            else:
                ignored.append("place")
        order = [cols["id"]] if "id" in cols else []
        stmt = sa.select(table).where(*conds).order_by(*order).limit(limit + 1)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(stmt)]
        truncated = len(rows) > limit
        rows = [{k: _jsonable(v) for k, v in r.items()} for r in rows[:limit]]
        return {**base, "materialized": True, "rows": rows, "n_rows": len(rows), "truncated": truncated,
                "filters_applied": applied, "filters_ignored": ignored, "message": None}

    def mentions_for_chunks(self, chunk_ids: list[str], tables: tuple[str, ...] = ("entity_mentions", "place_mentions"),
                            limit: int = 2000) -> dict[str, list[dict]]:
        """Rows of the mention tables that point at ``chunk_ids`` (tables lacking a ``chunk_id``
        column, or not materialized, are skipped): ``{table: [row, ...]}``."""
        out: dict[str, list[dict]] = {}
        for name in tables:
            table = self._table(name)
            if table is None or "chunk_id" not in table.c or not chunk_ids:
                continue
            conds = [table.c.chunk_id.in_(chunk_ids)]
            if "valid_to" in table.c:
                conds.append(table.c.valid_to.is_(None))
            stmt = sa.select(table).where(*conds).limit(limit)
            with self.engine.connect() as conn:
                out[name] = [{k: _jsonable(v) for k, v in dict(r._mapping).items()} for r in conn.execute(stmt)]
        return out
