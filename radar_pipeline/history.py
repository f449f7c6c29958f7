"""The knowledge base's history: closing rows instead of deleting them, retraction, superseded lookups.

Layout (system-versioned temporal tables, as in SQL:2011 / SQL Server / MariaDB): ``documents``,
``pages`` and ``chunks`` hold exactly the current rows — search, precomputes and the dashboard read
them with no predicate, so there is one definition of "current" and nothing to forget. A row that
stops being current is moved whole into ``<table>_history`` (``db.documents_history`` …) with
``superseded_at``, ``superseded_by`` and ``supersede_reason``:

* ``source_changed``: the file's bytes changed, so its content (and content-derived ``doc_id``) is
  new; ``superseded_by`` = the new ``doc_id`` at the same path.
* ``source_removed``: no path holds that content any more; ``superseded_by`` NULL.
* ``extractor_changed``: the same content re-extracted (new extractor) or re-chunked (new chunker);
  only rows whose text changed are closed; ``superseded_by`` = the same ``doc_id``.
* ``retracted``: a reviewer withdrew the document (``retract_document``); it is not re-extracted
  while the ``retractions`` row stands.

Ids: ``doc_id`` is the content hash (``corpus.doc_id_for``), so unchanged content keeps its ids.
``chunk_id`` is ``<doc_id>-<n>``; a re-chunk keeps the id of every passage whose text is unchanged
and gives a passage whose text changed under an id already used a fresh ``n`` past every ``n`` the
document ever used (``assign_chunk_ids``), so an id never names two texts and citations keep parsing.
Embeddings are cached by text hash and kept while any current or closed chunk has that text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db

__all__ = [
    "SUPERSEDE_REASONS",
    "close_documents",
    "close_pages",
    "close_document_row",
    "close_chunks",
    "assign_chunk_ids",
    "retract_document",
    "retracted_doc_ids",
    "list_retractions",
    "resolve_chunk",
    "history_counts",
    "superseded_window",
    "version_violations",
    "RetractionError",
]

SUPERSEDE_REASONS = db.SUPERSEDE_REASONS


class RetractionError(ValueError):
    """A retraction that cannot be done as asked (unknown document, already retracted, no reason)."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _cols(table: sa.Table) -> list[str]:
    return [c.name for c in table.columns]


def _move(
    conn: sa.Connection, table: sa.Table, where: str, params: dict, reason: str, by: str | None, now: dt.datetime
) -> int:
    """Copy ``table``'s rows matching ``where`` into its history table with the closing columns."""
    if reason not in SUPERSEDE_REASONS:
        raise ValueError(f"unknown supersede reason {reason!r}; one of {SUPERSEDE_REASONS}")
    cols = ", ".join(_cols(table))
    return conn.execute(
        sa.text(
            f"INSERT INTO {table.name}_history ({cols}, superseded_at, superseded_by, supersede_reason) "
            f"SELECT {cols}, :_now, :_by, :_reason FROM {table.name} WHERE {where}"
        ),
        {**params, "_now": now, "_by": by, "_reason": reason},
    ).rowcount


def close_document_row(
    conn: sa.Connection, doc_id: str, reason: str, superseded_by: str | None, now: dt.datetime | None = None
) -> int:
    """Copy the current ``documents`` row into ``documents_history`` (the caller then updates or
    deletes it). Returns rows copied (0 or 1)."""
    return _move(conn, db.documents, "doc_id = :d", {"d": doc_id}, reason, superseded_by, now or _now())


def close_pages(
    conn: sa.Connection, doc_id: str, reason: str, superseded_by: str | None, now: dt.datetime | None = None
) -> int:
    """Move a document's current ``pages`` into ``pages_history``. Returns pages closed."""
    n = _move(conn, db.pages, "doc_id = :d", {"d": doc_id}, reason, superseded_by, now or _now())
    conn.execute(sa.delete(db.pages).where(db.pages.c.doc_id == doc_id))
    return n


def close_chunks(
    conn: sa.Connection,
    chunk_ids: Sequence[str],
    reason: str,
    superseded_by: str | None,
    now: dt.datetime | None = None,
) -> int:
    """Move these current ``chunks`` into ``chunks_history``. Returns chunks closed."""
    if not chunk_ids:
        return 0
    ids = list(chunk_ids)
    n = _move(conn, db.chunks, "chunk_id = ANY(:ids)", {"ids": ids}, reason, superseded_by, now or _now())
    conn.execute(sa.delete(db.chunks).where(db.chunks.c.chunk_id.in_(ids)))
    return n


def close_documents(
    conn: sa.Connection, closes: Iterable[tuple[str, str, str | None]], now: dt.datetime | None = None
) -> dict[str, int]:
    """Close whole documents: ``closes`` is ``(doc_id, reason, superseded_by)`` per document; its
    chunks, pages and row move to history and leave the current tables. Returns counts."""
    now = now or _now()
    out = {"documents": 0, "pages": 0, "chunks": 0}
    for doc_id, reason, by in closes:
        out["chunks"] += _move(conn, db.chunks, "doc_id = :d", {"d": doc_id}, reason, by, now)
        out["pages"] += _move(conn, db.pages, "doc_id = :d", {"d": doc_id}, reason, by, now)
        out["documents"] += close_document_row(conn, doc_id, reason, by, now)
        conn.execute(sa.delete(db.documents).where(db.documents.c.doc_id == doc_id))  # cascades
    return out


def assign_chunk_ids(doc_id: str, new: Sequence[tuple[int, str]], used: dict[str, set[str]]) -> list[str]:
    """Final ``chunk_id`` for each new passage of ``doc_id``.

    ``new``: ``(seq, text_sha)`` per passage in order (natural id ``<doc_id>-<seq>``); ``used``: every
    id the document has had (current or closed) → the text hashes it named. A passage keeps its
    natural id when that id is unused or named the same text; else it takes back an id that named
    its text before, else a fresh ``<doc_id>-<n>`` with ``n`` past every number used so far. Ids are
    unique within the result.
    """
    seqs = [int(i.rsplit("-", 1)[1]) for i in used if i.rsplit("-", 1)[-1].isdigit()]
    next_free = max([*seqs, *(s for s, _ in new), -1]) + 1
    by_sha: dict[str, list[str]] = {}
    for cid, shas in sorted(used.items()):
        for sha in shas:
            by_sha.setdefault(sha, []).append(cid)
    out: list[str] = []
    taken: set[str] = set()
    for seq, sha in new:
        natural = f"{doc_id}-{seq}"
        names = used.get(natural)
        if (names is None or sha in names) and natural not in taken:
            cid = natural
        else:
            cid = next((c for c in by_sha.get(sha, []) if c not in taken), None)
            if cid is None:
                cid = f"{doc_id}-{next_free}"
                next_free += 1
        taken.add(cid)
        out.append(cid)
    return out


# --------------------------------------------------------------------------- retraction
def retracted_doc_ids(bind: sa.Engine | sa.Connection) -> set[str]:
    """Every ``doc_id`` a reviewer has retracted (the ``retractions`` table)."""
    q = sa.select(db.retractions.c.doc_id)
    if isinstance(bind, sa.Engine):
        with bind.connect() as conn:
            return set(conn.execute(q).scalars())
    return set(bind.execute(q).scalars())


def list_retractions(engine: sa.Engine) -> list[dict[str, Any]]:
    """Retractions, newest first: ``doc_id``, ``reason``, ``retracted_by``, ``retracted_at``, ``primary_path``."""
    with engine.connect() as conn:
        return [
            dict(r._mapping)
            for r in conn.execute(sa.select(db.retractions).order_by(db.retractions.c.retracted_at.desc()))
        ]


def retract_document(engine: sa.Engine, doc_id: str, reason: str, retracted_by: str) -> dict[str, Any]:
    """Withdraw ``doc_id``: close its chunks, pages and row with reason ``retracted`` and record
    who, when and why in ``retractions`` (one transaction). Derived rows (mentions, aggregates,
    presence, alerts) follow on their next materialization, which reads only current rows
    (``precompute.pipeline.rematerialize_after_retraction`` runs them now).

    Returns ``doc_id``, ``primary_path``, ``retracted_by``, ``retracted_at`` and the counts closed. Raises
    ``RetractionError`` (Spanish message) when the reason is empty, the document was already
    retracted or is not a current document.
    """
    reason = (reason or "").strip()
    if not reason:
        raise RetractionError("la retractación necesita un motivo")
    doc_id = doc_id.strip().lower()
    now = _now()
    with engine.begin() as conn:
        if conn.execute(sa.select(db.retractions.c.doc_id).where(db.retractions.c.doc_id == doc_id)).first():
            raise RetractionError(f"el documento {doc_id} ya fue retractado")
        path = conn.execute(
            sa.select(db.documents.c.primary_path).where(db.documents.c.doc_id == doc_id).with_for_update()
        ).scalar()
        if path is None:
            raise RetractionError(f"no hay un documento vigente {doc_id}")
        counts = close_documents(conn, [(doc_id, "retracted", None)], now)
        conn.execute(
            db.retractions.insert().values(
                doc_id=doc_id, reason=reason[:2000], retracted_by=retracted_by, retracted_at=now, primary_path=path
            )
        )
    return {
        "doc_id": doc_id,
        "primary_path": path,
        "retracted_by": retracted_by,
        "retracted_at": now.isoformat(),
        **counts,
    }


# --------------------------------------------------------------------------- lookups
_PASSAGE_COLS = ("chunk_id", "doc_id", "seq", "text", "text_sha", "page_start", "page_end", "language", "phenomenon")


def resolve_chunk(engine: sa.Engine, chunk_id: str) -> dict[str, Any] | None:
    """A passage by id, current or closed; None when the id never existed.

    Returns the passage columns plus ``title``, ``source_path``, ``collection``, ``estado``
    (``vigente`` | ``reemplazado`` | ``retractado``) and, when closed: ``superseded_at`` (ISO),
    ``supersede_reason``, ``superseded_by`` (doc_id) and ``replaced_by`` — the current passage of
    the replacing document with the same text, else at the same position, else None.
    """
    cid = chunk_id.strip().lower()
    cols = ", ".join(f"c.{c}" for c in _PASSAGE_COLS)
    with engine.connect() as conn:
        cur = conn.execute(
            sa.text(
                f"SELECT {cols}, c.collection, d.title, d.primary_path AS source_path FROM chunks c "
                "JOIN documents d USING (doc_id) WHERE c.chunk_id = :c"
            ),
            {"c": cid},
        ).first()
        if cur is not None:
            return {**cur._asdict(), "estado": "vigente"}
        old = conn.execute(
            sa.text(
                f"SELECT {cols}, c.collection, c.superseded_at, c.superseded_by, c.supersede_reason, "
                "coalesce(d.title, dh.title) AS title, coalesce(d.primary_path, dh.primary_path) AS source_path "
                "FROM chunks_history c LEFT JOIN documents d ON d.doc_id = c.doc_id "
                "LEFT JOIN LATERAL (SELECT title, primary_path FROM documents_history h WHERE h.doc_id = c.doc_id "
                "ORDER BY h.superseded_at DESC LIMIT 1) dh ON true "
                "WHERE c.chunk_id = :c ORDER BY c.superseded_at DESC LIMIT 1"
            ),
            {"c": cid},
        ).first()
        if old is None:
            return None
        rec = old._asdict()
        replaced = None
        if rec["superseded_by"]:
            replaced = conn.execute(
                sa.text(
                    "SELECT chunk_id FROM chunks WHERE doc_id = :d ORDER BY (text_sha = :s) DESC, abs(seq - :q) LIMIT 1"
                ),
                {"d": rec["superseded_by"], "s": rec["text_sha"], "q": rec["seq"]},
            ).scalar()
    rec["superseded_at"] = rec["superseded_at"].isoformat()
    rec["replaced_by"] = replaced
    rec["estado"] = "retractado" if rec["supersede_reason"] == "retracted" else "reemplazado"
    return rec


def history_counts(engine: sa.Engine) -> dict[str, Any]:
    """Closed rows per table and reason, and current rows: for asset metadata and ``radar doctor``."""
    out: dict[str, Any] = {}
    with engine.connect() as conn:
        for t in (db.documents, db.pages, db.chunks):
            out[f"{t.name}_current"] = int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar())
            out[f"{t.name}_closed"] = dict(
                conn.execute(
                    sa.text(f"SELECT supersede_reason, count(*) FROM {t.name}_history GROUP BY 1 ORDER BY 1")
                ).all()
            )
        out["retractions"] = int(conn.execute(sa.select(sa.func.count()).select_from(db.retractions)).scalar())
    return out


def superseded_window(engine: sa.Engine, chunk_id: str, size: int = 80) -> dict[str, Any] | None:
    """The evidence window of a closed passage: ``size`` passages of its document as it was when
    the passage was closed (the rows closed with it, plus, after a re-chunk, the document's
    current passages that did not change), centred on it. Same shape as
    ``RetrievalService.window`` (passages without ``politica``), plus the closing fields of
    ``resolve_chunk``. None when ``chunk_id`` is current or unknown."""
    target = resolve_chunk(engine, chunk_id)
    if target is None or target["estado"] == "vigente":
        return None
    cols = ", ".join(_PASSAGE_COLS)
    with engine.connect() as conn:
        rows = [
            dict(r._mapping)
            for r in conn.execute(
                sa.text(
                    f"SELECT DISTINCT ON (seq) {cols} FROM ("
                    f"SELECT {cols}, 0 AS pri FROM chunks_history WHERE doc_id = :d AND superseded_at = :t "
                    f"UNION ALL SELECT {cols}, 1 AS pri FROM chunks WHERE doc_id = :d AND :rechunk) s "
                    "ORDER BY seq, pri"
                ),
                {
                    "d": target["doc_id"],
                    "t": dt.datetime.fromisoformat(target["superseded_at"]),
                    "rechunk": target["supersede_reason"] == "extractor_changed",
                },
            )
        ]
    pos = next((i for i, r in enumerate(rows) if r["chunk_id"] == target["chunk_id"]), 0)
    start = max(0, min(pos - size // 2, len(rows) - size))
    sel = rows[start : start + size]
    passages = [
        {
            "chunk_id": r["chunk_id"],
            "doc_id": r["doc_id"],
            "title": target["title"],
            "source_path": target["source_path"],
            "page": r["page_start"],
            "page_end": r["page_end"],
            "phenomenon": r["phenomenon"],
            "language": r["language"],
            "text": r["text"],
            "position": start + i,
            "is_target": r["chunk_id"] == target["chunk_id"],
        }
        for i, r in enumerate(sel)
    ]
    return {
        "doc_id": target["doc_id"],
        "title": target["title"],
        "source_path": target["source_path"],
        "chunk_id": target["chunk_id"],
        "position": pos,
        "n_passages": len(rows),
        "first_position": start,
        "passages": passages,
        "collection": target["collection"],
        **{k: target[k] for k in ("estado", "superseded_at", "supersede_reason", "superseded_by", "replaced_by")},
    }


def version_violations(engine: sa.Engine) -> dict[str, list[str]]:
    """Breaches of "one current version per thing" (empty lists = none), for the asset checks:

    * ``documents_same_path``: two current documents for one primary path (an old version left
      current next to its successor);
    * ``documents_retracted_current``: a retracted document still current;
    * ``chunks_same_position``: two current passages at the same (doc_id, seq) (a changed passage
      not closed when its successor came in).
    Each list holds at most 20 examples."""
    with engine.connect() as conn:
        same_path = conn.execute(
            sa.text(
                "SELECT primary_path || ': ' || string_agg(doc_id, ', ') FROM documents "
                "GROUP BY primary_path HAVING count(*) > 1 ORDER BY 1 LIMIT 20"
            )
        ).scalars()
        same_path = list(same_path)
        retracted = list(
            conn.execute(
                sa.text("SELECT d.doc_id FROM documents d JOIN retractions r USING (doc_id) ORDER BY 1 LIMIT 20")
            ).scalars()
        )
        same_pos = list(
            conn.execute(
                sa.text(
                    "SELECT doc_id || '#' || seq || ': ' || string_agg(chunk_id, ', ') FROM chunks "
                    "GROUP BY doc_id, seq HAVING count(*) > 1 ORDER BY 1 LIMIT 20"
                )
            ).scalars()
        )
    return {
        "documents_same_path": same_path,
        "documents_retracted_current": retracted,
        "chunks_same_position": same_pos,
    }
