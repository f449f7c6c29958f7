"""How a resource field left unset falls back to Radar's settings: read from the environment
(``radar_pipeline.config``) when a run uses the resource, never when the code location loads.

Dagster's ``EnvVar`` fails a run when its variable is unset, so it cannot express Radar's optional
variables (every one has a default); the resources below take ``None`` for "use the environment".
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic_settings import BaseSettings

from radar_pipeline.config import ExtractionSettings

S = TypeVar("S", bound=BaseSettings)


def settings_from(cls: type[S], **given: Any) -> S:
    """``cls`` read from the environment now, with every non-``None`` value in ``given`` taking precedence."""
    return cls(**{k: v for k, v in given.items() if v is not None})


def workers_or_default(workers: int | None) -> int:
    """``workers`` when set, else ``RADAR_WORKERS`` (default 2)."""
    return workers if workers is not None else ExtractionSettings().workers
