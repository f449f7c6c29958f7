"""RADAR_EXECUTOR picks the executor of every job: Dagster's default (plus the daemon's run tags:
in-process steps, a background lane at low CPU priority) unless it says ``celery``; the Celery
settings the run and the workers share ask for late acknowledgement and redelivery."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from assets.executor import BACKGROUND_NICE, CelerySettings, executor_kind, radar_executor, radar_local_executor

ROOT = Path(__file__).resolve().parents[2]


def test_default_is_dagsters_executor_reading_run_tags(monkeypatch):
    monkeypatch.delenv("RADAR_EXECUTOR", raising=False)
    assert executor_kind() == "multiprocess" and radar_executor() is radar_local_executor
    from assets.definitions import defs

    job = defs.resolve_implicit_global_asset_job_def()
    assert job.executor_def.name == "radar_local"
    # the same config as Dagster's default executor (`execution: config: in_process:` still works)
    assert (
        job.executor_def.config_schema.as_field().config_type.key
        == dg.multi_or_in_process_executor.config_schema.as_field().config_type.key
    )


@dg.asset
def step_a() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid(), "nice": os.nice(0)})


@dg.asset(deps=[step_a])
def step_b() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid(), "nice": os.nice(0)})


def where_job() -> dg.JobDefinition:
    """Two steps on radar_local_executor, each reporting the process and CPU priority it ran in."""
    defs = dg.Definitions(
        assets=[step_a, step_b], jobs=[dg.define_asset_job("where", "*")], executor=radar_local_executor
    )
    return defs.resolve_job_def("where")


def _steps(result) -> dict[str, dict]:
    return {
        e.asset_key.to_user_string(): {
            k: v.value for k, v in e.step_materialization_data.materialization.metadata.items()
        }
        for e in result.get_asset_materialization_events()
    }


def test_run_tag_picks_in_process_steps(tmp_path):
    """A run tagged ``radar/executor: in_process`` runs both steps in the run's process; without the
    tag each step runs in its own subprocess (Dagster's multiprocess executor)."""
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        job = dg.reconstructable(where_job)
        with dg.execute_job(job, instance=instance, tags={"radar/executor": "in_process"}) as res:
            assert res.success
            steps = _steps(res)
        assert {s["pid"] for s in steps.values()} == {os.getpid()}
        with dg.execute_job(job, instance=instance) as res:
            assert res.success
            steps = _steps(res)
        pids = [s["pid"] for s in steps.values()]
        assert len(set(pids)) == 2 and os.getpid() not in pids


def test_background_lane_runs_at_lower_cpu_priority(tmp_path):
    """A ``radar/lane: background`` run renices its process (here a child Python, as the run worker
    the daemon launches): its in-process steps, and the subprocesses of a multiprocess run, report a
    niceness ``BACKGROUND_NICE`` above the parent's."""
    probe = """
import json, dagster as dg
from tests.assets.test_executor import where_job, _steps
inst, out, tags = dg.DagsterInstance.get(), {}, {"radar/lane": "background"}
for name, extra in (("multi", {}), ("in_process", {"radar/executor": "in_process"})):
    with dg.execute_job(dg.reconstructable(where_job), instance=inst, tags={**tags, **extra}) as r:
        out[name] = sorted(s["nice"] for s in _steps(r).values())
print(json.dumps(out))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    import json

    got = json.loads(out.stdout.strip().splitlines()[-1])
    want = min(19, os.nice(0) + BACKGROUND_NICE)
    # the second run is in the same, already reniced, process: not lowered twice
    assert got["multi"] == [want, want] and got["in_process"] == [want, want]


def test_unknown_executor_is_refused(monkeypatch):
    monkeypatch.setenv("RADAR_EXECUTOR", "spark")
    with pytest.raises(ValueError, match="RADAR_EXECUTOR"):
        radar_executor()


def test_celery_settings_ask_for_late_acks_and_redelivery(monkeypatch):
    monkeypatch.setenv("RADAR_CELERY_BROKER_URL", "redis://broker:6379/0")
    monkeypatch.setenv("RADAR_CELERY_VISIBILITY_TIMEOUT", "900")
    cfg = CelerySettings().executor_config()
    assert cfg["broker"] == "redis://broker:6379/0" and cfg["backend"].startswith("redis://")
    src = cfg["config_source"]
    assert src["task_acks_late"] and src["task_reject_on_worker_lost"] and src["worker_prefetch_multiplier"] == 1
    assert src["broker_transport_options"]["visibility_timeout"] == 900


def test_celery_definitions_load_and_validate(tmp_path):
    """With RADAR_EXECUTOR=celery the code location loads (every job on the Celery executor) and
    ``dagster definitions validate`` accepts it; the worker app registers the step task with late acks."""
    env = {**os.environ, "RADAR_EXECUTOR": "celery", "PYTHONPATH": str(ROOT)}
    probe = (
        "from assets.definitions import defs; import assets.celery_app as c;"
        "names = {j.executor_def.name for j in defs.resolve_all_job_defs()};"
        "t = c.app.tasks['execute_plan'];"
        "print(sorted(names), t.acks_late, t.reject_on_worker_lost, c.app.conf.task_acks_late)"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "['radar_celery'] True True True", out.stdout + out.stderr
    dagster = Path(sys.executable).with_name("dagster")
    res = subprocess.run(
        [str(dagster), "definitions", "validate", "-m", "assets.definitions"],
        env={**env, "DAGSTER_HOME": str(tmp_path)},  # a bare instance: validation needs no storage
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "Validation successful" in res.stdout + res.stderr


def test_redelivery_guard_knows_which_steps_already_succeeded(tmp_path):
    """A redelivered ``execute_plan`` task is skipped only when its step has a STEP_SUCCESS in the
    run's event log (here a real instance with SQLite storage and one materialized asset)."""
    import dagster as dg
    from dagster._grpc.types import ExecuteStepArgs
    from dagster._serdes import pack_value

    from assets.celery_app import _step_already_succeeded

    @dg.asset
    def one() -> int:
        return 1

    from dagster._core.definitions.reconstruct import ReconstructableRepository

    repo = ReconstructableRepository.for_module("assets.definitions", "defs", str(ROOT))
    origin = repo.get_reconstructable_job("__ASSET_JOB").get_python_origin()  # any origin: not read
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        result = dg.materialize([one], instance=instance)
        assert result.success

        def packed(step: str) -> dict:
            args = ExecuteStepArgs(
                job_origin=origin,
                run_id=result.run_id,
                step_keys_to_execute=[step],
                instance_ref=instance.get_ref(),
            )
            return pack_value(args)

        assert _step_already_succeeded(packed("one")) is True
        assert _step_already_succeeded(packed("another")) is False
