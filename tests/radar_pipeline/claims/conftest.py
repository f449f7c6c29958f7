"""Fixtures for the claims tests: the session's PostgreSQL with clean core and precompute tables,
and helpers that write crafted documents and run the precomputes the claims read."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from radar_pipeline.precompute import pipeline as P
from radar_pipeline.precompute.pipeline import PrecomputeConfig
from tests.radar_pipeline import support_precompute as _shared

pengine = _shared.pengine  # shared fixtures (support_precompute)
config = _shared.config


def run_precomputes(engine: sa.Engine, config: PrecomputeConfig) -> None:
    """Every precompute the claim rules read, in dependency order."""
    P.materialize_entity_dictionary(engine, config.dictionary())
    P.materialize_gazetteer(engine, config.gazetteer())
    P.materialize_mentions(engine, config)
    P.materialize_publication_dates(engine, config)
    P.materialize_early_warnings(engine, config)
    P.materialize_armed_presence(engine, config)


def at(day: str, hour: int = 12) -> dt.datetime:
    """A UTC transaction time on ``day`` (YYYY-MM-DD)."""
    return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(hour), tzinfo=dt.UTC)
