"""What the dashboard reads: the current rows of the precompute tables, narrowed by its filters.

Every figure comes from the ``<table>_current`` views the ``/aggregates`` endpoints and the
agent's visualizer read, so chat and dashboard show the same numbers. When a filter is a column of
the table (phenomenon, the timeline's entity and period), rows are selected by it. When it is
not (a period on the map, an entity on the heat matrix, a territory on the network …), the row is
**narrowed through its evidence**: only the cited passages of documents that pass the filter are
kept, and the count becomes the number of distinct documents among them — "documents that name
the entity", "documents published in the period", "documents that name the territory". The
unfiltered figure travels with it (``n_total``). Nothing is estimated: a filter that cannot be
applied to a view (a period on declared armed presence, which has no dates) is reported in
``not_applied`` and the view says so.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable

import sqlalchemy as sa

from radar_pipeline.textfold import fold_phrase

VIEWS = ("documents_per_place", "alerts_per_department", "armed_presence", "timeline", "entity_network",
         "entity_heatmap", "entity_quadrant")
TABLES = {"documents_per_place": "agg_documents_per_place", "alerts_per_department": "agg_alerts_per_department",
          "armed_presence": "armed_presence", "timeline": "agg_timeline", "entity_network": "agg_entity_network",
          "entity_heatmap": "agg_entity_heatmap", "entity_quadrant": "agg_entity_quadrant"}
PHENOMENA = ("ai_military", "space_security", "territorial")
GROUP_ENTITY = {"cdf": "comandos_de_la_frontera", "emc": "emc", "embf": "embf", "seg_marq": "segunda_marquetalia",
                "eln": "eln", "lobos": "los_lobos", "choneros": "los_choneros", "cv": "comando_vermelho", "pcc": "pcc",
                "others": None}
ALERT_LABELS = {"imminent": "riesgo inminente", "structural": "riesgo estructural", "unspecified": "tipo no indicado",
                "conflicting": "tipos en conflicto"}
STATE_LABELS = {"present": "presencia declarada", "absent": "sin presencia declarada", "no_info": "sin información"}
GROUP_LABELS = {"cdf": "Comandos de la Frontera", "emc": "EMC", "embf": "EMBF", "seg_marq": "Segunda Marquetalia",
                "eln": "ELN", "lobos": "Los Lobos", "choneros": "Los Choneros", "cv": "Comando Vermelho", "pcc": "PCC",
                "others": "otros grupos"}
PLACE_ID = re.compile(r"^(country|department|municipality):[A-Za-z0-9]{2,5}$")
ENTITY_ID = re.compile(r"^[a-z0-9_]{1,80}$")


class NotMaterialized(Exception):
    """The table behind a view has not been materialized yet."""


@dataclasses.dataclass(frozen=True)
class Filters:
    fenomeno: str | None = None
    desde: int | None = None
    hasta: int | None = None
    entidad: str | None = None      # entity_id of the dictionary
    lugar: str | None = None        # place_id of the gazetteer

    @property
    def period(self) -> bool:
        return self.desde is not None or self.hasta is not None

    def public(self) -> dict:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


def _year_ok(year: int | None, f: Filters) -> bool:
    if year is None:
        return False
    return (f.desde is None or year >= f.desde) and (f.hasta is None or year <= f.hasta)


def _period_year(period: str | None) -> int | None:
    return int(period[:4]) if period and period[:4].isdigit() else None


class DashboardData:
    """Read-only queries over one engine. Methods raise ``NotMaterialized`` for missing tables."""

    def __init__(self, engine: sa.Engine):
        self.engine = engine

    # ------------------------------------------------------------------ helpers
    def _exists(self, conn, table: str) -> bool:
        return conn.execute(sa.text("SELECT to_regclass(:t) IS NOT NULL"), {"t": f"{table}_current"}).scalar()

    def _rows(self, sql: str, params: dict | None = None, tables: Iterable[str] = ()) -> list[dict]:
        with self.engine.connect() as conn:
            for t in tables:
                if not self._exists(conn, t):
                    raise NotMaterialized(t)
            return [dict(r) for r in conn.execute(sa.text(sql), params or {}).mappings()]

    def status(self) -> dict[str, bool]:
        with self.engine.connect() as conn:
            return {v: bool(self._exists(conn, TABLES[v])) for v in VIEWS}

    # ------------------------------------------------------------------ document sets
    def docs_naming_entity(self, entity_id: str) -> set[str]:
        return {r["doc_id"] for r in self._rows(
            "SELECT DISTINCT doc_id FROM entity_mentions_current WHERE entity_id = :e", {"e": entity_id},
            ["entity_mentions"])}

    def docs_naming_place(self, place_id: str) -> set[str]:
        """Documents naming the place or a place inside it: the evidence of its map row (scope ``all``)."""
        return {r["doc_id"] for r in self._rows(
            "SELECT DISTINCT e->>'doc_id' AS doc_id FROM agg_documents_per_place_current a, "
            "jsonb_array_elements(a.evidence) e WHERE a.place_id = :p AND a.phenomenon = 'all'", {"p": place_id},
            ["agg_documents_per_place"])}

    def docs_in_period(self, f: Filters) -> set[str]:
        conds, params = ["year IS NOT NULL"], {}
        if f.desde is not None:
            conds.append("year >= :a")
            params["a"] = f.desde
        if f.hasta is not None:
            conds.append("year <= :b")
            params["b"] = f.hasta
        return {r["doc_id"] for r in self._rows(
            f"SELECT DISTINCT doc_id FROM publication_dates_current WHERE {' AND '.join(conds)}", params,
            ["publication_dates"])}

    def docs_of_phenomenon(self, phenomenon: str) -> set[str]:
        return {r["doc_id"] for r in self._rows("SELECT doc_id FROM documents WHERE phenomenon = :p", {"p": phenomenon})}

    def docset(self, f: Filters, use: Iterable[str]) -> tuple[set[str] | None, list[str]]:
        """Intersection of the document sets of the filters named in ``use`` that are set
        (``fenomeno``, ``periodo``, ``entidad``, ``lugar``); ``None`` when none applies."""
        sets, applied = [], []
        use = set(use)
        if "fenomeno" in use and f.fenomeno:
            sets.append(self.docs_of_phenomenon(f.fenomeno))
            applied.append("fenomeno")
        if "periodo" in use and f.period:
            sets.append(self.docs_in_period(f))
            applied.append("periodo")
        if "entidad" in use and f.entidad:
            sets.append(self.docs_naming_entity(f.entidad))
            applied.append("entidad")
        if "lugar" in use and f.lugar:
            sets.append(self.docs_naming_place(f.lugar))
            applied.append("lugar")
        if not sets:
            return None, []
        out = sets[0]
        for s in sets[1:]:
            out = out & s
        return out, applied

    @staticmethod
    def narrow(evidence: list[dict], docs: set[str] | None) -> list[dict]:
        if docs is None:
            return evidence
        return [e for e in evidence if e.get("doc_id") in docs]

    # ------------------------------------------------------------------ views
    def view(self, name: str, f: Filters, **opts) -> dict:
        if name not in VIEWS:
            raise KeyError(name)
        out = getattr(self, f"_view_{name}")(f, **opts)
        out.setdefault("not_applied", [])
        out.update({"view": name, "table": f"{TABLES[name]}_current", "filters": f.public()})
        return out

    def _scope(self, f: Filters) -> str:
        return f.fenomeno or "all"

    def _view_documents_per_place(self, f: Filters, level: str | None = None) -> dict:
        docs, narrowed = self.docset(f, ("periodo", "entidad"))
        params = {"s": self._scope(f)}
        cond = ""
        if level in ("country", "department", "municipality"):
            cond, params["l"] = " AND level = :l", level
        rows = self._rows(
            "SELECT id, level, place_id, code, name, country_code, department_code, n_documents, n_documents_direct, "
            f"n_passages{', evidence' if docs is not None else ''} FROM agg_documents_per_place_current "
            f"WHERE phenomenon = :s{cond} ORDER BY place_id", params, ["agg_documents_per_place"])
        out = []
        for r in rows:
            r["n_total"] = r["n_documents"]
            if docs is not None:
                ev = self.narrow(r.pop("evidence"), docs)
                if not ev:
                    continue
                r["n_documents"] = len({e["doc_id"] for e in ev})
                r["n_passages"] = len(ev)
                r["n_documents_direct"] = None
            out.append(r)
        return {"rows": out, "narrowed_by": narrowed}

    def _alerts(self) -> dict[str, dict]:
        rows = self._rows("SELECT alert_code, alert_type, date, armed_groups, documents FROM early_warnings_current",
                          tables=["early_warnings"])
        return {r["alert_code"]: r for r in rows}

    def _view_alerts_per_department(self, f: Filters) -> dict:
        rows = self._rows("SELECT id, department_code, department_name, alert_type, n_alerts, alert_codes "
                          "FROM agg_alerts_per_department_current ORDER BY department_code, alert_type",
                          tables=["agg_alerts_per_department"])
        narrowed, not_applied = [], []
        keep: set[str] | None = None
        if f.period or f.entidad:
            alerts = self._alerts()
            ent_docs = self.docs_naming_entity(f.entidad) if f.entidad else None
            keep = set()
            for code, a in alerts.items():
                year = _period_year(a.get("date"))
                if f.period and not _year_ok(year, f):
                    continue
                if ent_docs is not None and not ({d["doc_id"] for d in a.get("documents") or []} & ent_docs):
                    continue
                keep.add(code)
            narrowed = [x for x, on in (("periodo", f.period), ("entidad", f.entidad)) if on]
        if f.fenomeno and f.fenomeno != "territorial":
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
        return {"rows": out, "narrowed_by": narrowed, "not_applied": not_applied,
                "types": sorted({r["alert_type"] for r in rows})}

    def _view_armed_presence(self, f: Filters, grupo: str | None = None) -> dict:
        not_applied = []
        if f.period:
            not_applied.append("periodo (la presencia declarada no tiene fecha)")
        group = grupo if grupo in GROUP_ENTITY else None
        if f.entidad and group is None:
            g = next((k for k, v in GROUP_ENTITY.items() if v == f.entidad), None)
            if g:
                group = g
            else:
                not_applied.append("entidad (no es un grupo de los registros de presencia)")
        rows = self._rows("SELECT id, municipality_id, country, level1, level2, divipola_code, group_key, entity_id, "
                          "state, n_records, n_present, n_absent, n_no_info, shape_match, shape_key "
                          "FROM armed_presence_current ORDER BY municipality_id, group_key",
                          tables=["armed_presence"])
        munis: dict[str, dict] = {}
        for r in rows:
            m = munis.setdefault(r["municipality_id"], {
                "municipality_id": r["municipality_id"], "country": r["country"], "level1": r["level1"],
                "level2": r["level2"], "divipola_code": r["divipola_code"], "shape_key": r["shape_key"],
                "shape_match": r["shape_match"], "present": [], "absent": [], "no_info": [], "ids": []})
            if group and r["group_key"] != group:
                continue
            m[r["state"]].append(r["group_key"])
            m["ids"].append(r["id"])
        out = []
        for m in munis.values():
            if group:
                m["state"] = "present" if m["present"] else ("absent" if m["absent"] else "no_info")
            else:  # any group: present if one is declared; absent if the records deny some group and
                # declare none; no_info when no group has a known state (never "absent" by default)
                m["state"] = "present" if m["present"] else ("absent" if m["absent"] else "no_info")
            out.append(m)
        return {"rows": out, "group": group, "narrowed_by": ["entidad"] if group and f.entidad else [],
                "not_applied": not_applied, "groups": list(GROUP_ENTITY)}

    def _view_timeline(self, f: Filters, granularidad: str = "year") -> dict:
        gran = "month" if granularidad == "month" else "year"
        docs, narrowed = self.docset(f, ("lugar",))
        rows = self._rows(
            "SELECT id, period, undated, n_documents" + (", evidence" if docs is not None else "") +
            " FROM agg_timeline_current WHERE phenomenon = :s AND granularity = :g AND "
            "entity_id IS NOT DISTINCT FROM :e ORDER BY period NULLS LAST",
            {"s": self._scope(f), "g": gran, "e": f.entidad}, ["agg_timeline"])
        out, undated = [], None
        for r in rows:
            r["n_total"] = r["n_documents"]
            if docs is not None:
                ev = self.narrow(r.pop("evidence"), docs)
                r["n_documents"] = len({e["doc_id"] for e in ev})
            if r["undated"]:
                undated = r if undated is None else {**undated, "n_documents": undated["n_documents"] + r["n_documents"]}
                continue
            if f.period and not _year_ok(_period_year(r["period"]), f):
                continue
            if docs is not None and not r["n_documents"]:
                continue
            out.append(r)
        if f.period:
            narrowed = ["periodo"] + narrowed
        if f.entidad:
            narrowed = ["entidad"] + narrowed
        return {"rows": out, "undated": undated or {"n_documents": 0, "id": None}, "granularity": gran,
                "narrowed_by": narrowed}

    def _narrow_rows(self, rows: list[dict], docs: set[str] | None, count: str = "n_documents") -> list[dict]:
        out = []
        for r in rows:
            r["n_total"] = r[count]
            ev = r.pop("evidence")
            if docs is not None:
                ev = self.narrow(ev, docs)
                if not ev:
                    continue
                r[count] = len({e["doc_id"] for e in ev})
                r["n_passages"] = len(ev)
            out.append(r)
        return out

    def _view_entity_network(self, f: Filters) -> dict:
        docs, narrowed = self.docset(f, ("periodo", "entidad", "lugar"))
        rows = self._rows("SELECT id, kind, entity_a, entity_b, n_passages, n_documents, evidence "
                          "FROM agg_entity_network_current WHERE phenomenon = :s", {"s": self._scope(f)},
                          ["agg_entity_network"])
        rows = self._narrow_rows(rows, docs)
        return {"nodes": [r for r in rows if r["kind"] == "node"], "edges": [r for r in rows if r["kind"] == "edge"],
                "narrowed_by": narrowed}

    def _view_entity_heatmap(self, f: Filters, columnas: str = "source") -> dict:
        kind = "phenomenon" if columnas == "phenomenon" else "source"
        docs, narrowed = self.docset(f, ("fenomeno", "periodo", "entidad", "lugar"))
        rows = self._rows("SELECT id, entity_id, entity_category, category, n_documents, n_passages, evidence "
                          "FROM agg_entity_heatmap_current WHERE column_kind = :k", {"k": kind},
                          ["agg_entity_heatmap"])
        return {"rows": self._narrow_rows(rows, docs), "column_kind": kind, "narrowed_by": narrowed}

    def _view_entity_quadrant(self, f: Filters) -> dict:
        rows = self._rows("SELECT id, entity_id, entity_category, intensity, n_recent, trend, cutoff_date, "
                          "intensity_median, trend_median, quadrant FROM agg_entity_quadrant_current "
                          "WHERE phenomenon = :s ORDER BY entity_id", {"s": self._scope(f)}, ["agg_entity_quadrant"])
        not_applied = [x for x, on in (("periodo (el corte es la mediana de todo el alcance)", f.period),
                                       ("lugar", f.lugar)) if on]
        return {"rows": rows, "narrowed_by": [], "not_applied": not_applied,
                "highlight": f.entidad,
                "medians": {"intensity": rows[0]["intensity_median"], "trend": rows[0]["trend_median"],
                            "cutoff_date": rows[0]["cutoff_date"]} if rows else None}

    # ------------------------------------------------------------------ evidence
    _EVIDENCE_FILTERS = {"documents_per_place": ("periodo", "entidad"), "alerts_per_department": ("periodo", "entidad"),
                         "armed_presence": (), "timeline": ("lugar",),
                         "entity_network": ("periodo", "entidad", "lugar"),
                         "entity_heatmap": ("fenomeno", "periodo", "entidad", "lugar"), "entity_quadrant": ()}

    def evidence(self, name: str, ids: list[int], f: Filters, offset: int = 0, limit: int = 50) -> dict:
        """The passages behind rows ``ids`` of a view, narrowed like the view, with passage metadata."""
        if name not in VIEWS:
            raise KeyError(name)
        table = TABLES[name]
        extra = {"documents_per_place": ", place_id, level, code, name", "alerts_per_department":
                 ", department_code, department_name, alert_type, alert_codes", "armed_presence":
                 ", municipality_id, level2, group_key, entity_id, state", "timeline": ", entity_id, period, undated",
                 "entity_network": ", kind, entity_a, entity_b", "entity_heatmap": ", entity_id, category",
                 "entity_quadrant": ", entity_id"}[name]
        rows = self._rows(f"SELECT id, evidence{extra} FROM {table}_current WHERE id = ANY(:ids)",
                          {"ids": list(ids)}, [table])
        docs, narrowed = self.docset(f, self._EVIDENCE_FILTERS[name])
        counted: dict[str, Any] = {"entities": [], "places": [], "quotes": []}
        items: dict[tuple, dict] = {}
        for r in rows:
            label = self._row_label(name, r)
            self._counted(name, r, counted)
            ev = r["evidence"]
            if name == "alerts_per_department" and (f.period or f.entidad):
                ev = self._alert_evidence(r, f)
            else:
                ev = self.narrow(ev, docs)
            for e in ev:
                key = (e.get("doc_id"), e.get("chunk_id"), e.get("quote"))
                it = items.setdefault(key, {"doc_id": e.get("doc_id"), "chunk_id": e.get("chunk_id"),
                                            "quote": e.get("quote"), "reason": e.get("reason"), "rows": []})
                if label not in it["rows"]:
                    it["rows"].append(label)
        ordered = sorted(items.values(), key=lambda i: (i["doc_id"] or "", _seq(i["chunk_id"])))
        page = ordered[offset:offset + limit]
        meta = self._passages([i["chunk_id"] for i in page if i["chunk_id"]])
        for i in page:
            i.update(meta.get(i["chunk_id"], {}))
            if not i.get("source_path") and i["doc_id"]:
                i.update(self._document(i["doc_id"]))
        counted["entities"] = sorted(set(counted["entities"]))
        counted["quotes"] = sorted({i["quote"] for i in ordered if i.get("quote")})
        return {"view": name, "ids": [r["id"] for r in rows], "total": len(ordered),
                "n_documents": len({i["doc_id"] for i in ordered}), "offset": offset, "items": page,
                "counted": counted, "narrowed_by": narrowed, "filters": f.public()}

    def _alert_evidence(self, r: dict, f: Filters) -> list[dict]:
        alerts = self._alerts()
        ent_docs = self.docs_naming_entity(f.entidad) if f.entidad else None
        keep_docs = set()
        for code in r["alert_codes"]:
            a = alerts.get(code)
            if not a or (f.period and not _year_ok(_period_year(a.get("date")), f)):
                continue
            ds = {d["doc_id"] for d in a.get("documents") or []}
            if ent_docs is not None and not ds & ent_docs:
                continue
            keep_docs |= ds
        return [e for e in r["evidence"] if e.get("doc_id") in keep_docs]

    @staticmethod
    def _row_label(name: str, r: dict) -> str:
        if name == "documents_per_place":
            return r["name"]
        if name == "alerts_per_department":
            return f"{r['department_name']} · {ALERT_LABELS.get(r['alert_type'], r['alert_type'])}"
        if name == "armed_presence":
            return (f"{r['level2']} · {GROUP_LABELS.get(r['group_key'], r['group_key'])} · "
                    f"{STATE_LABELS.get(r['state'], r['state'])}")
        if name == "timeline":
            return r["period"] or "sin fecha"
        if name == "entity_network":
            return r["entity_a"] + (f" — {r['entity_b']}" if r.get("entity_b") else "")
        if name == "entity_heatmap":
            return f"{r['entity_id']} × {r['category']}"
        return r["entity_id"]

    @staticmethod
    def _counted(name: str, r: dict, counted: dict) -> None:
        """What the row counts, so the evidence window can highlight exactly those mentions."""
        if name == "documents_per_place":
            counted["places"].append({"place_id": r["place_id"], "level": r["level"], "code": r["code"]})
        elif name == "alerts_per_department":
            counted["places"].append({"place_id": f"department:{r['department_code']}", "level": "department",
                                      "code": r["department_code"]})
        elif name == "timeline":
            if r.get("entity_id"):
                counted["entities"].append(r["entity_id"])
        elif name == "entity_network":
            counted["entities"] += [x for x in (r["entity_a"], r.get("entity_b")) if x]
        elif name in ("entity_heatmap", "entity_quadrant"):
            counted["entities"].append(r["entity_id"])
        elif name == "armed_presence" and r.get("entity_id"):
            pass  # presence is quoted from the record, not matched by the dictionary

    def _passages(self, chunk_ids: list[str]) -> dict[str, dict]:
        if not chunk_ids:
            return {}
        rows = self._rows(
            "SELECT c.chunk_id, c.page_start, c.page_end, c.language, left(c.text, 300) AS snippet, "
            "d.primary_path AS source_path, d.title, d.phenomenon FROM chunks c JOIN documents d USING (doc_id) "
            "WHERE c.chunk_id = ANY(:ids)", {"ids": chunk_ids})
        return {r.pop("chunk_id"): r for r in rows}

    def _document(self, doc_id: str) -> dict:
        rows = self._rows("SELECT primary_path AS source_path, title, phenomenon FROM documents WHERE doc_id = :d",
                          {"d": doc_id})
        return rows[0] if rows else {}

    # ------------------------------------------------------------------ reference data
    def meta(self) -> dict:
        ents = self._rows("SELECT entity_id, name, category, phenomenon, aliases FROM entity_dictionary_current "
                          "ORDER BY entity_id", tables=["entity_dictionary"]) if self._has("entity_dictionary") else []
        places = self._rows("SELECT place_id, level, code, iso2, name FROM place_gazetteer_current "
                            "WHERE level IN ('country', 'department') ORDER BY place_id",
                            tables=["place_gazetteer"]) if self._has("place_gazetteer") else []
        docs = self._rows("SELECT phenomenon, count(*) AS n FROM documents GROUP BY phenomenon")
        dated = (self._rows("SELECT count(*) FILTER (WHERE date IS NOT NULL) AS dated, count(*) AS n, "
                            "min(year) AS year_min, max(year) AS year_max FROM publication_dates_current",
                            tables=["publication_dates"])[0] if self._has("publication_dates") else None)
        ent_docs = ({r["entity_id"]: r["n"] for r in self._rows(
            "SELECT entity_id, count(DISTINCT doc_id) AS n FROM entity_mentions_current GROUP BY entity_id")}
            if self._has("entity_mentions") else {})
        place_docs = ({r["place_id"]: r["n_documents"] for r in self._rows(
            "SELECT place_id, n_documents FROM agg_documents_per_place_current WHERE phenomenon = 'all' "
            "AND level IN ('country', 'department')")} if self._has("agg_documents_per_place") else {})
        return {"entities": [{"id": e["entity_id"], "name": e["name"], "category": e["category"],
                              "phenomenon": e["phenomenon"], "n_documents": ent_docs.get(e["entity_id"], 0)}
                             for e in ents],
                "places": [{**p, "n_documents": place_docs.get(p["place_id"], 0)} for p in places],
                "documents": {r["phenomenon"] or "sin_fenomeno": r["n"] for r in docs},
                "dates": dated, "status": self.status(), "groups": GROUP_ENTITY}

    def _has(self, table: str) -> bool:
        with self.engine.connect() as conn:
            return bool(self._exists(conn, table))

    def resolve(self, entidad: str | None, lugar: str | None) -> dict:
        """Map the agent's filter values (a Spanish name of an armed group/country, a folded
        department name) or a dashboard id to dictionary / gazetteer ids. Unknown → ``None``."""
        out: dict[str, Any] = {"entidad": None, "lugar": None, "entidad_como_lugar": None}
        if entidad:
            key = fold_phrase(entidad)
            ents = self._rows("SELECT entity_id, name, aliases FROM entity_dictionary_current",
                              tables=["entity_dictionary"]) if self._has("entity_dictionary") else []
            for e in ents:
                names = {fold_phrase(e["entity_id"].replace("_", " ")), fold_phrase(e["name"]), e["entity_id"]}
                for al in e["aliases"] or []:
                    text = al.get("text") if isinstance(al, dict) else al
                    if text:
                        names.add(fold_phrase(text))
                if key in names or entidad == e["entity_id"]:
                    out["entidad"] = e["entity_id"]
                    break
            if out["entidad"] is None:
                out["entidad_como_lugar"] = self._place_by_name(key, ("country",))
        if lugar:
            if PLACE_ID.match(lugar):
                out["lugar"] = lugar if self._place_by_id(lugar) else None
            else:
                key = fold_phrase(lugar)
                if key in ("bogota", "bogota d.c.", "bogota, d.c."):
                    out["lugar"] = "department:11"
                else:
                    out["lugar"] = self._place_by_name(key, ("department", "country"))
        return out

    def _place_by_id(self, place_id: str) -> bool:
        if not self._has("place_gazetteer"):
            return False
        return bool(self._rows("SELECT 1 FROM place_gazetteer_current WHERE place_id = :p", {"p": place_id}))

    def _place_by_name(self, key: str, levels: tuple[str, ...]) -> str | None:
        if not self._has("place_gazetteer"):
            return None
        rows = self._rows("SELECT place_id, level, name, aliases FROM place_gazetteer_current WHERE level = ANY(:l)",
                          {"l": list(levels)})
        for level in levels:
            for r in rows:
                if r["level"] != level:
                    continue
                names = {fold_phrase(r["name"])} | {fold_phrase(a.get("text", "")) for a in r["aliases"] or []
                                                    if isinstance(a, dict)}
                if key in names:
                    return r["place_id"]
        return None


def _seq(chunk_id: str | None) -> int:
    try:
        return int((chunk_id or "").rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1

