"""The test process itself: what one test leaves in the process must not change how later tests run."""

from __future__ import annotations

import signal
import subprocess
import sys

import dagster as dg

from tests.conftest import restore_signal_dispositions

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def _childs_sigterm() -> str:
    """The SIGTERM disposition a plain Python child starts with (``SIG_DFL``, ``SIG_IGN``)."""
    code = "import signal; print(signal.Handlers(signal.getsignal(signal.SIGTERM)).name)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def _stops_on_sigterm() -> int | None:
    """Start a plain Python child, send it SIGTERM; its exit code (None: still running after 60 s,
    then killed). The wait returns as soon as the child exits; 60 s only bounds a broken run."""
    child = subprocess.Popen(SLEEPER)
    child.terminate()
    try:
        return child.wait(60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(60)
        return None


def test_a_child_started_after_an_in_process_dagster_run_stops_on_sigterm():
    """Started with SIGINT ignored (a background job of a non-interactive shell, ``make test &``),
    an in-process Dagster run leaves SIGTERM ignored too, and a child inherits that across exec; the
    suite's autouse fixture gives the start-up dispositions back after every test."""

    @dg.asset
    def one() -> int:
        return 1

    started_with = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as pytest started in the background gets it
    try:
        assert dg.materialize([one]).success
        # the premise: Dagster maps SIGTERM to SIGINT's disposition and leaves it so
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        assert _childs_sigterm() == "SIG_IGN"  # and a child inherits it across exec
    finally:
        signal.signal(signal.SIGINT, started_with)
    restore_signal_dispositions()
    assert _childs_sigterm() == "SIG_DFL"
    assert _stops_on_sigterm() == -signal.SIGTERM
