"""The passages behind rows of a view (``views.py``), narrowed like the view, with passage metadata
(pages, language, a snippet, the source document) and what each row counts (to highlight it).
Rows, their evidence and the passages are read only from the collections the caller may read.
The dashboard's evidence window and the agent's figure citations (``agent/roles/figures.py``) both read
them here."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.precompute.docsets import DocSets, is_country, narrow
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.reader import PrecomputeReader, current
from radar_pipeline.precompute.views import TABLES, VIEWS, Views, alert_kept, alerts_narrowed, municipality

ALERT_LABELS = {
    "imminent": "riesgo inminente",
    "structural": "riesgo estructural",
    "unspecified": "tipo no indicado",
    "conflicting": "tipos en conflicto",
}
STATE_LABELS = {"present": "presencia declarada", "absent": "sin presencia declarada", "no_info": "sin información"}
GROUP_LABELS = {
    "cdf": "Comandos de la Frontera",
    "emc": "EMC",
    "embf": "EMBF",
    "seg_marq": "Segunda Marquetalia",
    "eln": "ELN",
    "lobos": "Los Lobos",
    "choneros": "Los Choneros",
    "cv": "Comando Vermelho",
    "pcc": "PCC",
    "others": "otros grupos",
}
# the document-set filters each view narrows its evidence by (as in views.py)
EVIDENCE_FILTERS = {
    "documents_per_place": ("periodo", "entidad"),
    "alerts_per_department": ("periodo", "entidad"),
    "armed_presence": (),
    "timeline": ("lugar",),
    "entity_network": ("periodo", "entidad", "lugar"),
    "entity_heatmap": ("fenomeno", "periodo", "entidad", "lugar"),
    "entity_quadrant": (),
}
# the columns besides id and evidence each view's evidence reads (labels, what is counted)
ROW_COLUMNS = {
    "documents_per_place": ("place_id", "level", "code", "name"),
    "alerts_per_department": ("department_code", "department_name", "alert_type", "alert_codes"),
    "armed_presence": ("municipality_id", "level2", "group_key", "entity_id", "state"),
    "timeline": ("entity_id", "period", "undated"),
    "entity_network": ("kind", "entity_a", "entity_b"),
    "entity_heatmap": ("entity_id", "category"),
    "entity_quadrant": ("entity_id",),
}


def _seq(chunk_id: str | None) -> int:
    try:
        return int((chunk_id or "").rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


class Evidence:
    """Evidence of view rows over one reader. Methods raise ``NotMaterialized`` for missing tables."""

    def __init__(self, reader: PrecomputeReader, docsets: DocSets, views: Views):
        self.reader = reader
        self.docsets = docsets
        self.views = views
        self.scope = docsets.scope

    def evidence(
        self,
        name: str,
        ids: list[int],
        f: Filters,
        offset: int = 0,
        limit: int = 50,
        *,
        passages_out: set[tuple[str, str]] | None = None,
    ) -> dict:
        """The passages behind rows ``ids`` of view ``name``, narrowed like the view, ordered by
        document and passage, one page (``offset``, ``limit``) with passage metadata.
        ``passages_out`` (when given) receives every ``(doc_id, chunk_id)`` of the narrowed evidence, not only the
        page's (the agent's figures check their citations against it). Raises ``KeyError`` on an
        unknown view."""
        if name not in VIEWS:
            raise KeyError(name)
        t = self.reader.scoped(TABLES[name], self.scope)
        cols = [t.c.id, t.c.evidence] + [t.c[c] for c in ROW_COLUMNS[name]]
        rows = self.reader.rows(sa.select(*cols).where(t.c.id.in_(list(ids)), current(t)), t)
        use = EVIDENCE_FILTERS[name]
        if name == "timeline" and is_country(f.entity):  # not a column of the timeline: narrowed like the view
            use = ("entidad", *use)
        docs, narrowed = self.docsets.docset(f, use)
        if name == "alerts_per_department" and municipality(f):
            narrowed = [*narrowed, "lugar"]
        counted: dict[str, Any] = {"entities": [], "places": [], "quotes": []}
        items: dict[tuple, dict] = {}
        for r in rows:
            label = row_label(name, r)
            _counted(name, r, counted)
            ev = r["evidence"]
            if name == "alerts_per_department" and alerts_narrowed(f):
                ev = self._alert_evidence(r, f)
            else:
                ev = narrow(ev, docs)
            for e in ev:
                key = (e.get("doc_id"), e.get("chunk_id"), e.get("quote"))
                it = items.setdefault(
                    key,
                    {
                        "doc_id": e.get("doc_id"),
                        "chunk_id": e.get("chunk_id"),
                        "quote": e.get("quote"),
                        "reason": e.get("reason"),
                        "rows": [],
                    },
                )
                if label not in it["rows"]:
                    it["rows"].append(label)
                if e.get("reason") and (not it["reason"] or e["reason"] < it["reason"]):
                    it["reason"] = e["reason"]  # the same one whichever row came first
        # a total order that does not depend on the rows' storage order (a query without ORDER BY
        # returns them in whatever order the database keeps them, which differs between two databases
        # holding the same rows): passages by document, passage number and quote; each passage's rows
        # by label; what the rows count (below) by level and code
        for it in items.values():
            it["rows"].sort(key=lambda lab: json.dumps(lab, sort_keys=True, ensure_ascii=False, default=str))
        ordered = sorted(items.values(), key=lambda i: (i["doc_id"] or "", _seq(i["chunk_id"]), i["quote"] or ""))
        if passages_out is not None:
            passages_out |= {(i["doc_id"], i["chunk_id"]) for i in ordered if i["doc_id"] and i["chunk_id"]}
        page = ordered[offset : offset + limit]
        meta = self._passages([i["chunk_id"] for i in page if i["chunk_id"]])
        for i in page:
            i.update(meta.get(i["chunk_id"], {}))
            if not i.get("source_path") and i["doc_id"]:
                i.update(self._document(i["doc_id"]))
        counted["entities"] = sorted(set(counted["entities"]))
        counted["places"] = sorted(
            {p["place_id"]: p for p in counted["places"]}.values(), key=lambda p: (p["level"], p["code"] or "")
        )
        counted["quotes"] = sorted({i["quote"] for i in ordered if i.get("quote")})
        return {
            "view": name,
            "ids": sorted(r["id"] for r in rows),
            "total": len(ordered),
            "n_documents": len({i["doc_id"] for i in ordered}),
            "offset": offset,
            "items": page,
            "counted": counted,
            "narrowed_by": narrowed,
            "filters": f.spanish(),
        }

    def _alert_evidence(self, r: dict, f: Filters) -> list[dict]:
        alerts = self.views.alerts()
        ent_docs = self.docsets.naming_entity(f.entity) if f.entity else None
        keep_docs = set()
        for code in r["alert_codes"]:
            a = alerts.get(code)
            if a and alert_kept(a, f, ent_docs):
                keep_docs |= {d["doc_id"] for d in a.get("documents") or []}
        return [e for e in r["evidence"] if e.get("doc_id") in keep_docs]

    def _passages(self, chunk_ids: list[str]) -> dict[str, dict]:
        if not chunk_ids:
            return {}
        c, d = db.chunks, db.documents
        stmt = (
            sa.select(
                c.c.chunk_id,
                c.c.page_start,
                c.c.page_end,
                c.c.language,
                sa.func.left(c.c.text, 300).label("snippet"),
                d.c.primary_path.label("source_path"),
                d.c.title,
                d.c.phenomenon,
            )
            .select_from(c.join(d, c.c.doc_id == d.c.doc_id))
            .where(c.c.chunk_id.in_(chunk_ids), self.reader.in_scope(d.c.collection, self.scope))
        )
        return {r.pop("chunk_id"): r for r in self.reader.rows(stmt)}

    def _document(self, doc_id: str) -> dict:
        d = db.documents
        rows = self.reader.rows(
            sa.select(d.c.primary_path.label("source_path"), d.c.title, d.c.phenomenon).where(
                d.c.doc_id == doc_id, self.reader.in_scope(d.c.collection, self.scope)
            )
        )
        return rows[0] if rows else {}


def row_label(name: str, r: dict) -> str:
    """The label of a row of view ``name`` in its evidence items' ``rows`` (a place name, «Nariño · riesgo
    inminente», a period …)."""
    if name == "documents_per_place":
        return r["name"]
    if name == "alerts_per_department":
        return f"{r['department_name']} · {ALERT_LABELS.get(r['alert_type'], r['alert_type'])}"
    if name == "armed_presence":
        return (
            f"{r['level2']} · {GROUP_LABELS.get(r['group_key'], r['group_key'])} · "
            f"{STATE_LABELS.get(r['state'], r['state'])}"
        )
    if name == "timeline":
        return r["period"] or "sin fecha"
    if name == "entity_network":
        return r["entity_a"] + (f" — {r['entity_b']}" if r.get("entity_b") else "")
    if name == "entity_heatmap":
        return f"{r['entity_id']} × {r['category']}"
    return r["entity_id"]


def _counted(name: str, r: dict, counted: dict) -> None:
    """What the row counts, so the evidence window can highlight exactly those mentions (declared
    presence is quoted from the record, not matched by the dictionary: nothing to add)."""
    if name == "documents_per_place":
        counted["places"].append({"place_id": r["place_id"], "level": r["level"], "code": r["code"]})
    elif name == "alerts_per_department":
        counted["places"].append(
            {"place_id": f"department:{r['department_code']}", "level": "department", "code": r["department_code"]}
        )
    elif name == "timeline":
        if r.get("entity_id"):
            counted["entities"].append(r["entity_id"])
    elif name == "entity_network":
        counted["entities"] += [x for x in (r["entity_a"], r.get("entity_b")) if x]
    elif name in ("entity_heatmap", "entity_quadrant"):
        counted["entities"].append(r["entity_id"])
