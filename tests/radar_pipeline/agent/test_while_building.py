"""A question asked while Radar builds its index (issue 24 §4): /chat says in Spanish what is being
built and how far, not "not materialized"; a `both` or visualization route still returns its view;
/health and the dashboard say it too. Real runner (offline: rule guard, router, extractive writer),
real encoder, the file `radar up` publishes (radar_pipeline.build_status) in a temporary RADAR_HOME."""

from __future__ import annotations

import importlib
import time

import pytest
from fastapi.testclient import TestClient

from api.dashboard.data import NotMaterialized
from api.main import create_app
from api.schemas import ChatResponse, assemble
from api.security import AccessControl
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.build_status import BuildStage, default_path, write_build_status
from tests.radar_pipeline.agent.support_index import OFFLINE_LLM

BOTH = "Muéstrame la evolución de la basura espacial por pruebas ASAT y explica por qué es peligrosa"
VIEW = "Muéstrame la línea de tiempo de la minería ilegal"
QUESTIONS = ("¿Qué es la basura espacial?", "What do armed drones change at the border?")


@pytest.fixture()
def no_index(tmp_path, use_encoder):
    return AgentService(
        ServiceSettings(
            index_dir=tmp_path / "nothing", use_database=False, trace=False, llm=LLMSettings(**OFFLINE_LLM)
        ),
        encoder=use_encoder,
    )


@pytest.fixture()
def building(tmp_path, monkeypatch):
    """`radar up` building: the per-file stages done, the dense vectors half-way, BM25 queued."""
    monkeypatch.setenv("RADAR_HOME", str(tmp_path / "home"))
    stages = [
        BuildStage("source_files", "done", 359, 359, "files"),
        BuildStage("embeddings", "running", 1500, 3000, "chunks", rate=4.0, eta_s=375.0),
        BuildStage("bm25_index", "queued"),
    ]
    write_build_status(default_path(), stages, started=time.time() - 60)
    return stages


def _run(service, q):
    res = service.runner().run(q)
    ChatResponse.model_validate(assemble(res).model_dump(mode="json"))
    return res


def test_a_question_asked_while_building_is_told_what_is_built_and_how_far(no_index, building):
    for q in QUESTIONS:
        res = _run(no_index, q)
        assert res.estado == "incompleta" and res.termination_reason == "indice_en_construccion"
        assert "Radar está construyendo el índice de pasajes" in res.respuesta
        assert "vectores densos: 1.500 de 3.000 pasajes (50 %)" in res.respuesta
        assert "unos 7 minutos" in res.respuesta
        assert "no está materializado" not in res.respuesta and "radar materialize" not in res.respuesta


def test_without_a_build_the_missing_index_stays_a_service_error(no_index, tmp_path, monkeypatch):
    monkeypatch.setenv("RADAR_HOME", str(tmp_path / "idle"))
    res = _run(no_index, QUESTIONS[0])
    assert res.estado == "error" and res.termination_reason == "indice_no_disponible"
    assert "radar up" in res.respuesta


@pytest.mark.parametrize("build", [True, False])
def test_a_both_route_returns_its_view_when_passages_cannot_be_searched(no_index, tmp_path, monkeypatch, build):
    monkeypatch.setenv("RADAR_HOME", str(tmp_path / "home"))
    if build:
        write_build_status(default_path(), [BuildStage("chunks", "running", 10, 40, "chunks", 1.0, 30.0)])
    res = _run(no_index, BOTH)
    assert res.ruta == "both" and res.visualizacion is not None
    assert res.estado == "incompleta"
    assert res.termination_reason == ("indice_en_construccion" if build else "indice_no_disponible")
    assert "No pude buscar pasajes que respalden o expliquen estas cifras" in res.respuesta
    assert ("pasajes: 10 de 40 pasajes" in res.respuesta) is build


def test_a_visualization_route_returns_its_view_while_building(no_index, building):
    res = _run(no_index, VIEW)
    assert res.ruta == "visualization" and res.visualizacion is not None and res.estado != "error"


def test_health_and_the_dashboard_say_what_is_being_built(no_index, building):
    with TestClient(create_app(service=no_index, access=AccessControl.open_loopback())) as c:
        body = c.get("/health").json()
    assert body["construccion"]["en_curso"] is True
    assert body["construccion"]["mensaje"].startswith("Radar está construyendo el índice de pasajes")
    assert [s["key"] for s in body["construccion"]["stages"]] == ["source_files", "embeddings", "bm25_index"]

    def missing():
        raise NotMaterialized("agg_timeline")

    dashboard_router = importlib.import_module("api.dashboard.router")  # the module, not its APIRouter
    out = dashboard_router._guard(missing)
    assert out["materialized"] is False and out["construccion"].startswith("Radar está construyendo")


def test_health_says_nothing_is_built_when_no_radar_up_publishes(no_index, tmp_path, monkeypatch):
    monkeypatch.setenv("RADAR_HOME", str(tmp_path / "idle"))
    with TestClient(create_app(service=no_index, access=AccessControl.open_loopback())) as c:
        assert c.get("/health").json()["construccion"] is None
