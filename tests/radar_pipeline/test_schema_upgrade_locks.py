"""Schema checks at a step's start take no table lock when there is nothing to upgrade (issue 24).

Every Dagster step ensures its tables (``db.ensure_schema``, ``precompute.tables.ensure_precompute_schema``).
``ALTER TABLE … ADD COLUMN IF NOT EXISTS`` takes an ACCESS EXCLUSIVE lock before it looks for the
column, so on a first build an automation run's schema check deadlocked with the range run writing
``chunks`` (DeadlockDetected, a failed run). Real PostgreSQL: another transaction holds the lock a
writer holds (ROW EXCLUSIVE on the tables), and the schema check must pass without waiting for it
(``lock_timeout``: waiting would fail at once); a missing column is still added."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from radar_pipeline import db


def _quick(pg_url: str) -> sa.Engine:
    """An engine whose statements give up at once when they would wait for a lock."""
    return sa.create_engine(pg_url, connect_args={"options": "-c lock_timeout=200"})


@pytest.mark.parametrize("tables", [("chunks",), ("documents", "chunks"), ("source_files", "documents", "chunks")])
def test_the_schema_check_passes_while_a_writer_holds_the_tables(engine, pg_url, tables):
    writer = engine.connect()
    tx = writer.begin()
    try:
        for t in tables:  # what an INSERT/UPDATE in progress holds
            writer.execute(sa.text(f"LOCK TABLE {t} IN ROW EXCLUSIVE MODE"))
        quick = _quick(pg_url)
        try:
            db.ensure_schema(quick)  # before: LockNotAvailable (the ALTER waited for the writer)
            with quick.connect() as conn:  # and the schema it checked is whole
                assert "collection" in {c["name"] for c in sa.inspect(conn).get_columns("chunks")}
        finally:
            quick.dispose()
    finally:
        tx.rollback()
        writer.close()


def test_the_precompute_schema_check_passes_while_a_writer_holds_its_tables(engine, pg_url):
    from radar_pipeline.precompute.tables import COLLECTION_TABLES, ensure_precompute_schema

    ensure_precompute_schema(engine)
    writer = engine.connect()
    tx = writer.begin()
    try:
        for t in COLLECTION_TABLES:
            writer.execute(sa.text(f"LOCK TABLE {t} IN ROW EXCLUSIVE MODE"))
        quick = _quick(pg_url)
        try:
            ensure_precompute_schema(quick)  # before: LockNotAvailable
            with quick.connect() as conn:
                for t in COLLECTION_TABLES:
                    assert "collection" in {c["name"] for c in sa.inspect(conn).get_columns(t)}
        finally:
            quick.dispose()
    finally:
        tx.rollback()
        writer.close()


def test_a_missing_column_is_still_added_and_backfilled(engine):
    with engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE chunks DROP COLUMN collection"))
    db.ensure_schema(engine)
    with engine.connect() as conn:
        cols = {c["name"] for c in sa.inspect(conn).get_columns("chunks")}
    assert "collection" in cols
