"""How the pipeline's steps run: Dagster's default executor, or Celery workers over Redis.

``RADAR_EXECUTOR`` chooses, when the code location loads (an executor is part of the job
definitions, so this is the one setting read at load time):

* unset or ``multiprocess`` — ``radar_local`` (``radar_local_executor``): Dagster's default
  executor (``multi_or_in_process_executor``: each step in a subprocess of the run, or every step in
  the run's own process with ``execution: config: in_process:``), plus two run tags the daemon's
  runs carry (``assets.automation``), read when a run starts:

  - ``radar/executor: in_process`` — the run's steps execute in the run's process (Dagster's
    ``InProcessExecutor``) whatever the config says. Automation runs cannot pass run config, and
    their steps are small (one bucket's new files, an incremental index or precompute): a
    subprocess per step pays the imports again (≈ 5–10 s each on this machine, measured in
    ``evals/bench_freshness.py``) for seconds of work.
  - ``radar/lane: background`` (claims, alias decisions, stale answers) and ``radar/lane: long``
    (re-ranker vectors, evaluations) — the run runs at a lower CPU priority
    (``os.nice(BACKGROUND_NICE)``, inherited by its step and encoder processes), so it does not
    slow the runs that make a change searchable and counted. ``dagster.yaml``'s
    ``concurrency.runs.tag_concurrency_limits`` admits one run of each lane at a time.

  ``radar materialize`` (``dagster asset materialize``, no tags) runs a subprocess per step as before,
  started with Dagster's ``start_method: forkserver`` (the server imports the code location once
  and forks each step from it) instead of ``spawn`` (each step imports it again): 6 trivial steps
  took 18.8 s instead of 57.1 s under load ~17 here, 4.6 s in-process (``/tmp`` micro-benchmark,
  reported in evals/README.md).
* ``celery`` — ``dagster_celery.celery_executor``: the run submits each step as a Celery task to
  the ``dagster`` queue of a Redis broker; any number of workers started with
  ``celery -A assets.celery_app worker -Q dagster`` execute them. Every worker needs the same
  code, ``DATABASE_URL`` (tables), ``RADAR_PG_URL`` (Dagster run storage) and a shared
  ``RADAR_HOME`` (the FAISS/BM25 folders one step writes and the next reads).

A worker that dies mid-step loses nothing: tasks are acknowledged only when they finish
(``task_acks_late``), a task whose pool process is killed is re-queued at once
(``task_reject_on_worker_lost``), a worker stopped by SIGTERM/SIGQUIT cancels and re-queues its
running task (cold shutdown), and the task of a worker killed outright (SIGKILL, lost node) goes
back to the queue when its ``visibility_timeout`` expires (kombu's Redis transport). Set that
timeout above the longest step (the default, 2 h, covers the full corpus on 2 cores): a step still
running when it expires is delivered a second time. A second delivery of a step that has already
succeeded in the run is skipped (``assets.celery_app``). Celery documents these settings under
"Tasks → acks_late" and "Brokers → Redis → Visibility timeout".
"""

from __future__ import annotations

import os

import dagster as dg
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from radar_pipeline.config import env

EXECUTORS = ("multiprocess", "celery")
EXECUTOR_TAG = "radar/executor"
LANE_TAG = "radar/lane"
BACKGROUND_LANE = "background"
LONG_LANE = "long"  # hours of work (the re-ranker vectors, the evaluations): a lane of its own
LOW_PRIORITY_LANES = (BACKGROUND_LANE, LONG_LANE)
BACKGROUND_NICE = 10  # CFS weight 1024 → 110 (nice 0 vs 10): ~9 % of a core against a busy foreground
_RENICED = False
# Op tags of every asset that produces data (per-file stages, indexes, precomputes): within a run,
# ready steps go by dagster/priority, so the producers run before the asset checks (priority 0) that
# validate them, and a milestone (the new index, the aggregates) does not wait for the checks.
PRODUCER_OP_TAGS = {"dagster/priority": "10"}


class CelerySettings(BaseSettings):
    """Celery broker, result backend and redelivery (``RADAR_CELERY_*``), shared by the run that
    submits steps and the workers that execute them (both must agree)."""

    model_config = SettingsConfigDict(env_prefix="RADAR_CELERY_", extra="ignore", use_attribute_docstrings=True)

    broker_url: str = "redis://localhost:6379/0"
    """Redis broker of the Celery executor and `radar worker`s"""
    backend_url: str = "redis://localhost:6379/1"
    """Redis result backend of the Celery executor and workers"""
    visibility_timeout: int = Field(7200, json_schema_extra={"unit": "s"})
    """seconds before an unacknowledged task (its worker died) is delivered again; > longest step"""
    restore_interval: int = Field(10, json_schema_extra={"unit": "s"})
    """seconds between a worker's sweeps for expired unacknowledged tasks"""

    def config_source(self) -> dict:
        """Celery app settings (the executor's ``config_source``; the workers use the same)."""
        return {
            "task_acks_late": True,
            "task_reject_on_worker_lost": True,
            "worker_prefetch_multiplier": 1,
            "task_track_started": True,
            "broker_connection_retry_on_startup": True,
            "broker_transport_options": {
                "visibility_timeout": self.visibility_timeout,
                "unacked_restore_interval": self.restore_interval,
                "unacked_restore_throttle": 1,
                # dagster-celery's own defaults for publishing retries
                "max_retries": 3,
                "interval_start": 0,
                "interval_step": 0.2,
                "interval_max": 0.5,
            },
            "result_backend_transport_options": {"visibility_timeout": self.visibility_timeout},
            "result_expires": 7 * 24 * 3600,
        }

    def executor_config(self) -> dict:
        """The ``celery_executor`` config block (broker, backend, config_source)."""
        return {"broker": self.broker_url, "backend": self.backend_url, "config_source": self.config_source()}


def executor_kind() -> str:
    """``RADAR_EXECUTOR`` (default ``multiprocess``); raises ``ValueError`` for an unknown name."""
    kind = (env("RADAR_EXECUTOR") or "multiprocess").strip().lower()
    if kind not in EXECUTORS:
        raise ValueError(f"RADAR_EXECUTOR={kind!r}: expected one of {', '.join(EXECUTORS)}")
    return kind


class RunTagExecutor(dg.Executor):
    """Delegates a run to Dagster's in-process or multiprocess executor by its run tags (see the
    module docstring): ``radar/executor: in_process`` → ``in_process``; otherwise ``default`` (what
    the run config chose). A ``radar/lane: background`` run lowers its own CPU priority first."""

    def __init__(self, default: dg.Executor, in_process: dg.Executor):
        self._default = default
        self._in_process = in_process

    @property
    def retries(self):
        """The retry mode of the executor the config chose (Dagster's ``RetryMode``)."""
        return self._default.retries

    @property
    def step_dependency_config(self):
        """Dagster's ``StepDependencyConfig`` of the executor the config chose."""
        return self._default.step_dependency_config

    def chosen(self, tags: dict[str, str]) -> dg.Executor:
        """The executor a run with these tags runs on."""
        return self._in_process if tags.get(EXECUTOR_TAG) == "in_process" else self._default

    def execute(self, plan_context, execution_plan):
        """Dagster's ``Executor.execute``: lower the priority of a background run, then delegate."""
        global _RENICED
        tags = plan_context.dagster_run.tags
        if tags.get(LANE_TAG) in LOW_PRIORITY_LANES and hasattr(os, "nice") and not _RENICED:
            os.nice(BACKGROUND_NICE)  # once per process: the run worker is one process per run
            _RENICED = True
        return self.chosen(tags).execute(plan_context, execution_plan)


def _local_requirements(config):
    # Dagster's own rule for its default executor: a subprocess per step needs a reconstructable
    # job and a persistent instance; in-process needs neither
    from dagster._core.definitions.executor_definition import multiple_process_executor_requirements

    return multiple_process_executor_requirements() if "multiprocess" in config else []


@dg.executor(
    name="radar_local",
    config_schema=dg.multi_or_in_process_executor.config_schema,
    requirements=_local_requirements,
)
def radar_local_executor(init_context: dg.InitExecutorContext) -> dg.Executor:
    """Dagster's ``multi_or_in_process_executor`` (same config, same default: a subprocess per step,
    but started by ``forkserver`` unless the config names a ``start_method``) wrapped in
    ``RunTagExecutor``: a run tagged ``radar/executor: in_process`` runs its steps in its own
    process, a ``radar/lane: background`` run at a lower CPU priority."""
    config = dict(init_context.executor_config)
    if "multiprocess" in config and not config["multiprocess"].get("start_method"):
        # step processes forked from a server that imported the code location once (Dagster's
        # `start_method: forkserver`, preloading the job's module) instead of spawned afresh
        config["multiprocess"] = {**config["multiprocess"], "start_method": {"forkserver": {}}}
    chosen = dg.multi_or_in_process_executor.executor_creation_fn(
        dg.InitExecutorContext(
            job=init_context.job,
            executor_def=init_context.executor_def,
            executor_config=config,
            instance=init_context.instance,
        )
    )
    if "in_process" in config:
        return RunTagExecutor(chosen, chosen)
    multi = dict(init_context.executor_config["multiprocess"])
    in_process = dg.in_process_executor.executor_creation_fn(
        dg.InitExecutorContext(
            job=init_context.job,
            executor_def=dg.in_process_executor,
            executor_config={
                "retries": multi.get("retries") or {"enabled": {}},
                **(
                    {"step_dependency_config": multi["step_dependency_config"]}
                    if "step_dependency_config" in multi
                    else {}
                ),
            },
            instance=init_context.instance,
        )
    )
    return RunTagExecutor(chosen, in_process)


def radar_executor() -> dg.ExecutorDefinition:
    """The executor of every job in ``assets.definitions``: ``radar_local_executor`` (Dagster's
    default plus the run-tag rules above) unless ``RADAR_EXECUTOR=celery``, then ``celery_executor``
    configured from ``CelerySettings`` (run tags ignored: every step is a Celery task)."""
    if executor_kind() == "multiprocess":
        return radar_local_executor
    from dagster_celery import celery_executor

    return celery_executor.configured(CelerySettings().executor_config(), name="radar_celery")
