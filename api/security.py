"""Who may call what: authentication, scopes per endpoint, rate limits, body limits, audit, CORS.

Credentials. ``Authorization: Bearer radar_<id>_<secret>`` or ``X-API-Key: radar_<id>_<secret>``
(an API key from ``radar keys create``, stored hashed, see ``radar_pipeline.access``), or
``Authorization: Bearer <JWT>`` from an OIDC provider when ``RADAR_AUTH_OIDC_ISSUER``,
``RADAR_AUTH_OIDC_AUDIENCE`` and ``RADAR_AUTH_OIDC_JWKS_URL`` are set (PyJWT verifies signature,
``exp``, ``iss`` and ``aud``; scopes come from the ``scope``/``scp`` claim, ``read`` or ``radar:read``).

Scopes. Every endpoint declares one with a dependency (``Read``, ``Chat``, ``Admin``, or
``require(...)``, which accepts any of the scopes it names); ``/health``, ``/docs``, ``/openapi.json`` and the dashboard's page and
static files stay open (no corpus data). Missing or bad credential → 401 with
``WWW-Authenticate: Bearer``; missing scope → 403 ``insufficient_scope``; over the key's rate →
429 with ``Retry-After``. On ``/chat`` these come in the full /chat contract (``estado='error'``).

Collections. A key (or OIDC token) restricted to collections reads only those: ``ReadScope`` /
``ChatScope`` give the endpoint the caller's ``AccessScope`` and ``scoped_retrieval`` the
``RetrievalService.for_scope`` view, which restricts candidates inside the search and answers 404
for chunks and documents outside the scope, as for ones that do not exist. The precompute
aggregates and the dashboard figures count only the caller's collections (their rows are kept per
collection and folded inside the query: ``PrecomputeReader.scoped``); ``admin`` endpoints (keys,
the audit log, others' traces) need an unrestricted credential (403
``admin_requires_all_collections``).

Purposes. A key (or OIDC token, claim ``radar_purpose``) with a purpose is narrowed on every request
by the purpose policy (``radar_pipeline.purpose``, a TOML file): ``AccessControl.apply_purpose``
refuses an endpoint outside the purpose (403 ``purpose_forbids_endpoint``, or ``unknown_purpose``
when the policy no longer defines it, each with its reason) and narrows the principal's scopes and
collections before the scope check, so the collection restrictions above apply to the result.

Modes (``AccessControl.mode``): ``required`` — every scoped endpoint needs a credential;
``open`` — the embedded default when the server is bound to loopback and no key or OIDC is
configured: requests from loopback peers are served, anything else is refused (403).
``radar serve`` picks the mode and refuses a non-loopback bind without authentication;
``uvicorn api.main:app`` is always ``required``.

Open mode is single-user by design: it cannot tell one local caller from another, so what belongs
to a caller is not served to an anonymous one. A request with no credential gets ``OPEN_SCOPES``
(read, chat, review: the corpus, the dashboard, /chat, review queues), never ``admin``; traces
(``/traces/{run_id}``), the audit log (``/audit``) and keys (``/keys``) answer 403
``open_mode_requires_key`` with how to create a key (``OPEN_MODE_MESSAGE``). A credential sent in
open mode is verified as in ``required`` mode: a valid key is that key (its scopes, collections and
own traces), and an invalid, revoked or expired one — or an ``Authorization``/``X-API-Key`` header
that is no credential at all — is 401, never silently ignored. Why refuse rather than hand out a
per-client token: the open mode has no identity to bind one to (a token the server gave any local
caller who asked would prove only that someone local asked, and runs made before it was issued
could not be assigned to anyone), and a token a client keeps and sends is exactly what an API key
already is — so, as FastAPI services do for per-user data (an OAuth2/API-key dependency and a 401/403
that says how to authenticate), per-user data waits for a key.

Every request except health/docs/static is written to the ``audit_log`` table (when a database is
available) by ``AuditMiddleware``: key id and name, route, status, the question or query string and
every ``chunk_id`` in the response body (the final event of a stream included). The same middleware
rejects bodies over ``RADAR_AUTH_MAX_BODY_BYTES`` with 413 before the app parses them.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal
from urllib.parse import unquote_plus

import anyio
from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from radar_pipeline.access import SCOPES, AuditLog, KeyStore, PgTokenBucket, Principal, TokenBucket
from radar_pipeline.agent.service import spool_for
from radar_pipeline.collection import AccessScope
from radar_pipeline.purpose import PurposePolicy, Refusal

log = logging.getLogger("radar.api.security")

OPEN_SCOPES = frozenset({"read", "chat", "review"})  # an anonymous loopback caller: never ``admin``
OPEN_MODE_MESSAGE = (
    "el modo abierto (sin claves, solo localhost) es de un solo usuario y no identifica a quien llama: "
    "las trazas, la auditoría y las claves necesitan una credencial. Cree una con "
    "`radar keys create --name NOMBRE --scopes read,chat` (añada admin para la auditoría) y envíela como "
    "'Authorization: Bearer <clave>'; con una clave activa, `radar serve` la exige a todos"
)
LOOPBACK_PEERS = {"testclient"}  # Starlette's TestClient peer name; a real socket peer is an IP address
UNAUDITED = ("/health", "/docs", "/redoc", "/openapi.json", "/tablero/static", "/favicon.ico")


class AuthSettings(BaseSettings):
    """``RADAR_AUTH_*``: OIDC provider, rate limit, body limit and CORS allow-list."""

    model_config = SettingsConfigDict(env_prefix="RADAR_AUTH_", extra="ignore", use_attribute_docstrings=True)

    oidc_issuer: str | None = Field(None, description="expected ``iss`` of OIDC tokens")
    oidc_audience: str | None = Field(None, description="expected ``aud`` of OIDC tokens")
    oidc_jwks_url: str | None = Field(None, description="the provider's JWKS document")
    oidc_algorithms: list[str] = Field(default_factory=lambda: ["RS256", "ES256"])
    """accepted signature algorithms of OIDC tokens (JSON list)"""
    oidc_name_claim: str = "preferred_username"
    """token claim that names the caller in the audit log"""
    oidc_collections_claim: str = "radar_collections"
    """token claim listing the access collections the caller may read"""
    oidc_purpose_claim: str = "radar_purpose"
    """token claim naming the caller's purpose (the purpose policy, README "Access")"""
    rate_per_minute: float = Field(120.0, gt=0, description="sustained requests per minute per key")
    rate_burst: float = Field(30.0, ge=1, description="bucket size (requests at once)")
    rate_backend: Literal["memory", "postgres"] = Field(
        "memory",
        description="where the buckets live: 'memory' (one process) or 'postgres' (shared by every API "
        "process on the database: set it when running more than one worker)",
    )
    max_body_bytes: int = Field(65_536, ge=1024, description="largest request body; more → 413")
    cors_origins: list[str] = Field(default_factory=list, description="allowed browser origins; empty = none")

    @property
    def oidc_enabled(self) -> bool:
        return bool(self.oidc_issuer and self.oidc_audience and self.oidc_jwks_url)


class OIDCVerifier:
    """Bearer JWTs of one OIDC provider, verified with PyJWT against its JWKS (cached 5 minutes)."""

    def __init__(self, settings: AuthSettings):
        import jwt

        self.settings = settings
        self._jwt = jwt
        self._jwks = jwt.PyJWKClient(settings.oidc_jwks_url, cache_keys=True, lifespan=300, timeout=5)

    def verify(self, token: str) -> Principal | None:
        """The token's principal, or None when the signature, issuer, audience or expiry is wrong."""
        jwt = self._jwt
        s = self.settings
        try:
            key = self._jwks.get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=s.oidc_algorithms,
                audience=s.oidc_audience,
                issuer=s.oidc_issuer,
                options={"require": ["exp", "iss", "aud", "sub"]},
                leeway=30,
            )
        except (jwt.PyJWTError, ValueError) as exc:
            log.info("OIDC token rejected: %s", type(exc).__name__)
            return None
        raw = claims.get("scope", claims.get("scp", ""))
        items = raw.split() if isinstance(raw, str) else list(raw or [])
        scopes = {i.split(":", 1)[-1] if i.startswith("radar:") else i for i in items if isinstance(i, str)}
        colls = claims.get(s.oidc_collections_claim)
        purpose = claims.get(s.oidc_purpose_claim)
        return Principal(
            key_id=f"oidc:{claims['sub']}"[:200],
            name=str(claims.get(s.oidc_name_claim) or claims["sub"])[:200],
            scopes=frozenset(scopes & set(SCOPES)),
            auth="oidc",
            collections=tuple(str(c) for c in colls) if isinstance(colls, list) else None,
            purpose=str(purpose)[:80] if isinstance(purpose, str) and purpose else None,
        )


@dataclass
class AccessControl:
    """The app's access policy (``app.state.access``); see the module docstring for the modes.

    ``keys``/``audit`` are built lazily from the service's engine (``bind``); ``limiter`` is one
    token bucket per principal, in this process or, with ``rate_backend='postgres'``, in the
    database (``limit``).
    """

    mode: Literal["required", "open"]
    settings: AuthSettings = field(default_factory=AuthSettings)
    oidc: OIDCVerifier | None = None
    limiter: TokenBucket | None = None
    purposes: PurposePolicy | None = None
    _service: Any = None
    _keys: KeyStore | None = None
    _audit: AuditLog | None = None
    _shared: PgTokenBucket | None = None

    def __post_init__(self):
        if self.limiter is None:
            self.limiter = TokenBucket(self.settings.rate_per_minute / 60.0, self.settings.rate_burst)
        if self.oidc is None and self.settings.oidc_enabled:
            self.oidc = OIDCVerifier(self.settings)
        if self.purposes is None:  # read at start: a malformed policy stops the app, never a request
            self.purposes = PurposePolicy.from_env()

    @classmethod
    def required(cls, settings: AuthSettings | None = None) -> AccessControl:
        """Credentials required on every scoped endpoint (production, ``api.main:app``)."""
        return cls("required", settings or AuthSettings())

    @classmethod
    def open_loopback(cls, settings: AuthSettings | None = None) -> AccessControl:
        """No credential needed, loopback peers only (``radar serve`` on 127.0.0.1 with no key; tests)."""
        return cls("open", settings or AuthSettings())

    def bind(self, service) -> AccessControl:
        """Attach the ``AgentService`` whose engine holds ``api_keys`` and ``audit_log``."""
        self._service = service
        return self

    def _engine(self):
        return self._service.engine() if self._service is not None else None

    def keys(self) -> KeyStore | None:
        """The key store, or None without a database."""
        if self._keys is None and self._engine() is not None:
            self._keys = KeyStore(self._engine(), purposes=self.purposes)
        return self._keys

    def audit(self) -> AuditLog | None:
        """The audit log, or None without a database."""
        if self._audit is None and self._engine() is not None:
            self._audit = AuditLog(self._engine(), spool=spool_for("audit"))
        return self._audit

    def limit(self, key_id: str) -> float:
        """Take a rate-limit token for ``key_id``: 0.0, or the seconds until one is available. With
        ``rate_backend='postgres'`` the bucket is the database's (shared by every API process;
        the in-process bucket counts while the database is unreachable)."""
        if self.settings.rate_backend == "postgres" and self._shared is None and self._engine() is not None:
            self._shared = PgTokenBucket(self._engine(), self.limiter.rate, self.limiter.burst, fallback=self.limiter)
        return (self._shared or self.limiter).take(key_id)

    def apply_purpose(self, principal: Principal, request: Request) -> Principal:
        """The principal as its purpose narrows it for this request's endpoint (scopes and
        collections, ``PurposePolicy.grant``), or a 403 with the policy's code and reason. A
        principal without a purpose is returned as is."""
        if principal.purpose is None:
            return principal
        route = request.scope.get("route")
        template = getattr(route, "path", None) or request.url.path
        got = self.purposes.grant(principal.purpose, template, principal.scopes, principal.collections)
        if isinstance(got, Refusal):
            raise _deny(403, got.code, got.message)
        return replace(principal, scopes=got.scopes, collections=got.collections)

    def describe(self) -> str:
        """What ``/health`` says about authentication (never which keys exist)."""
        if self.mode == "open":
            return "open (loopback only)"
        return "required (api keys" + (" + oidc)" if self.oidc else ")")

    def authenticate(self, request: Request, bearer: str | None, api_key: str | None) -> Principal:
        """The caller's principal, or an ``HTTPException`` 401/403/503.

        In open mode a loopback caller without any credential header is the anonymous open
        principal (``OPEN_SCOPES``); a credential header is verified as in ``required`` mode, so an
        invalid one is a 401 in both modes (module docstring)."""
        token = api_key or bearer
        sent = any(request.headers.get(h) is not None for h in ("authorization", "x-api-key"))
        if sent and not token:  # "Authorization: Basic …", an empty "Bearer", an empty X-API-Key
            raise _deny(401, "invalid_credentials", "cabecera de credencial no válida (use Authorization: Bearer)")
        if self.mode == "open":
            host = request.client.host if request.client else ""
            if not _is_loopback(host):
                raise _deny(403, "loopback_only", "este servidor sin autenticación solo atiende a localhost")
            if not sent:
                return Principal("open", "acceso local abierto", OPEN_SCOPES, auth="open")
        if not token:
            raise _deny(401, "unauthenticated", "falta la credencial (Authorization: Bearer o X-API-Key)")
        principal = None
        if token.startswith("radar_"):
            keys = self.keys()
            if keys is None:
                raise _deny(503, "auth_unavailable", "no se pueden verificar credenciales sin la base de datos")
            principal = keys.verify(token)
        elif self.oidc is not None and bearer and token.count(".") == 2:
            principal = self.oidc.verify(token)
        if principal is None:
            raise _deny(401, "invalid_credentials", "credencial inválida, revocada o vencida")
        return principal


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_PEERS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_host(host: str) -> bool:
    """True for a bind address that only loopback peers can reach (``127.0.0.1``, ``::1``, ``localhost``)."""
    return host == "localhost" or (_is_loopback(host) and host not in LOOPBACK_PEERS)


def _deny(status: int, code: str, message: str, headers: dict | None = None) -> HTTPException:
    hdrs = dict(headers or {})
    if status == 401:
        hdrs["WWW-Authenticate"] = 'Bearer realm="radar"'
    return HTTPException(status, detail={"code": code, "message": message}, headers=hdrs or None)


_bearer = HTTPBearer(auto_error=False, description="Clave de API (radar_…) o JWT del proveedor OIDC")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="Clave de API (radar_…)")


class AuditHolder:
    """Per-request slot the scope dependency fills (principal) and the audit middleware reads."""

    __slots__ = ("principal",)

    def __init__(self):
        self.principal: Principal | None = None


def require(*scopes: str):
    """A dependency that authenticates the caller, checks that it holds one of ``scopes`` and takes
    a rate-limit token. Returns the ``Principal``.

    The principal is also kept in ``request.state.radar_principal`` for ``access_scope``. A
    collection-restricted principal is refused (403 ``admin_requires_all_collections``) where only
    ``admin`` is accepted: an admin of some collections could otherwise mint keys for all of them
    or read every key's audit rows.
    """
    if not scopes or any(s not in SCOPES for s in scopes):
        raise ValueError(f"unknown scope in {scopes!r}")
    scope = "|".join(scopes)

    def dependency(
        request: Request,
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        api_key: Annotated[str | None, Depends(_api_key)],
    ) -> Principal:
        access: AccessControl = request.app.state.access
        principal = access.authenticate(request, bearer.credentials if bearer else None, api_key)
        holder = request.scope.get("radar.audit")
        if holder is not None:
            holder.principal = principal
        principal = access.apply_purpose(principal, request)  # 403 outside its purpose
        if not any(principal.allows(s) for s in scopes):
            if principal.auth == "open":
                raise _deny(403, "open_mode_requires_key", OPEN_MODE_MESSAGE)
            raise _deny(403, "insufficient_scope", f"la credencial no tiene el alcance '{scope}'")
        if principal.collections is not None and set(scopes) == {"admin"}:
            raise _deny(
                403,
                "admin_requires_all_collections",
                "la administración requiere una credencial sin restricción de colecciones",
            )
        request.state.radar_principal = principal
        # per credential; the open loopback mode has none (one local user), so no bucket either
        wait = access.limit(principal.key_id) if principal.auth != "open" else 0.0
        if wait > 0:
            raise _deny(
                429,
                "rate_limited",
                "demasiadas solicitudes para esta credencial",
                {"Retry-After": str(max(1, int(wait + 0.999)))},
            )
        return principal

    dependency.__name__ = f"require_{'_or_'.join(scopes)}"
    dependency.radar_scope = scope  # type: ignore[attr-defined] - read by the route-coverage test
    return dependency


_read, _chat, _admin = require("read"), require("chat"), require("admin")
Read = Depends(_read)
Chat = Depends(_chat)
Admin = Depends(_admin)
ChatOrAdminPrincipal = Annotated[Principal, Depends(require("chat", "admin"))]
AdminPrincipal = Annotated[Principal, Depends(_admin)]
ReviewPrincipal = Annotated[Principal, Depends(require("review", "admin"))]  # retraction, impact


def scope_of(principal: Principal) -> AccessScope:
    """The ``AccessScope`` of a principal: its collections (None = all) and its key id."""
    return AccessScope.of(principal.collections, principal.key_id)


def _read_scope(principal: Annotated[Principal, Depends(_read)]) -> AccessScope:
    # the same callable as ``Read``: FastAPI solves it once per request (one rate-limit token)
    return scope_of(principal)


def _chat_scope(principal: Annotated[Principal, Depends(_chat)]) -> AccessScope:
    return scope_of(principal)


ReadScope = Annotated[AccessScope, Depends(_read_scope)]
ChatScope = Annotated[AccessScope, Depends(_chat_scope)]


def refuse_restricted(scope: AccessScope) -> None:
    """403 ``aggregate_not_scoped`` for a collection-restricted scope, where the data spans the whole
    corpus and cannot be restricted (the alias review queue: its items cite passages of every
    collection). The precompute aggregates and the dashboard no longer need it: they count the
    caller's collections only."""
    if scope.restricted:
        raise _deny(
            403,
            "aggregate_not_scoped",
            "estos datos abarcan todo el corpus y no pueden restringirse a las colecciones de esta credencial",
        )


def api_routes(app) -> list:
    """Every ``APIRoute`` of ``app``, routers included (FastAPI keeps included routers nested)."""
    from fastapi.routing import APIRoute

    out, stack = [], list(app.routes)
    while stack:
        r = stack.pop(0)
        if isinstance(r, APIRoute):
            out.append(r)
        elif getattr(r, "original_router", None) is not None:
            stack.extend(r.original_router.routes)
    return out


def route_scope(route) -> str | None:
    """The scope an ``APIRoute`` declares (None when it declares none); used by tests."""
    stack = list(route.dependant.dependencies)
    while stack:
        d = stack.pop()
        s = getattr(d.call, "radar_scope", None)
        if s:
            return s
        stack.extend(d.dependencies)
    return None


# -- the audit + body-size middleware (pure ASGI: streams pass through untouched)

_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
_CAPTURE_CAP = 4_000_000


class AuditMiddleware:
    """Rejects oversize bodies (413, before parsing) and writes one ``audit_log`` row per request."""

    def __init__(self, app, access: AccessControl, too_large_body):
        self.app = app
        self.access = access
        self.too_large_body = too_large_body  # (path) -> (content_type, bytes) for the 413 answer

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        holder = AuditHolder()
        scope["radar.audit"] = holder
        path = scope.get("path", "")
        limit = self.access.settings.max_body_bytes
        body = b""
        if scope.get("method") in _BODY_METHODS:
            declared = dict(scope.get("headers") or []).get(b"content-length")
            too_big = declared is not None and declared.isdigit() and int(declared) > limit
            while not too_big:
                msg = await receive()
                if msg["type"] == "http.disconnect":
                    return
                body += msg.get("body", b"")
                too_big = len(body) > limit
                if not msg.get("more_body"):
                    break
            if too_big:
                ctype, payload = self.too_large_body(path, limit)
                await send(
                    {
                        "type": "http.response.start",
                        "status": 413,
                        "headers": [(b"content-type", ctype.encode()), (b"connection", b"close")],
                    }
                )
                await send({"type": "http.response.body", "body": payload})
                await self._audit(scope, holder, 413, b"", b"", "", t0)
                return
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed and scope.get("method") in _BODY_METHODS:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        status = 500
        ctype = ""
        out = bytearray()

        async def capture(msg):
            nonlocal status, ctype
            if msg["type"] == "http.response.start":
                status = msg["status"]
                ctype = dict(msg.get("headers") or []).get(b"content-type", b"").decode("latin-1")
            elif msg["type"] == "http.response.body" and len(out) < _CAPTURE_CAP:
                if "json" in ctype or "event-stream" in ctype:
                    out.extend(msg.get("body", b""))
            await send(msg)

        try:
            await self.app(scope, replay, capture)
        finally:
            if not path.startswith(UNAUDITED):
                await self._audit(scope, holder, status, body, bytes(out), ctype, t0)

    async def _audit(self, scope, holder: AuditHolder, status: int, body: bytes, out: bytes, ctype: str, t0: float):
        if scope.get("path", "").startswith(UNAUDITED):
            return
        try:
            audit = self.access.audit()
        except Exception:  # noqa: BLE001 - no database: nothing to audit into (logged by the service)
            audit = None
        if audit is None:
            return
        p = holder.principal
        client = scope.get("client")
        row = {
            "at": _now(),
            "key_id": p.key_id if p else None,
            "key_name": p.name if p else None,
            "auth": p.auth if p else "none",
            "method": scope.get("method", ""),
            "route": scope.get("path", "")[:300],
            "status": status,
            "query": _query_of(scope, body),
            "chunk_ids": [],
            "run_id": None,
            "client": client[0] if client else None,
            "ms": round((time.perf_counter() - t0) * 1000, 2),
        }
        if 200 <= status < 300 and out:
            row["chunk_ids"], row["run_id"] = _received(out, ctype)
        await anyio.to_thread.run_sync(audit.write, row)


def _now():
    import datetime as dt

    return dt.datetime.now(dt.UTC)


def _query_of(scope, body: bytes) -> str | None:
    if body:
        try:
            data = json.loads(body)
        except ValueError:
            return body[:2000].decode("utf-8", "replace")
        if isinstance(data, dict) and isinstance(data.get("pregunta"), str):
            return data["pregunta"][:2000]
        return json.dumps(data, ensure_ascii=False)[:2000]
    qs = scope.get("query_string", b"").decode("latin-1")
    return unquote_plus(qs)[:2000] or None


def _received(out: bytes, ctype: str) -> tuple[list[str], str | None]:
    """Every ``chunk_id`` in a JSON body or in the JSON events of a stream, and the /chat run id."""
    docs = []
    if "event-stream" in ctype:
        for line in out.decode("utf-8", "replace").splitlines():
            if line.startswith("data: "):
                try:
                    docs.append(json.loads(line[6:]))
                except ValueError:
                    continue
    else:
        try:
            docs.append(json.loads(out))
        except ValueError:
            return [], None
    ids: list[str] = []
    seen: set[str] = set()
    run_id = None
    stack: list[Any] = docs
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "chunk_id" and isinstance(v, str) and v not in seen:
                    seen.add(v)
                    ids.append(v)
                elif k == "chunk_ids" and isinstance(v, list):
                    for c in v:
                        if isinstance(c, str) and c not in seen:
                            seen.add(c)
                            ids.append(c)
                elif k == "metadata" and isinstance(v, dict) and isinstance(v.get("run_id"), str):
                    run_id = v["run_id"]
                    stack.append(v)
                else:
                    stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(ids), run_id
