"""The index directory's writer lock: one writer at a time, and a writer killed outright (SIGKILL)
never leaves the next one waiting — the failure mode of the Dagster concurrency pool it replaced."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from filelock import Timeout

from radar_pipeline.stores.integrity import index_write_lock, write_lock_path

# A writer that stops on SIGTERM through its ``with`` block (a normal exit that releases the lock).
# It sets its SIGTERM handler itself: a child inherits an ignored SIGTERM from its parent across exec
# (see ``_signal_dispositions`` in tests/conftest.py), so the default disposition is not a given.
HOLDER = textwrap.dedent(
    """
    import signal, sys, time
    from radar_pipeline.stores.integrity import index_write_lock
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with index_write_lock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(600)
    """
)
# How long a stopped holder may take to exit. The wait returns as soon as it has exited (well under a
# second on a quiet machine); the bound only limits how long a broken run hangs, so it is set for a
# machine loaded by a parallel suite, not for a quiet one.
EXIT_S = 60


def _hold(index_dir):
    index_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(index_dir)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_waits_while_the_first_holds_the_lock(tmp_path):
    holder = _hold(tmp_path / "usem3")
    try:
        with pytest.raises(Timeout):
            with index_write_lock(tmp_path / "usem3", timeout_s=0.5):
                pass
    finally:
        holder.terminate()
        assert holder.wait(EXIT_S) == 0  # exited through the with block: the lock released normally
    with index_write_lock(tmp_path / "usem3", timeout_s=5) as d:  # released on a normal exit
        assert d == tmp_path / "usem3" and write_lock_path(d).exists()
    assert not list(d.iterdir())  # the lock lives beside the index, not in it


def test_a_writer_killed_outright_releases_the_lock(tmp_path):
    holder = _hold(tmp_path / "usem3")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(EXIT_S)
    t0 = time.monotonic()
    with index_write_lock(tmp_path / "usem3", timeout_s=5):
        pass
    assert time.monotonic() - t0 < 5  # the kernel released the killed process's lock
