"""Follow-up turns ("¿Y en Nariño?", "ahora desde 2015", "muéstralo en un mapa", "¿y la red?", "lo mismo
pero para el ELN"): detection by kind, the merge of the previous turn's view and filters, and whole
conversations through a real ``AgentRunner`` whose conversation state lives in PostgreSQL (the trace
store), read per credential."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from api.schemas import assemble
from radar_pipeline.agent import followup, visualizer
from radar_pipeline.agent.runner import AgentConfig, AgentRunner
from radar_pipeline.agent.trace import TraceStore, agent_runs
from radar_pipeline.agent.understanding import QuestionReader, view_vocabulary
from radar_pipeline.collection import AccessScope
from radar_pipeline.textfold import fold_question


@pytest.fixture(scope="module")
def reader(shared_dir) -> QuestionReader:
    return QuestionReader.from_shared(shared_dir, reference_year=2025)


def _kind(reader: QuestionReader, q: str) -> bool:
    facts = reader.read(q)
    folded = fold_question(q)
    vocab = view_vocabulary()
    spans, _ = followup.turn_views(q, vocab)
    return followup.is_followup(q, facts, spans, followup.stated_filters(facts, folded, vocab.stated_phenomena(folded)))


FOLLOWUPS = [
    "¿Y en Nariño?",
    "y en el Cauca?",
    "ahora desde 2015",
    "Ahora solo entre 2019 y 2021",
    "muéstralo en un mapa",
    "¿y la red?",
    "¿Y la línea de tiempo?",
    "lo mismo pero para el ELN",
    "Lo mismo para las disidencias",
    "también en Arauca",
    "¿y en el Catatumbo?",
    "Nariño",
    "desde 2018",
    "and in Nariño?",
    "same for the ELN",
]
COMPLETE = [
    "¿Qué grupos armados operan en Nariño?",
    "¿Y qué dice la Defensoría sobre el reclutamiento de menores en Nariño?",
    "Mapa de alertas tempranas en el Cauca desde 2018",
    "¿Cuáles son los programas antisatélite de China?",
    "y qué sabes de drones autónomos en Ucrania",
    "What armed groups operate in Arauca?",
    "hola",
]


@pytest.mark.parametrize("q", FOLLOWUPS)
def test_elliptical_turns_are_followups(reader, q):
    assert _kind(reader, q), q


@pytest.mark.parametrize("q", COMPLETE)
def test_complete_questions_are_not_followups(reader, q):
    assert not _kind(reader, q), q


def test_merge_replaces_the_stated_filters_and_carries_the_rest():
    prev = followup.PreviousTurn(
        "Mapa de presencia del ELN en el Cauca",
        "visualization",
        ("mapa_presencia",),
        {"fenomeno": "territorial", "desde": None, "hasta": None, "entidad": "eln", "lugar": "department:19"},
    )
    got = followup.merge(prev, {"lugar": "department:52"}, None, place_name={"department:52": "Nariño"}.get)
    assert got.filtros == {
        "fenomeno": "territorial",
        "desde": None,
        "hasta": None,
        "entidad": "eln",
        "lugar": "department:52",
    }
    assert got.componentes == ("mapa_presencia",)
    assert got.carried == ("fenomeno", "entidad", "vista") and got.changed == ("lugar",)
    assert got.note.startswith("Mantengo de la pregunta anterior:") and "fenómeno territorial" in got.note
    assert "cambio el lugar a Nariño" in got.note
    # a period and a new view: both replace, the place carries
    got = followup.merge(prev, {"periodo": (2015, None)}, ["red_entidades"])
    assert (got.filtros["desde"], got.filtros["hasta"], got.filtros["lugar"]) == (2015, None, "department:19")
    assert got.componentes == ("red_entidades",) and set(got.changed) == {"periodo", "vista"}
    assert "cambio el periodo a desde 2015" in got.note


# ------------------------------------------------------------------------ whole conversations
class _NoCorpus:
    """The corpus is never read by a view-only conversation: calling it fails the test."""

    def __call__(self):
        raise AssertionError("a view-only turn must not search the corpus")


def _runner(engine, reader) -> AgentRunner:
    return AgentRunner(_NoCorpus(), None, store=TraceStore(engine), config=AgentConfig(), reader=reader)


def _ask(runner: AgentRunner, q: str, conv: str, key: str):
    """One turn as the API serves it: run, assemble the contract, store the trace (PostgreSQL)."""
    res = runner.run(q, conv, scope=AccessScope.everything(key))
    runner.store_trace(res, assemble(res).model_dump(mode="json"))
    return res


def _view(res) -> tuple[list[str], dict]:
    vis = res.visualizacion or {}
    return [c["tipo"] for c in vis.get("componentes", [])], vis.get("filtros", {})


def test_three_turn_conversation_carries_view_and_filters(engine, reader):
    r = _runner(engine, reader)
    first = _ask(r, "Mapa de presencia armada del ELN en el Cauca", "conv-a", "k1")
    comps, f = _view(first)
    assert comps[0] == "mapa_presencia" and f["entidad"] == "eln" and f["lugar"] == "department:19"
    second = _ask(r, "¿Y en Nariño?", "conv-a", "k1")
    comps2, f2 = _view(second)
    assert comps2[0] == "mapa_presencia"
    assert f2["lugar"] == "department:52" and f2["entidad"] == "eln"
    assert second.respuesta.startswith("Mantengo de la pregunta anterior:")
    assert "ELN" in second.respuesta and "cambio el lugar a Nariño" in second.respuesta
    third = _ask(r, "ahora desde 2015", "conv-a", "k1")
    comps3, f3 = _view(third)
    assert comps3[0] == "mapa_presencia" and (f3["desde"], f3["lugar"], f3["entidad"]) == (2015, "department:52", "eln")
    # what the trace recorded: the orchestrator's step says what was carried
    stored = r.store.load(third.run_id)
    seg = [s["detail"].get("seguimiento") for s in stored["steps"] if s["role"] == "orquestador"]
    assert seg and "lugar" in seg[0]["mantiene"] and seg[0]["cambia"] == ["periodo"]


def test_view_change_and_entity_change(engine, reader):
    r = _runner(engine, reader)
    _ask(r, "Línea de tiempo de documentos sobre las disidencias en el Cauca desde 2018", "conv-b", "k1")
    net = _ask(r, "¿y la red?", "conv-b", "k1")
    comps, f = _view(net)
    assert comps[0] == "red_entidades" and f["lugar"] == "department:19" and f["desde"] == 2018
    assert "cambio la vista" in net.respuesta
    eln = _ask(r, "lo mismo pero para el ELN", "conv-b", "k1")
    comps, f = _view(eln)
    assert comps[0] == "red_entidades" and f["entidad"] == "eln" and f["lugar"] == "department:19"
    mapa = _ask(r, "muéstralo en un mapa", "conv-b", "k1")
    comps, f = _view(mapa)
    assert comps[0].startswith("mapa_") and f["entidad"] == "eln" and f["desde"] == 2018


def test_another_credentials_conversation_is_never_used(engine, reader):
    r = _runner(engine, reader)
    _ask(r, "Mapa de presencia armada del ELN en el Cauca", "shared-id", "owner")
    other = _ask(r, "¿Y en Nariño?", "shared-id", "intruder")
    comps, f = _view(other)
    # the intruder's turn is read alone: Nariño, and nothing of the owner's ELN/Cauca
    assert f.get("entidad") is None and not other.respuesta.startswith("Mantengo")
    assert "ELN" not in other.respuesta
    with engine.connect() as conn:
        keys = (
            conn.execute(sa.select(agent_runs.c.key_id).where(agent_runs.c.conversacion_id == "shared-id"))
            .scalars()
            .all()
        )
    assert sorted(keys) == ["intruder", "owner"]
    # the owner's next turn still carries its own conversation
    mine = _ask(r, "¿Y en Arauca?", "shared-id", "owner")
    assert _view(mine)[1]["entidad"] == "eln" and _view(mine)[1]["lugar"] == "department:81"


def test_a_complete_new_question_does_not_carry(engine, reader):
    r = _runner(engine, reader)
    _ask(r, "Mapa de presencia armada del ELN en el Cauca desde 2016", "conv-c", "k1")
    new = _ask(r, "Mapa de alertas tempranas en Nariño", "conv-c", "k1")
    comps, f = _view(new)
    assert comps[0] == "mapa_alertas" and f["lugar"] == "department:52"
    assert f.get("entidad") is None and f.get("desde") is None
    assert not new.respuesta.startswith("Mantengo")


def test_a_new_conversation_does_not_carry(engine, reader):
    r = _runner(engine, reader)
    _ask(r, "Mapa de presencia armada del ELN en el Cauca", "conv-d", "k1")
    alone = _ask(r, "¿Y en Nariño?", "conv-e", "k1")
    assert _view(alone)[1].get("entidad") is None and not alone.respuesta.startswith("Mantengo")


def test_component_titles_exist_for_notes():
    # the note names views by the visualizer's titles
    assert all(visualizer.COMPONENTS[c]["titulo"] for c in visualizer.COMPONENTS)
