"""``radar serve``, ``radar trace RUN_ID`` and ``radar keys`` (registered in ``radar_cli.main``).

They start the API (``api.main``), read the agent's trace store and manage API keys, so they live
above both.

``radar serve`` picks the access policy (``choose_access``): credentials required when an active
API key exists or OIDC is configured; otherwise open on a loopback bind (said at start-up and in
``/health``) and a refusal (exit code 2) on any other address.
"""

from __future__ import annotations

import json
import sys


def choose_access(host: str, active_keys: int, settings=None):
    """``(AccessControl | None, message)`` for a bind address and the number of active keys.

    None means: refuse to start (a non-loopback address without any authentication configured).
    """
    from api.security import AccessControl, AuthSettings, is_loopback_host

    settings = settings or AuthSettings()
    if active_keys > 0 or settings.oidc_enabled:
        how = f"{active_keys} active API key(s)" + (" + OIDC" if settings.oidc_enabled else "")
        return AccessControl.required(settings), f"authentication required ({how})"
    if is_loopback_host(host):
        return (
            AccessControl.open_loopback(settings),
            "WARNING: no API key or OIDC provider configured: the API is OPEN to loopback clients only, "
            "as one anonymous user: traces, the audit log and keys need a key "
            "(create one with `radar keys create --name NAME --scopes read,chat`)",
        )
    return None, (
        f"error: refusing to listen on {host} without authentication. Create an API key "
        "(`radar keys create --name NAME --scopes read,chat`) or configure OIDC "
        "(RADAR_AUTH_OIDC_ISSUER, RADAR_AUTH_OIDC_AUDIENCE, RADAR_AUTH_OIDC_JWKS_URL), or bind to 127.0.0.1."
    )


def serve(host: str = "127.0.0.1", port: int = 8000) -> int:
    """Start the agent API (FastAPI under uvicorn). Offline mode unless ``RADAR_LLM_BASE_URL`` is set.

    Docs at ``http://HOST:PORT/docs``; blocks until interrupted. Returns 2 without starting when
    ``host`` is not loopback and no authentication is configured (``choose_access``).
    """
    from radar_pipeline.access import KeyStore
    from radar_pipeline.agent.service import AgentService

    service = AgentService()
    active = 0
    engine = service.engine()
    if engine is not None:
        try:
            active = KeyStore(engine).count_active()
        except Exception as exc:  # noqa: BLE001 - unreadable key table: no key counts as configured
            print(f"warning: API keys unreadable ({type(exc).__name__}); counting none", file=sys.stderr)
    access, message = choose_access(host, active)
    print(message, file=sys.stderr)
    if access is None:
        service.close()
        return 2
    import uvicorn

    from api.main import create_app

    try:
        uvicorn.run(create_app(service=service, access=access), host=host, port=port, log_level="info")
    finally:
        service.close()
    return 0


def _key_store():
    from radar_pipeline.access import KeyStore
    from radar_pipeline.agent.service import AgentService

    engine = AgentService().engine()
    if engine is None:
        print("error: PostgreSQL is not available (DATABASE_URL or the embedded server)", file=sys.stderr)
        return None
    return KeyStore(engine)


def keys_create(
    name: str, scopes: str, collections: str | None, expires_days: int | None, purpose: str | None = None
) -> int:
    """Create a key and print its token once. Exit code 0, 1 on a bad argument (a purpose that does
    not allow its scopes or collections included), 2 without a database."""
    import datetime as dt

    from radar_pipeline.access import AccessError

    store = _key_store()
    if store is None:
        return 2
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(days=expires_days) if expires_days else None
    try:
        token, info = store.create(name, scopes, collections, expires, purpose=purpose)
    except AccessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"key_id: {info.key_id}\nname: {info.name}\nscopes: {','.join(info.scopes)}")
    print(f"collections: {','.join(info.collections) if info.collections else 'all'}")
    print(f"purpose: {info.purpose or 'none'}")
    print(f"expires: {info.expires_at.isoformat() if info.expires_at else 'never'}")
    print(f"\n{token}\n\nStore this key now: it is shown only once (only its SHA-256 is kept).")
    return 0


def keys_list(as_json: bool = False) -> int:
    """Print every key (never a token): id, name, scopes, collections, state, dates."""
    store = _key_store()
    if store is None:
        return 2
    rows = store.list()
    if as_json:
        print(json.dumps([{**k.__dict__, "active": k.active} for k in rows], default=str, indent=1))
        return 0
    for k in rows:
        state = "active" if k.active else ("revoked" if k.revoked_at else "expired")
        colls = ",".join(k.collections) if k.collections else "all"
        print(
            f"{k.key_id}  {state:<8} {k.name:<24} scopes={','.join(k.scopes)} collections={colls} "
            f"purpose={k.purpose or '-'} "
            f"created={k.created_at:%Y-%m-%d} last_used={k.last_used_at or '-'}"
        )
    return 0


def keys_revoke(key_id: str) -> int:
    """Revoke a key: 0 done (or already revoked), 1 unknown id, 2 without a database."""
    store = _key_store()
    if store is None:
        return 2
    if not store.revoke(key_id.strip()):
        print(f"error: no key {key_id}", file=sys.stderr)
        return 1
    print(f"revoked {key_id}")
    return 0


def trace(run_id: str, as_json: bool = False) -> int:
    """Print the stored trace of one /chat run. Returns a process exit code (0 found, 1 missing, 2 no DB)."""
    from radar_pipeline.agent.service import AgentService

    service = AgentService()
    store = service.store()
    if store is None:
        print("error: PostgreSQL is not available (DATABASE_URL or the embedded server)", file=sys.stderr)
        return 2
    data = store.load(run_id.strip())
    if data is None:
        print(f"error: no trace for run {run_id}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1, default=str))
    else:
        from radar_pipeline.agent.trace import format_trace

        print(format_trace(data))
    return 0
