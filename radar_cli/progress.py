"""What ``radar materialize`` shows in a terminal: a progress bar per stage with counts and rates,
warnings as they happen, and a one-screen summary at the end — read from the run's Dagster event
log, the same records the Dagster UI shows in full.

A stage is one asset step of the run (``chunks``, ``embeddings``, ``documents_and_pages``...);
asset-check steps are counted in the summary, not drawn. Counts come from the stages' own log lines
(``"chunks: 200/306 documents chunked"`` → 200 of 306 documents) and from each materialization's
``dagster/row_count``. The reader polls the event log (PostgreSQL) so it follows any executor,
Celery workers included: their steps write to the same log.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field

from dagster import DagsterEventType
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

PROGRESS = re.compile(r"(\d[\d,]*)\s*/\s*(\d[\d,]*)\s+([A-Za-zÀ-ÿ_]+(?:\s[A-Za-z]+)?)?")
RUN_END = {
    DagsterEventType.RUN_SUCCESS: "success",
    DagsterEventType.RUN_FAILURE: "failure",
    DagsterEventType.RUN_CANCELED: "canceled",
}


@dataclass
class Stage:
    """One asset step of the run, as the event log tells it."""

    key: str
    status: str = "queued"  # queued | running | done | failed | skipped
    started: float | None = None
    ended: float | None = None
    done: int | None = None
    total: int | None = None
    unit: str = ""
    rows: dict[str, int] = field(default_factory=dict)  # dagster/row_count per asset it materialized
    first: tuple[float, int] | None = None  # (timestamp, done) of the first progress line
    last: tuple[float, int] | None = None
    error: str = ""

    @property
    def seconds(self) -> float | None:
        """Wall seconds from STEP_START to its end (or to the last event while running)."""
        if self.started is None:
            return None
        end = self.ended or (self.last[0] if self.last else None)
        return None if end is None else max(0.0, end - self.started)

    @property
    def rows_text(self) -> str:
        """``"2,604 rows"`` for one asset, ``"306 documents, 4,120 pages"`` for a multi-asset step."""
        if not self.rows:
            return ""
        if len(self.rows) == 1:
            return f"{next(iter(self.rows.values())):,} rows"
        if len(self.rows) > 2:  # e.g. dashboard_aggregates: six tables would not fit a line
            return f"{sum(self.rows.values()):,} rows in {len(self.rows)} tables"
        return ", ".join(f"{n:,} {asset}" for asset, n in self.rows.items())

    @property
    def rate(self) -> float | None:
        """Units per second between the first and the last progress line (``None`` if < 2 lines)."""
        if not self.first or not self.last or self.last[0] <= self.first[0]:
            return None
        return (self.last[1] - self.first[1]) / (self.last[0] - self.first[0])

    @property
    def eta(self) -> float | None:
        """Seconds left at the current ``rate`` (``(total - done) / rate``); ``None`` without a rate
        or a total, or once the stage ended."""
        rate = self.rate
        if self.status != "running" or not rate or rate <= 0 or self.total is None or self.done is None:
            return None
        return max(0.0, (self.total - self.done) / rate)


@dataclass
class RunReport:
    """Everything the reader gathered about one run."""

    run_id: str
    stages: dict[str, Stage] = field(default_factory=dict)
    checks_passed: list[str] = field(default_factory=list)
    checks_failed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    status: str | None = None  # success | failure | canceled, once the run ends
    started: float | None = None
    ended: float | None = None


class RunFollower:
    """Reads one run's event log incrementally (``DagsterInstance.get_records_for_run`` with a cursor)
    and keeps a ``RunReport``. ``stage_steps``: the step keys that are asset steps (drawn as stages);
    any other step is an asset-check step."""

    def __init__(self, instance, run_id: str, stage_steps: set[str]):
        self.instance = instance
        self.report = RunReport(run_id)
        self.stage_steps = stage_steps
        self._cursor: str | None = None

    def poll(self) -> list[Stage | str]:
        """Consume the new records; return what changed (stages, and warning texts)."""
        changed: list[Stage | str] = []
        while True:
            conn = self.instance.get_records_for_run(self.report.run_id, cursor=self._cursor, limit=1000)
            for record in conn.records:
                changed.extend(self._handle(record.event_log_entry))
            self._cursor = conn.cursor
            if not conn.has_more:
                return changed

    def _stage(self, step_key: str | None) -> Stage | None:
        if not step_key or step_key not in self.stage_steps:
            return None
        return self.report.stages.setdefault(step_key, Stage(step_key))

    def _handle(self, entry) -> list[Stage | str]:
        r = self.report
        stage = self._stage(entry.step_key)
        ev = entry.dagster_event
        if ev is None:  # a log line of a step (context.log)
            text = entry.user_message or ""
            out: list[Stage | str] = []
            if entry.level >= logging.WARNING:
                r.warnings.append(f"{entry.step_key or 'run'}: {text}")
                out.append(r.warnings[-1])
            m = PROGRESS.search(text)
            if stage and m:
                done, total = int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))
                stage.done, stage.total, stage.unit = done, total, (m.group(3) or "").strip()
                stage.first = stage.first or (entry.timestamp, done)
                stage.last = (entry.timestamp, done)
                out.append(stage)
            return out
        kind = ev.event_type
        if kind == DagsterEventType.RUN_START:
            r.started = entry.timestamp
        elif kind in RUN_END:
            r.status, r.ended = RUN_END[kind], entry.timestamp
        elif kind == DagsterEventType.STEP_FAILURE:
            err = ev.step_failure_data.error if ev.step_failure_data else None
            r.errors.append(f"{entry.step_key}: {err.message.strip() if err else ev.message}")
        if stage is None:
            if kind == DagsterEventType.ASSET_CHECK_EVALUATION:
                data = ev.event_specific_data
                name = f"{data.asset_key.to_user_string()}:{data.check_name}"
                (r.checks_passed if data.passed else r.checks_failed).append(name)
            return []
        if kind == DagsterEventType.STEP_START:
            stage.status, stage.started = "running", entry.timestamp
        elif kind == DagsterEventType.STEP_SUCCESS:
            stage.status, stage.ended = "done", entry.timestamp
            if stage.total is not None:
                stage.done = stage.total
        elif kind == DagsterEventType.STEP_FAILURE:
            stage.status, stage.ended, stage.error = "failed", entry.timestamp, r.errors[-1]
        elif kind == DagsterEventType.STEP_SKIPPED:
            stage.status = "skipped"
        elif kind == DagsterEventType.ASSET_MATERIALIZATION:
            rows = ev.event_specific_data.materialization.metadata.get("dagster/row_count")
            if rows is not None and isinstance(rows.value, int):
                asset = ev.event_specific_data.materialization.asset_key.to_user_string()
                stage.rows[asset] = rows.value
        else:
            return []
        return [stage]


def _count(n: int | None) -> str:
    return "" if n is None else f"{n:,}"


def _seconds(s: float | None) -> str:
    if s is None:
        return ""
    return f"{s:.1f} s" if s < 60 else f"{int(s // 60)} min {int(s % 60):02d} s"


class ProgressView:
    """Draws a ``RunFollower``'s report on a rich console: live bars on a terminal, one line per
    finished stage otherwise (CI logs), then the summary."""

    def __init__(self, console: Console):
        self.console = console
        self.live = console.is_terminal
        self.progress = Progress(
            SpinnerColumn(finished_text="[green]✓[/]"),
            TextColumn("{task.description:<28}"),
            BarColumn(bar_width=30),
            TextColumn("{task.fields[count]:>26}"),
            TextColumn("{task.fields[rate]:>14}"),
            TimeElapsedColumn(),
            console=console,
            disable=not self.live,
        )
        self._tasks: dict[str, TaskID] = {}
        self._printed: set[str] = set()

    def __enter__(self) -> ProgressView:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def update(self, changed: list[Stage | str]) -> None:
        """Draw what changed: a warning line, or a stage's bar (or its line when not a terminal)."""
        for item in changed:
            if isinstance(item, str):
                self.console.print(f"[yellow]warning[/] {item}", highlight=False, markup=True)
                continue
            self._draw(item)

    def _draw(self, s: Stage) -> None:
        count = f"{_count(s.done)}/{_count(s.total)} {s.unit}".strip() if s.total is not None else ""
        if s.status == "done" and s.rows:
            count = s.rows_text
        rate = f"{s.rate:,.1f} {s.unit.split()[0] if s.unit else ''}/s".replace(" /s", "/s") if s.rate else ""
        if self.live:
            if s.key not in self._tasks:
                self._tasks[s.key] = self.progress.add_task(s.key, total=None, count="", rate="")
            tid = self._tasks[s.key]
            style = {"failed": "[red]", "skipped": "[dim]"}.get(s.status, "")
            kwargs = {"description": f"{style}{s.key}", "count": count, "rate": rate}
            if s.total:
                kwargs.update(total=s.total, completed=s.done or 0)
            if s.status in ("done", "skipped", "failed"):
                total = s.total or 1
                kwargs.update(total=total, completed=total)
            self.progress.update(tid, **kwargs)
            if s.status in ("done", "skipped", "failed"):
                self.progress.stop_task(tid)
        elif s.status in ("done", "failed", "skipped") and s.key not in self._printed:
            self._printed.add(s.key)
            mark = {"done": "✓", "failed": "✗", "skipped": "-"}[s.status]
            self.console.print(f"{mark} {s.key:<28} {count:>26} {rate:>14} {_seconds(s.seconds):>12}", highlight=False)


def summary(report: RunReport, console: Console, log_path: str | None = None, limit: int = 6) -> None:
    """The one-screen summary: a table of stages (state, rows, time, rate), checks, warnings, errors,
    and where the detail is (the Dagster UI, the run's log file)."""
    table = Table(title=f"Run {report.run_id}", title_justify="left", show_edge=False, pad_edge=False)
    for col, justify in (("stage", "left"), ("state", "left"), ("rows", "right"), ("time", "right"), ("rate", "right")):
        table.add_column(col, justify=justify)
    state_style = {"done": "green", "failed": "red", "running": "yellow", "queued": "dim", "skipped": "dim"}
    for s in sorted(report.stages.values(), key=lambda s: (s.started is None, s.started or 0)):
        rate = f"{s.rate:,.1f} {s.unit.split()[0]}/s" if s.rate and s.unit else ""
        table.add_row(
            s.key,
            f"[{state_style[s.status]}]{s.status}[/]",
            s.rows_text or _count(s.done),
            _seconds(s.seconds),
            rate,
        )
    console.print(table)
    total = (report.ended - report.started) if report.started and report.ended else None
    n_ok, n_bad = len(report.checks_passed), len(report.checks_failed)
    console.print(f"checks: {n_ok} passed, {n_bad} failed" + (f" ({', '.join(report.checks_failed)})" if n_bad else ""))
    console.print(f"warnings: {len(report.warnings)}", highlight=False)
    for w in report.warnings[:limit]:
        console.print(f"  [yellow]·[/] {w[:200]}", highlight=False, soft_wrap=True)
    if len(report.warnings) > limit:
        console.print(f"  … and {len(report.warnings) - limit} more", highlight=False)
    for e in report.errors[:limit]:
        console.print(f"[red]error[/] {e[:400]}", highlight=False, soft_wrap=True)
    status = report.status or "unknown"
    color = {"success": "green", "failure": "red", "canceled": "yellow"}.get(status, "yellow")
    console.print(
        f"[{color}]{status}[/] in {_seconds(total) or '?'} · the detail of every step: Dagster UI (`radar ui`)",
        highlight=False,
        soft_wrap=True,
    )
    if log_path:
        console.print(f"log: {log_path}", highlight=False, soft_wrap=True, markup=False)


def follow(instance, run_id: str, stage_steps: set[str], is_running, console: Console, interval: float = 0.5):
    """Poll the run's event log and draw it until ``is_running()`` is false and the log is drained;
    return the ``RunReport``."""
    follower = RunFollower(instance, run_id, stage_steps)
    with ProgressView(console) as view:
        while True:
            alive = is_running()
            view.update(follower.poll())
            if not alive:
                break
            time.sleep(interval)
    return follower.report
