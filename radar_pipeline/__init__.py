"""Radar domain library: ingestion, chunking, encoders, indexes, retrieval, metrics (no Dagster)."""

__version__ = "0.1.0"
