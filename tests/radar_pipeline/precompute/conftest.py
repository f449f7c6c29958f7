"""Fixtures for the precompute tests: a clean precompute schema on the session's PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.pipeline import PrecomputeConfig


@pytest.fixture()
def pengine(engine) -> sa.Engine:
    """The core-schema engine with the precompute tables dropped and re-created."""
    T.drop_precompute_schema(engine)
    T.ensure_precompute_schema(engine)
    yield engine
    T.drop_precompute_schema(engine)


@pytest.fixture(scope="session")
def config(shared_dir: Path) -> PrecomputeConfig:
    return PrecomputeConfig(shared_dir=shared_dir)


@pytest.fixture(scope="session")
def dictionary(config):
    return config.dictionary()


@pytest.fixture(scope="session")
def gazetteer(config, dictionary):
    return config.gazetteer().with_decoys(dictionary.alias_phrases())
