"""Shared by the history tests (tests/api, tests/radar_cli): three Codefest mini-corpus files
materialized into a real knowledge base and index (real USE vectors, FAISS, BM25), and a TestClient
over a PostgreSQL-backed offline service."""

from __future__ import annotations

import shutil
from pathlib import Path

import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.main import create_app
from api.security import AccessControl
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.agent.trace import ensure_agent_schema
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.retrieval.search import retrieval_fingerprint_config
from radar_pipeline.stages import (
    build_bm25_index,
    build_faiss_index,
    chunk_documents,
    embed_chunks,
    extract_documents,
    sync_source_files,
)
from radar_pipeline.stores.integrity import index_version_of
from tests.radar_pipeline.agent.support_index import OFFLINE_LLM

FILES = ("F1-CSET-005.txt", "F1-ATLCOUNCIL-009.txt", "F3-RESDAL-094.txt")
QUESTION = "¿Qué deben hacer los desarrolladores de modelos de IA de frontera según la ley de California?"


def materialize(engine, root: Path, index_dir: Path, encoder) -> str:
    sync_source_files(engine, root)
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine, budget=120)
    embed_chunks(engine, encoder)
    build_faiss_index(
        engine, encoder.name, index_dir, encoder_version=encoder.version, retrieval=retrieval_fingerprint_config()
    )
    build_bm25_index(index_dir)
    return index_version_of(index_dir)


def client_for(engine, pg_url, index_dir, encoder) -> tuple[TestClient, AgentService]:
    settings = ServiceSettings(
        index_dir=index_dir, use_database=True, trace=True, database_url=pg_url, llm=LLMSettings(**OFFLINE_LLM)
    )
    service = AgentService(settings, encoder=encoder, engine=engine)
    return TestClient(create_app(service=service, access=AccessControl.open_loopback())), service


def build_world(engine, tmp_path: Path, shared_dir: Path, encoder) -> dict:
    """The three files copied under ``tmp_path/corpus`` (writable) and materialized; an empty
    ``agent_runs``. Returns ``root``, ``index_dir`` and the index's ``version``."""
    ensure_agent_schema(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM agent_runs"))
    root = tmp_path / "corpus"
    root.mkdir()
    for name in FILES:
        shutil.copy(shared_dir / "eval" / "codefest_mini_corpus" / name, root / name)
        (root / name).chmod(0o644)
    index_dir = tmp_path / "indexes" / encoder.name
    version = materialize(engine, root, index_dir, encoder)
    return {"root": root, "index_dir": index_dir, "version": version}
