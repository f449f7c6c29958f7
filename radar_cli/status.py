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


def fetch_search_stages(health_url: str, timeout: float = 1.0) -> dict[str, str] | None:
    """Each search stage's state from the API's ``/health``: ``live`` (``index.stages``: served now),
    ``built`` (``index.stages_on_disk``: on disk, loaded by the API at its next question) or
    ``missing``; for the pgvector backend every stage is ``live`` once PostgreSQL holds the vectors.
    ``None`` when the API does not answer."""
    try:
        with urllib.request.urlopen(health_url, timeout=timeout) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    index = body.get("index") or {}
    if index.get("backend") == "pgvector":
        return {s: "live" if index.get("present") else "missing" for s in SEARCH_STAGES}
    live, disk = index.get("stages") or {}, index.get("stages_on_disk") or {}
    return {s: "live" if live.get(s) else "built" if disk.get(s) else "missing" for s in SEARCH_STAGES}


@dataclass
class UpState:
    """Everything the screen shows; ``runs``: run id → (status, its follower); ``scopes``: run id →
    the partitions it covers (``"3"``, ``"0...f"``; ``""`` unpartitioned)."""

    urls: dict[str, str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    runs: dict[str, tuple[str, RunFollower]] = field(default_factory=dict)
    scopes: dict[str, str] = field(default_factory=dict)
    partitioned: set[str] = field(default_factory=set)  # steps of per-file (partitioned) assets
    search: dict[str, str] | None = None
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
        partitioned_steps: set[str] | None = None,
    ):
        self.instance = instance
        self.stage_steps = stage_steps
        self.since = since
        self.health_url = health_url
        self.daemon_log = daemon_log
        self._log_pos = 0
        self._warned_runs: set[str] = set()
        self._seen_msgs: dict[str, tuple[int, int]] = {}
        self.state = UpState(
            urls=dict(urls or {}), logs=dict(logs or {}), started=since, partitioned=set(partitioned_steps or ())
        )

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
            st.scopes[run.run_id] = run_scope(run.tags)
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


def run_scope(tags: dict[str, str]) -> str:
    """The partitions a run covers, from its Dagster tags: ``dagster/partition`` (one bucket) or
    ``<start>...<end>`` (``dagster/asset_partition_range_*``); ``""`` for an unpartitioned run."""
    if "dagster/partition" in tags:
        return tags["dagster/partition"]
    start, end = tags.get("dagster/asset_partition_range_start"), tags.get("dagster/asset_partition_range_end")
    return f"{start}...{end}" if start is not None else ""


@dataclass
class StageTotal(Stage):
    """One stage summed over the runs since ``up`` started (the corpus sensor starts one run per
    content bucket, so a stage runs in several): per partition scope the newest run counts (a re-run
    of a bucket replaces it, never adds to it); ``done``/``total`` and ``rows`` are sums over the
    scopes, ``rate`` the sum of the running runs' rates, ``eta`` what is left at that rate, ``runs``
    how many scopes."""

    runs: int = 0
    summed_rate: float | None = None

    @property
    def rate(self) -> float | None:
        return self.summed_rate

    @property
    def seconds(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return max(0.0, self.ended - self.started)


_PRECEDENCE = ("running", "failed", "queued", "done", "skipped")


def stage_rows(state: UpState) -> list[StageTotal]:
    """One row per stage, summed over every run followed (see ``StageTotal``), in start order."""
    newest: dict[tuple[str, str], Stage] = {}
    for run_id, (_status, follower) in state.runs.items():
        for stage in follower.report.stages.values():
            # an unpartitioned asset (an index) is whole in every run: only its newest run counts
            scope = state.scopes.get(run_id, run_id) if stage.key in state.partitioned else ""
            old = newest.get((stage.key, scope))
            if old is None or (stage.started or float("inf")) >= (old.started or float("inf")):
                newest[(stage.key, scope)] = stage
    parts: dict[str, list[Stage]] = {}
    for (key, _scope), stage in newest.items():
        parts.setdefault(key, []).append(stage)
    rows = []
    for key, stages in parts.items():
        status = next(p for p in _PRECEDENCE if any(s.status == p for s in stages))
        known = [s for s in stages if s.total is not None]
        rows_sum: dict[str, int] = {}
        for s in stages:
            for asset, n in s.rows.items():
                rows_sum[asset] = rows_sum.get(asset, 0) + n
        rates = [s.rate for s in stages if s.status == "running" and s.rate]
        starts = [s.started for s in stages if s.started is not None]
        ends = [s.ended for s in stages if s.ended is not None]
        rows.append(
            StageTotal(
                key,
                status=status,
                started=min(starts) if starts else None,
                ended=max(ends) if ends and status not in ("running", "queued") else None,
                done=sum(s.done or 0 for s in known) if known else None,
                total=sum(s.total for s in known) if known else None,
                unit=next((s.unit for s in known if s.unit), ""),
                rows=rows_sum,
                runs=len(stages),
                summed_rate=sum(rates) if rates else None,
            )
        )
    return sorted(rows, key=lambda s: (s.started is None, s.started or 0.0, s.key))


def _stage_line(s: Stage) -> str:
    if s.total is not None and s.status == "running":
        count = f"{s.done or 0:,}/{s.total:,} {s.unit}".strip()
    else:
        count = s.rows_text or (f"{s.done:,} {s.unit}".strip() if s.done is not None else "")
    rate = f"{s.rate:,.1f} {s.unit.split()[0] if s.unit else ''}/s".replace(" /s", "/s") if s.rate else ""
    left = f"~{_seconds(s.eta)} left" if s.eta is not None else ""
    took = _seconds(s.seconds) if s.status != "running" else ""
    mark = {"done": "✓", "failed": "✗", "running": "▶", "skipped": "-", "queued": "·"}[s.status]
    runs = f"{s.runs} runs" if getattr(s, "runs", 1) > 1 else ""
    return f"{mark} {s.key:<26} {s.status:<8} {count:>26} {rate:>14} {left or took:>16} {runs:>7}".rstrip()


def search_line(search: dict[str, str] | None) -> str:
    """``search: live: lexical · built (loaded at the next question): dense · not built yet: rerank``."""
    if search is None:
        return "search: API not answering yet"
    groups = (("live", "live"), ("built", "built (loaded at the next question)"), ("missing", "not built yet"))
    parts = [f"{label}: {', '.join(s for s in SEARCH_STAGES if search.get(s) == key)}" for key, label in groups]
    return "search: " + " · ".join(p for p, (key, _) in zip(parts, groups, strict=True) if key in search.values())


def build_stages(state: UpState) -> list:
    """The status screen's stages as ``radar_pipeline.build_status.BuildStage`` rows (what the API
    reads to say what is being built, issue 24 §4)."""
    from radar_pipeline.build_status import BuildStage

    return [
        BuildStage(
            key=s.key,
            status=s.status,
            done=s.done,
            total=s.total,
            unit=s.unit,
            rate=s.rate,
            eta_s=s.eta if s.status == "running" else None,
        )
        for s in stage_rows(state)
    ]


def publish_build(state: UpState, path: Path) -> None:
    """Write the build's stages to ``path`` (``build_status.write_build_status``); a failed write is
    a warning on the screen, never a stop of ``up``."""
    from radar_pipeline.build_status import write_build_status

    try:
        write_build_status(path, build_stages(state), started=state.started)
    except OSError as exc:
        msg = f"could not publish the build status to {path}: {exc}"
        if msg not in state.warnings:
            state.warnings.append(msg)


class BuildPublisher:
    """``up --verbose`` has no status screen: this thread follows the same runs (an ``UpWatcher``
    without /health or the daemon log) and publishes their stages every ``interval`` seconds, so the
    API can say what is being built in that mode too. ``stop()`` ends it and removes the file. A
    failing poll (storage briefly unreachable) is retried at the next interval."""

    def __init__(
        self, instance, stage_steps: set[str], path: Path, *, since: float, partitioned_steps=None, interval=2.0
    ):
        import threading

        self.path = path
        self.interval = interval
        self.watcher = UpWatcher(instance, stage_steps, since=since, partitioned_steps=partitioned_steps)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="radar-build-status", daemon=True)

    def start(self) -> BuildPublisher:
        self._thread.start()
        return self

    def publish_once(self) -> None:
        """One poll of the runs and one write of the file."""
        publish_build(self.watcher.poll(), self.path)

    def _loop(self) -> None:
        import logging

        while not self._stop.is_set():
            try:
                self.publish_once()
            except Exception:  # a status file must never stop `up`; retried next interval
                logging.getLogger("radar.up").debug("build status not published", exc_info=True)
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.path.unlink(missing_ok=True)


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
    lines.append(search_line(state.search))
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
            out.append(search_line(state.search))
        for w in state.warnings[self._warnings :]:
            out.append(f"! {w[:300]}")
        self._warnings = len(state.warnings)
        return out
