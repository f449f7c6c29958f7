"""What depends on a source, and whether a past answer still stands: ``radar impact`` / ``GET
/impact/{doc_id}`` and ``radar replay``.

``impact`` follows every stored link from a document (all its versions when given a path) to what
was built from it: its passages (current and closed), the precompute rows that name it (mentions,
dates) or count it in their ``evidence`` (alerts, presence, every ``agg_*`` cell), and the past
``/chat`` answers whose trace read or cited one of its passages — flagging the cited passages that
are now superseded or retracted. Claims (issue 13 §3) that cite the source are listed through ``claims.links.claims_citing``.

``replay`` re-runs the searches a past answer's trace recorded against today's index and reports,
per passage the answer cited: ``gone`` (removed or retracted, with nothing in its place, or not in
today's index), ``changed`` (replaced by — or now holding — a text whose SHA-256 differs from the
one the answer read) or ``same`` (same text, possibly under its replacement's id), with its rank
then and now.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.agent.trace import ensure_agent_schema
from radar_pipeline.chunking import text_sha
from radar_pipeline.history import resolve_chunk
from radar_pipeline.precompute import tables as T
from radar_pipeline.retrieval.service import EncodeBudget

__all__ = ["resolve_documents", "impact", "replay", "UnknownSource"]

_DOC_ID = re.compile(r"^[0-9a-f]{16}$")
# Tables citing documents in a JSONB ``evidence`` list of {"doc_id", "chunk_id", ...}; the key
# columns name the cell in the report.
EVIDENCE_TABLES: dict[str, tuple[str, ...]] = {
    "early_warnings": ("alert_code",),
    "armed_presence": ("municipality_id", "group_key", "state"),
    "agg_documents_per_place": ("place_id", "phenomenon"),
    "agg_alerts_per_department": ("department_code", "alert_type"),
    "agg_timeline": ("phenomenon", "entity_id", "granularity", "period"),
    "agg_entity_network": ("kind", "entity_a", "entity_b", "phenomenon"),
    "agg_entity_heatmap": ("entity_id", "column_kind", "category"),
    "agg_entity_quadrant": ("entity_id", "phenomenon"),
}
DOCUMENT_TABLES = ("entity_mentions", "place_mentions", "publication_dates")


class UnknownSource(LookupError):
    """Neither a known ``doc_id`` nor a path Radar has seen (Spanish message)."""


def _exists(conn: sa.Connection, table: str) -> bool:
    return conn.execute(sa.text("SELECT to_regclass(:t) IS NOT NULL"), {"t": table}).scalar()


def resolve_documents(engine: sa.Engine, target: str, corpus_root: Path | None = None) -> list[str]:
    """The ``doc_id``s ``target`` names: a doc_id (current, closed or retracted), or a corpus path
    (relative to ``corpus_root``, or absolute under it) → every version that path ever held, oldest
    first. Raises ``UnknownSource``."""
    t = target.strip()
    with engine.connect() as conn:
        if _DOC_ID.match(t.lower()):
            d = t.lower()
            for table in ("documents", "documents_history", "retractions"):
                if conn.execute(sa.text(f"SELECT 1 FROM {table} WHERE doc_id = :d LIMIT 1"), {"d": d}).first():
                    return [d]
        path = t
        if corpus_root is not None and Path(t).is_absolute():
            try:
                path = Path(t).resolve().relative_to(Path(corpus_root).resolve()).as_posix()
            except ValueError:
                path = t
        rows = conn.execute(
            sa.text(
                "SELECT doc_id, min(at) AS first FROM ("
                "SELECT doc_id, superseded_at AS at FROM documents_history "
                "WHERE primary_path = :p OR source_paths @> CAST(:pj AS jsonb) "
                "UNION ALL SELECT doc_id, 'infinity'::timestamptz FROM documents "
                "WHERE primary_path = :p OR source_paths @> CAST(:pj AS jsonb)) s GROUP BY doc_id ORDER BY first"
            ),
            {"p": path, "pj": f'["{path}"]'},
        ).all()
    if not rows:
        raise UnknownSource(f"no hay documento ni ruta conocida «{target[:200]}»")
    return [r.doc_id for r in rows]


def _passage_states(conn: sa.Connection, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
    """chunk_id → ``{"estado": vigente|reemplazado|retractado|desconocido, "reason", "superseded_by"}``."""
    if not chunk_ids:
        return {}
    current = set(conn.execute(sa.select(db.chunks.c.chunk_id).where(db.chunks.c.chunk_id.in_(chunk_ids))).scalars())
    closed = {
        r.chunk_id: r
        for r in conn.execute(
            sa.text(
                "SELECT DISTINCT ON (chunk_id) chunk_id, supersede_reason, superseded_by, superseded_at "
                "FROM chunks_history WHERE chunk_id = ANY(:ids) ORDER BY chunk_id, superseded_at DESC"
            ),
            {"ids": chunk_ids},
        )
    }
    out = {}
    for c in chunk_ids:
        if c in current:
            out[c] = {"estado": "vigente"}
        elif c in closed:
            r = closed[c]
            out[c] = {
                "estado": "retractado" if r.supersede_reason == "retracted" else "reemplazado",
                "reason": r.supersede_reason,
                "superseded_by": r.superseded_by,
                "superseded_at": r.superseded_at.isoformat(),
            }
        else:
            out[c] = {"estado": "desconocido"}
    return out


def _answers(conn: sa.Connection, doc_ids: list[str], text_changed: set[str] = frozenset()) -> list[dict[str, Any]]:
    """Past /chat runs whose trace read or cited a passage of ``doc_ids`` (newest first). Each stale
    citation says whether its text changed (``texto_cambiado``: in ``text_changed``) or is still
    served, unchanged, under another id."""
    if not _exists(conn, "agent_runs"):
        return []
    cond = " OR ".join(
        f"(provenance->'passages' @> CAST(:p{i} AS jsonb) OR response->'citas' @> CAST(:p{i} AS jsonb))"
        for i in range(len(doc_ids))
    )
    params = {f"p{i}": f'[{{"doc_id": "{d}"}}]' for i, d in enumerate(doc_ids)}
    runs = conn.execute(
        sa.text(
            f"SELECT run_id, started_at, pregunta, estado, response->'citas' AS citas, provenance "
            f"FROM agent_runs WHERE {cond} ORDER BY started_at DESC"
        ),
        params,
    ).all()
    ids = set(doc_ids)
    out = []
    for r in runs:
        cited = [c["chunk_id"] for c in (r.citas or []) if c.get("doc_id") in ids]
        read = [p["chunk_id"] for p in ((r.provenance or {}).get("passages") or []) if p.get("doc_id") in ids]
        states = _passage_states(conn, sorted(set(cited) | set(read)))
        stale = {
            c: {**s, "texto_cambiado": c in text_changed}
            for c, s in states.items()
            if c in cited and s["estado"] != "vigente"
        }
        out.append(
            {
                "run_id": r.run_id,
                "started_at": r.started_at.isoformat(),
                "pregunta": r.pregunta[:300],
                "estado": r.estado,
                "index_version": (r.provenance or {}).get("index_version"),
                "citados": cited,
                "leidos": read,
                "citas_no_vigentes": stale,
            }
        )
    return out


def _successors(conn: sa.Connection, doc_ids: list[str], max_depth: int = 50) -> set[str]:
    """``doc_ids`` and every document that replaced one of them, transitively (``documents_history.
    superseded_by``): where their passages' texts may be current now."""
    seen, frontier = set(doc_ids), set(doc_ids)
    for _ in range(max_depth):
        nxt = (
            set(
                conn.execute(
                    sa.text(
                        "SELECT DISTINCT superseded_by FROM documents_history "
                        "WHERE doc_id = ANY(:ids) AND superseded_by IS NOT NULL"
                    ),
                    {"ids": sorted(frontier)},
                ).scalars()
            )
            - seen
        )
        if not nxt:
            break
        seen |= nxt
        frontier = nxt
    return seen


def impact(engine: sa.Engine, target: str, corpus_root: Path | None = None) -> dict[str, Any]:
    """Everything that depends on ``target`` (a doc_id or a corpus path: all its versions).

    Returns ``doc_ids``; ``documents`` (per doc_id: ``estado``, closing reason/time/successor,
    ``retraction``); ``chunks`` (``current`` and ``closed`` ids with reasons; of the passages closed
    by a new version or extractor, ``text_changed`` — those whose text no current passage of the
    source or of its successors holds, what a reader must re-check — and ``same_text_now``: closed
    id → the current id serving the same text); ``derived`` (per precompute table: ``current`` — the ids and key columns of the current rows that name or count
    the documents — and ``closed``, how many closed rows did); ``answers`` (``_answers``: each past
    run that read or cited them, and its cited passages that are no longer current, each with
    ``texto_cambiado``); ``claims``
    (``claims.links.claims_citing``: current claims citing it and closed versions that did). Raises ``UnknownSource``.
    """
    doc_ids = resolve_documents(engine, target, corpus_root)
    ensure_agent_schema(engine)
    out: dict[str, Any] = {"target": target, "doc_ids": doc_ids, "documents": {}, "derived": {}}
    with engine.connect() as conn:
        for d in doc_ids:
            cur = conn.execute(sa.text("SELECT primary_path FROM documents WHERE doc_id = :d"), {"d": d}).first()
            last = conn.execute(
                sa.text(
                    "SELECT primary_path, supersede_reason, superseded_by, superseded_at FROM documents_history "
                    "WHERE doc_id = :d ORDER BY superseded_at DESC LIMIT 1"
                ),
                {"d": d},
            ).first()
            ret = conn.execute(
                sa.text("SELECT reason, retracted_by, retracted_at FROM retractions WHERE doc_id = :d"), {"d": d}
            ).first()
            out["documents"][d] = {
                "estado": "vigente" if cur else ("retractado" if ret else "reemplazado"),
                "primary_path": cur.primary_path if cur else (last.primary_path if last else None),
                "supersede_reason": None if cur or last is None else last.supersede_reason,
                "superseded_by": None if cur or last is None else last.superseded_by,
                "superseded_at": None if cur or last is None else last.superseded_at.isoformat(),
                "retraction": None
                if ret is None
                else {
                    "reason": ret.reason,
                    "retracted_by": ret.retracted_by,
                    "retracted_at": ret.retracted_at.isoformat(),
                },
            }
        current = list(
            conn.execute(
                sa.text("SELECT chunk_id FROM chunks WHERE doc_id = ANY(:ids) ORDER BY doc_id, seq"), {"ids": doc_ids}
            ).scalars()
        )
        closed = conn.execute(
            sa.text(
                "SELECT DISTINCT ON (chunk_id) chunk_id, supersede_reason, text_sha FROM chunks_history "
                "WHERE doc_id = ANY(:ids) ORDER BY chunk_id, superseded_at DESC"
            ),
            {"ids": doc_ids},
        ).all()
        lineage = _successors(conn, doc_ids)
        current_sha = dict(
            conn.execute(
                sa.text("SELECT text_sha, min(chunk_id) FROM chunks WHERE doc_id = ANY(:ids) GROUP BY 1"),
                {"ids": sorted(lineage)},
            ).all()
        )
        current_ids = set(current)
        closed = [r for r in closed if r.chunk_id not in current_ids]
        revised = [r for r in closed if r.supersede_reason in ("source_changed", "extractor_changed")]
        out["chunks"] = {
            "current": current,
            "closed": {r.chunk_id: r.supersede_reason for r in closed},
            "text_changed": sorted(r.chunk_id for r in revised if r.text_sha not in current_sha),
            "same_text_now": {r.chunk_id: current_sha[r.text_sha] for r in revised if r.text_sha in current_sha},
        }
        for table in DOCUMENT_TABLES:
            if _exists(conn, table):
                n_cur, n_closed = conn.execute(
                    sa.text(
                        f"SELECT count(*) FILTER (WHERE valid_to IS NULL), count(*) FILTER (WHERE valid_to IS NOT NULL) "
                        f"FROM {table} WHERE doc_id = ANY(:ids)"
                    ),
                    {"ids": doc_ids},
                ).one()
                out["derived"][table] = {"current": int(n_cur), "closed": int(n_closed)}
        for table, keys in EVIDENCE_TABLES.items():
            if table not in T.VERSIONED_TABLES or not _exists(conn, table):
                continue
            cond = " OR ".join(f"evidence @> CAST(:e{i} AS jsonb)" for i in range(len(doc_ids)))
            params = {f"e{i}": f'[{{"doc_id": "{d}"}}]' for i, d in enumerate(doc_ids)}
            rows = conn.execute(
                sa.text(f"SELECT id, valid_to IS NULL AS cur, {', '.join(keys)} FROM {table} WHERE {cond} ORDER BY id"),
                params,
            ).all()
            out["derived"][table] = {
                "current": [{"id": r.id, **{k: getattr(r, k) for k in keys}} for r in rows if r.cur],
                "closed": sum(1 for r in rows if not r.cur),
            }
        out["answers"] = _answers(conn, doc_ids, set(out["chunks"]["text_changed"]))
    from radar_pipeline.claims.links import claims_citing  # claims import history; keep the edge one-way

    out["claims"] = claims_citing(engine, doc_ids)
    out["summary"] = {
        "chunks_current": len(out["chunks"]["current"]),
        "chunks_closed": len(out["chunks"]["closed"]),
        "chunks_text_changed": len(out["chunks"]["text_changed"]),
        "cells_current": sum(len(v["current"]) for k, v in out["derived"].items() if k in EVIDENCE_TABLES),
        "answers": len(out["answers"]),
        "answers_with_stale_citations": sum(1 for a in out["answers"] if a["citas_no_vigentes"]),
        "answers_citing_changed_text": sum(
            1 for a in out["answers"] if any(s["texto_cambiado"] for s in a["citas_no_vigentes"].values())
        ),
    }
    return out


def replay(engine: sa.Engine, run_id: str, corpus) -> dict[str, Any]:
    """Re-run a past answer's recorded searches against ``corpus`` (today's ``RetrievalService``).

    Returns ``run_id``, ``pregunta``, ``index_version_then``/``index_version_now`` (and
    ``same_index``), ``searches`` (each query with its results then and now) and ``passages``: per
    passage the answer cited (every passage read when it cited none), ``chunk_id``, ``estado``
    (``gone`` | ``changed`` | ``same``), ``why``, ``chunk_id_now`` (its replacement when closed),
    ``rank_then`` and ``rank_now`` (best rank over the recorded searches, of the passage then and of
    ``chunk_id_now`` now; None when absent) and ``still_first`` (ranked first then and now). Raises ``LookupError`` for an unknown run and
    ``ValueError`` for a run stored without provenance (before traces recorded it).
    """
    ensure_agent_schema(engine)
    with engine.connect() as conn:
        run = conn.execute(
            sa.text(
                "SELECT run_id, pregunta, provenance, response->'citas' AS citas FROM agent_runs WHERE run_id = :r"
            ),
            {"r": run_id.strip()},
        ).first()
        if run is None:
            raise LookupError(f"no hay traza para la ejecución {run_id[:64]}")
        prov = run.provenance
        if not prov:
            raise ValueError(f"la ejecución {run_id[:64]} se guardó sin procedencia (anterior a su registro)")
        passages = prov.get("passages") or []
        targets = [p for p in passages if p.get("cited")] or passages
        states = _passage_states(conn, [p["chunk_id"] for p in targets])
    searcher = getattr(corpus, "searcher", None)
    now_version = searcher.provenance().get("index_version") if hasattr(searcher, "provenance") else None
    searches = []
    rank_then: dict[str, int] = {}
    rank_now: dict[str, int] = {}
    for s in prov.get("searches") or []:
        if s.get("tool") != "search_evidence" or not s.get("query"):
            continue
        # under the run's own query-time re-ranker encoding limit when it had one (a run budget)
        limit = s.get("rerank_encode_limit")
        budget = EncodeBudget(int(limit)) if limit is not None else None
        hits = corpus.search_passages(s["query"], int(s.get("k") or 8), s.get("doc_ids") or None, budget=budget)
        now = [h["chunk_id"] for h in hits]
        searches.append({"query": s["query"], "then": s.get("results") or [], "now": now})
        for i, c in enumerate(s.get("results") or [], 1):
            rank_then[c] = min(rank_then.get(c, i), i)
        for i, c in enumerate(now, 1):
            rank_now[c] = min(rank_now.get(c, i), i)
    report = []
    for p in targets:
        cid = p["chunk_id"]
        st = states.get(cid, {"estado": "desconocido"})
        now_id, why = cid, None
        if st["estado"] == "vigente":
            rec = corpus.chunk(cid)
            if rec is None:
                estado, why = "gone", "not in today's index (rebuild it)"
            elif text_sha(rec["text"]) != p.get("sha256"):
                estado, why = "changed", "the text under this id differs from the one the answer read"
            else:
                estado = "same"
        else:
            old = resolve_chunk(engine, cid) if st["estado"] != "desconocido" else None
            repl = old.get("replaced_by") if old else None
            if repl is None:
                estado, why = "gone", st.get("reason") or "unknown passage"
            else:
                rec = corpus.chunk(repl)
                now_sha = text_sha(rec["text"]) if rec is not None else None
                now_id = repl
                if now_sha == p.get("sha256"):
                    estado, why = "same", f"{st['reason']}: same text, now {repl}"
                else:
                    estado, why = "changed", f"{st['reason']}: replaced by {repl} with another text"
        report.append(
            {
                "chunk_id": cid,
                "doc_id": p.get("doc_id"),
                "estado": estado,
                "why": why,
                "chunk_id_now": now_id,
                "superseded_by": st.get("superseded_by"),
                "rank_then": rank_then.get(cid),
                "rank_now": rank_now.get(now_id),
                "still_first": rank_then.get(cid) == 1 and rank_now.get(now_id) == 1,
            }
        )
    return {
        "run_id": run.run_id,
        "pregunta": run.pregunta,
        "index_version_then": prov.get("index_version"),
        "index_version_now": now_version,
        "same_index": prov.get("index_version") == now_version and now_version is not None,
        "searches": searches,
        "passages": report,
        "summary": {k: sum(1 for r in report if r["estado"] == k) for k in ("gone", "changed", "same")},
    }
