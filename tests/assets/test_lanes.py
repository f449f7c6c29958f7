"""No starvation (issue 24 §2): while a long run (the re-ranker vectors, ~2 h on 2 cores for the full
corpus) is in progress, the short user-visible work automation submits (claims, alias decisions,
the precomputes' evaluation) is dequeued at once, not queued behind it.

Real Dagster: the instance Radar runs (the project's dagster.yaml: its run queue, lanes and limits)
on a PostgreSQL database of its own, runs tagged exactly as the automation sensors tag them, and the
decision of the daemon's own run queue (``QueuedRunCoordinatorDaemon._get_runs_to_dequeue``: the
priority sort, ``max_concurrent_runs`` and ``tag_concurrency_limits`` the daemon applies each tick)."""

from __future__ import annotations

import uuid

import dagster as dg
import pytest
import sqlalchemy as sa
from dagster._core.events import DagsterEvent, DagsterEventType
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.storage.dagster_run import DagsterRun
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from assets.automation import (
    automation_sensor,
    background_automation_sensor,
    index_automation_sensor,
    long_automation_sensor,
)
from assets.definitions import defs
from radar_pipeline import db
from radar_pipeline.config import PROJECT_ROOT

# where the daemon's runs come from: the project's code location (workspace.yaml: assets.definitions)
ORIGIN = RemoteJobOrigin(
    repository_origin=RemoteRepositoryOrigin(
        code_location_origin=InProcessCodeLocationOrigin(LoadableTargetOrigin(module_name="assets.definitions")),
        repository_name="__repository__",
    ),
    job_name="__ASSET_JOB",
)
SENSORS = (index_automation_sensor, automation_sensor, background_automation_sensor, long_automation_sensor)


def _sensor_tags(asset: str) -> dict[str, str]:
    """The run tags of the one automation sensor that targets ``asset`` (what its runs carry)."""
    graph = defs.resolve_asset_graph()
    [tags] = [dict(s.run_tags) for s in SENSORS if dg.AssetKey(asset) in s.asset_selection.resolve(graph)]
    return tags


@pytest.fixture()
def instance(pg_url, monkeypatch):
    """Radar's Dagster instance (dagster.yaml at the project root) on a fresh database of its own, so
    no run of another test is in its queue."""
    name = f"lanes_{uuid.uuid4().hex[:10]}"
    admin = db.create_engine(pg_url).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.make_url(pg_url).set(database=name).render_as_string(hide_password=False)
    monkeypatch.setenv("RADAR_PG_URL", url)
    with dg.DagsterInstance.from_config(str(PROJECT_ROOT)) as inst:
        yield inst
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _add_run(instance, asset: str, status: dg.DagsterRunStatus) -> DagsterRun:
    tags = {**_sensor_tags(asset), "radar/asset": asset}
    run = DagsterRun(
        job_name="__ASSET_JOB", run_id=str(uuid.uuid4()), status=status, tags=tags, remote_job_origin=ORIGIN
    )
    return instance.add_run(run)


def _dequeued(instance) -> list[str]:
    """The assets of the queued runs the daemon's run queue would launch on its next tick."""
    daemon = QueuedRunCoordinatorDaemon(interval_seconds=2)
    runs = daemon._get_runs_to_dequeue(instance, instance.get_concurrency_config(), None)
    return [r.tags["radar/asset"] for r in runs]


def test_short_user_visible_work_is_not_queued_behind_a_long_run(instance):
    _add_run(instance, "rerank_vectors", dg.DagsterRunStatus.STARTED)  # hours of encoding, in progress
    for asset in ("claims", "alias_decisions", "precompute_evaluation"):
        _add_run(instance, asset, dg.DagsterRunStatus.QUEUED)
    _add_run(instance, "eval_xquad", dg.DagsterRunStatus.QUEUED)  # another long run: waits for the first
    first = _dequeued(instance)
    # one short run starts at once (its lane admits one at a time: they follow each other in minutes)
    assert len([a for a in first if a in ("claims", "alias_decisions", "precompute_evaluation")]) == 1
    assert "eval_xquad" not in first  # the long lane is held by the re-ranker vectors
    # the short runs follow one another (each in minutes) while the long run still holds its lane
    done = []
    for _ in range(3):
        [short] = _dequeued(instance)
        [run] = instance.get_runs(dg.RunsFilter(tags={"radar/asset": short}))
        _report(instance, run, DagsterEventType.RUN_START)
        assert _dequeued(instance) == []  # one background run at a time; eval_xquad behind the long one
        _report(instance, run, DagsterEventType.RUN_SUCCESS)
        done.append(short)
    assert sorted(done) == ["alias_decisions", "claims", "precompute_evaluation"]
    assert _dequeued(instance) == []  # eval_xquad: still behind the long run, which is still STARTED


def test_in_the_shared_background_lane_the_same_long_run_would_hold_back_the_claims(instance):
    """The fault of issue 24, by the same queue: a long run tagged as the background lane's (as the
    re-ranker vectors were) leaves the claims queued for as long as it runs."""
    run = DagsterRun(
        job_name="__ASSET_JOB",
        run_id=str(uuid.uuid4()),
        status=dg.DagsterRunStatus.STARTED,
        tags={**_sensor_tags("claims"), "radar/asset": "rerank_vectors"},
        remote_job_origin=ORIGIN,
    )
    instance.add_run(run)
    _add_run(instance, "claims", dg.DagsterRunStatus.QUEUED)
    assert _dequeued(instance) == []


def _report(instance, run: DagsterRun, event_type: DagsterEventType) -> None:
    """Record a run event as a run worker does (status STARTED, then SUCCESS)."""
    event = DagsterEvent(event_type_value=event_type.value, job_name=run.job_name)
    instance.report_dagster_event(event, run.run_id)
