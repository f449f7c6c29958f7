"""Shared helpers for the ingestion tests (paths resolved from RADAR_SHARED_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DIR = Path(os.environ.get("RADAR_SHARED_DIR", Path(__file__).resolve().parents[3].parent / "shared"))
CASES_DIR = SHARED_DIR / "cases" / "ingestion"
CORPUS_DIR = SHARED_DIR / "corpus"


def tesseract_ready() -> bool:
    """True when Tesseract with Spanish and English data is installed."""
    from radar_pipeline.ingest.ocr import available_languages

    return {"spa", "eng"} <= set(available_languages())


def needs_tesseract(test):
    """Mark an OCR test ``slow`` and skip it where Tesseract (spa/eng) is missing (a failure under
    ``RADAR_NO_SKIPS=1``)."""
    skip = pytest.mark.skipif(not tesseract_ready(), reason="tesseract with spa/eng not installed")
    return pytest.mark.slow(skip(test))
