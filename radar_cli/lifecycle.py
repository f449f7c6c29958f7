"""Starting and stopping what ``radar up`` runs: each child in a session (process group) of its own,
and one orderly stop for Ctrl-C and SIGTERM.

Why groups: ``dagster dev`` starts the webserver, the daemon and a code server, the code server a
gRPC server, and that server one process per run (with its own children: forkserver, resource
tracker, encoder threads). Terminating only the child ``up`` started left those running (issue 24:
ten processes after Ctrl-C, two of which ignored SIGTERM). Every one of them inherits the group of
the child ``up`` started in its own session (Dagster starts its subprocesses without
``start_new_session`` on POSIX), so signalling the group reaches them, orphans included; a
terminal's Ctrl-C reaches only ``up``, which then stops them in order:

1. cancel the runs in progress through the Dagster instance (``run_coordinator.cancel_run`` →
   ``DefaultRunLauncher.terminate``: the run's code server interrupts its run worker, which records
   ``RUN_CANCELED``), while the code server that launched them is still up;
2. stop the children: SIGTERM to each leader (``dagster dev`` shuts its webserver, daemon and code
   servers down; uvicorn finishes its requests), then SIGTERM to the whole groups, then SIGKILL;
3. record as canceled the runs whose worker had to be killed (the instance would otherwise show
   them ``STARTED`` for ever);
4. stop the embedded PostgreSQL when this ``up`` started it (a server that was already running
   belongs to someone else and is left alone).

Queued runs stay queued: the next ``radar up`` launches them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

# the tag DefaultRunLauncher writes on every run it launched through a code server
# (dagster._core.storage.tags.GRPC_INFO_TAG); a `radar materialize` run (executed in its own
# process, not launched) has none and is never canceled by `up`.
GRPC_INFO_TAG = ".dagster/grpc_info"


def start_child(cmd: list[str], log_path: Path | None = None, **popen) -> subprocess.Popen:
    """Start ``cmd`` in a new session (its own process group, no controlling terminal) so that
    :func:`stop_children` reaches every process it starts; stdout and stderr appended to
    ``log_path`` (folders created) or, when ``None``, inherited. ``popen``: more
    ``subprocess.Popen`` arguments (cwd, env)."""
    if log_path is None:
        return subprocess.Popen(cmd, start_new_session=True, **popen)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, **popen
        )


def group_processes(pgids: set[int]) -> list[psutil.Process]:
    """The live processes whose process group is one of ``pgids`` (orphans re-parented to init
    included); zombies are left out (they hold no resources, their parent reaps them)."""
    found = []
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if os.getpgid(proc.pid) in pgids:
                found.append(proc)
        except (ProcessLookupError, psutil.Error):
            continue
    return found


def _signal_groups(pgids: set[int], sig: int) -> None:
    for pgid in pgids:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    _, alive = psutil.wait_procs(procs, timeout=max(timeout, 0))
    return alive


def stop_errors() -> tuple[type[BaseException], ...]:
    """What talking to the instance may raise while Radar stops (a code server already gone:
    ``DagsterUserCodeUnreachableError``; storage gone: SQLAlchemy's errors; sockets): the stop goes
    on without it. (Imported here: ``dagster`` costs seconds to import for every ``radar`` command.)"""
    import dagster as dg
    import sqlalchemy as sa

    return (dg.DagsterError, sa.exc.SQLAlchemyError, OSError)


def runs_launched_in_progress(instance) -> list:
    """The runs of ``instance`` a code server launched (tag ``.dagster/grpc_info``) that are
    starting, started or canceling: the runs a daemon or webserver of ``up`` is executing."""
    import dagster as dg

    statuses = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
    runs = instance.get_runs(filters=dg.RunsFilter(statuses=statuses))
    return [r for r in runs if GRPC_INFO_TAG in r.tags]


def cancel_runs(instance, timeout: float) -> tuple[list[str], list[str]]:
    """Ask Dagster to cancel every run :func:`runs_launched_in_progress` lists, then wait up to
    ``timeout`` s for them to finish. Returns ``(asked, unfinished)`` run ids."""
    asked = []
    for run in runs_launched_in_progress(instance):
        try:
            instance.run_coordinator.cancel_run(run.run_id)
        except stop_errors():  # an unreachable code server: the run worker is killed with its group
            pass
        asked.append(run.run_id)
    deadline = time.monotonic() + timeout
    unfinished = list(asked)
    while unfinished and time.monotonic() < deadline:
        time.sleep(0.5)
        unfinished = [rid for rid in unfinished if not _finished(instance, rid)]
    return asked, unfinished


def _finished(instance, run_id: str) -> bool:
    run = instance.get_run_by_id(run_id)
    return run is None or run.is_finished


@dataclass
class StopReport:
    """What a stop did: runs asked to cancel, runs recorded canceled after their worker was killed,
    processes that needed SIGKILL, processes still alive at the end (should be empty), and whether
    the embedded PostgreSQL was stopped."""

    canceled: list[str] = field(default_factory=list)
    marked_canceled: list[str] = field(default_factory=list)
    killed: int = 0
    left: list[int] = field(default_factory=list)
    postgres_stopped: bool = False


def stop_children(
    children: list[subprocess.Popen],
    instance=None,
    *,
    cancel_timeout: float = 30.0,
    grace: float = 20.0,
) -> StopReport:
    """Stop ``children`` (each started by :func:`start_child`) and every process of their groups.

    ``instance``: the Dagster instance whose launched runs are canceled first (``None``: no run is
    canceled, e.g. when its storage is gone). ``cancel_timeout``: seconds to wait for the runs to
    record their cancellation; ``grace``: seconds the leaders get after SIGTERM before their whole
    groups get SIGTERM, then 5 s more before SIGKILL. Bounded: at most ``cancel_timeout + grace + 10``
    seconds."""
    report = StopReport()
    unfinished: list[str] = []
    if instance is not None:
        try:
            report.canceled, unfinished = cancel_runs(instance, cancel_timeout)
        except stop_errors():  # storage unreachable: the processes are stopped all the same
            unfinished = []
    pgids = set()
    for proc in children:
        try:
            pgids.add(os.getpgid(proc.pid))
        except ProcessLookupError:
            pgids.add(proc.pid)  # the leader exited: its session id is its pid (start_new_session)
    for proc in children:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in children:
        try:
            proc.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            pass
    members = group_processes(pgids)
    if members:
        _signal_groups(pgids, signal.SIGTERM)
        members = _wait_gone(members, 5.0)
    if members:
        report.killed = len(members)
        _signal_groups(pgids, signal.SIGKILL)
        for proc in members:
            try:
                proc.kill()
            except psutil.Error:
                pass
        _wait_gone(members, 5.0)
    for proc in children:
        try:
            proc.wait(1)
        except subprocess.TimeoutExpired:
            pass
    report.left = [p.pid for p in group_processes(pgids)]
    if instance is not None:
        report.marked_canceled = _record_killed_runs(instance, unfinished)
    return report


def _record_killed_runs(instance, run_ids: list[str]) -> list[str]:
    """Record ``RUN_CANCELED`` for the runs whose worker was killed before it could."""
    marked = []
    for rid in run_ids:
        try:
            run = instance.get_run_by_id(rid)
            if run is not None and not run.is_finished:
                instance.report_run_canceled(run, message="radar up stopped: its run worker was stopped with it")
                marked.append(rid)
        except stop_errors():
            continue
    return marked


@contextmanager
def stop_on_signal() -> Iterator[None]:
    """While open, the first SIGINT (unless ignored on entry) or SIGTERM raises ``KeyboardInterrupt`` in the main thread (Ctrl-C
    and SIGTERM take the same orderly stop) and every later one is ignored; the previous handlers are
    restored after.

    Why only the first: a stop is often signalled twice within milliseconds. ``timeout make up``
    (or a supervisor that signals the process group) sends SIGTERM to the whole group, ``radar up``
    included, and GNU make forwards the SIGTERM it received to its recipe, ``radar up`` again. With a
    handler that raised on every signal, the second ``KeyboardInterrupt`` landed in the stop's own
    ``finally`` block before it had started, ``up`` exited 130 and left Dagster, its code servers,
    the run workers, the API and PostgreSQL running (issue 24 §5: 18 processes after ``timeout`` on
    ``make up``). A second Ctrl-C cannot cut the bounded stop short either (see ``stop_children``)."""
    fired = False

    def _first_stops(signum, frame):
        nonlocal fired
        if fired:
            return  # the stop is already under way
        fired = True
        raise KeyboardInterrupt

    # a SIGINT ignored on entry stays ignored (``radar up &`` from a script, ``nohup``: Ctrl-C in that
    # terminal is not meant for it); SIGTERM always stops
    saved = {
        s: signal.signal(
            s, signal.SIG_IGN if s == signal.SIGINT and signal.getsignal(s) == signal.SIG_IGN else _first_stops
        )
        for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """While open, SIGINT and SIGTERM are ignored: a second Ctrl-C does not cut the (bounded) stop
    short and leave a half-stopped Radar."""
    saved = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
