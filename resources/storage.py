"""Where the corpus is read from, where on-disk indexes go, and how extraction (processes, OCR) runs.

Unset fields are read from the environment when a run uses the resource (``StorageSettings``,
``ExtractionSettings``): ``RADAR_CORPUS_DIR``/``RADAR_SHARED_DIR``, ``RADAR_HOME``, ``RADAR_WORKERS``,
``RADAR_OCR_LANGUAGES``, ``RADAR_OCR_DPI``.
"""

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline.config import ExtractionSettings, StorageSettings
from radar_pipeline.ingest import OcrSettings
from resources._settings import settings_from, workers_or_default


class CorpusResource(ConfigurableResource):
    """The corpus root and the number of extraction processes."""

    corpus_dir: str | None = Field(
        default=None,
        description="root scanned by source_files; unset: RADAR_CORPUS_DIR, else <RADAR_SHARED_DIR>/corpus",
    )
    workers: int | None = Field(default=None, description="extraction processes; unset: RADAR_WORKERS, else 2")

    @property
    def root(self) -> Path:
        """The absolute corpus root."""
        return Path(self.corpus_dir).resolve() if self.corpus_dir else StorageSettings().corpus

    def worker_count(self) -> int:
        """Extraction processes (≥ 1 expected)."""
        return workers_or_default(self.workers)


class IndexStoreResource(ConfigurableResource):
    """On-disk indexes: the per-encoder FAISS/BM25 folders and the evaluation sets' work folder."""

    index_dir: str | None = Field(
        default=None, description="parent folder of the per-encoder FAISS/BM25 folders; unset: <RADAR_HOME>/indexes"
    )
    eval_work_dir: str | None = Field(
        default=None, description="where the evaluations build their own small indexes; unset: <RADAR_HOME>/eval_work"
    )

    def for_encoder(self, encoder_name: str) -> Path:
        """``<index_dir>/<encoder_name>``, created if missing."""
        path = (Path(self.index_dir) if self.index_dir else StorageSettings().index_dir) / encoder_name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def eval_work(self) -> Path:
        """The evaluations' work folder (not created here)."""
        return Path(self.eval_work_dir) if self.eval_work_dir else StorageSettings().home / "eval_work"


class OcrResource(ConfigurableResource):
    """Tesseract OCR of pages without a usable text layer."""

    languages: str | None = Field(
        default=None, description="tesseract languages; unset: RADAR_OCR_LANGUAGES, else spa+eng+por"
    )
    dpi: int | None = Field(default=None, description="render resolution; unset: RADAR_OCR_DPI, else 300")
    enabled: bool = True

    def settings(self) -> OcrSettings:
        """The ``OcrSettings`` the extraction stage takes."""
        s = settings_from(ExtractionSettings, ocr_languages=self.languages, ocr_dpi=self.dpi)
        return OcrSettings(languages=s.ocr_languages, dpi=s.ocr_dpi, enabled=self.enabled)
