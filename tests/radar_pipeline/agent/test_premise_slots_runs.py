"""Slot-based premises through whole offline runs on a small real index (real USE vectors, FAISS,
BM25): the premise's own search finds the passage about the event, the analyst reads it even when
it contradicts a slot, and the answer opens with the verdict citing it (issue 22, item 4)."""

from __future__ import annotations

import re

import polars as pl
import pytest

from api.schemas import ChatResponse, assemble
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.roles import verifier
from radar_pipeline.agent.roles.premise import extract_premise, search_query
from radar_pipeline.agent.service import AgentService, ServiceSettings
from tests.radar_pipeline.agent.support_corpus import DOCUMENTS, passage_rows
from tests.radar_pipeline.agent.support_index import OFFLINE_LLM
from tests.radar_pipeline.agent.test_premise_slots import COSMOS, DPRK, FENGYUN, INDIA, JAMUNDI

# the topical test corpus plus the event passages of the slot tests, each with a neighbour passage
# of its report (so the event passage competes with text on the same subject)
EVENTS = [
    (
        "space_security/csis_space_threat_2020.txt",
        "Space Threat Assessment 2020",
        "space_security",
        "en",
        [
            "India's space program has grown steadily, maintaining the SLVs and spaceports of India. " + INDIA,
            "What was perhaps most notable about the Indian ASAT test was the muted international outcry that "
            "occurred afterward, due in part to the minimal amount of orbital debris created.",
        ],
    ),
    (
        "space_security/swf_counterspace.txt",
        "Global Counterspace Capabilities",
        "space_security",
        "en",
        [FENGYUN, COSMOS],
    ),
    ("space_security/csis_dprk_2024.txt", "Space Threat Assessment 2024", "space_security", "en", [DPRK]),
    ("territorial/valle_2024.txt", "Informe Valle del Cauca 2024", "territorial", "es", [JAMUNDI]),
]


def _quotes_pass(first: str, read: dict[str, dict]) -> bool:
    """The premise sentence's quotes, one per line with its citation, pass the verifier (the restated
    premise is the question's claim and is not checked against the passage)."""
    cite = re.findall(r"\[[0-9a-f]{16}:[0-9a-f]{16}-\d+\]", first)[-1]
    lines = "\n".join(f"- «{q}» {cite}" for q in re.findall(r"«([^»]+)»", first))
    return bool(lines) and verifier.check_answer(lines, read).ok


def _rows() -> list[dict]:
    return passage_rows([*DOCUMENTS, *EVENTS])


@pytest.fixture(scope="module")
def service(tmp_path_factory, use_encoder) -> AgentService:
    from radar_pipeline.stores.bm25_store import Bm25Index
    from radar_pipeline.stores.faiss_store import build_flat_ip, save_index
    from radar_pipeline.stores.passages import save_passages

    d = tmp_path_factory.mktemp("premise_slots_index") / "usem3"
    frame = pl.DataFrame(_rows())
    texts = frame["text"].to_list()
    save_passages(frame, d)
    save_index(build_flat_ip(use_encoder.encode_passages(texts)), d)
    Bm25Index.build(texts).save(d)
    settings = ServiceSettings(index_dir=d, use_database=False, trace=False, llm=LLMSettings(**OFFLINE_LLM))
    return AgentService(settings, encoder=use_encoder)


def _read(res) -> dict[str, dict]:
    return {
        p["chunk_id"]: p
        for t in res.tools_called
        if t["name"] == "read_chunks"
        for p in t["output"].get("passages", [])
    }


RUNS = [
    # the question of the issue: India fired at one of its own satellites (Microsat-R), not a Chinese one
    ("¿Por qué India destruyó un satélite chino en 2019?", "falsa", "objeto_distinto", "its own satellites"),
    ("¿Cuándo derribó Rusia el Fengyun-1C?", "falsa", "actor_distinto", "Fengyun-1C"),
    (
        "Dado que Corea del Norte lanzó el satélite Malligyong-1 en 2021, ¿qué cambió en su doctrina?",
        "falsa",
        "conflicto_de_anio",
        "Malligyong-1",
    ),
    (
        "Dado que las disidencias de las FARC atacaron Jamundí en Antioquia en 2024, ¿qué respuesta hubo?",
        "falsa",
        "lugar_distinto",
        "Jamundí",
    ),
    ("¿Por qué China derribó el Fengyun-1C en 2007?", "verdadera", "respaldada", "Fengyun-1C"),
    ("¿Por qué Japón destruyó un satélite chino en 2015?", "no_verificada", "sin_evidencia", None),
]


@pytest.mark.parametrize(("question", "estado", "reason", "key"), RUNS, ids=[r[0][:50] for r in RUNS])
def test_premise_verdict_in_a_run(service, question, estado, reason, key):
    res = service.runner().run(question)
    resp = assemble(res)
    ChatResponse.model_validate(resp.model_dump(mode="json"))
    p = resp.premisa
    assert p is not None and p.estado == estado, (res.respuesta, p)
    step = [s for s in res.steps if s.role == "verificador" and "premisa" in s.detail][-1]
    assert step.detail["motivo"] == reason and step.detail["fuente"] == "reglas"
    first = resp.respuesta.split("\n\n")[0]
    if key is None:
        assert p.cita is None and first.startswith("La pregunta da por sentado que Japón destruyó")
        assert "no pude verificarlo" in first
        return
    read = _read(res)
    assert p.cita.chunk_id in read and key in p.fragmento and p.fragmento in read[p.cita.chunk_id]["text"]
    verdict = ", pero no es así: un pasaje leído" if estado == "falsa" else ", y un pasaje leído lo confirma: «"
    assert first.startswith(f"La pregunta da por sentado que {p.texto}{verdict}"), first
    assert f"[{p.cita.doc_id}:{p.cita.chunk_id}]" in first and _quotes_pass(first, read)
    assert p.cita.chunk_id in [c.chunk_id for c in resp.citas]
    # the premise's own search asked for the event, and its slots are in the trace
    queries = [t["input_parameters"].get("query") or "" for t in res.tools_called if t["name"] == "search_evidence"]
    assert search_query(extract_premise(question)) in queries, queries
    orchestrate = next(s for s in res.steps if "premisa" in s.detail and "ranuras" in s.detail["premisa"])
    assert orchestrate.detail["premisa"]["ranuras"]["accion"]
    assert len(res.tools_called) <= 8
