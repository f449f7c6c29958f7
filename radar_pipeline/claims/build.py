"""Build the claims from the materialized precomputes and write them (``store.write_claims``).

Reads the current rows of ``publication_dates``, ``early_warnings``, ``entity_mentions``,
``place_mentions``, ``entity_dictionary``, ``place_gazetteer`` and the presence records in
``pages`` (the same records ``armed_presence`` aggregates, read one by one so that a record denying
a presence is kept as contradicting evidence), plus the passage texts the evidence quotes.

``retracted`` (doc_id → ``RetractionInfo``) and ``superseded_chunks`` are inputs: evidence from
them is kept but no longer counts (``policy.resolve``), so retraction can be wired in from the
retraction table without touching the rules.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from radar_pipeline.claims import rules as R
from radar_pipeline.claims.model import Claim, RetractionInfo
from radar_pipeline.claims.policy import resolve
from radar_pipeline.claims.store import write_claims
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.presence import GROUPS, parse_records, record_core
from radar_pipeline.precompute.scoped import scoped
from radar_pipeline.precompute.versioning import current_rows, finish_run, start_run

__all__ = ["CODE_VERSION", "build_claims", "materialize_claims", "load_docs"]

CODE_VERSION = f"claims-1|{R.RULES_VERSION}"
Log = Callable[[str], None]


def _noop(_: str) -> None:
    pass


def load_docs(engine: sa.Engine) -> dict[str, R.DocInfo]:
    """doc_id → ``DocInfo`` (publication date from ``publication_dates_current``, collection, language)."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT d.doc_id, d.collection, d.language, p.date FROM documents d "
                "LEFT JOIN publication_dates_current p ON p.doc_id = d.doc_id"
            )
        ).all()
    return {r.doc_id: R.DocInfo(r.doc_id, r.date, r.collection, r.language) for r in rows}


def _chunk_texts(engine: sa.Engine, ids: set[str]) -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    ids_l = sorted(ids)
    with engine.connect() as conn:
        for i in range(0, len(ids_l), 5000):
            for r in conn.execute(
                sa.text("SELECT chunk_id, text, language FROM chunks WHERE chunk_id = ANY(:ids)"),
                {"ids": ids_l[i : i + 5000]},
            ):
                out[r.chunk_id] = (r.text, r.language)
    return out


def _located_presence(engine: sa.Engine) -> tuple[list[R.LocatedRecord], dict[str, tuple[str, str | None]]]:
    """Every presence record in ``pages`` with the passage that quotes it per group (the passage
    whose whitespace-normalized text holds ``record_core``), and those passages' texts."""
    with engine.connect() as conn:
        pages = conn.execute(
            sa.text(
                "SELECT p.doc_id, p.page_no, p.text FROM pages p "
                "WHERE (p.text LIKE '%au\\_no\\_info%' OR p.text LIKE '%au\\_eln%' OR p.text LIKE '%grupo\\_ELN%') "
                "ORDER BY p.doc_id, p.page_no"
            )
        ).all()
        doc_ids = sorted({p.doc_id for p in pages})
        chunks: dict[str, list[tuple[str, int, int, str, str, str | None]]] = defaultdict(list)
        for r in conn.execute(
            sa.text(
                "SELECT doc_id, chunk_id, page_start, page_end, text, language FROM chunks "
                "WHERE doc_id = ANY(:ids) ORDER BY doc_id, seq"
            ),
            {"ids": doc_ids},
        ):
            chunks[r.doc_id].append(
                (r.chunk_id, r.page_start, r.page_end, " ".join(r.text.split()), r.text, r.language)
            )
    located: list[R.LocatedRecord] = []
    used: dict[str, tuple[str, str | None]] = {}
    for p in pages:
        doc_chunks = chunks.get(p.doc_id, [])
        for rec in parse_records(p.text, p.page_no):
            cands = [c for c in doc_chunks if c[1] <= rec.page_no <= c[2]]
            code = rec.fields.get("b_ADM2_PCODE") or rec.fields.get("au_ID_concatenated") or ""
            if code:
                cands = [c for c in cands if code in c[3]]
            chunk_for: dict[str, str | None] = {}
            for g in GROUPS:
                quote = record_core(rec, g)
                hit = next((c for c in cands if quote in c[3]), None)
                chunk_for[g] = hit[0] if hit else None
                if hit:
                    used[hit[0]] = (hit[4], hit[5])
            located.append(R.LocatedRecord(p.doc_id, rec, chunk_for))
    return located, used


def _group_names(engine: sa.Engine) -> dict[str, str]:
    names = {
        f"entity:{r['entity_id']}": r["name"] for r in current_rows(engine, "entity_dictionary", ["entity_id", "name"])
    }
    names["group:others"] = "Otros grupos (no identificados por nombre)"
    return names


def build_claims(
    engine: sa.Engine,
    *,
    retracted: Mapping[str, RetractionInfo] | None = None,
    superseded_chunks: frozenset[str] = frozenset(),
    log: Log = _noop,
) -> tuple[list[Claim], dict[str, Any]]:
    """Every claim the rules make from the current precomputes, resolved by ``policy.resolve``.

    Raises ``RuntimeError`` when the precompute tables are not materialized. Returns
    (claims, stats per rule).
    """
    T.ensure_precompute_schema(engine)
    with engine.connect() as conn:
        n_dates = conn.execute(sa.text("SELECT count(*) FROM publication_dates_current")).scalar_one()
        n_docs = conn.execute(sa.text("SELECT count(*) FROM documents")).scalar_one()
    if n_docs and not n_dates:
        raise RuntimeError(
            "claims need the precomputes: materialize publication_dates, mentions and early_warnings first"
        )
    docs = load_docs(engine)
    names = _group_names(engine)
    entity_names = {k.split(":", 1)[1]: v for k, v in names.items() if k.startswith("entity:")}
    place_names = {r["place_id"]: r["name"] for r in current_rows(engine, "place_gazetteer", ["place_id", "name"])}
    stats: dict[str, Any] = {}

    located, presence_texts = _located_presence(engine)
    pres, st = R.presence_claims(located, docs, presence_texts, names)
    stats["present_in"] = {**st, "records": len(located)}
    log(f"claims: {len(pres)} presence claims from {len(located)} records")

    # early warnings are kept per access collection: one alert's rows folded (``precompute.scoped``)
    ew = scoped(T.early_warnings)
    with engine.connect() as conn:
        alerts = [
            dict(r._mapping)
            for r in conn.execute(
                sa.select(ew.c.alert_code, ew.c.date, ew.c.alert_type, ew.c.evidence).order_by(ew.c.alert_code)
            )
        ]
    cids = {e["chunk_id"] for a in alerts for e in a["evidence"] if e.get("chunk_id")}
    alert_texts = _chunk_texts(engine, cids)
    pm: dict[str, list[dict]] = defaultdict(list)
    em: dict[str, list[dict]] = defaultdict(list)
    for r in current_rows(
        engine,
        "place_mentions",
        ["chunk_id", "place_id", "char_start", "char_end"],
        "chunk_id = ANY(:ids)",
        {"ids": sorted(cids)},
    ):
        pm[r["chunk_id"]].append(r)
    for r in current_rows(
        engine,
        "entity_mentions",
        ["chunk_id", "entity_id", "char_start", "char_end"],
        "chunk_id = ANY(:ids)",
        {"ids": sorted(cids)},
    ):
        em[r["chunk_id"]].append(r)
    for rows in (*pm.values(), *em.values()):
        rows.sort(key=lambda m: m["char_start"])
    al, st = R.alert_claims(alerts, docs, alert_texts, pm, em, place_names, entity_names)
    stats["alerts"] = {**st, "alerts": len(alerts)}
    log(f"claims: {len(al)} early-warning claims from {len(alerts)} alerts")

    with engine.connect() as conn:
        mentions = [
            dict(r._mapping)
            for r in conn.execute(
                sa.text(
                    "SELECT entity_id, doc_id, chunk_id, char_start, char_end, phenomenon, language "
                    "FROM entity_mentions_current ORDER BY doc_id, id"
                )
            )
        ]
    chosen = R.select_phenomenon_evidence(mentions, docs)
    ph_texts = _chunk_texts(engine, {m["chunk_id"] for rows in chosen.values() for m in rows})
    ph, st = R.phenomenon_claims(mentions, docs, ph_texts, entity_names)
    stats["figures_in_phenomenon"] = {**st, "mentions": len(mentions)}
    log(f"claims: {len(ph)} entity × phenomenon × year claims from {len(mentions)} mentions")

    claims = [resolve(c, retracted, superseded_chunks) for c in (*pres, *al, *ph)]
    return claims, stats


def materialize_claims(
    engine: sa.Engine,
    *,
    retracted: Mapping[str, RetractionInfo] | None = None,
    superseded_chunks: frozenset[str] = frozenset(),
    now: dt.datetime | None = None,
    log: Log = _noop,
) -> dict[str, Any]:
    """Build and write the claims (bitemporal, append-only); the run is recorded in
    ``precompute_runs`` (asset ``claims``). Returns stats for the asset metadata: counts per
    predicate and status, write counts, seconds."""
    t0 = time.perf_counter()
    claims, stats = build_claims(engine, retracted=retracted, superseded_chunks=superseded_chunks, log=log)
    inputs = {"code": CODE_VERSION, "retracted_documents": sorted(retracted or {}), "rules": stats}
    from radar_pipeline.claims.resolution import reviewer_overrides

    reviewed = reviewer_overrides(engine)
    if reviewed:  # the reviewers' decisions the mentions read: part of the claims' lineage too
        inputs["reviewer_decisions"] = [
            {"key": k, "decision": o["decision"], "target": o["target"], "by": o["by"], "at": o["at"]}
            for k, o in sorted(reviewed.items())
        ]
    run_id = start_run(engine, "claims", CODE_VERSION, inputs)
    written = write_claims(
        engine,
        claims,
        run_id=run_id,
        producer=f"claims@{CODE_VERSION}",
        now=now,
        retracted_docs=frozenset(retracted or ()),
    )
    finish_run(
        engine,
        run_id,
        {
            "rows_current": written["current"],
            "rows_inserted": written["inserted"] + written["changed"] + written["superseded"],
            "rows_superseded": written["changed"] + written["superseded"],
            "rows_unchanged": written["unchanged"],
        },
    )
    return {
        "run_id": run_id,
        "claims": len(claims),
        "evidence_rows": sum(len(c.evidence) for c in claims),
        "by_predicate": dict(Counter(c.predicate for c in claims)),
        "by_status": dict(Counter(c.status for c in claims)),
        "by_predicate_status": dict(Counter(f"{c.predicate}:{c.status}" for c in claims)),
        "write": written,
        "rules": stats,
        "reviewer_decisions": inputs.get("reviewer_decisions", []),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def materialize_alias_decisions(engine: sa.Engine, *, now: dt.datetime | None = None) -> dict[str, Any]:
    """Entity resolution from the current precomputes (``resolution`` module): dictionary aliases
    and pairs, presence group keys, presence municipality names against DIVIPOLA codes, and the
    place names the gazetteer left unresolved (to the review queue). Returns counts."""
    from radar_pipeline.claims import resolution as ER

    T.ensure_precompute_schema(engine)
    dict_rows = current_rows(engine, "entity_dictionary", ["entity_id", "category", "aliases", "dictionary_version"])
    gaz = current_rows(engine, "place_gazetteer", ["place_id", "level", "code", "name", "department_code", "aliases"])
    index = ER.PlaceNameIndex.from_gazetteer(gaz)
    pres = current_rows(
        engine, "armed_presence", ["municipality_id", "level1", "level2", "divipola_code"], "group_key = 'eln'"
    )
    pres = list({r["municipality_id"]: r for r in pres}.values())  # one row per collection: one per municipality
    unresolved = current_rows(
        engine,
        "place_mentions",
        ["matched", "candidates", "doc_id", "chunk_id"],
        "resolution = 'unresolved' AND jsonb_array_length(candidates) > 1",
    )
    decisions = [
        *ER.entity_decisions(dict_rows),
        *ER.presence_place_decisions(pres, index, {g["place_id"] for g in gaz}),
        *ER.unresolved_place_decisions(unresolved),
    ]
    st = ER.write_decisions(engine, decisions, now=now)
    st["decisions"] = len(decisions)
    st["by_decision"] = dict(Counter(d.decision for d in decisions))
    st["by_signal"] = dict(Counter(d.signal for d in decisions))
    st["by_kind"] = dict(Counter(d.kind for d in decisions))
    places = [d for d in decisions if d.signal == "official_code"]
    st["presence_names_agreeing_with_code"] = sum(1 for d in places if d.detail["name_agrees"])
    st["presence_names_checked"] = len(places)
    return st
