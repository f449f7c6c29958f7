"""Fixtures shared by tests/radar_pipeline/agent, tests/api and tests/radar_cli: a real small index (real USE vectors, real FAISS
and BM25), an offline AgentService over it, a TestClient, and a PostgreSQL-backed service."""

from __future__ import annotations

import pytest

from api.main import create_app
from api.security import AccessControl
from radar_pipeline import db
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.agent.trace import ensure_agent_schema
from tests.radar_pipeline.agent.support_corpus import build_index

OFFLINE_LLM = dict(base_url=None, api_key=None, model_large=None, model_small=None)


@pytest.fixture(scope="session")
def agent_index(tmp_path_factory, use_encoder):
    """``(index_dir, rows)`` of the test corpus, indirect-injection passages included."""
    d = tmp_path_factory.mktemp("agent_index") / "usem3"
    rows = build_index(d, use_encoder)
    return d, rows


@pytest.fixture(scope="session")
def planted_index(tmp_path_factory, use_encoder):
    """``(index_dir, rows)`` of the test corpus with the ``indirect_v2`` instructions planted inside its
    topical passages (no ``indirect.jsonl`` documents)."""
    d = tmp_path_factory.mktemp("planted_index") / "usem3"
    return d, build_index(d, use_encoder, with_attacks=False, plants_v2=True)


@pytest.fixture(scope="session")
def planted_client(planted_index, use_encoder):
    """A TestClient over an offline AgentService on ``planted_index``."""
    from fastapi.testclient import TestClient

    settings = ServiceSettings(
        index_dir=planted_index[0], use_database=False, trace=False, llm=LLMSettings(**OFFLINE_LLM)
    )
    with TestClient(create_app(service=AgentService(settings, encoder=use_encoder))) as c:
        yield c


@pytest.fixture(scope="session")
def offline_service(agent_index, use_encoder) -> AgentService:
    settings = ServiceSettings(
        index_dir=agent_index[0], use_database=False, trace=False, llm=LLMSettings(**OFFLINE_LLM)
    )
    return AgentService(settings, encoder=use_encoder)


@pytest.fixture(scope="session")
def client(offline_service):
    from fastapi.testclient import TestClient

    # loopback-open mode, explicitly: these apps test the API's behaviour, not its access control
    # (tests/api/test_access.py does that with keys, OIDC tokens and the unauthorised attempts)
    with TestClient(create_app(service=offline_service, access=AccessControl.open_loopback())) as c:
        yield c


@pytest.fixture(scope="session")
def agent_engine(pg_url):
    eng = db.create_engine(pg_url)
    ensure_agent_schema(eng)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def db_service(agent_index, use_encoder, agent_engine, pg_url) -> AgentService:
    settings = ServiceSettings(
        index_dir=agent_index[0], use_database=True, trace=True, database_url=pg_url, llm=LLMSettings(**OFFLINE_LLM)
    )
    return AgentService(settings, encoder=use_encoder, engine=agent_engine)


@pytest.fixture(scope="session")
def db_client(db_service):
    from fastapi.testclient import TestClient

    with TestClient(create_app(service=db_service, access=AccessControl.open_loopback())) as c:
        yield c
