"""How chunking and the precomputes run (passage size and overlap, shared data, processes).

Unset fields are read from the environment when a run uses the resource (``ChunkingSettings``,
``StorageSettings``, ``ExtractionSettings``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline.config import ChunkingSettings, StorageSettings
from resources._settings import settings_from, workers_or_default

if TYPE_CHECKING:
    from radar_pipeline.precompute.pipeline import PrecomputeConfig


class ChunkingResource(ConfigurableResource):
    """SPEC "Chunking": sentence-bounded passages of ~``chunk_tokens`` tokens with ``chunk_overlap``
    sentence overlap, at most ``tabular_max_chunks`` per tabular file."""

    chunk_tokens: int | None = Field(default=None, description="unset: RADAR_CHUNK_TOKENS, else 500")
    chunk_overlap: float | None = Field(default=None, description="fraction; unset: RADAR_CHUNK_OVERLAP, else 0.15")
    tabular_max_chunks: int | None = Field(default=None, description="unset: RADAR_TABULAR_MAX_CHUNKS, else 400")
    workers: int | None = Field(default=None, description="chunking processes; unset: RADAR_WORKERS, else 2")

    def settings(self) -> ChunkingSettings:
        """The chunking parameters, read from the environment now for the fields left unset."""
        return settings_from(
            ChunkingSettings,
            chunk_tokens=self.chunk_tokens,
            chunk_overlap=self.chunk_overlap,
            tabular_max_chunks=self.tabular_max_chunks,
        )

    def worker_count(self) -> int:
        """Processes that chunk documents."""
        return workers_or_default(self.workers)


class PrecomputeResource(ConfigurableResource):
    """Inputs of the precomputes: the shared reference data (``geo/``, ``manifests/``) and processes."""

    shared_dir: str | None = Field(
        default=None, description="read-only shared data; unset: RADAR_SHARED_DIR, else <project>/../shared"
    )
    workers: int | None = Field(default=None, description="processes; unset: RADAR_WORKERS, else 2")

    def config(self) -> PrecomputeConfig:
        """The ``PrecomputeConfig`` the precompute pipeline takes (workers ≥ 1)."""
        from radar_pipeline.precompute.pipeline import PrecomputeConfig

        shared = Path(self.shared_dir) if self.shared_dir else StorageSettings().shared_dir
        return PrecomputeConfig(shared_dir=shared, workers=max(1, int(workers_or_default(self.workers))))
