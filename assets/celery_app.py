"""The Celery app Radar's workers run: ``celery -A assets.celery_app worker -Q dagster -c 1``.

It is ``dagster_celery.app`` (the ``execute_plan`` task that runs one Dagster step) built from
the same ``CelerySettings`` as the executor, so the run that submits steps and the workers that
run them agree on broker, backend and redelivery settings (``assets.executor``), plus one guard:
a step delivered again (its first worker died, or its ``visibility_timeout`` expired) that has
already succeeded in its run is acknowledged without running it twice.
"""

from __future__ import annotations

import logging

from celery import Task
from celery.exceptions import Ignore
from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_execute_job_task, create_resume_job_task, create_task

from assets.executor import CelerySettings

log = logging.getLogger(__name__)


def _step_already_succeeded(execute_step_args_packed: dict) -> bool:
    """Whether every step of this task has a STEP_SUCCESS event in its run's event log."""
    from dagster import DagsterEventType, DagsterInstance
    from dagster._grpc.types import ExecuteStepArgs  # the task's argument type (as in dagster_celery.tasks)
    from dagster._serdes import unpack_value

    args = unpack_value(execute_step_args_packed, as_type=ExecuteStepArgs)
    instance = DagsterInstance.from_ref(args.instance_ref)
    try:
        done = {e.step_key for e in instance.all_logs(args.run_id, of_type=DagsterEventType.STEP_SUCCESS) if e.step_key}
    finally:
        instance.dispose()
    return bool(args.step_keys_to_execute) and set(args.step_keys_to_execute) <= done


class RedeliverySafeStep(Task):
    """``execute_plan`` with late acknowledgement; a redelivered step that already succeeded is skipped."""

    acks_late = True
    reject_on_worker_lost = True

    def __call__(self, *args, **kwargs):
        delivery = self.request.delivery_info or {}
        if delivery.get("redelivered") and _step_already_succeeded(kwargs["execute_step_args_packed"]):
            log.warning("task %s: step already succeeded in its run; redelivery acknowledged, not run", self.request.id)
            raise Ignore()
        return super().__call__(*args, **kwargs)


# what `dagster-celery worker start -y <executor config>` builds, from CelerySettings instead of a file
app = make_app(CeleryExecutor.for_cli(**CelerySettings().executor_config()).app_args())

execute_plan = create_task(app, base=RedeliverySafeStep)
execute_job = create_execute_job_task(app)
resume_job = create_resume_job_task(app)
