"""The embedded PostgreSQL of a Radar home: a home copied while its server runs gets its own server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from radar_pipeline import db

ROOT = Path(__file__).resolve().parents[2]


def test_copied_home_starts_its_own_server_not_the_originals(pg_url, tmp_path):
    """`cp -a` of a home whose embedded server is running copies its postmaster.pid (a live PID):
    the copy must not attach to the original's server, or its writes land in the original."""
    original = db.create_engine(pg_url)
    with original.connect() as conn:
        src = Path(conn.execute(sa.text("SHOW data_directory")).scalar())
    if not (src / "postmaster.pid").exists():
        pytest.skip("DATABASE_URL is not an embedded server of this machine: nothing to copy")
    copy = tmp_path / "pgdata"
    subprocess.run(["cp", "-a", str(src), str(copy)], check=True)  # as a user copies a running home
    assert (copy / "postmaster.pid").read_text().splitlines()[1].strip() == str(src)  # the original's lock
    engine = db.create_engine(db.start_embedded_server(copy))
    with engine.begin() as conn:
        assert conn.execute(sa.text("SHOW data_directory")).scalar() == str(copy.resolve())
        conn.execute(sa.text("CREATE TABLE only_in_the_copy (x int)"))
    with original.connect() as conn:  # the original never saw the copy's write
        assert conn.execute(sa.text("SELECT to_regclass('only_in_the_copy')")).scalar() is None
    engine.dispose()
    # the copy's own server now holds its lock file: it is kept (attach, not a second server)
    assert db.drop_foreign_pidfile(copy) is False and (copy / "postmaster.pid").exists()
    assert db.drop_foreign_pidfile(tmp_path / "absent") is False


STOP_THEN_START = """
import sys
from pathlib import Path
import sqlalchemy as sa
from radar_pipeline import db

pgdata = Path(sys.argv[1])
for attempt in range(2):  # start, stop, and again in the same process
    engine = db.create_engine(db.start_embedded_server(pgdata))
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT 1")).scalar() == 1, attempt
    engine.dispose()
    assert db.stop_embedded_server(pgdata) is True and db.embedded_server_pid(pgdata) is None
assert db.stop_embedded_server(pgdata) is False  # nothing left to stop
print("ok")
"""


def test_a_stopped_server_starts_again_in_the_same_process_and_exit_stops_nothing_twice(tmp_path):
    """``stop_embedded_server`` drops the process's handle: a later start in the same process gets a
    running server (not the stopped one's URL), and the process's exit does not stop it again."""
    run = subprocess.run(
        [sys.executable, "-c", STOP_THEN_START, str(tmp_path / "pgdata")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
    assert "Failed" not in run.stderr and "killing it" not in run.stderr, run.stderr[-3000:]
    assert db.embedded_server_pid(tmp_path / "pgdata") is None


def test_wait_until_ready_reads_the_servers_status(pg_url, tmp_path):
    """A server that outlives ``pg_ctl start``'s ten seconds on a loaded machine is waited for: a
    running server's data directory reads ready at once; a directory where none runs never does."""
    original = db.create_engine(pg_url)
    with original.connect() as conn:
        src = Path(conn.execute(sa.text("SHOW data_directory")).scalar())
    original.dispose()
    if not (src / "postmaster.pid").exists():
        pytest.skip("DATABASE_URL is not an embedded server of this machine")
    assert db.wait_until_ready(src, timeout_s=5)
    empty = tmp_path / "pgdata"
    empty.mkdir()
    assert not db.wait_until_ready(empty, timeout_s=0.5, poll_s=0.1)
