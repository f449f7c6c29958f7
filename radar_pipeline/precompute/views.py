"""The seven views of the precompute tables — what the dashboard draws and what the agent's figures
state in words (``agent/roles/figures.py``) — each the current rows of one precompute table, narrowed by
the filters. One definition for both, so a figure cannot differ between chat and map (moved here
from ``api/dashboard/data``, which the domain library cannot import).

When a filter is a column of the table (phenomenon, the timeline's entity and period), rows are
selected by it. When it is not (a period on the map, an entity on the heat matrix, a territory on
the network …), the row is **narrowed through its evidence**: only the cited passages of
documents that pass the filter are kept (``docsets.py``), and the count becomes the number of
distinct documents among them. The unfiltered figure travels with it (``n_total``). A filter that
cannot be applied to a view is reported in ``not_applied``.

Every view reads only the collections the caller may read: the rows of those collections folded
into one row per key inside the query (``PrecomputeReader.scoped``), so its counts, ids and
evidence are those of a corpus made of them.
"""

from __future__ import annotations

import sqlalchemy as sa

from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.alerts import names_place
from radar_pipeline.precompute.docsets import DocSets, is_country, narrow
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.places.subregions import municipalities_of
from radar_pipeline.precompute.presence import GROUPS
from radar_pipeline.precompute.reader import PrecomputeReader, current

VIEWS = (
    "documents_per_place",
    "alerts_per_department",
    "armed_presence",
    "timeline",
    "entity_network",
    "entity_heatmap",
    "entity_quadrant",
)
TABLES: dict[str, sa.Table] = {
    "documents_per_place": T.agg_documents_per_place,
    "alerts_per_department": T.agg_alerts_per_department,
    "armed_presence": T.armed_presence,
    "timeline": T.agg_timeline,
    "entity_network": T.agg_entity_network,
    "entity_heatmap": T.agg_entity_heatmap,
    "entity_quadrant": T.agg_entity_quadrant,
}
GROUP_ENTITY = GROUPS  # presence group key → entity id: one definition, in the presence precompute


def period_year(period: str | None) -> int | None:
    """The year a ``YYYY…`` text starts with, or None."""
    return int(period[:4]) if period and period[:4].isdigit() else None


def _scope(f: Filters) -> str:
    return f.phenomenon or "all"


def municipality(f: Filters) -> str | None:
    """The territory filter when it is a municipality (``municipality:52835``) or a set of them (a
    subregion, ``subregion:catatumbo``), else None."""
    return f.place if municipalities_of(f.place) is not None else None


def alert_kept(a: dict, f: Filters, ent_docs: set[str] | None) -> bool:
    """Whether early-warning alert ``a`` (an ``early_warnings`` row) passes ``f``: published in the
    period, one of its documents naming the entity (``ent_docs``), and — with a municipality as the
    territory — naming that municipality among its places. A department or country territory does
    not narrow alerts (the department is the map's own row)."""
    if f.period and not f.year_ok(period_year(a.get("date"))):
        return False
    if ent_docs is not None and not ({d["doc_id"] for d in a.get("documents") or []} & ent_docs):
        return False
    muni = municipality(f)
    return not muni or any(names_place(a, m) for m in municipalities_of(muni) or ())


def alerts_narrowed(f: Filters) -> bool:
    """Whether ``f`` narrows the alerts (period, entity or a municipality)."""
    return bool(f.period or f.entity or municipality(f))


class Views:
    """The seven views over one reader, of the collections the document sets' scope may read.
    Methods raise ``NotMaterialized`` for missing tables."""

    def __init__(self, reader: PrecomputeReader, docsets: DocSets):
        self.reader = reader
        self.docsets = docsets
        self.scope = docsets.scope

    def _t(self, table: sa.Table):
        return self.reader.scoped(table, self.scope)

    def view(self, name: str, f: Filters, **opts) -> dict:
        """One view's rows (keys depend on the view) with ``view``, ``table``, ``filters``
        (Spanish names), ``narrowed_by`` and ``not_applied``. Raises ``KeyError`` on an unknown view."""
        if name not in VIEWS:
            raise KeyError(name)
        out = getattr(self, f"_view_{name}")(f, **opts)
        out.setdefault("not_applied", [])
        out.update({"view": name, "table": f"{TABLES[name].name}_current", "filters": f.spanish()})
        return out

    def alerts(self) -> dict[str, dict]:
        """Current early-warning alerts by code: ``{alert_code: {alert_type, date, armed_groups, places,
        documents}}``."""
        t = self._t(T.early_warnings)
        rows = self.reader.rows(
            sa.select(t.c.alert_code, t.c.alert_type, t.c.date, t.c.armed_groups, t.c.places, t.c.documents).where(
                current(t)
            ),
            T.early_warnings,
        )
        return {r["alert_code"]: r for r in rows}

    def _view_documents_per_place(self, f: Filters, level: str | None = None) -> dict:
        docs, narrowed = self.docsets.docset(f, ("periodo", "entidad"))
        t = self._t(T.agg_documents_per_place)
        cols = [
            t.c.id,
            t.c.level,
            t.c.place_id,
            t.c.code,
            t.c.name,
            t.c.country_code,
            t.c.department_code,
            t.c.n_documents,
            t.c.n_documents_direct,
            t.c.n_passages,
        ] + ([t.c.evidence] if docs is not None else [])
        conds = [current(t), t.c.phenomenon == _scope(f)]
        if level in ("country", "department", "municipality"):
            conds.append(t.c.level == level)
        rows = self.reader.rows(sa.select(*cols).where(*conds).order_by(t.c.place_id), t)
        out = []
        for r in rows:
            r["n_total"] = r["n_documents"]
            if docs is not None:
                ev = narrow(r.pop("evidence"), docs)
                if not ev:
                    continue
                r["n_documents"] = len({e["doc_id"] for e in ev})
                r["n_passages"] = len(ev)
                r["n_documents_direct"] = None
            out.append(r)
        return {"rows": out, "narrowed_by": narrowed}

    def _view_alerts_per_department(self, f: Filters) -> dict:
        t = self._t(T.agg_alerts_per_department)
        rows = self.reader.rows(
            sa.select(t.c.id, t.c.department_code, t.c.department_name, t.c.alert_type, t.c.n_alerts, t.c.alert_codes)
            .where(current(t))
            .order_by(t.c.department_code, t.c.alert_type),
            t,
        )
        narrowed, not_applied = [], []
        keep: set[str] | None = None
        if alerts_narrowed(f):
            ent_docs = self.docsets.naming_entity(f.entity) if f.entity else None
            keep = {code for code, a in self.alerts().items() if alert_kept(a, f, ent_docs)}
            narrowed = [x for x, on in (("periodo", f.period), ("entidad", f.entity), ("lugar", municipality(f))) if on]
        if f.phenomenon and f.phenomenon != "territorial":
            not_applied.append("fenomeno (las alertas son del fenómeno territorial)")
        out = []
        for r in rows:
            r["n_total"] = r["n_alerts"]
            if keep is not None:
                r["alert_codes"] = [c for c in r["alert_codes"] if c in keep]
                r["n_alerts"] = len(r["alert_codes"])
                if not r["n_alerts"]:
                    continue
            out.append(r)
        return {
            "rows": out,
            "narrowed_by": narrowed,
            "not_applied": not_applied,
            "types": sorted({r["alert_type"] for r in rows}),
        }

    def _view_armed_presence(self, f: Filters, grupo: str | None = None) -> dict:
        not_applied = []
        if f.period:
            not_applied.append("periodo (la presencia declarada no tiene fecha)")
        group = grupo if grupo in GROUP_ENTITY else None
        if f.entity and group is None:
            g = next((k for k, v in GROUP_ENTITY.items() if v == f.entity), None)
            if g:
                group = g
            else:
                not_applied.append("entidad (no es un grupo de los registros de presencia)")
        t = self._t(T.armed_presence)
        rows = self.reader.rows(
            sa.select(
                t.c.id,
                t.c.municipality_id,
                t.c.country,
                t.c.level1,
                t.c.level2,
                t.c.divipola_code,
                t.c.group_key,
                t.c.entity_id,
                t.c.state,
                t.c.n_records,
                t.c.n_present,
                t.c.n_absent,
                t.c.n_no_info,
                t.c.shape_match,
                t.c.shape_key,
            )
            .where(current(t))
            .order_by(t.c.municipality_id, t.c.group_key),
            t,
        )
        munis: dict[str, dict] = {}
        for r in rows:
            m = munis.setdefault(
                r["municipality_id"],
                {
                    "municipality_id": r["municipality_id"],
                    "country": r["country"],
                    "level1": r["level1"],
                    "level2": r["level2"],
                    "divipola_code": r["divipola_code"],
                    "shape_key": r["shape_key"],
                    "shape_match": r["shape_match"],
                    "present": [],
                    "absent": [],
                    "no_info": [],
                    "ids": [],
                },
            )
            if group and r["group_key"] != group:
                continue
            m[r["state"]].append(r["group_key"])
            m["ids"].append(r["id"])
        out = []
        for m in munis.values():
            # one group or any group: present if one is declared; absent if the records deny some
            # group and declare none; no_info when no group has a known state (never "absent" by default)
            m["state"] = "present" if m["present"] else ("absent" if m["absent"] else "no_info")
            out.append(m)
        return {
            "rows": out,
            "group": group,
            "narrowed_by": ["entidad"] if group and f.entity else [],
            "not_applied": not_applied,
            "groups": list(GROUP_ENTITY),
        }

    def _view_timeline(self, f: Filters, granularidad: str = "year") -> dict:
        gran = "month" if granularidad == "month" else "year"
        # the entity is a column of the timeline; a country as the entity is not (narrowed through the evidence)
        country = is_country(f.entity)
        docs, narrowed = self.docsets.docset(f, ("entidad", "lugar") if country else ("lugar",))
        t = self._t(T.agg_timeline)
        cols = [t.c.id, t.c.period, t.c.undated, t.c.n_documents] + ([t.c.evidence] if docs is not None else [])
        rows = self.reader.rows(
            sa.select(*cols)
            .where(
                current(t),
                t.c.phenomenon == _scope(f),
                t.c.granularity == gran,
                t.c.entity_id.is_not_distinct_from(None if country else f.entity),
            )
            .order_by(t.c.period.asc().nulls_last()),
            t,
        )
        out, undated = [], None
        for r in rows:
            r["n_total"] = r["n_documents"]
            if docs is not None:
                ev = narrow(r.pop("evidence"), docs)
                r["n_documents"] = len({e["doc_id"] for e in ev})
            if r["undated"]:
                undated = (
                    r if undated is None else {**undated, "n_documents": undated["n_documents"] + r["n_documents"]}
                )
                continue
            if f.period and not f.year_ok(period_year(r["period"])):
                continue
            if docs is not None and not r["n_documents"]:
                continue
            out.append(r)
        if f.period:
            narrowed = ["periodo"] + narrowed
        if f.entity and not country:
            narrowed = ["entidad"] + narrowed
        return {
            "rows": out,
            "undated": undated or {"n_documents": 0, "id": None},
            "granularity": gran,
            "narrowed_by": narrowed,
        }

    @staticmethod
    def _narrow_rows(rows: list[dict], docs: set[str] | None, count: str = "n_documents") -> list[dict]:
        out = []
        for r in rows:
            r["n_total"] = r[count]
            ev = r.pop("evidence", None)  # read only when a filter narrows the rows
            if docs is not None:
                ev = narrow(ev, docs)
                if not ev:
                    continue
                r[count] = len({e["doc_id"] for e in ev})
                r["n_passages"] = len(ev)
            out.append(r)
        return out

    def _view_entity_network(self, f: Filters) -> dict:
        docs, narrowed = self.docsets.docset(f, ("periodo", "entidad", "lugar"))
        t = self._t(T.agg_entity_network)
        rows = self.reader.rows(
            sa.select(
                t.c.id,
                t.c.kind,
                t.c.entity_a,
                t.c.entity_b,
                t.c.n_passages,
                t.c.n_documents,
                *([t.c.evidence] if docs is not None else []),
            )
            .where(current(t), t.c.phenomenon == _scope(f))
            # an order of the rows' content, not of their storage (which differs between two databases
            # holding the same rows)
            .order_by(t.c.kind, t.c.entity_a, t.c.entity_b),
            t,
        )
        rows = self._narrow_rows(rows, docs)
        return {
            "nodes": [r for r in rows if r["kind"] == "node"],
            "edges": [r for r in rows if r["kind"] == "edge"],
            "narrowed_by": narrowed,
        }

    def _view_entity_heatmap(self, f: Filters, columnas: str = "source") -> dict:
        kind = "phenomenon" if columnas == "phenomenon" else "source"
        docs, narrowed = self.docsets.docset(f, ("fenomeno", "periodo", "entidad", "lugar"))
        t = self._t(T.agg_entity_heatmap)
        rows = self.reader.rows(
            sa.select(
                t.c.id,
                t.c.entity_id,
                t.c.entity_category,
                t.c.category,
                t.c.n_documents,
                t.c.n_passages,
                *([t.c.evidence] if docs is not None else []),
            )
            .where(current(t), t.c.column_kind == kind)
            .order_by(t.c.entity_id, t.c.category),  # content order, as in the network view
            t,
        )
        return {"rows": self._narrow_rows(rows, docs), "column_kind": kind, "narrowed_by": narrowed}

    def _view_entity_quadrant(self, f: Filters) -> dict:
        # the medians and the cut-off are the caller's collections' (they do not add up): classified on read
        rows = sorted(self.reader.quadrant(self.scope, _scope(f)), key=lambda r: r["entity_id"])
        for r in rows:
            del r["phenomenon"]
        not_applied = [
            x
            for x, on in (
                ("periodo (el corte es la mediana de todo el alcance)", f.period),
                ("lugar", f.place),
                ("entidad (un país no es un punto del cuadrante)", is_country(f.entity)),
            )
            if on
        ]
        return {
            "rows": rows,
            "narrowed_by": [],
            "not_applied": not_applied,
            "highlight": f.entity,
            "medians": {
                "intensity": rows[0]["intensity_median"],
                "trend": rows[0]["trend_median"],
                "cutoff_date": rows[0]["cutoff_date"],
            }
            if rows
            else None,
        }
