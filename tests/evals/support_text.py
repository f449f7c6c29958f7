"""Synthetic passage texts for the evaluation tests."""

from __future__ import annotations


def words(prefix: str, start: int, stop: int) -> str:
    """Distinct tokens ``<prefix>start … <prefix>stop-1`` (so n-gram counts are easy to compute)."""
    return " ".join(f"{prefix}{i}" for i in range(start, stop))
