"""What ``radar up`` shows in a terminal: one screen, redrawn, of how far the build is and what is live.

* the Dagster runs started since ``up`` began (and any still queued or running): per stage its
  state, done/total, rate and time left — read from each run's event log with
  ``radar_cli.progress.RunFollower``, the reader behind ``radar materialize``'s bars;
* which search stages the API serves (``lexical`` / ``dense`` / ``rerank``: ``index.stages`` of its
  ``/health``);
* the URLs, the log files the daemon, the webserver and the API write to (``RADAR_HOME/logs/``),
  and warnings as they come (step warnings, failed steps, ERROR lines of the daemon's log).

On a terminal the screen is redrawn in place (``rich.live``); otherwise (CI, a pipe) ``changes()``
gives one line per change: a stage whose state or count moved, a search stage switched on, a warning.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from radar_cli.progress import RunFollower, Stage, _seconds

SEARCH_STAGES = ("lexical", "dense", "rerank")
ACTIVE = ("QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING")


def start_logged(cmd: list[str], log_path: Path, **popen) -> subprocess.Popen:
    """Start ``cmd`` with its stdout and stderr appended to ``log_path`` (folders created), not to
    this terminal; returns the process. ``popen``: more ``subprocess.Popen`` arguments (cwd, env)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **popen)


def fetch_search_stages(health_url: str, timeout: float = 1.0) -> dict[str, bool] | None:
    """``index.stages`` of the API's ``/health`` (stage → live), ``{}`` when the API answers without
    stages (pgvector backend: every stage is served from PostgreSQL), ``None`` when it does not answer."""
    try:
        with urllib.request.urlopen(health_url, timeout=timeout) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    index = body.get("index") or {}
    stages = index.get("stages")
    if stages is None:
        return {s: bool(index.get("present")) for s in SEARCH_STAGES} if index.get("backend") == "pgvector" else {}
    return {s: bool(stages.get(s)) for s in SEARCH_STAGES}


@dataclass
class UpState:
    """Everything the screen shows; ``runs``: run id → (status, its follower)."""

    urls: dict[str, str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    runs: dict[str, tuple[str, RunFollower]] = field(default_factory=dict)
    search: dict[str, bool] | None = None
    warnings: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)


class UpWatcher:
    """Follows the Dagster instance for ``up``: every run created since ``since`` (epoch seconds) or
    still active, each through its own ``RunFollower``; plus the API's search stages and the ERROR
    lines of ``daemon_log``. ``poll()`` refreshes ``state``."""

    def __init__(
        self,
        instance,
        stage_steps: set[str],
        *,
        since: float,
        health_url: str | None = None,
        daemon_log: Path | None = None,
        urls: dict[str, str] | None = None,
        logs: dict[str, str] | None = None,
    ):
        self.instance = instance
        self.stage_steps = stage_steps
        self.since = since
        self.health_url = health_url
        self.daemon_log = daemon_log
        self._log_pos = 0
        self._warned_runs: set[str] = set()
        self._seen_msgs: dict[str, tuple[int, int]] = {}
        self.state = UpState(urls=dict(urls or {}), logs=dict(logs or {}), started=since)

    def poll(self, max_runs: int = 30) -> UpState:
        """Read what changed: new runs and their events, run statuses, /health, the daemon log."""
        st = self.state
        for record in self.instance.get_run_records(limit=max_runs):
            run, status = record.dagster_run, record.dagster_run.status.value
            known = st.runs.get(run.run_id)
            if known is None and record.create_timestamp.timestamp() < self.since and status not in ACTIVE:
                continue
            follower = known[1] if known else RunFollower(self.instance, run.run_id, self.stage_steps)
            if known is None or known[0] in ACTIVE or status in ACTIVE:
                follower.poll()
            r = follower.report
            n_warn, n_err = self._seen_msgs.get(run.run_id, (0, 0))
            st.warnings += r.warnings[n_warn:]
            st.warnings += [f"error {e}" for e in r.errors[n_err:]]
            self._seen_msgs[run.run_id] = (len(r.warnings), len(r.errors))
            if status == "FAILURE" and run.run_id not in self._warned_runs:
                self._warned_runs.add(run.run_id)
                st.warnings.append(f"run {run.run_id[:8]} failed (Dagster UI: runs)")
            st.runs[run.run_id] = (status, follower)
        if self.health_url:
            st.search = fetch_search_stages(self.health_url)
        if self.daemon_log and self.daemon_log.exists():
            with self.daemon_log.open("r", encoding="utf-8", errors="replace") as f:
                f.seek(self._log_pos)
                for line in f:
                    if " - ERROR - " in line or " - CRITICAL - " in line:
                        st.warnings.append(f"daemon: {line.strip()[:200]}")
                self._log_pos = f.tell()
        return st


def stage_rows(state: UpState) -> list[Stage]:
    """One row per stage: the stage of the newest run that has it (a running one first)."""
    best: dict[str, tuple[tuple, Stage]] = {}
    for _status, follower in state.runs.values():
        for stage in follower.report.stages.values():
            rank = (stage.status == "running", stage.started or 0.0)
            if stage.key not in best or rank > best[stage.key][0]:
                best[stage.key] = (rank, stage)
    return [s for _, s in sorted(best.values(), key=lambda x: (x[1].started is None, x[1].started or 0.0))]


def _stage_line(s: Stage) -> str:
    if s.total is not None and s.status == "running":
        count = f"{s.done or 0:,}/{s.total:,} {s.unit}".strip()
    else:
        count = s.rows_text or (f"{s.done:,} {s.unit}".strip() if s.done is not None else "")
    rate = f"{s.rate:,.1f} {s.unit.split()[0] if s.unit else ''}/s".replace(" /s", "/s") if s.rate else ""
    left = f"~{_seconds(s.eta)} left" if s.eta is not None else ""
    took = _seconds(s.seconds) if s.status != "running" else ""
    mark = {"done": "✓", "failed": "✗", "running": "▶", "skipped": "-", "queued": "·"}[s.status]
    return f"{mark} {s.key:<26} {s.status:<8} {count:>26} {rate:>14} {left or took:>16}".rstrip()


def render_lines(state: UpState, now: float | None = None, warnings: int = 5) -> list[str]:
    """The screen as plain lines (the terminal draws them; the tests read them)."""
    now = time.time() if now is None else now
    counts: dict[str, int] = {}
    for status, _ in state.runs.values():
        counts[status] = counts.get(status, 0) + 1
    runs = ", ".join(f"{n} {k.lower()}" for k, n in sorted(counts.items())) or "none yet"
    lines = [f"Radar up for {_seconds(now - state.started)} · runs since start: {runs}"]
    for name, url in state.urls.items():
        lines.append(f"  {name:<10} {url}")
    lines.append("")
    rows = stage_rows(state)
    if rows:
        lines.append(f"  {'stage':<26} {'state':<8} {'done/total':>26} {'rate':>14} {'left / took':>16}")
        lines += [_stage_line(s) for s in rows]
    else:
        lines.append("  no run yet: the corpus sensor starts one within seconds when something is not built")
    lines.append("")
    if state.search is None:
        lines.append("search: API not answering yet")
    elif not state.search:
        lines.append("search: API up, no index yet")
    else:
        live = [s for s in SEARCH_STAGES if state.search.get(s)]
        off = [s for s in SEARCH_STAGES if not state.search.get(s)]
        lines.append(
            "search: "
            + (" + ".join(live) + " live" if live else "nothing live")
            + (f" (not yet: {', '.join(off)})" if off else "")
        )
    if state.warnings:
        lines.append(f"warnings: {len(state.warnings)} (last {min(warnings, len(state.warnings))})")
        lines += [f"  ! {w[:160]}" for w in state.warnings[-warnings:]]
    for name, path in state.logs.items():
        lines.append(f"log {name}: {path}")
    return lines


class ChangePrinter:
    """For a non-terminal: one line per change of a stage's state or count, of the search stages,
    and per new warning (never the whole screen again)."""

    def __init__(self):
        self._seen: dict[str, tuple] = {}
        self._warnings = 0

    def changes(self, state: UpState) -> list[str]:
        out = []
        for s in stage_rows(state):
            sig = (s.status, s.done, s.total)
            if self._seen.get(s.key) != sig:
                self._seen[s.key] = sig
                out.append(_stage_line(s))
        search = tuple(sorted((state.search or {}).items())) if state.search is not None else None
        if self._seen.get("\0search") != (search,):
            self._seen["\0search"] = (search,)
            out.append(next(ln for ln in render_lines(state) if ln.startswith("search:")))
        for w in state.warnings[self._warnings :]:
            out.append(f"! {w[:300]}")
        self._warnings = len(state.warnings)
        return out
