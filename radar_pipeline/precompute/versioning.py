"""Supersede, never overwrite: history-keeping writes for every precompute table.

A row's identity is the SHA-1 of its content (``row_hash``). Writing a new materialization:

1. rows currently valid whose hash is not produced any more get ``valid_to = now`` (superseded —
   a changed dictionary entry, a corrected source, a new rule);
2. produced rows whose hash is already current are left untouched (``unchanged``);
3. the rest are inserted with ``valid_from = now``, the ``run_id`` of this materialization and
   the ``producer`` string (asset, code version, input versions).

So ``SELECT ... WHERE valid_to IS NULL`` is always the current state, a point-in-time query is
``valid_from <= t AND (valid_to IS NULL OR valid_to > t)``, and every row says which run and
which asset version produced it (``precompute_runs`` holds the inputs of each run). Bulk inserts
use PostgreSQL ``COPY`` (≈10⁵ rows/s), so a 10⁶-row mention table rewrites in seconds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import uuid
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from radar_pipeline.precompute import tables as T

__all__ = [
    "row_hash",
    "precompute_version",
    "start_run",
    "finish_run",
    "write_versioned",
    "current_rows",
    "run_versions",
]


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def row_hash(row: Mapping[str, Any], columns: Iterable[str]) -> str:
    """SHA-1 hex of the row's values in ``columns`` (JSON, sorted keys): equal content ⇔ equal hash."""
    payload = json.dumps([row.get(c) for c in columns], sort_keys=True, ensure_ascii=False, default=_json_default)
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def precompute_version(asset: str, code_version: str, inputs: Mapping[str, Any]) -> str:
    """A precompute run's version: the first 16 hex digits of the SHA-256 of (asset, code version,
    inputs) as JSON with sorted keys. The inputs hold the corpus fingerprint and the dictionary /
    gazetteer versions, so the same code on the same knowledge base gives the same version."""
    payload = json.dumps([asset, code_version, dict(inputs)], sort_keys=True, default=_json_default)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def start_run(engine: sa.Engine, asset: str, code_version: str, inputs: Mapping[str, Any]) -> str:
    """Register a materialization in ``precompute_runs`` with its ``precompute_version``; returns its ``run_id``."""
    run_id = f"{asset}-{_now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
    with engine.begin() as conn:
        conn.execute(
            T.precompute_runs.insert().values(
                run_id=run_id,
                asset=asset,
                code_version=code_version,
                precompute_version=precompute_version(asset, code_version, inputs),
                inputs=json.loads(json.dumps(dict(inputs), default=_json_default)),
                started_at=_now(),
            )
        )
    return run_id


def finish_run(engine: sa.Engine, run_id: str, stats: Mapping[str, int]) -> None:
    """Record the counts of a finished run (``rows_current/inserted/superseded/unchanged``)."""
    with engine.begin() as conn:
        conn.execute(
            T.precompute_runs.update()
            .where(T.precompute_runs.c.run_id == run_id)
            .values(
                finished_at=_now(),
                **{
                    k: int(stats[k])
                    for k in ("rows_current", "rows_inserted", "rows_superseded", "rows_unchanged")
                    if k in stats
                },
            )
        )


def _copy_value(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (dict, list, tuple)):
        value = json.dumps(value, ensure_ascii=False, default=_json_default)
    elif isinstance(value, (dt.date, dt.datetime)):
        value = value.isoformat()
    else:
        value = str(value)
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r").replace("\x00", "")
    )


def _copy_rows(conn: sa.Connection, table: str, columns: list[str], rows: Iterable[list[Any]]) -> int:
    buf = io.StringIO()
    n = 0
    for values in rows:
        buf.write("\t".join(_copy_value(v) for v in values))
        buf.write("\n")
        n += 1
    if not n:
        return 0
    buf.seek(0)
    cursor = conn.connection.driver_connection.cursor()
    try:
        cursor.copy_expert(f"COPY {table} ({', '.join(columns)}) FROM STDIN WITH (FORMAT text)", buf)
    finally:
        cursor.close()
    return n


def write_versioned(
    engine: sa.Engine,
    table_name: str,
    rows: list[dict[str, Any]],
    *,
    run_id: str,
    producer: str,
    now: dt.datetime | None = None,
    version: str | None = None,
    keep_doc_ids: Collection[str] | None = None,
) -> dict[str, int]:
    """Make ``rows`` the current content of ``table_name``, keeping history.

    Inserted rows record ``version`` (the run's ``precompute_version``) in ``precompute_version``.

    ``rows`` are dicts with the table's content columns (``tables.content_columns``); missing keys
    are NULL, unknown keys raise ``KeyError``. ``keep_doc_ids`` (tables with a ``doc_id`` column):
    the current rows of these documents are left as they are and ``rows`` replace the rest of the
    table — an incremental write of the documents that changed, with the same result as a full write
    whose ``rows`` also hold the kept documents' current rows; a row of a kept document raises
    ``ValueError``. Returns ``rows_current`` (after the write), ``rows_inserted``,
    ``rows_superseded``, ``rows_unchanged`` (of ``rows``) and ``duplicates_dropped`` (rows of the
    input with identical content, kept once). One transaction: a failure leaves the table as it was.
    """
    table = T.VERSIONED_TABLES[table_name]
    cols = T.content_columns(table)
    known = set(cols)
    kept = set(keep_doc_ids) if keep_doc_ids is not None else None
    by_hash: dict[str, dict[str, Any]] = {}
    for row in rows:
        extra = set(row) - known
        if extra:
            raise KeyError(f"{table_name}: unknown columns {sorted(extra)}")
        if kept and row.get("doc_id") in kept:
            raise ValueError(f"{table_name}: a row of kept document {row.get('doc_id')}")
        by_hash.setdefault(row_hash(row, cols), row)
    now = now or _now()
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TEMP TABLE _produced (row_hash text PRIMARY KEY) ON COMMIT DROP"))
        _copy_rows(conn, "_produced", ["row_hash"], ([h] for h in by_hash))
        keep_clause = ""
        if kept is not None:
            conn.execute(sa.text("CREATE TEMP TABLE _kept (doc_id text PRIMARY KEY) ON COMMIT DROP"))
            _copy_rows(conn, "_kept", ["doc_id"], ([d] for d in sorted(kept)))
            keep_clause = "AND NOT EXISTS (SELECT 1 FROM _kept k WHERE k.doc_id = t.doc_id) "
        superseded = conn.execute(
            sa.text(
                f"UPDATE {table_name} t SET valid_to = :now WHERE t.valid_to IS NULL {keep_clause}"
                f"AND NOT EXISTS (SELECT 1 FROM _produced p WHERE p.row_hash = t.row_hash)"
            ),
            {"now": now},
        ).rowcount
        # the produced rows already current (the partial unique index on row_hash answers it)
        current = {
            r[0]
            for r in conn.execute(
                sa.text(
                    f"SELECT p.row_hash FROM _produced p JOIN {table_name} t "
                    f"ON t.row_hash = p.row_hash AND t.valid_to IS NULL"
                )
            )
        }
        todo = [h for h in by_hash if h not in current]
        inserted = _copy_rows(
            conn,
            table_name,
            ["row_hash", "valid_from", "run_id", "producer", "precompute_version", *cols],
            ([h, now, run_id, producer, version, *[by_hash[h].get(c) for c in cols]] for h in todo),
        )
        n_current = (
            len(by_hash)
            if kept is None
            else conn.execute(sa.text(f"SELECT count(*) FROM {table_name} WHERE valid_to IS NULL")).scalar()
        )
    return {
        "rows_current": int(n_current),
        "rows_inserted": inserted,
        "rows_superseded": int(superseded),
        "rows_unchanged": len(by_hash) - inserted,
        "duplicates_dropped": len(rows) - len(by_hash),
    }


def current_rows(
    engine: sa.Engine,
    table_name: str,
    columns: list[str] | None = None,
    where: str = "",
    params: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Current rows (``valid_to IS NULL``) of a precompute table as dicts (``columns`` default: content),
    in content order: sorted by ``columns`` in the order given (text by code point, ``COLLATE "C"``).

    The order is part of the answer: producers build lists (evidence, places, groups) from these rows
    in the order they come, and a row's hash covers those lists. Without ORDER BY the rows would come
    in storage order, which differs between two databases holding the same rows and changes within
    one (an UPDATE moves a row, autovacuum frees space later inserts fill, autoanalyze changes the
    plan): the same input would then give other lists, other hashes and new row versions on a re-run
    (``tests/radar_pipeline/precompute/test_storage_order.py``)."""
    table = T.VERSIONED_TABLES[table_name]
    cols = columns or T.content_columns(table)
    order = ", ".join(f'{c} COLLATE "C"' if isinstance(table.c[c].type, sa.String) else c for c in cols)
    sql = (
        f"SELECT {', '.join(cols)} FROM {table_name} WHERE valid_to IS NULL"
        + (f" AND ({where})" if where else "")
        + f" ORDER BY {order}"
    )
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(sql), dict(params or {}))]


def run_versions(engine: sa.Engine) -> dict[str, dict[str, Any]]:
    """The newest finished run per precompute asset: ``{asset: {"run_id", "precompute_version",
    "finished_at" (ISO)}}`` — what a reader of the current rows is reading (traces record it)."""
    sql = (
        "SELECT DISTINCT ON (asset) asset, run_id, precompute_version, finished_at FROM precompute_runs "
        "WHERE finished_at IS NOT NULL ORDER BY asset, finished_at DESC"
    )
    with engine.connect() as conn:
        return {
            r.asset: {
                "run_id": r.run_id,
                "precompute_version": r.precompute_version,
                "finished_at": r.finished_at.isoformat(),
            }
            for r in conn.execute(sa.text(sql))
        }
