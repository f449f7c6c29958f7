"""The offline run end to end (rule guard, rule router, extractive writer): every estado."""

from __future__ import annotations

from api.schemas import ChatResponse, assemble
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.agent.verifier import check_answer
from tests.radar_pipeline.agent.support_index import OFFLINE_LLM


def _run(service, q):
    res = service.runner().run(q)
    ChatResponse.model_validate(assemble(res).model_dump(mode="json"))
    return res


def test_answer_is_extractive_cited_and_verified(offline_service):
    res = _run(
        offline_service,
        "¿Qué incidentes recientes de spoofing han comprometido servicios satelitales y qué vulnerabilidades revelan?",
    )
    assert res.estado == "respondida" and res.modo == "offline" and res.model_calls == 0
    assert res.citas and all(f"[{c['doc_id']}:{c['chunk_id']}]" in res.respuesta for c in res.citas)
    read = {}
    for t in res.tools_called:
        if t["name"] == "read_chunks":
            read.update({p["chunk_id"]: p for p in t["output"]["passages"]})
    assert check_answer(res.respuesta, read).ok
    assert "spoofing" in res.respuesta.lower()
    names = [t["name"] for t in res.tools_called]
    assert names[0] == "search_documents" and "search_evidence" in names and "read_chunks" in names
    assert len(names) <= 8
    assert res.agents == ["guardia_entrada", "orquestador", "analista", "verificador", "guardia_salida"]
    assert len(res.retrieval_context) == len(read)


def test_spanish_passage_and_list_coverage(offline_service):
    res = _run(
        offline_service,
        "¿De qué manera la minería ilegal de oro financia a los grupos armados en Chocó, Antioquia y Bolívar?",
    )
    assert res.estado == "respondida"
    assert [c["requisito"] for c in res.coverage] == ["Chocó", "Antioquia", "Bolívar"] and all(
        c["cubierto"] for c in res.coverage
    )
    assert "Chocó" in res.respuesta


def test_uncovered_country_ends_incomplete_and_says_so(offline_service):
    res = _run(offline_service, "¿Qué pruebas antisatélite ha realizado Australia y qué desechos generaron?")
    assert res.estado == "incompleta" and res.termination_reason == "cobertura_incompleta"
    assert "australia" in res.respuesta.lower() and "Cobertura incompleta" in res.respuesta
    assert res.citas  # what was found is still cited


def test_no_evidence(offline_service):
    res = _run(offline_service, "¿Qué opinas del cambio climático en los océanos?")
    assert res.estado == "sin_evidencia" and res.citas == [] and "similitud" in res.respuesta


def test_greeting_and_off_topic_skip_retrieval(offline_service):
    g = _run(offline_service, "Hola")
    assert (
        g.estado == "respondida"
        and g.tools_called == []
        and g.agents == ["guardia_entrada", "orquestador", "guardia_salida"]
    )
    o = _run(offline_service, "Dame una receta de arepas")
    assert o.estado == "sin_evidencia" and o.termination_reason == "fuera_de_tema" and o.tools_called == []


def test_visualization_route(offline_service):
    res = _run(offline_service, "Muéstrame un mapa de las alertas tempranas en Chocó desde 2019")
    assert res.ruta == "visualization" and res.estado == "respondida"
    assert res.visualizacion["componentes"][0]["tipo"] == "mapa_alertas"
    # "desde 2019" is open-ended (it was read 2019–2019); the place is the gazetteer id of the
    # department; the phenomenon is not set when the question does not state it (the alerts
    # aggregate has no phenomenon column: an implied filter would narrow nothing)
    assert res.visualizacion["filtros"] == {
        "fenomeno": None,
        "desde": 2019,
        "hasta": None,
        "entidad": None,
        "lugar": "department:27",
    }


def test_both_route_answers_and_visualizes(offline_service):
    res = _run(
        offline_service, "Muéstrame la evolución de la basura espacial por pruebas ASAT y explica por qué es peligrosa"
    )
    assert res.ruta == "both" and res.visualizacion and res.citas and res.estado == "respondida"


def test_missing_index_is_error_not_no_evidence(tmp_path, use_encoder):
    svc = AgentService(
        ServiceSettings(index_dir=tmp_path / "nothing", use_database=False, llm=LLMSettings(**OFFLINE_LLM)),
        encoder=use_encoder,
    )
    res = _run(svc, "¿Qué es la basura espacial?")
    assert res.estado == "error" and res.termination_reason == "indice_no_disponible"
    assert "no una falta de evidencia" in res.respuesta


def test_internal_error_is_error(offline_service, monkeypatch):
    runner = offline_service.runner()

    def boom(*a, **k):
        raise RuntimeError("kaput")

    monkeypatch.setattr(runner.extractive, "write", boom)
    res = _run(offline_service, "¿Qué es el síndrome de Kessler?")
    assert res.estado == "error" and res.termination_reason == "error_interno" and "kaput" not in res.respuesta


def test_events_one_per_step(offline_service):
    events = []
    res = offline_service.runner().run(
        "¿Qué cambios doctrinales ha tenido Corea del Norte en el espacio?", on_event=events.append
    )
    assert len(events) == len(res.steps) and [e["step_no"] for e in events] == list(range(1, len(events) + 1))


def test_concurrent_runs_match_sequential(offline_service):
    """Runs share the encoder, the corpus and the sentence splitter; 16 threads must give the
    same answers as one (pysbd is not thread-safe: the writer serialises it)."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.radar_pipeline.agent.support_corpus import load_indirect

    qs = [a["question"] for a in load_indirect()[:8]]
    from radar_pipeline.agent import writer

    with writer._SPLIT_LOCK:
        writer._SPLITS.clear()
    runner = offline_service.runner()
    ref = {q: runner.run(q).respuesta for q in qs}
    with writer._SPLIT_LOCK:
        writer._SPLITS.clear()
    with ThreadPoolExecutor(16) as ex:
        got = list(ex.map(lambda q: (q, runner.run(q).respuesta), qs * 3))
    assert all(text == ref[q] for q, text in got)
