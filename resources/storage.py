"""Where the corpus is read from, where on-disk indexes go, and how OCR runs."""

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline.ingest import OcrSettings


class CorpusResource(ConfigurableResource):
    corpus_dir: str = Field(description="root scanned by source_files (RADAR_CORPUS_DIR)")
    workers: int = Field(default=2, description="extraction worker processes")

    @property
    def root(self) -> Path:
        return Path(self.corpus_dir).resolve()


class IndexStoreResource(ConfigurableResource):
    index_dir: str = Field(description="parent folder of the per-encoder FAISS/BM25 folders")

    def for_encoder(self, encoder_name: str) -> Path:
        path = Path(self.index_dir) / encoder_name
        path.mkdir(parents=True, exist_ok=True)
        return path


class OcrResource(ConfigurableResource):
    languages: str = "spa+eng+por"
    dpi: int = 300
    enabled: bool = True

    def settings(self) -> OcrSettings:
        return OcrSettings(languages=self.languages, dpi=self.dpi, enabled=self.enabled)
