"""The served app on the crafted corpus: a dedicated database, the precomputes, an index, uvicorn.

Used by the browser tests (``conftest.py``) and by hand, to look at the dashboard on small data::

    .venv/bin/python -m tests.api.dashboard.support_server --port 8765     # then open http://127.0.0.1:8765/tablero/

The database is a separate one (``radar_dashboard_e2e``) on the same PostgreSQL server as the rest
of the suite, so other tests that drop and re-create tables don't touch it.
"""

from __future__ import annotations

import argparse
import signal
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from tests.api.dashboard import support_corpus as corpus

DB_NAME = "radar_dashboard_e2e"


def fresh_database(server_url: str, name: str = DB_NAME) -> str:
    """Drop and create database ``name`` on the server of ``server_url``; returns its URL."""
    from radar_pipeline import db

    url = sa.engine.make_url(db.normalize_url(server_url))
    admin = sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


@dataclass
class Prepared:
    url: str  # database URL
    engine: sa.Engine
    index_dir: Path
    n_passages: int
    stats: dict


def prepare(server_url: str, shared_dir: Path, workdir: Path, encoder, name: str = DB_NAME) -> Prepared:
    """Materialize the crafted corpus (core tables, precomputes, index) into a fresh database ``name``."""
    from radar_pipeline import db
    from radar_pipeline.agent.trace import ensure_agent_schema

    url = fresh_database(server_url, name)
    engine = db.create_engine(url)
    db.ensure_schema(engine)
    ensure_agent_schema(engine)
    corpus.add_documents(engine)
    stats = corpus.materialize(engine, shared_dir)
    index_dir = workdir / "index" / "usem3"
    n = corpus.build_index(engine, index_dir, encoder)
    return Prepared(url, engine, index_dir, n, stats)


def make_app(prep: Prepared, encoder, access=None):
    """The app over ``prep``; ``access`` an ``AccessControl`` (None: the open loopback default)."""
    from api.main import create_app
    from radar_pipeline.agent.llm import LLMSettings
    from radar_pipeline.agent.service import AgentService, ServiceSettings

    settings = ServiceSettings(
        index_dir=prep.index_dir,
        use_database=True,
        trace=True,
        database_url=prep.url,
        llm=LLMSettings(base_url=None, api_key=None, model_large=None, model_small=None),
    )
    return create_app(service=AgentService(settings, encoder=encoder, engine=prep.engine), access=access)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """uvicorn in a daemon thread; ``base`` is its URL once ``start()`` returns."""

    def __init__(self, app, port: int | None = None):
        import uvicorn

        self.port = port or free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(
                app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
            )
        )
        self.thread = threading.Thread(target=self.server.run, name="dashboard-uvicorn", daemon=True)
        self.base = f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _interrupt(*_):
    raise KeyboardInterrupt


def main() -> None:
    ap = argparse.ArgumentParser(description="Serve the dashboard on the crafted test corpus")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--shared", default=None)
    args = ap.parse_args()
    from radar_pipeline import db
    from radar_pipeline.encoders import UseEncoder
    from tests.conftest import SHARED

    work = Path(tempfile.mkdtemp(prefix="radar_dash_"))
    server_url = db.start_embedded_server(work / "pgdata")
    encoder = UseEncoder(threads=1)
    prep = prepare(server_url, Path(args.shared) if args.shared else SHARED, work, encoder)
    print(f"{prep.n_passages} passages; {prep.stats['dates']}")
    srv = ServerThread(make_app(prep, encoder), args.port).start()
    print(f"dashboard: {srv.base}/tablero/", flush=True)
    # SIGTERM exits like Ctrl-C, so the embedded PostgreSQL is stopped on the way out
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    main()
