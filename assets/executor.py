"""How the pipeline's steps run: Dagster's default executor, or Celery workers over Redis.

``RADAR_EXECUTOR`` chooses, when the code location loads (an executor is part of the job
definitions, so this is the one setting read at load time):

* unset or ``multiprocess`` — Dagster's default (``multi_or_in_process_executor``): each step in a
  subprocess of the run, on this machine. ``radar materialize`` and ``make up`` use it.
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
from pydantic_settings import BaseSettings, SettingsConfigDict

EXECUTORS = ("multiprocess", "celery")


class CelerySettings(BaseSettings):
    """Celery broker, result backend and redelivery (``RADAR_CELERY_*``), shared by the run that
    submits steps and the workers that execute them (both must agree)."""

    model_config = SettingsConfigDict(env_prefix="RADAR_CELERY_", extra="ignore")

    broker_url: str = "redis://localhost:6379/0"
    backend_url: str = "redis://localhost:6379/1"
    visibility_timeout: int = 7200
    """seconds before an unacknowledged task (its worker died) is delivered again; > longest step"""
    restore_interval: int = 10
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
    kind = (os.environ.get("RADAR_EXECUTOR") or "multiprocess").strip().lower()
    if kind not in EXECUTORS:
        raise ValueError(f"RADAR_EXECUTOR={kind!r}: expected one of {', '.join(EXECUTORS)}")
    return kind


def radar_executor() -> dg.ExecutorDefinition | None:
    """The executor of every job in ``assets.definitions``: ``None`` (Dagster's default) unless
    ``RADAR_EXECUTOR=celery``, then ``celery_executor`` configured from ``CelerySettings``."""
    if executor_kind() == "multiprocess":
        return None
    from dagster_celery import celery_executor

    return celery_executor.configured(CelerySettings().executor_config(), name="radar_celery")
