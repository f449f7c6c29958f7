"""Who may see what: API keys (stored hashed), scopes, the audit log and per-key rate limits.

A key is ``radar_<key_id>_<secret>``: ``key_id`` (12 hex characters, public) is the lookup prefix
and the id shown by ``radar keys list``; ``secret`` is 32 random bytes (``secrets.token_urlsafe``).
The token is returned once by ``KeyStore.create`` and never stored: the ``api_keys`` table
(``radar_pipeline.db``) keeps its SHA-256, compared in constant time. A plain SHA-256 is the right
hash for a 256-bit random secret (nothing to brute-force; a slow hash such as scrypt would only add
latency to every request), as GitHub and most API gateways do for their tokens.

Scopes (``SCOPES``): ``read`` (search, documents, chunks, aggregates, publications, dashboard data),
``chat`` (``/chat``, ``/chat/stream``, the caller's own traces), ``review`` (reserved for review
queues), ``admin`` (keys, the audit log, anyone's traces). ``admin`` implies no other scope.

``purpose`` on a key (optional) names a purpose of the purpose policy (``radar_pipeline.purpose``, a
TOML file): the endpoints, scopes and collections a key created for it may use; checked when the key
is created (``KeyStore.create``) and on every request (``api.security.require``).

``collections`` on a key is the list of source collections it may read (``None`` = all). The
collection of a file is ``radar_pipeline.collection`` 's (a ``RADAR_COLLECTIONS_FILE`` manifest rule,
else the Codefest institution code, else the corpus top folder), stored on ``source_files``,
``documents``, ``chunks`` and in ``passages.parquet``. It is enforced inside every query: the API
turns the principal into an ``AccessScope`` and reads through ``RetrievalService.for_scope``, whose
lookups hold only the allowed rows and whose searches restrict the candidates (FAISS with an
``IDSelectorBatch`` over the allowed rows, BM25 with the same row mask, pgvector with a
``WHERE EXISTS``) before ranking, never a filtered top-k; chunks, windows and outlines outside the
scope answer 404 as if they did not exist; publication listings count only allowed documents; the
/chat run passes the same scope to all its tools. The precompute aggregates and the dashboard
figures count only the allowed collections (per-collection rows folded in the query,
``precompute/scoped.py``); a restricted key sees only its own traces, and cannot use the ``admin``
endpoints.

``AuditLog.write`` stores one ``audit_log`` row per request. Rate limits are a token bucket per key:
``TokenBucket`` in the process, or ``PgTokenBucket`` in PostgreSQL (one atomic upsert per request
on the database clock), which every API process on the same database shares, so two workers do not
double a key's rate.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass, field

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.spool import Spool

SCOPES = ("read", "chat", "review", "admin")
TOKEN_RE = re.compile(r"^radar_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
_NAME_RE = re.compile(r"^[\w .@-]{1,80}$")
_COLLECTION_RE = re.compile(r"^[\w .-]{1,80}$")


class AccessError(ValueError):
    """A key that cannot be created as asked (unknown scope, bad name, empty scope list)."""


@dataclass(frozen=True)
class Principal:
    """Who is calling: a key, an OIDC subject, or the open loopback user.

    ``auth`` is ``api_key`` | ``oidc`` | ``open``; ``collections`` None means every collection;
    ``purpose`` None means none (``radar_pipeline.purpose``).
    """

    key_id: str
    name: str
    scopes: frozenset[str]
    auth: str = "api_key"
    collections: tuple[str, ...] | None = None
    purpose: str | None = None

    def allows(self, scope: str) -> bool:
        """True when the principal holds ``scope`` (``admin`` does not imply the others)."""
        return scope in self.scopes


@dataclass(frozen=True)
class KeyInfo:
    """A stored key as listed (never the token): id, name, scopes, collections, times (UTC), purpose."""

    key_id: str
    name: str
    scopes: list[str]
    collections: list[str] | None
    created_at: dt.datetime
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None
    last_used_at: dt.datetime | None
    purpose: str | None = None

    @property
    def active(self) -> bool:
        now = dt.datetime.now(dt.UTC)
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


def hash_token(token: str) -> str:
    """Hex SHA-256 of a token (the only form in which a key is stored)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_scopes(scopes: str | list[str] | tuple[str, ...]) -> list[str]:
    """``"read,chat"`` or a list → sorted unique scopes; raises ``AccessError`` on an unknown one."""
    items = scopes.split(",") if isinstance(scopes, str) else list(scopes)
    out = sorted({s.strip().lower() for s in items if s and s.strip()})
    bad = [s for s in out if s not in SCOPES]
    if bad or not out:
        raise AccessError(f"scopes must be a non-empty subset of {', '.join(SCOPES)} (got {', '.join(bad) or '-'})")
    return out


def parse_collections(collections: str | list[str] | None) -> list[str] | None:
    """``"CSET,Defensoria"`` or a list → the list; ``None``/empty → None (every collection)."""
    if collections is None:
        return None
    items = collections.split(",") if isinstance(collections, str) else list(collections)
    out = sorted({c.strip() for c in items if c and c.strip()})
    bad = [c for c in out if not _COLLECTION_RE.match(c)]
    if bad:
        raise AccessError(f"invalid collection name(s): {', '.join(bad)}")
    return out or None


class KeyStore:
    """API keys in PostgreSQL (``db.api_keys``). Thread-safe; each call is one short transaction.

    ``purposes`` is the purpose policy keys are checked against (``radar_pipeline.purpose``; read
    from the environment on the first key created with a purpose when not given)."""

    def __init__(self, engine: sa.Engine, purposes=None):
        self.engine = engine
        self.purposes = purposes
        ensure_access_schema(engine)

    def create(
        self,
        name: str,
        scopes: str | list[str],
        collections: str | list[str] | None = None,
        expires_at: dt.datetime | None = None,
        purpose: str | None = None,
    ) -> tuple[str, KeyInfo]:
        """Create a key; return ``(token, info)``. The token is shown once and not stored.

        Raises ``AccessError`` on a bad name, scope or collection, and on a purpose the policy does
        not define or that does not allow those scopes or collections (the message says which).
        """
        if not _NAME_RE.match(name or ""):
            raise AccessError("name: 1-80 letters, digits, spaces or . @ - _")
        scope_list = parse_scopes(scopes)
        colls = parse_collections(collections)
        purpose = (purpose or "").strip() or None
        if purpose is not None:
            from radar_pipeline.purpose import PurposeError, PurposePolicy

            if self.purposes is None:
                self.purposes = PurposePolicy.from_env()
            try:
                self.purposes.check_key(purpose, scope_list, colls)
            except PurposeError as exc:
                raise AccessError(str(exc)) from exc
        key_id = secrets.token_hex(6)
        token = f"radar_{key_id}_{secrets.token_urlsafe(32)}"
        now = dt.datetime.now(dt.UTC)
        row = {
            "key_id": key_id,
            "name": name,
            "token_sha256": hash_token(token),
            "scopes": scope_list,
            "collections": colls,
            "created_at": now,
            "expires_at": expires_at,
            "revoked_at": None,
            "last_used_at": None,
            "purpose": purpose,
        }
        with self.engine.begin() as conn:
            conn.execute(db.api_keys.insert().values(**row))
        return token, _info(row)

    def list(self) -> list[KeyInfo]:
        """Every key (active, expired and revoked), oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(db.api_keys).order_by(db.api_keys.c.created_at)).mappings().all()
        return [_info(r) for r in rows]

    def revoke(self, key_id: str) -> bool:
        """Revoke a key (idempotent); False when no such key."""
        with self.engine.begin() as conn:
            found = conn.execute(sa.select(db.api_keys.c.key_id).where(db.api_keys.c.key_id == key_id)).first()
            if found is None:
                return False
            conn.execute(
                db.api_keys.update()
                .where(db.api_keys.c.key_id == key_id, db.api_keys.c.revoked_at.is_(None))
                .values(revoked_at=dt.datetime.now(dt.UTC))
            )
        return True

    def count_active(self) -> int:
        """Keys neither revoked nor expired (``radar serve`` needs one to bind beyond loopback)."""
        now = dt.datetime.now(dt.UTC)
        k = db.api_keys.c
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(sa.func.count())
                .select_from(db.api_keys)
                .where(k.revoked_at.is_(None), sa.or_(k.expires_at.is_(None), k.expires_at > now))
            ).scalar_one()

    def verify(self, token: str) -> Principal | None:
        """The principal of a valid, unrevoked, unexpired token, else None (no reason is given)."""
        m = TOKEN_RE.match(token or "")
        if m is None:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(db.api_keys).where(db.api_keys.c.key_id == m.group(1))).mappings().first()
        if row is None or not hmac.compare_digest(row["token_sha256"], hash_token(token)):
            return None
        info = _info(row)
        if not info.active:
            return None
        with self.engine.begin() as conn:
            conn.execute(
                db.api_keys.update()
                .where(db.api_keys.c.key_id == info.key_id)
                .values(last_used_at=dt.datetime.now(dt.UTC))
            )
        return Principal(
            key_id=info.key_id,
            name=info.name,
            scopes=frozenset(info.scopes),
            auth="api_key",
            collections=tuple(info.collections) if info.collections is not None else None,
            purpose=info.purpose,
        )


def _info(row) -> KeyInfo:
    return KeyInfo(
        key_id=row["key_id"],
        name=row["name"],
        scopes=list(row["scopes"]),
        collections=list(row["collections"]) if row["collections"] is not None else None,
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        last_used_at=row["last_used_at"],
        purpose=row.get("purpose"),
    )


class AuditLog:
    """The ``audit_log`` table: ``write`` never raises (logged), ``runs_of`` proves trace ownership."""

    def __init__(self, engine: sa.Engine, spool: Spool | None = None):
        self.engine = engine
        self.spool = spool
        ensure_access_schema(engine)

    def write(self, row: dict) -> bool:
        """Insert one request row (columns of ``db.audit_log`` without ``id``). When PostgreSQL
        cannot take it, the row goes to the ``spool`` and is written on the next successful insert
        (an outage loses no audit row). True when stored now, False when spooled."""
        import logging

        clean = {k: v.replace("\x00", "") if isinstance(v, str) else v for k, v in row.items()}
        try:
            self._insert(clean)
        except Exception:
            logging.getLogger("radar.access").exception("could not write the audit row for %s", row.get("route"))
            if self.spool is not None:
                try:
                    self.spool.add(clean)
                except OSError:
                    logging.getLogger("radar.access").exception("could not spool the audit row: it is lost")
            return False
        if self.spool is not None:
            self.spool.drain(self._insert)
        return True

    def _insert(self, row: dict) -> None:
        with self.engine.begin() as conn:
            conn.execute(db.audit_log.insert().values(**row))

    def owns_run(self, key_id: str, run_id: str) -> bool:
        """True when ``key_id`` made the /chat request that produced ``run_id``."""
        a = db.audit_log.c
        with self.engine.connect() as conn:
            return (
                conn.execute(sa.select(a.id).where(a.run_id == run_id, a.key_id == key_id).limit(1)).first() is not None
            )

    def recent(self, limit: int = 100, key_id: str | None = None) -> list[dict]:
        """The newest rows (newest first), optionally of one key."""
        q = sa.select(db.audit_log).order_by(db.audit_log.c.id.desc()).limit(limit)
        if key_id:
            q = q.where(db.audit_log.c.key_id == key_id)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings().all()]


def ensure_access_schema(engine: sa.Engine) -> None:
    """Create ``api_keys``, ``audit_log`` and ``rate_buckets`` if missing, and add the columns added
    since (``db.ACCESS_DDL``) to older tables (idempotent, safe concurrently)."""
    db.create_all_locked(engine, db.metadata, db.ACCESS_DDL, tables=[db.api_keys, db.audit_log, db.rate_buckets])


@dataclass
class TokenBucket:
    """Per-key token buckets: ``rate`` tokens per second up to ``burst``; thread-safe.

    ``take(key)`` returns 0.0 when a token was taken, else the seconds until one is available.
    """

    rate: float
    burst: float
    _state: dict[str, tuple[float, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, key: str, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._state.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._state[key] = (tokens - 1.0, now)
                return 0.0
            self._state[key] = (tokens, now)
            return (1.0 - tokens) / self.rate if self.rate > 0 else float("inf")


# refilled = the bucket's tokens plus what the elapsed database time added, capped at the burst;
# ``excluded.updated_at`` is this request's clock_timestamp()
_REFILLED = "least(:burst, b.tokens + greatest(0.0, extract(epoch FROM excluded.updated_at - b.updated_at)) * :rate)"
_TAKE = sa.text(
    "INSERT INTO rate_buckets AS b (key_id, tokens, updated_at, granted) "
    "VALUES (:key, :burst - 1.0, clock_timestamp(), true) "
    "ON CONFLICT (key_id) DO UPDATE SET "
    f"tokens = {_REFILLED} - CASE WHEN {_REFILLED} >= 1.0 THEN 1.0 ELSE 0.0 END, "
    f"granted = {_REFILLED} >= 1.0, updated_at = excluded.updated_at "
    "RETURNING granted, tokens"
)


@dataclass
class PgTokenBucket:
    """Per-key token buckets in PostgreSQL (``rate_buckets``), shared by every process on ``engine``.

    Same contract as ``TokenBucket``: ``take(key)`` returns 0.0 when a token was taken, else the
    seconds until one is available. Each call is one ``INSERT … ON CONFLICT DO UPDATE``: the row
    lock serialises concurrent requests for the same key across processes and hosts, and the refill
    is computed on the database clock, so the processes' clocks do not matter. When the database
    cannot be reached the request is counted by ``fallback`` (an in-process bucket of the same rate)
    rather than refused or let through unlimited.
    """

    engine: sa.Engine
    rate: float
    burst: float
    fallback: TokenBucket | None = None

    def __post_init__(self):
        if self.fallback is None:
            self.fallback = TokenBucket(self.rate, self.burst)
        self._ready = False

    def take(self, key: str, now: float | None = None) -> float:
        try:
            if not self._ready:
                ensure_access_schema(self.engine)
                self._ready = True
            with self.engine.begin() as conn:
                granted, tokens = conn.execute(_TAKE, {"key": key, "burst": self.burst, "rate": self.rate}).one()
        except sa.exc.SQLAlchemyError:
            return self.fallback.take(key, now)
        if granted:
            return 0.0
        return (1.0 - tokens) / self.rate if self.rate > 0 else float("inf")
