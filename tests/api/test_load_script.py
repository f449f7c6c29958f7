"""evals/load_chat.py: loopback guard, percentiles, and a short real run against a uvicorn server."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
import uvicorn

from api.main import create_app
from evals.load_chat import is_loopback, main, percentile, run_load

pytestmark = pytest.mark.slow  # a real uvicorn server under load


def test_loopback_only():
    assert is_loopback("http://127.0.0.1:8000") and is_loopback("http://localhost:1") and is_loopback("http://[::1]:80")
    assert not is_loopback("http://10.0.0.5:8000") and not is_loopback("https://example.org")
    with pytest.raises(SystemExit):
        main(["--url", "http://192.168.1.10:8000", "--duration", "1"])


def test_percentile():
    assert percentile([], 50) is None
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50) == 5 and percentile(list(range(1, 101)), 95) == 95


def test_short_run(offline_service):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(service=offline_service), host="127.0.0.1", port=port, log_level="warning")
    )
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    while not server.started:
        time.sleep(0.05)
    try:
        rep = asyncio.run(
            run_load(
                f"http://127.0.0.1:{port}",
                ["¿Qué incidentes recientes de spoofing han comprometido servicios satelitales?", "Hola"],
                clients=3,
                duration=2.0,
                timeout=30,
                warmup=True,
            )
        )
    finally:
        server.should_exit = True
        t.join(10)
    assert rep["requests"] >= 3 and rep["errors"] == 0
    assert rep["latency_ms"]["p50"] <= rep["latency_ms"]["p95"] and set(rep["estados"]) <= {"respondida", "incompleta"}


def test_short_run_with_authentication_on(db_service, agent_engine):
    """The same load with authentication required: every request carries a real key (hashed in
    PostgreSQL) and succeeds; a client without one gets only 401s, never a 5xx."""
    from api.security import AccessControl, AuthSettings
    from radar_pipeline.access import KeyStore

    token, _ = KeyStore(agent_engine).create("load-test", ["chat"])
    settings = AuthSettings(rate_per_minute=6000, rate_burst=1000)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(service=db_service, access=AccessControl.required(settings))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    q = ["¿Qué incidentes recientes de spoofing han comprometido servicios satelitales?", "Hola"]
    try:
        rep = asyncio.run(run_load(url, q, clients=3, duration=2.0, timeout=30, warmup=True, api_key=token))
        anon = asyncio.run(run_load(url, q, clients=2, duration=1.0, timeout=30, warmup=False))
    finally:
        server.should_exit = True
        t.join(10)
    assert rep["requests"] >= 3 and rep["errors"] == 0
    assert set(rep["estados"]) <= {"respondida", "incompleta"}
    assert anon["requests"] >= 2 and set(anon["estados"]) == {"http_401"}
