"""Stale answers flag themselves (issue 25 §2): a past ``/chat`` answer whose citation names a
passage a later materialization closed is marked, with which citation, why and what replaced it.

A citation ``[doc_id:chunk_id]`` of a stored run (``agent_runs.response.citas``) is *stale* when its
passage is no longer current (not in ``chunks``) but closed in ``chunks_history``
(``radar_pipeline.history``): ``reason`` is ``retracted`` (``supersede_reason = 'retracted'``) or
``superseded`` (``source_changed``: new bytes at the path; ``source_removed``; ``extractor_changed``:
re-extracted or re-chunked with another text). What replaced it: the current passage of the
document that superseded it — following ``documents_history.superseded_by`` to today's version —
with the same text, else at the nearest position (``history.resolve_chunk``'s rule); ``text_changed``
says whether that passage's text differs from the one the answer read (the SHA-256 the run's
provenance recorded, ``trace.provenance_record``). A retracted or removed passage has no replacement.

``flag_stale_answers`` is run after every materialization that can close passages (the Dagster
asset ``stale_answers``, eager after ``chunks``; ``precompute.pipeline.propagate_retraction`` after a
retraction) and keeps ``answer_stale_citations`` in step, append-only: a new stale citation is
inserted with when and by what it was detected; one whose facts changed (its replacement was itself
replaced) is cleared and re-inserted; one whose passage is current again is cleared
(``cleared_at``). ``answer_validity`` is what ``GET /runs/{id}``, the trace and the dashboard read.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

import sqlalchemy as sa

__all__ = [
    "answer_stale_citations",
    "ensure_staleness_schema",
    "find_stale_citations",
    "flag_stale_answers",
    "answer_validity",
    "stale_counts",
]

metadata = sa.MetaData()

answer_stale_citations = sa.Table(
    "answer_stale_citations",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("run_id", sa.Text, nullable=False, index=True, comment="agent_runs.run_id of the answer"),
    sa.Column("n", sa.Integer, nullable=True, comment="the citation's number in the answer ([n])"),
    sa.Column("doc_id", sa.Text, nullable=False),
    sa.Column("chunk_id", sa.Text, nullable=False, comment="the cited passage, now closed"),
    sa.Column("reason", sa.Text, nullable=False, comment="superseded | retracted"),
    sa.Column("supersede_reason", sa.Text, nullable=False, comment="chunks_history.supersede_reason"),
    sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("superseded_by_doc", sa.Text, nullable=True, comment="doc_id that replaced the passage's document"),
    sa.Column("retraction_reason", sa.Text, nullable=True, comment="retractions.reason when retracted"),
    sa.Column("replaced_by", sa.Text, nullable=True, comment="current chunk_id serving it now; NULL: none"),
    sa.Column("replaced_by_doc", sa.Text, nullable=True),
    sa.Column(
        "text_changed",
        sa.Boolean,
        nullable=True,
        comment="the replacement's text differs from the one the answer read; NULL without replacement",
    ),
    sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("detected_by", sa.Text, nullable=False, comment="what detected it: dagster:<run_id>, retraction:<by>"),
    sa.Column("cleared_at", sa.DateTime(timezone=True), nullable=True, comment="no longer (or differently) stale"),
    comment="Citations of past answers whose passage a later materialization closed (issue 25 §2).",
)
sa.Index(
    "ux_answer_stale_citations_open",
    answer_stale_citations.c.run_id,
    answer_stale_citations.c.chunk_id,
    unique=True,
    postgresql_where=answer_stale_citations.c.cleared_at.is_(None),
)

# The facts of a stale citation; a change in any of them clears the open row and inserts a new one.
_COMPARED = ("reason", "supersede_reason", "superseded_by_doc", "replaced_by", "text_changed", "n")
_MAX_CHAIN = 50  # documents_history.superseded_by hops followed to today's version


def ensure_staleness_schema(engine: sa.Engine) -> None:
    """Create ``agent_runs``/``agent_steps`` and ``answer_stale_citations`` if missing (idempotent)."""
    from radar_pipeline.agent.trace import ensure_agent_schema
    from radar_pipeline.db import create_all_locked

    ensure_agent_schema(engine)
    create_all_locked(engine, metadata, ())


def _has(conn: sa.Connection, table: str) -> bool:
    return bool(conn.execute(sa.text("SELECT to_regclass(:t) IS NOT NULL"), {"t": table}).scalar())


# Every citation of every stored run whose passage is not current but closed, with the closing row
# (the latest, when a passage id was closed more than once) and the SHA-256 the run read.
_STALE_SQL = """
WITH cited AS (
  SELECT r.run_id, (c->>'n')::int AS n, c->>'doc_id' AS doc_id, c->>'chunk_id' AS chunk_id,
         (SELECT p->>'sha256' FROM jsonb_array_elements(
             CASE WHEN jsonb_typeof(r.provenance->'passages') = 'array' THEN r.provenance->'passages'
                  ELSE '[]'::jsonb END) p
           WHERE p->>'chunk_id' = c->>'chunk_id' LIMIT 1) AS sha_read
  FROM agent_runs r
  CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN jsonb_typeof(r.response->'citas') = 'array' THEN r.response->'citas' ELSE '[]'::jsonb END) c
  WHERE c->>'chunk_id' IS NOT NULL {run_filter}
)
SELECT cited.run_id, cited.n, cited.doc_id, cited.chunk_id, cited.sha_read,
       h.supersede_reason, h.superseded_by, h.superseded_at, h.text_sha, h.seq
FROM cited
JOIN LATERAL (
  SELECT supersede_reason, superseded_by, superseded_at, text_sha, seq FROM chunks_history h
  WHERE h.chunk_id = cited.chunk_id ORDER BY superseded_at DESC LIMIT 1
) h ON true
WHERE NOT EXISTS (SELECT 1 FROM chunks k WHERE k.chunk_id = cited.chunk_id)
ORDER BY cited.run_id, cited.n, cited.chunk_id
"""


def _current_doc(conn: sa.Connection, doc_id: str | None, cache: dict) -> str | None:
    """The current document that ``doc_id`` became, following ``documents_history.superseded_by``
    (``doc_id`` itself when current); None when the chain ends in a removal or retraction."""
    if doc_id is None:
        return None
    if doc_id in cache:
        return cache[doc_id]
    seen, d = set(), doc_id
    out = None
    for _ in range(_MAX_CHAIN):
        if d is None or d in seen:
            break
        seen.add(d)
        if conn.execute(sa.text("SELECT 1 FROM documents WHERE doc_id = :d"), {"d": d}).first():
            out = d
            break
        d = conn.execute(
            sa.text(
                "SELECT superseded_by FROM documents_history WHERE doc_id = :d ORDER BY superseded_at DESC LIMIT 1"
            ),
            {"d": d},
        ).scalar()
    cache[doc_id] = out
    return out


def find_stale_citations(bind: sa.Engine | sa.Connection, run_id: str | None = None) -> list[dict[str, Any]]:
    """The stale citations of every stored answer (or of ``run_id``), computed from the tables now.

    Returns one dict per citation, ordered by run and citation number: ``run_id``, ``n``, ``doc_id``,
    ``chunk_id``, ``reason`` (``superseded`` | ``retracted``), ``supersede_reason``,
    ``superseded_at`` (datetime), ``superseded_by_doc``, ``retraction_reason``, ``replaced_by`` and
    ``replaced_by_doc`` (None when nothing replaced it) and ``text_changed`` (bool; None without a
    replacement). An empty list when the knowledge base or the traces do not exist yet.
    """
    if isinstance(bind, sa.Engine):
        with bind.connect() as conn:
            return find_stale_citations(conn, run_id)
    conn = bind
    if not all(_has(conn, t) for t in ("agent_runs", "chunks", "chunks_history", "documents")):
        return []
    sql = _STALE_SQL.format(run_filter="AND r.run_id = :run" if run_id is not None else "")
    rows = conn.execute(sa.text(sql), {"run": run_id} if run_id is not None else {}).all()
    retracted = (
        dict(conn.execute(sa.text("SELECT doc_id, reason FROM retractions")).all())
        if rows and _has(conn, "retractions")
        else {}
    )
    docs: dict[str, str | None] = {}
    repl_cache: dict[tuple, tuple[str, str, str] | None] = {}
    out = []
    for r in rows:
        reason = "retracted" if r.supersede_reason == "retracted" else "superseded"
        replaced = None
        if reason == "superseded":
            cur = _current_doc(conn, r.superseded_by, docs)
            key = (cur, r.text_sha, r.seq)
            if cur is not None and key not in repl_cache:
                hit = conn.execute(
                    sa.text(
                        "SELECT chunk_id, doc_id, text_sha FROM chunks WHERE doc_id = :d "
                        "ORDER BY (text_sha = :s) DESC, abs(seq - :q), seq LIMIT 1"
                    ),
                    {"d": cur, "s": r.text_sha, "q": r.seq},
                ).first()
                repl_cache[key] = (hit.chunk_id, hit.doc_id, hit.text_sha) if hit else None
            replaced = repl_cache.get(key) if cur is not None else None
        read_sha = r.sha_read or r.text_sha
        out.append(
            {
                "run_id": r.run_id,
                "n": r.n,
                "doc_id": r.doc_id,
                "chunk_id": r.chunk_id,
                "reason": reason,
                "supersede_reason": r.supersede_reason,
                "superseded_at": r.superseded_at,
                "superseded_by_doc": r.superseded_by,
                "retraction_reason": retracted.get(r.doc_id) if reason == "retracted" else None,
                "replaced_by": replaced[0] if replaced else None,
                "replaced_by_doc": replaced[1] if replaced else None,
                "text_changed": (replaced[2] != read_sha) if replaced else None,
            }
        )
    return out


def flag_stale_answers(engine: sa.Engine, *, detected_by: str, now: dt.datetime | None = None) -> dict[str, Any]:
    """Bring ``answer_stale_citations`` in step with the tables (module docstring): insert the new
    stale citations (``detected_by``: what materialization found them, e.g. ``dagster:<run_id>``),
    clear and re-insert those whose facts changed, clear those current again.

    Returns counts: ``stale_citations`` and ``stale_answers`` (open now), ``flagged`` (inserted
    this call), ``updated``, ``cleared``, ``by_reason`` (open citations per reason) and
    ``text_changed`` (open citations whose replacement's text differs from what was read).
    Raises ``ValueError`` for an empty ``detected_by``.
    """
    if not detected_by.strip():
        raise ValueError("detected_by must name what detected the stale citations")
    ensure_staleness_schema(engine)
    now = now or dt.datetime.now(dt.UTC)
    t = answer_stale_citations
    stats: Counter = Counter()
    with engine.begin() as conn:
        # one flagger at a time (the asset and a retraction may run together)
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('answer_stale_citations'))"))
        fresh = {(s["run_id"], s["chunk_id"]): s for s in find_stale_citations(conn)}
        open_rows = {(r.run_id, r.chunk_id): r for r in conn.execute(sa.select(t).where(t.c.cleared_at.is_(None)))}
        clear, insert = [], []
        for key, s in fresh.items():
            cur = open_rows.get(key)
            if cur is not None and all(getattr(cur, c) == s[c] for c in _COMPARED):
                continue
            if cur is not None:
                clear.append(cur.id)
                stats["updated"] += 1
            else:
                stats["flagged"] += 1
            insert.append({**s, "detected_at": now, "detected_by": detected_by.strip(), "cleared_at": None})
        for key, cur in open_rows.items():
            if key not in fresh:
                clear.append(cur.id)
                stats["cleared"] += 1
        if clear:
            conn.execute(t.update().where(t.c.id.in_(clear)).values(cleared_at=now))
        if insert:
            conn.execute(t.insert(), insert)
    return {
        "stale_citations": len(fresh),
        "stale_answers": len({k[0] for k in fresh}),
        "flagged": stats["flagged"],
        "updated": stats["updated"],
        "cleared": stats["cleared"],
        "by_reason": dict(Counter(s["reason"] for s in fresh.values())),
        "text_changed": sum(1 for s in fresh.values() if s["text_changed"]),
    }


def _public(r: Any) -> dict[str, Any]:
    return {
        "n": r.n,
        "doc_id": r.doc_id,
        "chunk_id": r.chunk_id,
        "motivo": r.reason,
        "estado": "retractado" if r.reason == "retracted" else "reemplazado",
        "supersede_reason": r.supersede_reason,
        "superseded_at": r.superseded_at.isoformat(),
        "superseded_by": r.superseded_by_doc,
        "retraction_reason": r.retraction_reason,
        "reemplazo": None
        if r.replaced_by is None
        else {"chunk_id": r.replaced_by, "doc_id": r.replaced_by_doc, "texto_cambiado": bool(r.text_changed)},
        "detectado_en": r.detected_at.isoformat(),
        "detectado_por": r.detected_by,
    }


def answer_validity(bind: sa.Engine | sa.Connection, run_id: str) -> dict[str, Any]:
    """Whether a stored answer still stands, as the last flagging left it.

    Returns ``{"estado": "vigente" | "desactualizada", "citas_no_vigentes": [...]}``; each stale
    citation: ``n``, ``doc_id``, ``chunk_id``, ``motivo`` (``superseded`` | ``retracted``),
    ``estado`` (``reemplazado`` | ``retractado``), ``supersede_reason``, ``superseded_at`` (ISO),
    ``superseded_by`` (doc_id), ``retraction_reason``, ``reemplazo`` (``{chunk_id, doc_id,
    texto_cambiado}`` or None) and ``detectado_en``/``detectado_por``. ``vigente`` with no citations
    when the table does not exist yet (nothing was ever flagged).
    """
    if isinstance(bind, sa.Engine):
        with bind.connect() as conn:
            return answer_validity(conn, run_id)
    if not _has(bind, "answer_stale_citations"):
        return {"estado": "vigente", "citas_no_vigentes": []}
    t = answer_stale_citations
    rows = bind.execute(
        sa.select(t).where(t.c.run_id == run_id, t.c.cleared_at.is_(None)).order_by(t.c.n, t.c.chunk_id)
    ).all()
    return {"estado": "desactualizada" if rows else "vigente", "citas_no_vigentes": [_public(r) for r in rows]}


def stale_counts(engine: sa.Engine) -> dict[str, Any]:
    """Open flags now: ``stale_answers``, ``stale_citations``, ``by_reason`` and ``examples`` (up to
    five ``run_id: chunk_id (reason)``); zeros when nothing was ever flagged. For the asset check."""
    with engine.connect() as conn:
        if not _has(conn, "answer_stale_citations"):
            return {"stale_answers": 0, "stale_citations": 0, "by_reason": {}, "examples": []}
        rows = conn.execute(
            sa.text(
                "SELECT run_id, chunk_id, reason FROM answer_stale_citations WHERE cleared_at IS NULL "
                "ORDER BY detected_at DESC, run_id, chunk_id"
            )
        ).all()
    return {
        "stale_answers": len({r.run_id for r in rows}),
        "stale_citations": len(rows),
        "by_reason": dict(Counter(r.reason for r in rows)),
        "examples": [f"{r.run_id}: {r.chunk_id} ({r.reason})" for r in rows[:5]],
    }
