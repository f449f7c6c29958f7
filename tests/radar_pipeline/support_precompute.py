"""Fixtures shared by the precompute and claims tests: the session's PostgreSQL with the precompute
tables dropped and re-created around each test, and the precompute configuration over ../shared.
Imported by those folders' conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.pipeline import PrecomputeConfig


@pytest.fixture()
def pengine(engine) -> sa.Engine:
    """The core-schema engine (claims tables included) with the precompute tables re-created."""
    T.drop_precompute_schema(engine)
    T.ensure_precompute_schema(engine)
    yield engine
    T.drop_precompute_schema(engine)


@pytest.fixture(scope="session")
def config(shared_dir: Path) -> PrecomputeConfig:
    return PrecomputeConfig(shared_dir=shared_dir)
