"""Fixtures for the ingestion tests: case files and corpus read in place (never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

from radar_pipeline.ingest import ExtractedDocument, extract

from .support_ingest import CASES_DIR, CORPUS_DIR


@pytest.fixture(scope="session")
def cases_dir() -> Path:
    if not CASES_DIR.is_dir():
        pytest.skip(f"ingestion cases not found at {CASES_DIR}")
    return CASES_DIR


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS_DIR.is_dir():
        pytest.skip(f"corpus not found at {CORPUS_DIR}")
    return CORPUS_DIR


@pytest.fixture(scope="session")
def extracted(cases_dir):
    """``extracted(name)``: the ExtractedDocument of a case file, extracted once per session."""
    cache: dict[str, ExtractedDocument] = {}

    def get(name: str) -> ExtractedDocument:
        if name not in cache:
            cache[name] = extract(cases_dir / name)
        return cache[name]

    return get
