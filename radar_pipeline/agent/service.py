"""The agent service's runtime: settings and the lazily built objects behind the API and the CLI.

``ServiceSettings`` (pydantic-settings, environment) says where the indexes and the database are
and how the model endpoint is reached (``LLMSettings``: ``RADAR_LLM_*``). ``AgentService`` builds,
on first use and once per process, the encoder, the ``RetrievalService`` over the materialized indexes, the
PostgreSQL engine, the trace store, the precompute reader and the ``AgentRunner``. Nothing heavy
happens at construction, so the API starts even before anything is materialized; endpoints that
need a missing piece answer with a structured error instead.

A new materialization is served without a restart: at most every ``reload_check_seconds`` a
request stats ``manifest.json`` (one ``stat``); when it changed and names another ``index_version``
(``stores.integrity.index_version``), a new ``RetrievalService`` is built in a background thread
while the old one keeps answering, then swapped in by one assignment (each request holds the
service it started with). A version that serves fewer stages than the loaded one (the lexical stage
of a rebuild, before its FAISS index exists) is not swapped in: the loaded, more complete index
keeps answering until the new one catches up. A fresh process serves whatever is live, lexical only
included.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import sqlalchemy as sa
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from radar_pipeline.agent.llm import LLMClient, LLMSettings
from radar_pipeline.agent.reading.understanding import QuestionReader
from radar_pipeline.agent.runner import AgentConfig, AgentRunner
from radar_pipeline.agent.trace import TraceStore
from radar_pipeline.precompute.reader import PrecomputeReader
from radar_pipeline.retrieval.service import IndexUnavailable, RetrievalService
from radar_pipeline.spool import Spool

log = logging.getLogger("radar.agent.service")


class ServiceSettings(BaseSettings):
    """``RADAR_AGENT_*`` settings; paths default to those of ``radar_pipeline.config.RadarSettings``."""

    model_config = SettingsConfigDict(env_prefix="RADAR_AGENT_", extra="ignore", use_attribute_docstrings=True)

    index_dir: Path | None = None
    """index folder the API reads (default `<RADAR_HOME>/indexes/<encoder name>`)"""
    database_url: str | None = None
    """database of the API (default `DATABASE_URL` or the embedded server)"""
    trace: bool = True
    """store each `/chat` trace in PostgreSQL"""
    use_database: bool = True
    """false: no traces, no aggregates (tests, read-only demos)"""
    min_similarity: float = Field(0.25, json_schema_extra={"unit": "cosine"})
    """lowest dense similarity of a passage the agent cites"""
    rerank_encodes_per_run: int | None = Field(default=0, ge=0, json_schema_extra={"unit": "passages"})
    """re-ranker passage encodings one /chat run may make at query time, shared by its searches
    (0: stored re-ranker vectors score exactly, the others get an imputed score); unset: each search
    its own limit of 8"""
    reload_check_seconds: float = 2.0
    """seconds between two checks of the index manifest for a new materialization (0 = every request)"""
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
        self._version: str | None = None  # index_version of the loaded RetrievalService
        self._manifest_stat: tuple | None = None
        self._last_check = 0.0
        self._reloading: threading.Thread | None = None
        self._reload_note: str | None = None  # why the newest version on disk is not served (yet)

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

    def _load(self) -> tuple[RetrievalService, str | None]:
        """A new retrieval service over the index directory and the version it was read at."""
        from radar_pipeline.encoders import build_reranker
        from radar_pipeline.retrieval.search import Searcher
        from radar_pipeline.stores.integrity import index_version

        if self.backend == "pgvector":  # the shared index: PostgreSQL is its own version
            return RetrievalService(self._pg_searcher(build_reranker())), None
        d = self.index_dir()
        version = index_version(d)
        service = RetrievalService(Searcher(d, self.encoder, reranker=build_reranker()))
        # a seal between reading the version and the files: the next check sees it again
        return service, version if index_version(d) == version else None

    def corpus(self) -> RetrievalService:
        """The retrieval service over the indexes (the newest version served, see the module
        docstring); raises ``IndexUnavailable`` (retried on the next call)."""
        self.check_for_new_index()
        with self._lock:
            if self._corpus is None:
                try:
                    self._corpus, self._version = self._load()
                    self._corpus_error = None
                except (FileNotFoundError, ValueError, IndexUnavailable, sa.exc.SQLAlchemyError) as exc:
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

    @property
    def backend(self) -> str:
        """``RADAR_INDEX_BACKEND``: ``faiss`` (index files) or ``pgvector`` (PostgreSQL alone)."""
        from radar_pipeline.config import RetrievalSettings

        return RetrievalSettings().index_backend

    def _pg_searcher(self, reranker):
        """The ``PgSearcher`` over this service's database (``RADAR_PGVECTOR_EF_SEARCH``)."""
        from radar_pipeline.config import RetrievalSettings
        from radar_pipeline.retrieval.pg_search import PgSearcher

        engine = self.engine()
        if engine is None:
            raise IndexUnavailable("RADAR_INDEX_BACKEND=pgvector needs PostgreSQL, which is not reachable")
        return PgSearcher(engine, self.encoder, reranker=reranker, ef_search=RetrievalSettings().pgvector_ef_search)

    def _pg_has_vectors(self) -> bool:
        """Whether PostgreSQL holds vectors of this service's encoder (one indexed lookup)."""
        engine = self.engine()
        if engine is None:
            return False
        try:
            with engine.connect() as conn:
                q = sa.text("SELECT EXISTS (SELECT 1 FROM embeddings WHERE encoder = :e)")
                return bool(conn.execute(q, {"e": self.encoder.name}).scalar())
        except sa.exc.SQLAlchemyError:
            return False

    def check_for_new_index(self, *, wait: bool = False) -> bool:
        """Start loading a newer index version when the manifest changed (cheap: a ``stat`` at most
        every ``reload_check_seconds``). With ``wait`` the check is not rate-limited and the load
        runs in this thread. Returns True when a new version was (or is being) loaded."""
        from radar_pipeline.stores.integrity import MANIFEST_FILE, index_version, live_stages

        if self.backend == "pgvector":  # no index files to swap: every query reads PostgreSQL
            return False
        now = time.monotonic()
        with self._lock:
            if self._corpus is None or (self._reloading is not None and self._reloading.is_alive()):
                return False
            if not wait and now - self._last_check < self.settings.reload_check_seconds:
                return False
            self._last_check = now
            d = self.index_dir()
            try:
                st = (d / MANIFEST_FILE).stat()
                key = (st.st_mtime_ns, st.st_size, st.st_ino)
            except OSError:
                return False
            if key == self._manifest_stat:
                return False
            self._manifest_stat = key
            version = index_version(d)
            if version is None or version == self._version:
                return False
            on_disk = live_stages(d)
            served = self._corpus.search_stages
            lost = [s for s in ("lexical", "dense") if served.get(s) and not on_disk.get(s)]
            if lost:
                self._reload_note = (
                    f"la versión {version} aún no tiene {', '.join(lost)}; se sigue sirviendo {self._version}"
                )
                self._manifest_stat = None  # look again on the next check (the next seal changes it anyway)
                return False
            worker = threading.Thread(target=self._swap, name="radar-index-reload", daemon=True)
            self._reloading = worker
        if wait:
            worker.run()
        else:
            worker.start()
        return True

    def _swap(self) -> None:
        try:
            service, version = self._load()
        except (FileNotFoundError, ValueError) as exc:  # a half-sealed build: keep serving the old one
            with self._lock:
                self._reload_note = f"no se pudo cargar la nueva versión: {exc}"[:300]
                self._manifest_stat = None
            log.warning("index reload failed, still serving %s: %s", self._version, exc)
            return
        with self._lock:
            old = self._version
            self._corpus, self._version, self._reload_note = service, version, None
            if version is None:
                self._manifest_stat = None
            self._withdraw_retracted()
        log.info("index swapped: %s -> %s", old, version)

    def index_status(self) -> dict:
        """What ``/health`` says about the index: ``backend`` (``RADAR_INDEX_BACKEND``), ``dir``
        (None for pgvector), ``present`` (a servable stage: the passage table with BM25 or FAISS on
        disk, not damaged; pgvector: PostgreSQL holds the encoder's vectors), ``loaded``,
        ``passages`` (rows in memory), ``error`` (the last load failure), ``problems`` (component →
        what is wrong on disk now: sizes against the manifest, plus what the loaded searcher left
        out, e.g. a damaged BM25 index); for the file backend also ``index_version`` (the version
        served, None before the first load), ``index_version_on_disk``, ``stages`` (stage → live in
        the served index), ``stages_on_disk``, ``lexical_only`` and ``reload_note`` (why the version
        on disk is not served yet)."""
        from radar_pipeline.stores.integrity import index_version, live_stages, verify_index

        self.check_for_new_index()
        loaded = self._corpus is not None
        if self.backend == "pgvector":
            problems = dict(getattr(self._corpus.searcher, "problems", {})) if loaded else {}
            if not loaded and self._corpus_error:
                problems = {"index": self._corpus_error}
            return {
                "backend": "pgvector",
                "dir": None,
                "present": loaded or self._pg_has_vectors(),
                "loaded": loaded,
                "passages": self._corpus.size if loaded else None,
                "error": self._corpus_error,
                "problems": problems,
            }
        d = self.index_dir()
        problems = verify_index(d, deep=False)
        if loaded:
            problems = {**getattr(self._corpus.searcher, "problems", {}), **problems}
        elif self._corpus_error and not problems:
            problems = {"index": self._corpus_error}
        on_disk = live_stages(d)
        stages = self._corpus.search_stages if loaded else {k: False for k in on_disk}
        return {
            "backend": "faiss",
            "dir": str(d),
            "present": (on_disk["lexical"] or on_disk["dense"]) and "passages" not in problems,
            "loaded": loaded,
            "passages": self._corpus.size if loaded else None,
            "error": self._corpus_error,
            "problems": problems,
            "index_version": self._version if loaded else None,
            "index_version_on_disk": index_version(d),
            "stages": stages,
            "stages_on_disk": on_disk,
            "lexical_only": loaded and stages["lexical"] and not stages["dense"],
            "reload_note": self._reload_note,
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
                    config=AgentConfig(
                        min_similarity=self.settings.min_similarity,
                        rerank_encodes_per_run=self.settings.rerank_encodes_per_run,
                    ),
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
