"""Fixtures for the precompute tests: a clean precompute schema on the session's PostgreSQL."""

from __future__ import annotations

import pytest

from tests.radar_pipeline import support_precompute as _shared

pengine = _shared.pengine  # shared fixtures (support_precompute)
config = _shared.config


@pytest.fixture(scope="session")
def dictionary(config):
    return config.dictionary()


@pytest.fixture(scope="session")
def gazetteer(config, dictionary):
    return config.gazetteer().with_decoys(dictionary.alias_phrases())
