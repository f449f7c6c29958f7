"""Where claims meet the knowledge base's history (issue 13 §1–3): the retraction table as the
claims builder's input, and the claims that cite a source for ``provenance.impact``.

Both read PostgreSQL only; neither writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db, history
from radar_pipeline.claims.model import RetractionInfo


def _exists(conn: sa.Connection, table: str) -> bool:
    return bool(conn.execute(sa.text("SELECT to_regclass(:t) IS NOT NULL"), {"t": table}).scalar())


def retractions(engine: sa.Engine) -> dict[str, RetractionInfo]:
    """Every retracted document as the claims builder's input: ``doc_id`` → ``RetractionInfo``
    (reason, who, when), read from ``history``'s ``retractions`` table. Empty when the table does
    not exist yet (an install that never retracted anything)."""
    with engine.connect() as conn:
        if not _exists(conn, "retractions"):
            return {}
    return {
        r["doc_id"]: RetractionInfo(
            doc_id=r["doc_id"], reason=r["reason"] or "", retracted_at=r["retracted_at"], by=r["retracted_by"]
        )
        for r in history.list_retractions(engine)
    }


def claims_citing(engine: sa.Engine, doc_ids: Sequence[str], limit: int = 200) -> dict[str, Any]:
    """The claims whose evidence cites any of ``doc_ids``, for ``radar impact``.

    Returns ``{"current": [{claim_id, predicate, statement, status, stances}], "n_current": int,
    "closed": int}``: ``current`` lists at most ``limit`` current claim versions (``superseded_at``
    NULL) with an evidence row from these documents, and their stances there; ``closed`` counts
    earlier versions (transaction time ended) that cited them. ``None`` values never occur; an
    install without the claims tables returns zeros.
    """
    ids = list(doc_ids)
    with engine.connect() as conn:
        if not ids or not _exists(conn, "claim_evidence"):
            return {"current": [], "n_current": 0, "closed": 0}
        c, e = db.claims, db.claim_evidence
        join = c.join(e, e.c.claim_version == c.c.id)
        rows = conn.execute(
            sa.select(c.c.claim_id, c.c.predicate, c.c.statement, c.c.status, sa.func.array_agg(e.c.stance.distinct()))
            .select_from(join)
            .where(e.c.doc_id.in_(ids), c.c.superseded_at.is_(None))
            .group_by(c.c.claim_id, c.c.predicate, c.c.statement, c.c.status)
            .order_by(c.c.claim_id)
        ).all()
        closed = conn.execute(
            sa.select(sa.func.count(c.c.id.distinct()))
            .select_from(join)
            .where(e.c.doc_id.in_(ids), c.c.superseded_at.is_not(None))
        ).scalar()
    current = [
        {"claim_id": r[0], "predicate": r[1], "statement": r[2], "status": r[3], "stances": sorted(r[4])}
        for r in rows[:limit]
    ]
    return {"current": current, "n_current": len(rows), "closed": int(closed or 0)}
