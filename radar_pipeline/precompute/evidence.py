"""Check that every aggregate row's cited passages really contain what the row counts.

A mention is *verified* when the passage text at its span equals the matched form
(``substr(chunks.text, char_start + 1, char_end - char_start) = matched`` — PostgreSQL counts
characters like Python does). Then, per table, every evidence item ``{doc_id, chunk_id}`` must:

- belong to an existing passage of that document;
- ``agg_documents_per_place``: hold a verified mention of the place or of a place inside it;
- ``agg_alerts_per_department``: hold a verified mention of a place in the department (its
  resolution or one of its gazetteer candidates: the alert reader picks homonyms by department);
- ``agg_timeline``: (entity rows) hold a verified mention of the entity; the document's
  publication date falls in the period (or is missing for the undated row);
- ``agg_entity_network``: hold verified mentions of the node's entity / both edge entities;
- ``agg_entity_heatmap`` / ``agg_entity_quadrant``: hold a verified mention of the entity;
- ``armed_presence``: the passage text contains the quoted record slice (municipality code
  through the group flag); items without a passage must say why.

A row passes when all its items pass and its counts are consistent with its evidence (e.g.
``n_passages`` = number of items). The share of passing rows must be 1.0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.aggregates import _period
from radar_pipeline.precompute.versioning import current_rows

__all__ = ["verify_evidence", "verified_mentions"]


def verified_mentions(engine: sa.Engine) -> tuple[dict[str, set[str]], dict[str, set[str]], int, int]:
    """``(entities_by_chunk, places_by_chunk, n_checked, n_bad)`` over current mention rows whose
    span really holds the matched text (unresolved place mentions are not counted)."""
    ents: dict[str, set[str]] = defaultdict(set)
    plcs: dict[str, set[str]] = defaultdict(set)
    checked = bad = 0
    with engine.connect() as conn:
        for chunk_id, key, ok in conn.execute(
            sa.text(
                "SELECT m.chunk_id, m.entity_id, substr(c.text, m.char_start + 1, m.char_end - m.char_start) = m.matched "
                "AND c.doc_id = m.doc_id FROM entity_mentions m JOIN chunks c USING (chunk_id) WHERE m.valid_to IS NULL"
            )
        ):
            checked += 1
            if ok:
                ents[chunk_id].add(key)
            else:
                bad += 1
        for chunk_id, key, ok in conn.execute(
            sa.text(
                "SELECT m.chunk_id, m.place_id, substr(c.text, m.char_start + 1, m.char_end - m.char_start) = m.matched "
                "AND c.doc_id = m.doc_id FROM place_mentions m JOIN chunks c USING (chunk_id) "
                "WHERE m.valid_to IS NULL AND m.place_id IS NOT NULL"
            )
        ):
            checked += 1
            if ok:
                plcs[chunk_id].add(key)
            else:
                bad += 1
    return ents, plcs, checked, bad


def _tally(report: dict, table: str, ok_row: bool, n_items: int, bad_items: int, example: Any) -> None:
    r = report.setdefault(table, {"rows": 0, "rows_ok": 0, "items": 0, "items_failed": 0, "failures": []})
    r["rows"] += 1
    r["rows_ok"] += int(ok_row)
    r["items"] += n_items
    r["items_failed"] += bad_items
    if not ok_row and len(r["failures"]) < 10:
        r["failures"].append(example)


def verified_place_readings(engine: sa.Engine) -> dict[str, set[str]]:
    """chunk_id → every place id a current place mention's span may denote: its resolution and its
    gazetteer candidates (span verified as in ``verified_mentions``). The alert reader may pick a
    homonym's candidate by the alert's department (``alerts._alert_mentions``), so an alert cell's
    passage holds a mention of the department when one of these readings lies in it."""
    out: dict[str, set[str]] = defaultdict(set)
    with engine.connect() as conn:
        for chunk_id, pid, cands in conn.execute(
            sa.text(
                "SELECT m.chunk_id, m.place_id, m.candidates FROM place_mentions m JOIN chunks c USING (chunk_id) "
                "WHERE m.valid_to IS NULL AND c.doc_id = m.doc_id "
                "AND substr(c.text, m.char_start + 1, m.char_end - m.char_start) = m.matched"
            )
        ):
            if pid:
                out[chunk_id].add(pid)
            out[chunk_id].update(c for c in (cands or []) if isinstance(c, str))
    return out


def verify_evidence(engine: sa.Engine, tables: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Per-table report ``{rows, rows_ok, items, items_failed, share_rows_ok, failures}`` plus
    ``mentions_checked`` / ``mentions_bad_span`` and the overall ``share_rows_ok``."""
    tables = tables or tuple(T.AGG_TABLES) + ("armed_presence",)
    ents, plcs, n_m, bad_m = verified_mentions(engine)
    with engine.connect() as conn:
        chunk_doc = dict(conn.execute(sa.text("SELECT chunk_id, doc_id FROM chunks")).all())
    places = {
        r["place_id"]: r
        for r in current_rows(
            engine, "place_gazetteer", ["place_id", "level", "code", "country_code", "department_code"]
        )
    }
    dates = {r["doc_id"]: r for r in current_rows(engine, "publication_dates", ["doc_id", "date", "year", "month"])}
    docs_phen = {}
    with engine.connect() as conn:
        docs_phen = dict(conn.execute(sa.text("SELECT doc_id, phenomenon FROM documents")).all())

    def anc(pid: str) -> set[str]:
        p = places.get(pid)
        out = {pid}
        if p and p["level"] == "municipality" and p["department_code"]:
            out.add(f"department:{p['department_code']}")
        if p and p["level"] in ("municipality", "department"):
            out.add(f"country:{p['country_code']}")
        return out

    def dept_of(pid: str) -> str | None:
        p = places.get(pid) or {}
        return p.get("code") if p.get("level") == "department" else p.get("department_code")

    def passage_ok(item: Mapping[str, Any]) -> bool:
        return chunk_doc.get(item.get("chunk_id")) == item.get("doc_id")

    def scope_ok(doc: str, scope: str) -> bool:
        return scope == "all" or docs_phen.get(doc) == scope

    report: dict[str, Any] = {}
    readings: dict[str, set[str]] | None = None
    for table in tables:
        if table == "armed_presence":
            _verify_presence(engine, report)
            continue
        for row in current_rows(engine, table):
            items = row["evidence"] or []
            bad = 0
            for it in items:
                c, d = it.get("chunk_id"), it.get("doc_id")
                ok = passage_ok(it)
                if ok and table == "agg_documents_per_place":
                    ok = any(row["place_id"] in anc(p) for p in plcs.get(c, ())) and scope_ok(d, row["phenomenon"])
                elif ok and table == "agg_alerts_per_department":
                    if readings is None:
                        readings = verified_place_readings(engine)
                    ok = any(dept_of(p) == row["department_code"] for p in readings.get(c, ()))
                elif ok and table == "agg_timeline":
                    if row["entity_id"]:
                        ok = row["entity_id"] in ents.get(c, ())
                    ok = (
                        ok
                        and scope_ok(d, row["phenomenon"])
                        and _period(dates.get(d), row["granularity"]) == row["period"]
                    )
                elif ok and table == "agg_entity_network":
                    need = {row["entity_a"]} | ({row["entity_b"]} if row["entity_b"] else set())
                    ok = need <= ents.get(c, set()) and scope_ok(d, row["phenomenon"])
                elif ok and table in ("agg_entity_heatmap", "agg_entity_quadrant"):
                    ok = row["entity_id"] in ents.get(c, ())
                    if table == "agg_entity_quadrant":
                        ok = ok and bool((dates.get(d) or {}).get("date")) and scope_ok(d, row["phenomenon"])
                bad += int(not ok)
            docs = {i["doc_id"] for i in items}
            consistent = True
            if "n_passages" in row:
                consistent &= row["n_passages"] == len(items)
            if "n_documents" in row:
                consistent &= row["n_documents"] == len(docs)
            if "intensity" in row:
                consistent &= row["intensity"] == len(docs)
            if "n_alerts" in row:
                consistent &= row["n_alerts"] == len(row["alert_codes"])
            ok_row = bad == 0 and consistent and (bool(items) or row.get("undated") is True)
            _tally(
                report,
                table,
                ok_row,
                len(items),
                bad,
                {k: row[k] for k in row if k != "evidence"} | {"items": len(items), "bad_items": bad},
            )
    total = sum(r["rows"] for r in report.values())
    ok = sum(r["rows_ok"] for r in report.values())
    for r in report.values():
        r["share_rows_ok"] = round(r["rows_ok"] / r["rows"], 6) if r["rows"] else 1.0
    return {
        "tables": report,
        "rows": total,
        "rows_ok": ok,
        "share_rows_ok": round(ok / total, 6) if total else 1.0,
        "mentions_checked": n_m,
        "mentions_bad_span": bad_m,
    }


def _verify_presence(engine: sa.Engine, report: dict[str, Any]) -> None:
    rows = current_rows(engine, "armed_presence", ["municipality_id", "group_key", "state", "evidence"])
    cited = sorted({it["chunk_id"] for r in rows for it in r["evidence"] if it.get("chunk_id")})
    texts: dict[str, tuple[str, str]] = {}
    with engine.connect() as conn:
        for i in range(0, len(cited), 5000):
            for cid, doc, text in conn.execute(
                sa.text("SELECT chunk_id, doc_id, text FROM chunks WHERE chunk_id = ANY(:ids)"),
                {"ids": cited[i : i + 5000]},
            ):
                texts[cid] = (doc, " ".join(text.split()))
    for r in rows:
        bad = 0
        for it in r["evidence"]:
            if it.get("chunk_id") is None:
                bad += int(not it.get("reason"))
                continue
            doc, text = texts.get(it["chunk_id"], (None, ""))
            bad += int(doc != it["doc_id"] or it.get("quote", "\x00") not in text)
        ok_row = bad == 0 and bool(r["evidence"])
        _tally(
            report,
            "armed_presence",
            ok_row,
            len(r["evidence"]),
            bad,
            {"municipality_id": r["municipality_id"], "group_key": r["group_key"], "bad_items": bad},
        )
