"""Bitemporal, append-only storage of claims: write, query, check.

Transaction time is ``recorded_at`` / ``superseded_at`` (when Radar knew a version); valid time is
``valid_from`` / ``valid_to`` (inclusive dates, when it held in the world). Writing a
materialization (``write_claims``):

1. a produced claim whose ``claim_id`` has no current version is inserted;
2. one whose current version has the same ``content_hash`` is left alone;
3. one whose content changed (status, evidence, qualifiers) closes the current version
   (``superseded_at = now``) and inserts the new one;
4. a current claim that is no longer produced is closed and a ``superseded`` version is inserted
   (same evidence, ``superseded_by`` = the claim that replaced it when its subject, predicate and
   object are produced with another valid period — a corrected validity).

Nothing is deleted or updated except ``superseded_at`` of the closed version. A partial unique
index (``ux_claims_current``) makes two current versions of one claim impossible.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.claims.model import Claim
from radar_pipeline.claims.policy import verdict
from radar_pipeline.collection import AccessScope

__all__ = [
    "content_hash",
    "write_claims",
    "query_claims",
    "claim_history",
    "scope_rows",
    "check_evidence",
    "check_single_current",
    "provenance_coverage",
    "as_of_instant",
]

_EVIDENCE_COLS = (
    "doc_id",
    "chunk_id",
    "stance",
    "span",
    "span_start",
    "span_end",
    "rule",
    "source_date",
    "authority",
    "language",
    "collection",
    "retracted",
)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def content_hash(claim: Claim) -> str:
    """SHA-1 of what a version says besides its identity: status, resolution, words, qualifiers,
    valid basis and the evidence (passage, stance, span, retracted flag)."""
    ev = sorted([*e.key(), e.retracted] for e in claim.evidence)
    payload = [
        claim.status,
        claim.prevailing_stance,
        claim.policy,
        claim.statement,
        claim.valid_basis,
        claim.qualifiers,
        ev,
    ]
    return hashlib.sha1(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _row(claim: Claim, now: dt.datetime, run_id: str, producer: str, **over: Any) -> dict[str, Any]:
    live = [e for e in claim.evidence if not e.retracted]
    row = {
        "claim_id": claim.claim_id,
        "claim_key": claim.claim_key,
        "subject": claim.subject,
        "predicate": claim.predicate,
        "object": claim.object,
        "qualifiers": claim.qualifiers,
        "statement": claim.statement,
        "valid_from": claim.valid_from,
        "valid_to": claim.valid_to,
        "valid_basis": claim.valid_basis,
        "recorded_at": now,
        "superseded_at": None,
        "superseded_by": None,
        "status": claim.status,
        "prevailing_stance": claim.prevailing_stance,
        "policy": claim.policy,
        "n_supporting": sum(1 for e in live if e.stance == "supports"),
        "n_contradicting": sum(1 for e in live if e.stance == "contradicts"),
        "languages": sorted({e.language for e in claim.evidence if e.language}),
        "collections": sorted({e.collection for e in claim.evidence if e.collection}),
        "content_hash": content_hash(claim),
        "run_id": run_id,
        "producer": producer,
    }
    row.update(over)
    return row


def _insert_versions(conn: sa.Connection, rows: list[dict[str, Any]], evidence: list[list[dict[str, Any]]]) -> None:
    if not rows:
        return
    ids = conn.execute(db.claims.insert().returning(db.claims.c.id, sort_by_parameter_order=True), rows).scalars().all()
    ev_rows = [
        {"claim_version": vid, "claim_id": row["claim_id"], **e}
        for vid, row, evs in zip(ids, rows, evidence, strict=True)
        for e in evs
    ]
    if ev_rows:
        conn.execute(db.claim_evidence.insert(), ev_rows)


def write_claims(
    engine: sa.Engine,
    claims: Sequence[Claim],
    *,
    run_id: str,
    producer: str,
    now: dt.datetime | None = None,
    retracted_docs: Collection[str] = (),
) -> dict[str, int]:
    """Make ``claims`` the current knowledge, keeping every earlier version (module docstring).

    A current claim no longer produced whose every evidence row comes from ``retracted_docs``
    gets a ``retracted`` version (its evidence marked retracted, policy ``all_evidence_retracted``)
    rather than ``superseded``: a retracted source's claims vanish from the precomputes, and the
    reason they vanished is the retraction.

    ``claims`` must already be resolved (``policy.resolve``); two claims with one ``claim_id``
    raise ``ValueError``. ``now`` is the transaction time (default: the clock; tests pass one).
    One transaction. Returns counts: ``inserted``, ``changed``, ``unchanged``, ``superseded``,
    ``retracted`` (of the vanished claims), ``current``.
    """
    now = now or _now()
    produced: dict[str, Claim] = {}
    for c in claims:
        if c.claim_id in produced:
            raise ValueError(f"claim {c.claim_id} produced twice ({c.subject} {c.predicate} {c.object})")
        produced[c.claim_id] = c
    by_key: dict[str, list[str]] = {}
    for c in produced.values():
        by_key.setdefault(c.claim_key, []).append(c.claim_id)
    stats = {"inserted": 0, "changed": 0, "unchanged": 0, "superseded": 0, "retracted": 0}
    gone_docs = set(retracted_docs)
    with engine.begin() as conn:
        current = {
            r.claim_id: r
            for r in conn.execute(
                sa.select(db.claims.c.id, db.claims.c.claim_id, db.claims.c.content_hash, db.claims.c.status).where(
                    db.claims.c.superseded_at.is_(None)
                )
            )
        }
        close: list[int] = []
        new_rows: list[dict[str, Any]] = []
        new_ev: list[list[dict[str, Any]]] = []
        for cid, c in produced.items():
            row = _row(c, now, run_id, producer)
            cur = current.get(cid)
            if cur is not None and cur.content_hash == row["content_hash"]:
                stats["unchanged"] += 1
                continue
            if cur is not None:
                close.append(cur.id)
                stats["changed"] += 1
            else:
                stats["inserted"] += 1
            new_rows.append(row)
            new_ev.append([{k: getattr(e, k) for k in _EVIDENCE_COLS} for e in c.evidence])
        gone = [r for cid, r in current.items() if cid not in produced and r.status not in ("superseded", "retracted")]
        tomb_src = (
            {r.id: r for r in conn.execute(sa.select(db.claims).where(db.claims.c.id.in_([g.id for g in gone])))}
            if gone
            else {}
        )
        tomb_ev: dict[int, list[dict[str, Any]]] = {}
        if gone:
            for e in conn.execute(
                sa.select(db.claim_evidence).where(db.claim_evidence.c.claim_version.in_(list(tomb_src)))
            ):
                tomb_ev.setdefault(e.claim_version, []).append({k: getattr(e, k) for k in _EVIDENCE_COLS})
        for g in gone:
            old = dict(tomb_src[g.id]._mapping)
            close.append(g.id)
            replacements = [x for x in by_key.get(old["claim_key"], []) if x != old["claim_id"]]
            evidence = tomb_ev.get(g.id, [])
            retracted = bool(evidence) and not replacements and all(e["doc_id"] in gone_docs for e in evidence)
            status = "retracted" if retracted else "superseded"
            stats[status] += 1
            if retracted:
                evidence = [{**e, "retracted": True} for e in evidence]
                old.update(prevailing_stance=None, policy="all_evidence_retracted", n_supporting=0, n_contradicting=0)
            old.pop("id")
            old.update(
                recorded_at=now,
                superseded_at=None,
                superseded_by=replacements[0] if replacements else None,
                status=status,
                run_id=run_id,
                producer=producer,
            )
            old["content_hash"] = hashlib.sha1((old["content_hash"] + "|" + status).encode()).hexdigest()
            new_rows.append(old)
            new_ev.append(evidence)
        if close:
            conn.execute(db.claims.update().where(db.claims.c.id.in_(close)).values(superseded_at=now))
        _insert_versions(conn, new_rows, new_ev)
        stats["current"] = conn.execute(
            sa.select(sa.func.count()).select_from(db.claims).where(db.claims.c.superseded_at.is_(None))
        ).scalar_one()
    return stats


def as_of_instant(as_of: dt.date | dt.datetime | None) -> dt.datetime | None:
    """The transaction-time instant of an ``as_of``: a datetime as given (UTC if naive); a date
    means "by the end of that day" (the next midnight UTC, exclusive)."""
    if as_of is None:
        return None
    if isinstance(as_of, dt.datetime):
        return as_of if as_of.tzinfo else as_of.replace(tzinfo=dt.UTC)
    if as_of >= dt.date.max:
        return dt.datetime.max.replace(tzinfo=dt.UTC)
    return dt.datetime.combine(as_of + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)


def query_claims(
    engine: sa.Engine,
    *,
    subject: str | None = None,
    predicate: str | None = None,
    obj: str | None = None,
    valid_at: dt.date | None = None,
    as_of: dt.date | dt.datetime | None = None,
    status: Iterable[str] | None = None,
    include_superseded: bool = False,
    include_undated: bool = False,
    scope: AccessScope | None = None,
    limit: int = 100,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Claims as Radar knew them at ``as_of`` (transaction time; default now) that held at
    ``valid_at`` (valid time; default any), with their evidence.

    ``valid_at``: ``valid_from <= d`` and (``valid_to`` NULL or ``>= d``); claims whose valid time
    the source does not state (``valid_from`` NULL) only with ``include_undated``. ``superseded``
    versions only with ``include_superseded`` (or an explicit ``status``). ``scope``: a restricted
    caller sees a claim only through evidence of its collections, and only that evidence.
    Returns dicts (claim columns + ``evidence``: list of dicts), ordered by subject, predicate,
    object, valid_from.
    """
    c = db.claims.c
    q = sa.select(db.claims)
    t = as_of_instant(as_of)
    if t is None:
        q = q.where(c.superseded_at.is_(None))
    else:
        q = q.where(c.recorded_at < t, sa.or_(c.superseded_at.is_(None), c.superseded_at >= t))
    for col, val in ((c.subject, subject), (c.predicate, predicate), (c.object, obj)):
        if val is not None:
            q = q.where(col == val)
    if valid_at is not None:
        held = sa.and_(c.valid_from <= valid_at, sa.or_(c.valid_to.is_(None), c.valid_to >= valid_at))
        q = q.where(sa.or_(held, c.valid_from.is_(None)) if include_undated else held)
    if status:
        q = q.where(c.status.in_(list(status)))
    elif not include_superseded:
        q = q.where(c.status != "superseded")
    e = db.claim_evidence.c
    if scope is not None and scope.restricted:
        allowed = sorted(scope.collections or ())
        q = q.where(sa.exists().where(e.claim_version == c.id, e.collection.in_(allowed)))
    q = q.order_by(c.subject, c.predicate, c.object, c.valid_from.nulls_first(), c.id).limit(limit).offset(offset)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(q)]
        ids = [r["id"] for r in rows]
        evq = (
            sa.select(db.claim_evidence)
            .where(e.claim_version.in_(ids))
            .order_by(e.claim_version, e.stance.desc(), e.id)
        )
        if scope is not None and scope.restricted:
            evq = evq.where(e.collection.in_(sorted(scope.collections or ())))
        ev: dict[int, list[dict[str, Any]]] = {}
        for r in conn.execute(evq) if ids else ():
            ev.setdefault(r.claim_version, []).append(dict(r._mapping))
    for r in rows:
        r["evidence"] = ev.get(r["id"], [])
    return scope_rows(rows, scope)


def scope_rows(rows: list[dict[str, Any]], scope: AccessScope | None) -> list[dict[str, Any]]:
    """The claim rows as a ``scope`` may see them: for a restricted caller, only evidence of its
    collections, and every figure judged over that evidence alone — ``n_supporting``,
    ``n_contradicting``, ``collections``, ``languages``, and ``prevailing_stance``/``policy``/``status``
    by ``policy.verdict`` (a ``superseded`` version keeps that status) — so that no count or
    verdict reveals passages of other collections; rows left without evidence are dropped. An
    unrestricted (or absent) scope returns ``rows`` unchanged. Mutates and returns the dicts."""
    if scope is None or not scope.restricted:
        return rows
    allowed = scope.collections or frozenset()
    out = []
    for r in rows:
        seen = [e for e in r["evidence"] if e["collection"] in allowed]
        if not seen:
            continue
        live = [e for e in seen if not e["retracted"]]
        status, r["prevailing_stance"], r["policy"] = verdict(live)
        r["status"] = r["status"] if r["status"] == "superseded" else status
        r["evidence"] = seen
        r["n_supporting"] = sum(1 for e in live if e["stance"] == "supports")
        r["n_contradicting"] = sum(1 for e in live if e["stance"] == "contradicts")
        r["collections"] = sorted({e["collection"] for e in seen if e["collection"]})
        r["languages"] = sorted({e["language"] for e in seen if e["language"]})
        out.append(r)
    return out


def claim_history(engine: sa.Engine, claim_id: str, scope: AccessScope | None = None) -> list[dict[str, Any]]:
    """Every version of a claim (oldest first) with its evidence — the audit trail; a restricted
    ``scope`` sees the versions it has evidence for, judged over that evidence (``scope_rows``)."""
    with engine.connect() as conn:
        rows = [
            dict(r._mapping)
            for r in conn.execute(
                sa.select(db.claims).where(db.claims.c.claim_id == claim_id).order_by(db.claims.c.recorded_at)
            )
        ]
        for r in rows:
            r["evidence"] = [
                dict(e._mapping)
                for e in conn.execute(sa.select(db.claim_evidence).where(db.claim_evidence.c.claim_version == r["id"]))
            ]
    return scope_rows(rows, scope)


# The passage an evidence row ``e`` of claim version ``c`` cites, as ``k`` (chunk_id, doc_id, text):
# the current one, else — only for a version that no longer asserts anything (closed, or a current
# ``superseded``/``retracted`` tombstone) — its last closed version. A chunk_id never names two
# texts (``history.assign_chunk_ids``), so any closed row of it holds the text that was quoted.
_EVIDENCE_PASSAGE = (
    "LEFT JOIN LATERAL (SELECT p.chunk_id, p.doc_id, p.text FROM ("
    "SELECT chunk_id, doc_id, text, 0 AS pri, NULL::timestamptz AS at FROM chunks WHERE chunk_id = e.chunk_id "
    "UNION ALL SELECT chunk_id, doc_id, text, 1, superseded_at FROM chunks_history "
    "WHERE chunk_id = e.chunk_id AND (c.superseded_at IS NOT NULL OR c.status IN ('superseded', 'retracted'))"
    ") p ORDER BY p.pri, p.at DESC LIMIT 1) k ON true"
)


def check_evidence(engine: sa.Engine, *, current_only: bool = True, limit: int = 20) -> dict[str, Any]:
    """Evidence integrity: claims (current versions, or all with ``current_only=False``) without an
    evidence row, evidence rows whose chunk does not exist or whose document differs, and rows whose
    span is not ``text[span_start:span_end]`` of that passage. Returns counts and up to ``limit``
    examples.

    The passage is looked up by ``_EVIDENCE_PASSAGE``: a version that still asserts something (current,
    ``asserted``/``contested``) must cite a current passage; a closed version, or a current
    ``superseded``/``retracted`` one, may cite a passage closed since (``chunks_history``: a changed,
    removed or retracted source), which resolves there with the text it had."""
    cur = "AND c.superseded_at IS NULL" if current_only else ""
    with engine.connect() as conn:
        n_claims = conn.execute(sa.text(f"SELECT count(*) FROM claims c WHERE true {cur}")).scalar_one()
        no_ev = (
            conn.execute(
                sa.text(
                    f"SELECT c.claim_id FROM claims c WHERE true {cur} AND NOT EXISTS "
                    "(SELECT 1 FROM claim_evidence e WHERE e.claim_version = c.id) ORDER BY c.claim_id, c.id LIMIT :n"
                ),
                {"n": limit},
            )
            .scalars()
            .all()
        )
        n_no_ev = conn.execute(
            sa.text(
                f"SELECT count(*) FROM claims c WHERE true {cur} AND NOT EXISTS "
                "(SELECT 1 FROM claim_evidence e WHERE e.claim_version = c.id)"
            )
        ).scalar_one()
        bad = conn.execute(
            sa.text(
                "SELECT e.claim_id, e.chunk_id, (k.chunk_id IS NULL) AS missing, "
                "(k.chunk_id IS NOT NULL AND k.doc_id <> e.doc_id) AS wrong_doc "
                f"FROM claim_evidence e JOIN claims c ON c.id = e.claim_version {cur} "
                f"{_EVIDENCE_PASSAGE} "
                "WHERE k.chunk_id IS NULL OR k.doc_id <> e.doc_id "
                "OR substring(k.text from e.span_start + 1 for e.span_end - e.span_start) <> e.span"
            )
        ).all()
        n_ev = conn.execute(
            sa.text(f"SELECT count(*) FROM claim_evidence e JOIN claims c ON c.id = e.claim_version {cur}")
        ).scalar_one()
    return {
        "claims": int(n_claims),
        "evidence_rows": int(n_ev),
        "claims_without_evidence": int(n_no_ev),
        "evidence_chunk_missing": sum(1 for b in bad if b.missing),
        "evidence_wrong_document": sum(1 for b in bad if b.wrong_doc),
        "evidence_span_mismatch": sum(1 for b in bad if not b.missing and not b.wrong_doc),
        "examples": [*no_ev[:limit], *[f"{b.claim_id}@{b.chunk_id}" for b in bad[:limit]]],
        "ok": not n_no_ev and not bad,
    }


def check_single_current(engine: sa.Engine) -> dict[str, Any]:
    """Claim ids with more than one current version (must be none)."""
    with engine.connect() as conn:
        dup = conn.execute(
            sa.text(
                "SELECT claim_id, count(*) FROM claims WHERE superseded_at IS NULL GROUP BY claim_id HAVING count(*) > 1"
            )
        ).all()
    return {"duplicated_claim_ids": len(dup), "examples": [d[0] for d in dup[:20]], "ok": not dup}


def provenance_coverage(engine: sa.Engine) -> dict[str, Any]:
    """Share of claim versions (all of history) whose every evidence row resolves to a passage of
    the named document — current, or closed since for a version that no longer asserts anything
    (``_EVIDENCE_PASSAGE``) — and which have at least one evidence row. Must be 1.0.
    ``resolving_in_history``: versions with at least one evidence row resolved from ``chunks_history``."""
    with engine.connect() as conn:
        total, ok, in_history = conn.execute(
            sa.text(
                "SELECT count(*), count(*) FILTER (WHERE n_ev > 0 AND n_ev = n_ok), "
                "count(*) FILTER (WHERE n_ev > 0 AND n_ev = n_ok AND n_hist > 0) FROM ("
                "SELECT c.id, count(e.id) AS n_ev, count(k.chunk_id) FILTER (WHERE k.doc_id = e.doc_id) AS n_ok, "
                "count(k.chunk_id) FILTER (WHERE k.doc_id = e.doc_id AND NOT EXISTS "
                "(SELECT 1 FROM chunks x WHERE x.chunk_id = e.chunk_id)) AS n_hist "
                f"FROM claims c LEFT JOIN claim_evidence e ON e.claim_version = c.id {_EVIDENCE_PASSAGE} "
                "GROUP BY c.id) s"
            )
        ).one()
    return {
        "claim_versions": int(total),
        "resolving": int(ok),
        "resolving_in_history": int(in_history),
        "coverage": (ok / total) if total else 1.0,
    }


def _jsonable(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows with dates and datetimes as ISO strings (for JSON outputs)."""
    out = []
    for r in rows:
        d = {}
        for k, v in r.items():
            if isinstance(v, (dt.date, dt.datetime)):
                v = v.isoformat()
            elif isinstance(v, list):
                v = _jsonable(v) if v and isinstance(v[0], Mapping) else v
            d[k] = v
        out.append(d)
    return out


jsonable = _jsonable
