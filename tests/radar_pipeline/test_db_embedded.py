"""The embedded PostgreSQL of a Radar home: a home copied while its server runs gets its own server."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa

from radar_pipeline import db


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
