"""False premises through whole runs on the test corpus: offline (code verdict) and LLM (model proposal,
validated by code) against the fake OpenAI server."""

from __future__ import annotations

import json
import re

import pytest
import sqlalchemy as sa

from api.schemas import ChatResponse, assemble
from evals.fake_llm import FakeOpenAI, read_listed
from radar_pipeline.agent.llm import LLMClient, LLMSettings
from radar_pipeline.agent.roles import verifier
from radar_pipeline.agent.runner import AgentConfig, AgentRunner
from radar_pipeline.agent.service import AgentService, ServiceSettings
from tests.radar_pipeline.agent.support_corpus import build_index, doc_id_of
from tests.radar_pipeline.agent.support_index import OFFLINE_LLM

FALSE_PREMISE = "¿Por qué China nunca ha realizado una prueba antisatélite?"
TRUE_PREMISE = (
    "Dado que Corea del Norte lanzó el satélite de reconocimiento Malligyong-1 en 2023, ¿qué cambia en su doctrina?"
)


def _quotes_pass(first: str, read: dict[str, dict]) -> bool:
    """The premise sentence's quotes, one per line with its citation, pass the verifier (the restated
    premise is the question's claim and is not checked against the passage)."""
    cite = re.findall(r"\[[0-9a-f]{16}:[0-9a-f]{16}-\d+\]", first)[-1]
    lines = "\n".join(f"- «{q}» {cite}" for q in re.findall(r"«([^»]+)»", first))
    return bool(lines) and verifier.check_answer(lines, read).ok


def _run(runner_or_service, q):
    runner = runner_or_service.runner() if isinstance(runner_or_service, AgentService) else runner_or_service
    res = runner.run(q)
    resp = assemble(res)
    ChatResponse.model_validate(resp.model_dump(mode="json"))
    return res, resp


def _read(res) -> dict[str, dict]:
    return {
        p["chunk_id"]: p
        for t in res.tools_called
        if t["name"] == "read_chunks"
        for p in t["output"].get("passages", [])
    }


@pytest.fixture(scope="module")
def service_without_fengyun(tmp_path_factory, use_encoder) -> AgentService:
    """The same test corpus, minus the one passage stating China's 2007 ASAT test."""
    d = tmp_path_factory.mktemp("agent_index_no_fengyun") / "usem3"
    rows = build_index(d, use_encoder, drop=("Fengyun-1C",))
    assert not any("Fengyun" in r["text"] for r in rows)
    settings = ServiceSettings(index_dir=d, use_database=False, trace=False, llm=LLMSettings(**OFFLINE_LLM))
    return AgentService(settings, encoder=use_encoder)


def test_false_premise_contradicted_by_a_read_passage(offline_service):
    res, resp = _run(offline_service, FALSE_PREMISE)
    p = resp.premisa
    assert p is not None and p.estado == "falsa", (res.respuesta, p)
    assert p.texto == "China nunca ha realizado una prueba antisatélite"
    read = _read(res)
    # the citation is a passage read in this run, and it states the test
    assert p.cita is not None and p.cita.chunk_id in read and read[p.cita.chunk_id]["doc_id"] == p.cita.doc_id
    assert "Fengyun-1C" in p.fragmento and p.fragmento in read[p.cita.chunk_id]["text"]
    # the answer opens with the premise sentence, whose citation passes the verifier
    first = resp.respuesta.split("\n\n")[0]
    assert first.startswith(f"La pregunta da por sentado que {p.texto}, pero no es así: un pasaje leído")
    assert f"[{p.cita.doc_id}:{p.cita.chunk_id}]" in first and _quotes_pass(first, read)
    assert p.cita.chunk_id in [c.chunk_id for c in resp.citas]
    # the premise had its own search among the ≤ 8 tool calls, and the verdict is in the trace steps
    queries = [t["input_parameters"].get("query") for t in res.tools_called if t["name"] == "search_evidence"]
    assert any(q and q.startswith("China nunca ha realizado") for q in queries)
    assert len(res.tools_called) <= 8
    steps = [s for s in res.steps if s.role == "verificador" and "premisa" in s.detail]
    assert steps and steps[-1].detail["premisa"]["estado"] == "falsa" and steps[-1].detail["fuente"] == "reglas"


def test_same_question_without_the_passage_is_unverified(service_without_fengyun):
    res, resp = _run(service_without_fengyun, FALSE_PREMISE)
    p = resp.premisa
    assert p is not None and p.estado == "no_verificada" and p.cita is None and p.fragmento is None, res.respuesta
    assert resp.respuesta.startswith(
        "La pregunta da por sentado que China nunca ha realizado una prueba antisatélite; no pude verificarlo"
    )
    assert "no es así" not in resp.respuesta and "lo confirma:" not in resp.respuesta


def test_true_premise_supported_with_citation(offline_service):
    res, resp = _run(offline_service, TRUE_PREMISE)
    p = resp.premisa
    assert p is not None and p.estado == "verdadera", (res.respuesta, p)
    read = _read(res)
    assert p.cita.chunk_id in read and "Malligyong-1" in p.fragmento and "2023" in p.fragmento
    first = resp.respuesta.split("\n\n")[0]
    assert ", y un pasaje leído lo confirma: «" in first and _quotes_pass(first, read)


def test_question_without_premise_has_null_premisa(offline_service):
    res, resp = _run(offline_service, "¿Qué incidentes recientes de spoofing han comprometido servicios satelitales?")
    assert resp.premisa is None and not resp.respuesta.startswith("La pregunta da por sentado")


def test_premise_verdict_is_stored_in_the_trace(db_client, agent_engine):
    body = db_client.post("/chat", json={"pregunta": FALSE_PREMISE}).json()
    assert body["premisa"]["estado"] == "falsa"
    with agent_engine.connect() as conn:
        run = conn.execute(
            sa.text("SELECT response FROM agent_runs WHERE run_id = :r"), {"r": body["metadata"]["run_id"]}
        ).one()
        details = (
            conn.execute(
                sa.text("SELECT detail FROM agent_steps WHERE run_id = :r ORDER BY step_no"),
                {"r": body["metadata"]["run_id"]},
            )
            .scalars()
            .all()
        )
    assert run.response["premisa"] == body["premisa"]
    found = [d["premisa"] for d in details if d and "premisa" in d]
    assert found[0]["texto"] == body["premisa"]["texto"] and found[0]["polaridad"] == "negativa"  # ORCHESTRATE
    assert found[-1] == body["premisa"]  # VERIFY


# --------------------------------------------------------------------------- LLM mode
@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI() as f:
        yield f


def _llm_runner(fake, offline_service) -> AgentRunner:
    settings = LLMSettings(
        base_url=fake.base_url, api_key="k", model_large="big", model_small="small", timeout_s=5.0, max_retries=0
    )
    return AgentRunner(offline_service.corpus, offline_service.encoder, llm=LLMClient(settings), config=AgentConfig())


def _claim(estado: str, key: str):
    """A premise-role reply claiming ``estado``, citing the fenced passage with ``key`` and quoting its sentence."""

    def reply(body):
        user = body["messages"][1]["content"]
        blocks = re.findall(
            r"<<<PASAJE \[([0-9a-f]{16}):([0-9a-f]{16}-\d+)\][^\n]*\n(.*?)\n<<<FIN PASAJE>>>", user, re.S
        )
        doc, chunk, text = next(b for b in blocks if key in b[2])
        span = next(s for s in re.split(r"(?<=\.)\s+", text) if key in s)
        return {"content": json.dumps({"estado": estado, "chunk_id": f"{doc}:{chunk}", "fragmento": span})}

    return reply


def test_llm_false_claim_citing_a_passage_that_does_not_contradict_is_downgraded(fake, offline_service):
    fake.reset()
    fake.script(
        "orquestador",
        {"content": '{"tipo": "pregunta", "ruta": "text", "formulaciones": ["Chinese anti-satellite ASAT test"]}'},
    )
    # the analyst reads the passage on the Russian test too; the model then cites it as contradicting the
    # premise, but it says nothing about China
    kosmos = f"{doc_id_of('space_security/asat_debris.txt')}-1"
    fake.script("analista", lambda b: read_listed(b, extra_ids=(kosmos,)))
    fake.script("premisa", _claim("falsa", "Kosmos 1408"))
    res, resp = _run(_llm_runner(fake, offline_service), FALSE_PREMISE)
    assert fake.calls("premisa"), "the premise role was asked"
    p = resp.premisa
    assert p is not None and p.estado == "no_verificada" and p.cita is None, (res.respuesta, p)
    assert resp.respuesta.startswith("La pregunta da por sentado que") and "no pude verificarlo" in resp.respuesta
    step = [s for s in res.steps if "premisa" in s.detail and "motivo" in s.detail][-1]
    assert step.detail["fuente"] == "modelo" and step.detail["motivo"].startswith("propuesta_no_validada")


def test_llm_false_claim_with_a_contradicting_span_is_kept(fake, offline_service):
    fake.reset()
    fake.script(
        "orquestador",
        {"content": '{"tipo": "pregunta", "ruta": "text", "formulaciones": ["Chinese anti-satellite ASAT test"]}'},
    )
    fake.script("premisa", _claim("falsa", "Fengyun-1C"))
    res, resp = _run(_llm_runner(fake, offline_service), FALSE_PREMISE)
    p = resp.premisa
    assert p is not None and p.estado == "falsa" and "Fengyun-1C" in p.fragmento, (res.respuesta, p)
    read = _read(res)
    first = resp.respuesta.split("\n\n")[0]
    assert ", pero no es así: un pasaje leído" in first and _quotes_pass(first, read)
