"""Who may see what: API keys, OIDC tokens, scopes, traces of others, limits, audit, CORS, `radar serve`.

Real PostgreSQL (keys and audit rows), the real test index, a real JWKS served over HTTP by a local
server for the OIDC tokens. ``test_unauthorised_attempts`` runs every kind of unauthorised attempt
against every scoped endpoint and counts the attempts and the leaks (a leak: a 2xx answer, or any
passage id or passage text of the index in the body); the leaks must be 0.
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import jwt
import pytest
import sqlalchemy as sa
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient

from api.main import create_app
from api.security import AccessControl, AuthSettings, api_routes, route_scope
from radar_pipeline import db
from radar_pipeline.access import KeyStore, PgTokenBucket, TokenBucket, hash_token

ROOT = Path(__file__).resolve().parents[2]
ISSUER, AUDIENCE = "https://idp.test/realms/radar", "radar-api"


# -- fixtures


@pytest.fixture(scope="module")
def keys(agent_engine) -> KeyStore:
    return KeyStore(agent_engine)


@pytest.fixture(scope="module")
def tokens(keys) -> dict[str, str]:
    """One token per role: read, chat (two keys), admin, revoked, expired, collection-restricted."""
    out = {}
    for name, scopes in (("lector", "read"), ("chat-a", "chat,read"), ("chat-b", "chat"), ("admin", "admin")):
        out[name], _ = keys.create(f"test {name}", scopes)
    out["revoked"], info = keys.create("test revoked", "read,chat")
    keys.revoke(info.key_id)
    out["expired"], _ = keys.create("test expired", "read,chat", expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(1))
    out["restricted"], _ = keys.create("test restricted", "read,chat", collections="CSET")
    return out


class _JWKS(http.server.BaseHTTPRequestHandler):
    body = b"{}"

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def idp():
    """A local OIDC provider: its RSA key, a forger's key with the same kid, and its JWKS URL."""
    good = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(good.public_key()))
    handler = type("H", (_JWKS,), {"body": json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig"}]}).encode()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {"good": good, "forger": forger, "url": f"http://127.0.0.1:{server.server_port}/jwks.json"}
    server.shutdown()


def _jwt(key, *, scope="read chat", aud=AUDIENCE, iss=ISSUER, exp_in=300, sub="ana", **extra) -> str:
    now = int(time.time())
    claims = {"iss": iss, "aud": aud, "sub": sub, "iat": now, "exp": now + exp_in, "scope": scope, **extra}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})


def _settings(idp=None, **kw) -> AuthSettings:
    oidc = dict(oidc_issuer=ISSUER, oidc_audience=AUDIENCE, oidc_jwks_url=idp["url"]) if idp else {}
    return AuthSettings(**{"rate_per_minute": 6000, "rate_burst": 1000, **oidc, **kw})


@pytest.fixture(scope="module")
def api(db_service, idp, tokens):
    with TestClient(create_app(service=db_service, access=AccessControl.required(_settings(idp)))) as c:
        yield c


def _h(token: str | None, header: str = "bearer") -> dict:
    if token is None:
        return {}
    return {"Authorization": f"Bearer {token}"} if header == "bearer" else {"X-API-Key": token}


def _some_chunk(agent_index) -> dict:
    rows = agent_index[1]
    return rows[0]


# -- every route declares a scope


OPEN_PATHS = {
    "/health",
    "/",
    "/tablero",
    "/tablero/",
    "/tablero/juicio",
    "/openapi.json",
    "/docs",
    "/docs/oauth2-redirect",
    "/redoc",
}


def test_every_endpoint_declares_a_scope(offline_service):
    routes = api_routes(create_app(service=offline_service))
    assert len(routes) >= 20
    undeclared = [r.path for r in routes if r.path not in OPEN_PATHS and route_scope(r) is None]
    assert undeclared == []
    scopes = {r.path: route_scope(r) for r in routes}
    assert scopes["/chat"] == "chat" and scopes["/search"] == "read" and scopes["/keys"] == "admin"
    assert scopes["/tablero/api/vista/{view}"] == "read" and scopes["/traces/{run_id}"] == "chat|admin"
    assert scopes["/runs/{run_id}"] == "chat|admin"
    assert scopes["/tablero/api/juicio/items/{item_id}"] == "review"  # the judging page stores grades
    assert scopes["/health"] is None


def test_health_is_open_and_says_the_mode(api, client):
    assert api.get("/health").json()["auth"] == "required (api keys + oidc)"
    assert client.get("/health").json()["auth"] == "open (loopback only)"


# -- keys


def test_keys_are_stored_hashed(keys, tokens, agent_engine):
    with agent_engine.connect() as conn:
        rows = conn.execute(sa.select(db.api_keys)).mappings().all()
    stored = json.dumps([dict(r) for r in rows], default=str)
    for tok in tokens.values():
        secret = tok.split("_", 2)[2]  # the secret is url-safe base64 and may itself contain "_"
        assert len(secret) == 43
        assert tok not in stored and secret not in stored  # neither the token nor its secret
        assert hash_token(tok) in stored


def test_valid_key_reads_and_is_audited(api, tokens, agent_engine):
    for header in ("bearer", "x-api-key"):
        r = api.get("/search", params={"q": "desplazamiento forzado", "k": 3}, headers=_h(tokens["lector"], header))
        assert r.status_code == 200, r.text
    ids = sorted(p["chunk_id"] for p in r.json()["passages"])
    with agent_engine.connect() as conn:
        row = (
            conn.execute(
                sa.select(db.audit_log).where(db.audit_log.c.route == "/search").order_by(db.audit_log.c.id.desc())
            )
            .mappings()
            .first()
        )
    assert row["key_name"] == "test lector" and row["auth"] == "api_key" and row["status"] == 200
    assert "desplazamiento forzado" in row["query"]
    assert row["chunk_ids"] == ids and ids


def test_oidc_token_is_accepted_with_its_scopes(api, idp):
    good = _jwt(idp["good"], scope="radar:read", preferred_username="ana.lopez")
    assert api.get("/publications", headers=_h(good)).status_code == 200
    assert api.post("/chat", json={"pregunta": "hola"}, headers=_h(good)).status_code == 403  # no chat scope


def test_chat_trace_is_visible_to_its_key_and_admin_only(api, tokens):
    r = api.post("/chat", json={"pregunta": "¿Qué es el desplazamiento forzado?"}, headers=_h(tokens["chat-a"]))
    assert r.status_code == 200, r.text
    run_id = r.json()["metadata"]["run_id"]
    assert api.get(f"/traces/{run_id}", headers=_h(tokens["chat-a"])).json()["run"]["run_id"] == run_id
    assert api.get(f"/traces/{run_id}", headers=_h(tokens["admin"])).status_code == 200
    other = api.get(f"/traces/{run_id}", headers=_h(tokens["chat-b"]))
    assert other.status_code == 404 and run_id not in other.text.replace(f"/traces/{run_id}", "")
    # the answer reopened (GET /runs/{id}, issue 25 §2) follows the same owner rule
    mine = api.get(f"/runs/{run_id}", headers=_h(tokens["chat-a"]))
    assert mine.status_code == 200 and mine.json()["vigencia"] == {"estado": "vigente", "citas_no_vigentes": []}
    assert api.get(f"/runs/{run_id}", headers=_h(tokens["admin"])).status_code == 200
    other = api.get(f"/runs/{run_id}", headers=_h(tokens["chat-b"]))
    assert other.status_code == 404 and run_id not in other.text.replace(f"/runs/{run_id}", "")


def test_admin_manages_keys_over_http(api, tokens):
    r = api.post("/keys", json={"name": "via http", "scopes": ["read"]}, headers=_h(tokens["admin"]))
    assert r.status_code == 201, r.text
    new = r.json()
    assert api.get("/aggregates", headers=_h(new["token"])).status_code == 200
    listed = api.get("/keys", headers=_h(tokens["admin"])).json()
    assert new["key_id"] in {k["key_id"] for k in listed} and "token" not in json.dumps(listed)
    assert api.delete(f"/keys/{new['key_id']}", headers=_h(tokens["admin"])).json()["revoked"] is True
    assert api.get("/aggregates", headers=_h(new["token"])).status_code == 401
    bad = api.post("/keys", json={"name": "x", "scopes": ["root"]}, headers=_h(tokens["admin"]))
    assert bad.status_code == 400


# -- unauthorised attempts: count them and the leaks


def _attempt_targets(chunk: dict) -> list[tuple[str, str, dict | None]]:
    cid, did = chunk["chunk_id"], chunk["doc_id"]
    return [
        ("GET", "/search?q=desplazamiento%20forzado", None),
        ("GET", f"/documents/{did}/outline", None),
        ("GET", f"/documents/{did}/window?chunk_id={cid}&size=5", None),
        ("GET", f"/chunks/{cid}", None),
        ("GET", "/aggregates", None),
        ("GET", "/aggregates/timeline", None),
        ("GET", "/publications", None),
        ("GET", "/tablero/api/meta", None),
        ("GET", "/tablero/api/vista/timeline", None),
        ("POST", "/chat", {"pregunta": "¿Qué es el desplazamiento forzado?"}),
        ("POST", "/chat/stream", {"pregunta": "¿Qué es el desplazamiento forzado?"}),
        ("GET", "/keys", None),
        ("GET", "/audit", None),
    ]


def _leaks(r, rows) -> bool:
    """A 2xx answer, or any passage id / passage text of the index in the body."""
    if r.status_code < 400:
        return True
    body = r.text
    return any(row["chunk_id"] in body or row["text"][:60] in body for row in rows)


def test_unauthorised_attempts(api, tokens, idp, agent_index, db_service, keys, capsys):
    rows = agent_index[1]
    chunk = _some_chunk(agent_index)
    targets = _attempt_targets(chunk)
    key_id = tokens["lector"].split("_")[1]
    credentials = {
        "no key": None,
        "forged key (real id, wrong secret)": f"radar_{key_id}_{'A' * 43}",
        "forged key (unknown id)": "radar_0123456789ab_" + "B" * 43,
        "garbage bearer": "not-a-key",
        "revoked key": tokens["revoked"],
        "expired key": tokens["expired"],
        "forged JWT (other signing key)": _jwt(idp["forger"], scope="read chat admin"),
        "expired JWT": _jwt(idp["good"], exp_in=-3600, scope="read chat admin"),
        "JWT for another audience": _jwt(idp["good"], aud="other-api", scope="read chat admin"),
        "JWT from another issuer": _jwt(idp["good"], iss="https://evil.test", scope="read chat admin"),
        "unsigned JWT (alg none)": jwt.encode(
            {"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 300, "scope": "admin"},
            None,
            algorithm="none",
        ),
    }
    counts: dict[str, list[int]] = {}
    statuses: dict[int, int] = {}

    def attempt(kind, method, path, body, headers, expect, via=api, raw=None):
        if raw is not None:
            r = via.request(method, path, content=raw, headers={**headers, "content-type": "application/json"})
        else:
            r = via.request(method, path, json=body, headers=headers)
        counts.setdefault(kind, [0, 0])
        counts[kind][0] += 1
        counts[kind][1] += int(_leaks(r, rows))
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code in expect, (kind, method, path, r.status_code, r.text[:200])
        if path.startswith("/chat") and r.status_code in (401, 403):
            assert r.json()["metadata"]["estado"] == "error"  # the /chat contract, even when refused
        return r

    for kind, token in credentials.items():
        for header in ("bearer", "x-api-key") if token else ("bearer",):
            for method, path, body in targets:
                r = attempt(kind, method, path, body, _h(token, header), {401})
                if r.status_code == 401:
                    assert r.headers["www-authenticate"].startswith("Bearer")

    wrong_scope = [
        ("read key → chat", tokens["lector"], [t for t in targets if t[1].startswith("/chat")]),
        (
            "chat-only key → read",
            tokens["chat-b"],
            [t for t in targets if not t[1].startswith(("/chat", "/keys", "/audit"))],
        ),
        ("read+chat key → admin", tokens["chat-a"], [t for t in targets if t[1].startswith(("/keys", "/audit"))]),
        ("admin key → read", tokens["admin"], targets[:9]),
        # collections are enforced (tests/api/test_collections.py reads another collection every way,
        # aggregates and dashboard figures included, which count only the key's collections); what
        # stays refused to a restricted key is administration
        (
            "collection-restricted key → admin",
            tokens["restricted"],
            [t for t in targets if t[1].startswith(("/keys", "/audit"))],
        ),
        (
            "read-only JWT → chat/admin",
            _jwt(idp["good"], scope="read"),
            [t for t in targets if t[1].startswith(("/chat", "/keys", "/audit"))],
        ),
    ]
    for kind, token, subset in wrong_scope:
        for method, path, body in subset:
            attempt(f"wrong scope: {kind}", method, path, body, _h(token), {403})
    run = api.post("/chat", json={"pregunta": "¿Qué es el desplazamiento forzado?"}, headers=_h(tokens["chat-a"]))
    run_id = run.json()["metadata"]["run_id"]
    for who in ("chat-b", "revoked", "lector"):
        expect = {404} if who == "chat-b" else ({401} if who == "revoked" else {403})
        r = attempt("another key's trace", "GET", f"/traces/{run_id}", None, _h(tokens[who]), expect)
        assert run_id not in r.text.replace(f"/traces/{run_id}", "")

    oversize = b'{"pregunta": "' + b"x" * 70_000 + b'"}'
    for method, path in (("POST", "/chat"), ("POST", "/chat/stream"), ("POST", "/keys")):
        for who in ("chat-a", "admin", None):
            attempt("oversize body", method, path, None, _h(tokens[who] if who else None), {413}, raw=oversize)

    limited, _ = keys.create("test attempts rate", "read,chat")
    settings = AuthSettings(rate_per_minute=1, rate_burst=2)
    with TestClient(create_app(service=db_service, access=AccessControl.required(settings))) as slow:
        for _ in range(2):
            assert slow.get("/aggregates", headers=_h(limited)).status_code == 200
        for method, path, body in targets[:11]:
            r = attempt("over the rate limit", method, path, body, _h(limited), {429}, via=slow)
            assert int(r.headers["retry-after"]) >= 1

    total = sum(c[0] for c in counts.values())
    leaks = sum(c[1] for c in counts.values())
    with capsys.disabled():
        print(f"\n[access] {total} unauthorised attempts, {leaks} leaks; status codes {dict(sorted(statuses.items()))}")
        for kind, (n, leaked) in counts.items():
            print(f"[access]   {kind}: {n} attempts, {leaked} leaks")
    assert leaks == 0
    # 26 restricted-key attempts moved to test_collections.py earlier; the 3 on aggregates and the
    # dashboard moved there too, now that those count only the key's collections (374 there)
    assert total >= 320


def test_unauthorised_attempts_are_audited(api, agent_engine):
    api.get("/chunks/whatever", headers=_h("radar_0123456789ab_" + "C" * 43))
    with agent_engine.connect() as conn:
        row = (
            conn.execute(
                sa.select(db.audit_log)
                .where(db.audit_log.c.route == "/chunks/whatever")
                .order_by(db.audit_log.c.id.desc())
            )
            .mappings()
            .first()
        )
    assert row["status"] == 401 and row["key_id"] is None and row["auth"] == "none" and row["chunk_ids"] == []


# -- limits


def test_oversize_body_is_refused_before_parsing(api, tokens):
    big = {"pregunta": "x" * 70_000}
    r = api.post("/chat", json=big, headers=_h(tokens["chat-a"]))
    assert r.status_code == 413
    assert r.json()["metadata"]["motivo_terminacion"] == "solicitud_demasiado_grande"
    # without a Content-Length (chunked): counted while read, refused at the limit
    r = api.post(
        "/chat",
        content=iter([b'{"pregunta": "', b"y" * 40_000, b"y" * 40_000, b'"}']),
        headers={**_h(tokens["chat-a"]), "content-type": "application/json"},
    )
    assert r.status_code == 413
    # unauthenticated and oversize: 413 too, nothing parsed, nothing leaked
    assert (
        api.post("/keys", content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"}).status_code
        == 413
    )


def test_rate_limit_per_key(db_service, keys):
    settings = AuthSettings(rate_per_minute=60, rate_burst=3)
    token, _ = keys.create("test rate", "read,chat")
    other, _ = keys.create("test rate other", "read")
    with TestClient(create_app(service=db_service, access=AccessControl.required(settings))) as c:
        assert [c.get("/aggregates", headers=_h(token)).status_code for _ in range(3)] == [200, 200, 200]
        r = c.get("/aggregates", headers=_h(token))
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        assert r.json()["error"]["code"] == "rate_limited"
        chat = c.post("/chat", json={"pregunta": "hola"}, headers=_h(token))
        assert chat.status_code == 429 and chat.headers["retry-after"]
        assert chat.json()["metadata"]["estado"] == "error"
        assert chat.json()["metadata"]["motivo_terminacion"] == "limite_de_solicitudes"
        assert c.get("/aggregates", headers=_h(other)).status_code == 200  # buckets are per key


def test_two_app_instances_share_the_rate_limit_in_postgres(db_service, keys):
    """Two API instances (each with its own AccessControl, as two worker processes have) against one
    database: with the buckets in PostgreSQL a key gets its burst once in all; kept in memory, each
    instance would grant it again (the doubling this backend exists to prevent)."""
    token, _ = keys.create("test shared rate", "read")

    def run(backend: str) -> list[int]:
        settings = AuthSettings(rate_per_minute=1, rate_burst=4, rate_backend=backend)
        apps = [create_app(service=db_service, access=AccessControl.required(settings)) for _ in range(2)]
        with TestClient(apps[0]) as a, TestClient(apps[1]) as b:
            return [(a, b)[i % 2].get("/aggregates", headers=_h(token)).status_code for i in range(8)]

    assert run("memory") == [200] * 8  # 4 per instance: the limit doubled
    token, _ = keys.create("test shared rate pg", "read")
    assert run("postgres") == [200] * 4 + [429] * 4


def test_postgres_bucket_is_atomic_across_connections(agent_engine):
    """Concurrent takes from two engines (two processes' pools) never grant more than the burst."""
    engines = [db.create_engine(agent_engine.url.render_as_string(hide_password=False)) for _ in range(2)]
    buckets = [PgTokenBucket(e, rate=0.001, burst=10) for e in engines]
    key = f"atomic-{time.time_ns()}"
    results: list[float] = []
    start = threading.Barrier(4)

    def worker(bucket):
        start.wait()
        for _ in range(10):
            results.append(bucket.take(key))

    threads = [threading.Thread(target=worker, args=(buckets[i % 2],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in engines:
        e.dispose()
    assert len(results) == 40 and results.count(0.0) == 10
    assert all(w > 0 for w in results if w != 0.0)


def test_token_bucket_refills():
    b = TokenBucket(rate=2.0, burst=2)
    assert [b.take("k", now=0.0), b.take("k", now=0.0)] == [0.0, 0.0]
    assert b.take("k", now=0.0) == pytest.approx(0.5)
    assert b.take("k", now=0.5) == 0.0


# -- CORS and the open mode


def test_cors_closed_by_default_and_allow_list(db_service, api):
    pre = {"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
    r = api.options("/search", headers=pre)
    assert "access-control-allow-origin" not in r.headers
    settings = _settings(cors_origins=["https://tablero.example"])
    with TestClient(create_app(service=db_service, access=AccessControl.required(settings))) as c:
        ok = c.options("/search", headers={**pre, "Origin": "https://tablero.example"})
        assert ok.headers["access-control-allow-origin"] == "https://tablero.example"
        bad = c.options("/search", headers=pre)
        assert "access-control-allow-origin" not in bad.headers


def test_open_mode_serves_loopback_peers_only(offline_service):
    app = create_app(service=offline_service, access=AccessControl.open_loopback())
    with TestClient(app, client=("127.0.0.1", 5000)) as local:
        assert local.get("/publications").status_code == 200
    with TestClient(app, client=("10.1.2.3", 5000)) as remote:
        r = remote.get("/publications")
        assert r.status_code == 403 and r.json()["error"]["code"] == "loopback_only"
        assert remote.get("/health").status_code == 200


# -- the command line


def _cli(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "radar_cli", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_serve_refuses_a_public_bind_without_authentication():
    env = {"RADAR_AGENT_USE_DATABASE": "false", "RADAR_AUTH_OIDC_ISSUER": ""}
    r = _cli(["serve", "--host", "0.0.0.0", "--port", "1"], env)
    assert r.returncode == 2 and "refusing to listen on 0.0.0.0 without authentication" in r.stderr


def test_choose_access_rules(idp):
    from radar_cli.agent_commands import choose_access

    assert choose_access("0.0.0.0", 0, AuthSettings())[0] is None
    assert choose_access("192.168.1.10", 0, AuthSettings())[0] is None
    assert choose_access("127.0.0.1", 0, AuthSettings())[0].mode == "open"
    assert choose_access("::1", 0, AuthSettings())[0].mode == "open"
    assert choose_access("localhost", 0, AuthSettings())[0].mode == "open"
    assert choose_access("127.0.0.1", 1, AuthSettings())[0].mode == "required"  # a key exists: always required
    assert choose_access("0.0.0.0", 2, AuthSettings())[0].mode == "required"
    assert choose_access("0.0.0.0", 0, _settings(idp))[0].mode == "required"


def test_keys_command_line(pg_url):
    env = {"DATABASE_URL": pg_url}
    made = _cli(["keys", "create", "--name", "cli test", "--scopes", "read,chat", "--expires-days", "30"], env)
    assert made.returncode == 0, made.stderr
    token = next(line for line in made.stdout.splitlines() if line.startswith("radar_"))
    key_id = token.split("_")[1]
    listed = _cli(["keys", "list"], env)
    assert key_id in listed.stdout and token not in listed.stdout and "active" in listed.stdout
    assert _cli(["keys", "revoke", key_id], env).returncode == 0
    assert f"{key_id}  revoked" in _cli(["keys", "list"], env).stdout
    assert _cli(["keys", "revoke", "ffffffffffff"], env).returncode == 1
    assert _cli(["keys", "create", "--name", "x", "--scopes", "root"], env).returncode == 1


def test_audit_filter_with_control_characters_is_a_422_not_a_500(api, tokens):
    # schemathesis found it: a NUL in ?key_id= reached psycopg2, which raised (a bare 500)
    for bad in ("ab\x00cd", "x\x1fy"):
        r = api.get("/audit", params={"key_id": bad}, headers=_h(tokens["admin"]))
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["loc"] == ["query", "key_id"]
    assert api.get("/audit", params={"key_id": "0123456789ab"}, headers=_h(tokens["admin"])).status_code == 200


# -- the open loopback mode is single-user (issue 25.4)


@pytest.fixture(scope="module")
def open_api(db_service):
    """The open loopback mode over the real database (keys, audit, traces), as `radar serve` runs it
    on 127.0.0.1 with no key configured."""
    app = create_app(service=db_service, access=AccessControl.open_loopback(_settings()))
    with TestClient(app, client=("127.0.0.1", 5000)) as c:
        yield c


def test_open_mode_refuses_traces_audit_and_keys_and_says_how_to_get_a_key(open_api):
    """Anonymous local callers cannot be told apart: the run they just made, anyone's run, the audit
    log and the keys are refused with the way out (create a key); the corpus and /chat stay open."""
    mine = open_api.post("/chat", json={"pregunta": "¿Qué es el desplazamiento forzado?"})
    assert mine.status_code == 200 and mine.json()["metadata"]["estado"] != "error"
    run_id = mine.json()["metadata"]["run_id"]
    refused = [
        ("GET", f"/traces/{run_id}", None),  # its own run: it cannot prove it asked
        ("GET", "/traces/0123456789abcdef", None),
        ("GET", "/audit", None),
        ("GET", "/audit?limit=5&key_id=open", None),
        ("GET", "/keys", None),
        ("POST", "/keys", {"name": "escalada", "scopes": ["admin"]}),  # no admin key minted from loopback
        ("DELETE", "/keys/0123456789ab", None),
    ]
    for method, path, body in refused:
        r = open_api.request(method, path, json=body)
        assert r.status_code == 403, (path, r.status_code, r.text[:200])
        err = r.json()["error"]
        assert err["code"] == "open_mode_requires_key" and "radar keys create" in err["message"], path
        assert "pregunta" not in r.text and "desplazamiento" not in r.text
    assert open_api.get("/search", params={"q": "desplazamiento forzado", "k": 2}).status_code == 200
    assert open_api.get("/publications").status_code == 200


INVALID_HEADERS = {
    "garbage bearer": {"Authorization": "Bearer not-a-key"},
    "forged key": {"Authorization": "Bearer radar_0123456789ab_" + "B" * 43},
    "basic scheme": {"Authorization": "Basic dXNlcjpwYXNz"},
    "empty bearer": {"Authorization": "Bearer"},
    "bare word": {"Authorization": "token"},
    "garbage X-API-Key": {"X-API-Key": "radar_nope"},
    "empty X-API-Key": {"X-API-Key": ""},
    "unsigned JWT": {"Authorization": "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."},
}


def test_open_mode_rejects_an_invalid_credential_instead_of_ignoring_it(open_api, tokens):
    """Every kind of bad credential header, on read, chat and trace endpoints: 401 (the /chat
    contract on /chat), never the anonymous open access it would have got without the header."""
    headers = {**INVALID_HEADERS, "revoked key": _h(tokens["revoked"]), "expired key": _h(tokens["expired"])}
    n = 0
    for kind, hdrs in headers.items():
        for method, path, body in (
            ("GET", "/search?q=desplazamiento", None),
            ("GET", "/publications", None),
            ("POST", "/chat", {"pregunta": "¿Qué es el desplazamiento forzado?"}),
            ("GET", "/traces/0123456789abcdef", None),
            ("GET", "/audit", None),
        ):
            r = open_api.request(method, path, json=body, headers=hdrs)
            n += 1
            assert r.status_code == 401, (kind, path, r.status_code, r.text[:200])
            assert r.headers["www-authenticate"].startswith("Bearer")
            if path == "/chat":
                assert r.json()["metadata"]["estado"] == "error"
                assert r.json()["metadata"]["motivo_terminacion"] == "no_autenticado"
            else:
                assert r.json()["error"]["code"] == "invalid_credentials", kind
    assert n == 50


def test_open_mode_honours_a_valid_key_so_its_traces_are_its_own(open_api, tokens):
    """A key sent in open mode is that key: its runs' traces are readable by it alone (another key
    404, the anonymous caller 403), its scopes hold (a read key cannot chat), and an admin key reads
    the audit log."""
    r = open_api.post("/chat", json={"pregunta": "¿Qué es el desplazamiento forzado?"}, headers=_h(tokens["chat-a"]))
    assert r.status_code == 200, r.text
    run_id = r.json()["metadata"]["run_id"]
    for header in ("bearer", "x-api-key"):
        own = open_api.get(f"/traces/{run_id}", headers=_h(tokens["chat-a"], header))
        assert own.status_code == 200 and own.json()["run"]["run_id"] == run_id
    assert open_api.get(f"/traces/{run_id}", headers=_h(tokens["chat-b"])).status_code == 404
    assert open_api.get(f"/traces/{run_id}").json()["error"]["code"] == "open_mode_requires_key"
    assert open_api.get(f"/traces/{run_id}", headers=_h(tokens["admin"])).status_code == 200
    no_chat = open_api.post("/chat", json={"pregunta": "hola"}, headers=_h(tokens["lector"]))
    assert no_chat.status_code == 403 and no_chat.json()["metadata"]["motivo_terminacion"] == "no_autorizado"
    audit = open_api.get("/audit", params={"limit": 50}, headers=_h(tokens["admin"]))
    assert audit.status_code == 200 and any(row["run_id"] == run_id for row in audit.json())
    assert open_api.get("/audit", headers=_h(tokens["chat-a"])).json()["error"]["code"] == "insufficient_scope"


def test_oidc_purpose_claim_limits_the_token(api, idp):
    """An OIDC token's ``radar_purpose`` claim is a purpose like a key's (tests/api/test_purposes.py):
    the shipped ``tablero`` purpose reads the aggregates and refuses /chat and /search with its reason."""
    tok = _jwt(idp["good"], scope="read chat", radar_purpose="tablero")
    assert api.get("/aggregates", headers=_h(tok)).status_code == 200
    for method, path, body in (("GET", "/search?q=satellite", None), ("POST", "/chat", {"pregunta": "hola"})):
        r = api.request(method, path, json=body, headers=_h(tok))
        assert r.status_code == 403 and "'tablero'" in r.text, r.text
    unknown = _jwt(idp["good"], scope="read", radar_purpose="espionaje")
    r = api.get("/publications", headers=_h(unknown))
    assert r.status_code == 403 and r.json()["error"]["code"] == "unknown_purpose"
    plain = _jwt(idp["good"], scope="read chat")  # no claim: no purpose, its scopes only
    assert api.get("/search", params={"q": "satellite", "k": 1}, headers=_h(plain)).status_code == 200
