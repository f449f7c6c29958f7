"""Dashboard aggregates, each row carrying the passages it counts (``evidence``).

Inputs are the *current* precompute rows (``load_inputs``); the builders are pure functions over
them (``build``), so the tests run them on crafted rows. Counting rules:

- **agg_documents_per_place** — documents naming a place (resolved mentions only; unresolved
  names are never counted). ``n_documents_direct``: naming the place itself; ``n_documents``: the
  place or a place inside it (a municipality counts for its department and for Colombia; Bogotá
  D.C. rolls up to department 11, never to Cundinamarca). Rows per phenomenon and ``all``.
- **agg_alerts_per_department** — alerts (``early_warnings``) naming a place in the department,
  one row per (department, alert type); types are never added together.
- **agg_timeline** — documents per year and per month, per phenomenon (and ``all``), for all
  documents (``entity_id`` NULL, cited by their first passage) and per entity (documents naming
  it, cited by the naming passages). One ``undated = true`` row per series counts the documents
  left out (no date, or no month for the monthly series).
- **agg_entity_network** — nodes (passages/documents naming an entity) and edges (passages naming
  both entities), per phenomenon and ``all``.
- **agg_entity_heatmap** — entity × category, where the column is the document's phenomenon
  (``column_kind = phenomenon``) or source collection (``source``: Codefest collection code such
  as ``codefest/CSIS``, or ``radar/<phenomenon>/<folder>``).
- **agg_entity_quadrant** — per entity and scope: ``intensity`` = dated documents naming it;
  ``trend`` = share of them published after the cut-off, the cut-off being the median publication
  date of the dated documents in scope (dates compare by their first day: "2021" = 2021-01-01);
  axes split at the medians of intensity and trend over the entities with intensity ≥ 1
  ("high"/"rising" = strictly above the median). No score is derived (``quadrant_rows``).

**By collection.** ``build_by_collection`` runs every builder on each access collection's documents
alone (``AggInputs.restrict``) and labels the rows with it: a collection's rows are exactly the rows
a corpus made only of that collection would get. Every count except the quadrant's medians is a
sum over documents or passages, and a document (with its passages) belongs to one collection, so
the reader folds several collections back into one row per key by summing in SQL
(``reader.PrecomputeReader.scoped``); the quadrant is re-classified for the caller's collections
by ``quadrant_rows`` over the folded rows.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import sqlalchemy as sa

from radar_pipeline.precompute.dates import codefest_id
from radar_pipeline.precompute.versioning import current_rows

__all__ = [
    "AggInputs",
    "load_inputs",
    "build",
    "documents_per_place",
    "alerts_per_department",
    "timeline",
    "entity_network",
    "entity_heatmap",
    "entity_quadrant",
    "source_collection",
    "date_start",
    "BUILDERS",
    "build_by_collection",
    "quadrant_rows",
]

ALL = "all"


def _ev(items: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"doc_id": d, "chunk_id": c} for d, c in sorted(set(items))]


def date_start(date: str | None) -> str | None:
    """Sortable first day of a partial ISO date: '2021' → '2021-01-01', '2021-03' → '2021-03-01'."""
    if not date:
        return None
    parts = date.split("-")
    return f"{parts[0]}-{parts[1] if len(parts) > 1 else '01'}-{parts[2] if len(parts) > 2 else '01'}"


def source_collection(paths: Sequence[str], inventory: Mapping[str, Mapping[str, str]]) -> str:
    """Collection a document came from: ``codefest/<codigo>`` or the first folders of its path."""
    for p in paths:
        cid = codefest_id(p)
        if cid and cid in inventory and inventory[cid].get("codigo"):
            return f"codefest/{inventory[cid]['codigo']}"
    if not paths:
        return "unknown"
    parts = PurePosixPath(paths[0]).parts[:-1]
    return "/".join(parts[:3]) if parts else "root"


@dataclass
class AggInputs:
    """Everything the builders read. ``docs``: doc_id → {phenomenon, source, collection};
    ``first_chunk``: doc_id → chunk_id of seq 0; ``dates``: doc_id → {date, year, month}; mentions
    as tuples; ``alerts``: current ``early_warnings`` rows (with their ``collection``)."""

    docs: dict[str, dict[str, Any]]
    first_chunk: dict[str, str]
    dates: dict[str, dict[str, Any]]
    entity_mentions: list[tuple[str, str, str]]  # (entity_id, doc_id, chunk_id)
    place_mentions: list[tuple[str, str, str]]  # (place_id, doc_id, chunk_id), resolved only
    places: dict[str, dict[str, Any]]
    entities: dict[str, str]  # entity_id → category
    alerts: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        dated = sum(1 for d in self.docs if (self.dates.get(d) or {}).get("date"))
        return {
            "documents_with_passages": len(self.docs),
            "documents_dated": dated,
            "documents_undated": len(self.docs) - dated,
        }

    def scopes(self) -> list[str]:
        return [ALL] + sorted({d["phenomenon"] for d in self.docs.values() if d.get("phenomenon")})

    def in_scope(self, doc_id: str, scope: str) -> bool:
        return scope == ALL or (self.docs.get(doc_id) or {}).get("phenomenon") == scope

    def collections(self) -> list[str | None]:
        """The access collections of the documents (None: documents in no collection), sorted."""
        return sorted({d.get("collection") for d in self.docs.values()}, key=lambda c: (c is not None, c or ""))

    def restrict(self, collection: str | None) -> AggInputs:
        """The inputs of a corpus made only of ``collection``'s documents (the dictionary and the
        gazetteer are reference data and stay whole; alerts are those built from the collection)."""
        return self.partition().get(collection) or AggInputs({}, {}, {}, [], [], self.places, self.entities, [])

    def partition(self) -> dict[str | None, AggInputs]:
        """``restrict`` for every collection of the documents, in one pass over the inputs."""
        coll = {d: v.get("collection") for d, v in self.docs.items()}
        parts = {c: AggInputs({}, {}, {}, [], [], self.places, self.entities, []) for c in self.collections()}
        for d, v in self.docs.items():
            parts[coll[d]].docs[d] = v
        for d, c in self.first_chunk.items():
            if d in coll:
                parts[coll[d]].first_chunk[d] = c
        for d, v in self.dates.items():
            if d in coll:
                parts[coll[d]].dates[d] = v
        for m in self.entity_mentions:
            if m[1] in coll:
                parts[coll[m[1]]].entity_mentions.append(m)
        for m in self.place_mentions:
            if m[1] in coll:
                parts[coll[m[1]]].place_mentions.append(m)
        for a in self.alerts:
            if a.get("collection") in parts:
                parts[a.get("collection")].alerts.append(a)
        return parts


def load_inputs(engine: sa.Engine, inventory: Mapping[str, Mapping[str, str]]) -> AggInputs:
    """Read the current rows the aggregates need (documents with at least one passage only)."""
    with engine.connect() as conn:
        docs_raw = conn.execute(
            sa.text(
                "SELECT d.doc_id, d.phenomenon, d.primary_path, d.source_paths, d.collection, "
                "c.chunk_id AS first_chunk "
                "FROM documents d JOIN LATERAL (SELECT chunk_id FROM chunks WHERE chunks.doc_id = d.doc_id "
                "ORDER BY seq LIMIT 1) c ON true"
            )
        ).all()
    docs, first = {}, {}
    for r in docs_raw:
        paths = [r.primary_path] + [p for p in (r.source_paths or []) if p != r.primary_path]
        docs[r.doc_id] = {
            "phenomenon": r.phenomenon,
            "source": source_collection(paths, inventory),
            "collection": r.collection,
        }
        first[r.doc_id] = r.first_chunk
    dates = {r["doc_id"]: r for r in current_rows(engine, "publication_dates", ["doc_id", "date", "year", "month"])}
    em = [
        (r["entity_id"], r["doc_id"], r["chunk_id"])
        for r in current_rows(engine, "entity_mentions", ["entity_id", "doc_id", "chunk_id"])
    ]
    pm = [
        (r["place_id"], r["doc_id"], r["chunk_id"])
        for r in current_rows(engine, "place_mentions", ["place_id", "doc_id", "chunk_id"], "place_id IS NOT NULL")
    ]
    places = {
        r["place_id"]: r
        for r in current_rows(
            engine, "place_gazetteer", ["place_id", "level", "code", "name", "country_code", "department_code"]
        )
    }
    entities = {
        r["entity_id"]: r["category"] for r in current_rows(engine, "entity_dictionary", ["entity_id", "category"])
    }
    alerts = current_rows(
        engine, "early_warnings", ["alert_code", "alert_type", "department_codes", "evidence", "collection"]
    )
    return AggInputs(docs, first, dates, em, pm, places, entities, alerts)


# ---------------------------------------------------------------------- builders
def _ancestors(place_id: str, places: Mapping[str, Mapping[str, Any]]) -> list[str]:
    p = places.get(place_id)
    if p is None:
        return [place_id]
    out = [place_id]
    if p["level"] == "municipality" and p.get("department_code"):
        out.append(f"department:{p['department_code']}")
    if p["level"] in ("municipality", "department") and p.get("country_code"):
        out.append(f"country:{p['country_code']}")
    return out


def documents_per_place(inp: AggInputs) -> list[dict[str, Any]]:
    """``agg_documents_per_place`` rows (see module doc)."""
    rows = []
    for scope in inp.scopes():
        direct: dict[str, set[str]] = defaultdict(set)
        total: dict[str, set[str]] = defaultdict(set)
        ev: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for pid, doc, chunk in inp.place_mentions:
            if doc not in inp.docs or not inp.in_scope(doc, scope):
                continue
            direct[pid].add(doc)
            for a in _ancestors(pid, inp.places):
                total[a].add(doc)
                ev[a].add((doc, chunk))
        for pid in sorted(total):
            p = inp.places.get(pid, {"level": pid.split(":")[0], "code": pid.split(":")[-1], "name": pid})
            rows.append(
                {
                    "level": p["level"],
                    "place_id": pid,
                    "code": p["code"],
                    "name": p["name"],
                    "country_code": p.get("country_code"),
                    "department_code": p.get("department_code"),
                    "phenomenon": scope,
                    "n_documents": len(total[pid]),
                    "n_documents_direct": len(direct.get(pid, ())),
                    "n_passages": len(ev[pid]),
                    "evidence": _ev(ev[pid]),
                }
            )
    return rows


def alerts_per_department(inp: AggInputs) -> list[dict[str, Any]]:
    """``agg_alerts_per_department`` rows: per (department, alert type), never summed across types."""
    codes: dict[tuple[str, str], set[str]] = defaultdict(set)
    ev: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for a in inp.alerts:
        depts = set(a.get("department_codes") or [])
        for dept in depts:
            key = (dept, a["alert_type"])
            codes[key].add(a["alert_code"])
            for item in a.get("evidence") or []:
                if item.get("role") != "place":
                    continue
                p = inp.places.get(item["key"]) or {}
                pdept = p.get("code") if p.get("level") == "department" else p.get("department_code")
                if pdept == dept:
                    ev[key].add((item["doc_id"], item["chunk_id"]))
    rows = []
    for dept, typ in sorted(codes):
        d = inp.places.get(f"department:{dept}") or {"name": dept}
        rows.append(
            {
                "department_code": dept,
                "department_name": d["name"],
                "alert_type": typ,
                "n_alerts": len(codes[(dept, typ)]),
                "alert_codes": sorted(codes[(dept, typ)]),
                "evidence": _ev(ev[(dept, typ)]),
            }
        )
    return rows


def _period(date_row: Mapping[str, Any] | None, granularity: str) -> str | None:
    if not date_row or not date_row.get("year"):
        return None
    if granularity == "year":
        return f"{int(date_row['year']):04d}"
    if date_row.get("month"):
        return f"{int(date_row['year']):04d}-{int(date_row['month']):02d}"
    return None


def timeline(inp: AggInputs) -> list[dict[str, Any]]:
    """``agg_timeline`` rows: all documents and per entity, by year and month, plus undated rows."""
    by_entity: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # entity → doc → chunks
    for eid, doc, chunk in inp.entity_mentions:
        if doc in inp.docs:
            by_entity[eid][doc].add(chunk)
    series: list[tuple[str | None, dict[str, set[str]]]] = [
        (None, {d: {c} for d, c in inp.first_chunk.items() if d in inp.docs})
    ]
    series += [(eid, docs) for eid, docs in sorted(by_entity.items())]
    rows = []
    for eid, docs in series:
        for scope in inp.scopes():
            scoped = {d: cs for d, cs in docs.items() if inp.in_scope(d, scope)}
            if not scoped:
                continue
            for gran in ("year", "month"):
                buckets: dict[str | None, set[str]] = defaultdict(set)
                for d in scoped:
                    buckets[_period(inp.dates.get(d), gran)].add(d)
                for period in sorted(buckets, key=lambda p: (p is None, p or "")):
                    ds = buckets[period]
                    rows.append(
                        {
                            "phenomenon": scope,
                            "entity_id": eid,
                            "granularity": gran,
                            "period": period,
                            "undated": period is None,
                            "n_documents": len(ds),
                            "evidence": _ev((d, c) for d in ds for c in scoped[d]),
                        }
                    )
                if None not in buckets:
                    rows.append(
                        {
                            "phenomenon": scope,
                            "entity_id": eid,
                            "granularity": gran,
                            "period": None,
                            "undated": True,
                            "n_documents": 0,
                            "evidence": [],
                        }
                    )
    return rows


def entity_network(inp: AggInputs) -> list[dict[str, Any]]:
    """``agg_entity_network`` rows: nodes and same-passage co-occurrence edges."""
    per_chunk: dict[str, set[str]] = defaultdict(set)
    chunk_doc: dict[str, str] = {}
    for eid, doc, chunk in inp.entity_mentions:
        if doc in inp.docs:
            per_chunk[chunk].add(eid)
            chunk_doc[chunk] = doc
    rows = []
    for scope in inp.scopes():
        nodes: dict[str, set[str]] = defaultdict(set)
        edges: dict[tuple[str, str], set[str]] = defaultdict(set)
        for chunk, ents in per_chunk.items():
            if not inp.in_scope(chunk_doc[chunk], scope):
                continue
            ordered = sorted(ents)
            for i, a in enumerate(ordered):
                nodes[a].add(chunk)
                for b in ordered[i + 1 :]:
                    edges[(a, b)].add(chunk)
        for a in sorted(nodes):
            cs = nodes[a]
            rows.append(
                {
                    "kind": "node",
                    "entity_a": a,
                    "entity_b": None,
                    "phenomenon": scope,
                    "n_passages": len(cs),
                    "n_documents": len({chunk_doc[c] for c in cs}),
                    "evidence": _ev((chunk_doc[c], c) for c in cs),
                }
            )
        for a, b in sorted(edges):
            cs = edges[(a, b)]
            rows.append(
                {
                    "kind": "edge",
                    "entity_a": a,
                    "entity_b": b,
                    "phenomenon": scope,
                    "n_passages": len(cs),
                    "n_documents": len({chunk_doc[c] for c in cs}),
                    "evidence": _ev((chunk_doc[c], c) for c in cs),
                }
            )
    return rows


def entity_heatmap(inp: AggInputs) -> list[dict[str, Any]]:
    """``agg_entity_heatmap`` rows: entity × phenomenon and entity × source collection."""
    cells: dict[tuple[str, str, str], set[tuple[str, str]]] = defaultdict(set)
    for eid, doc, chunk in inp.entity_mentions:
        d = inp.docs.get(doc)
        if d is None:
            continue
        cells[(eid, "phenomenon", d.get("phenomenon") or "none")].add((doc, chunk))
        cells[(eid, "source", d.get("source") or "unknown")].add((doc, chunk))
    return [
        {
            "entity_id": eid,
            "entity_category": inp.entities.get(eid, "unknown"),
            "column_kind": kind,
            "category": cat,
            "n_documents": len({d for d, _ in items}),
            "n_passages": len(items),
            "evidence": _ev(items),
        }
        for (eid, kind, cat), items in sorted(cells.items())
    ]


def quadrant_rows(
    scope: str,
    dated: Mapping[str, str],
    naming: Mapping[str, Mapping[str, Iterable[str]]],
    entities: Mapping[str, str],
) -> list[dict[str, Any]]:
    """``agg_entity_quadrant`` rows of one scope (see module doc): medians computed, never fixed.

    ``dated``: doc_id → publication date (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``) of every dated
    document in scope; ``naming``: entity_id → {doc_id → chunk_ids naming it} (documents outside
    ``dated`` are ignored); ``entities``: entity_id → category. The builder and the reader (for a
    caller's collections) both classify through this function.
    """
    starts_by_doc = {d: date_start(v) for d, v in dated.items()}
    if not starts_by_doc:
        return []
    starts = sorted(starts_by_doc.values())
    cutoff = statistics.median_low(starts)
    cutoff_doc = next(d for d, s in sorted(starts_by_doc.items(), key=lambda x: (x[1], x[0])) if s == cutoff)
    cutoff_label = dated[cutoff_doc]
    stats = []
    for eid in sorted(naming):
        docs = [d for d in naming[eid] if d in starts_by_doc]
        if not docs:
            continue
        recent = [d for d in docs if starts_by_doc[d] > cutoff]
        stats.append((eid, docs, len(recent)))
    if not stats:
        return []
    i_med = float(statistics.median([len(docs) for _, docs, _ in stats]))
    t_med = float(statistics.median([r / len(docs) for _, docs, r in stats]))
    rows = []
    for eid, docs, n_recent in stats:
        trend = n_recent / len(docs)
        quadrant = (
            ("high" if len(docs) > i_med else "low") + "_intensity_" + ("rising" if trend > t_med else "declining")
        )
        rows.append(
            {
                "entity_id": eid,
                "entity_category": entities.get(eid, "unknown"),
                "phenomenon": scope,
                "intensity": len(docs),
                "n_recent": n_recent,
                "trend": round(trend, 6),
                "cutoff_date": cutoff_label,
                "intensity_median": i_med,
                "trend_median": round(t_med, 6),
                "quadrant": quadrant,
                "evidence": _ev((d, c) for d in docs for c in naming[eid][d]),
            }
        )
    return rows


def entity_quadrant(inp: AggInputs) -> list[dict[str, Any]]:
    """``agg_entity_quadrant`` rows (see module doc), one ``quadrant_rows`` call per scope."""
    naming: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for eid, doc, chunk in inp.entity_mentions:
        if doc in inp.docs:
            naming[eid][doc].add(chunk)
    rows = []
    for scope in inp.scopes():
        dated = {
            d: inp.dates[d]["date"] for d in inp.docs if inp.in_scope(d, scope) and (inp.dates.get(d) or {}).get("date")
        }
        rows += quadrant_rows(scope, dated, naming, inp.entities)
    return rows


BUILDERS = {
    "agg_documents_per_place": documents_per_place,
    "agg_alerts_per_department": alerts_per_department,
    "agg_timeline": timeline,
    "agg_entity_network": entity_network,
    "agg_entity_heatmap": entity_heatmap,
    "agg_entity_quadrant": entity_quadrant,
}


def build(inp: AggInputs, tables: Sequence[str] = tuple(BUILDERS)) -> dict[str, list[dict[str, Any]]]:
    """Rows of the requested aggregate tables."""
    unknown = set(tables) - set(BUILDERS)
    if unknown:
        raise KeyError(f"unknown aggregate tables: {sorted(unknown)}")
    return {t: BUILDERS[t](inp) for t in tables}


def build_by_collection(inp: AggInputs, tables: Sequence[str] = tuple(BUILDERS)) -> dict[str, list[dict[str, Any]]]:
    """Rows of the requested aggregate tables, each collection's computed from its documents alone
    (``AggInputs.restrict``) and labelled with it (``collection``)."""
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in tables}
    for coll, part in inp.partition().items():
        for t, rows in build(part, tables).items():
            out[t] += [{**r, "collection": coll} for r in rows]
    return out
