"""Follow-up turns ("¿Y en Nariño?", "ahora desde 2015", "muéstralo en un mapa", "¿y la red?", "lo mismo
pero para el ELN"): detection by kind, the merge of the previous turn's view and filters, and whole
conversations through a real ``AgentRunner`` whose conversation state lives in PostgreSQL (the trace
store), read per credential."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
import sqlalchemy as sa

from api.schemas import assemble
from radar_pipeline.agent.reading.understanding import QuestionReader
from radar_pipeline.agent.reading.views import view_vocabulary
from radar_pipeline.agent.roles import followup, visualizer
from radar_pipeline.agent.runner import AgentConfig, AgentRunner
from radar_pipeline.agent.trace import TraceStore, agent_runs
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


# ------------------------------------------------- kinds of follow-up read through ``follow``
def _prev(q, ruta, comps, **filtros) -> followup.PreviousTurn:
    base = dict.fromkeys(("fenomeno", "desde", "hasta", "entidad", "lugar"))
    return followup.PreviousTurn(q, ruta, tuple(comps), {**base, **filtros})


PRESENCE = _prev(
    "Mapa de presencia del ELN en el Cauca desde 2018",
    "visualization",
    ["mapa_presencia"],
    desde=2018,
    entidad="eln",
    lugar="department:19",
)
QUADRANT = _prev(
    "Cuadrante de actores de IA militar desde 2020", "visualization", ["cuadrante"], fenomeno="ai_military", desde=2020
)


def _follow(reader, q, prev):
    return followup.follow(q, reader.read(q), lambda: prev, reader, view_vocabulary())


# only view words and filters, pointing back (a connective, "ahí", or no scope of their own)
VIEW_WORD_FOLLOWUPS = [
    ("¿y qué grupos tienen presencia?", "mapa_presencia"),
    ("¿y cómo ha cambiado con los años?", "linea_tiempo"),
    ("¿y cómo evoluciona?", "linea_tiempo"),
    ("año a año?", "linea_tiempo"),
    ("muéstrame dónde está", "mapa_presencia"),
    ("¿y en qué municipios?", "mapa_presencia"),  # of an armed group: its presence
    ("¿y las alertas?", "mapa_alertas"),
    ("y los avisos?", "mapa_alertas"),
]


@pytest.mark.parametrize("q,view", VIEW_WORD_FOLLOWUPS)
def test_turns_of_view_words_carry_the_filters(reader, q, view):
    got = _follow(reader, q, PRESENCE)
    assert got is not None, q
    assert got.componentes[0] == view, (q, got.componentes)
    assert (got.filtros["entidad"], got.filtros["lugar"], got.filtros["desde"]) == ("eln", "department:19", 2018)
    assert {"entidad", "lugar", "periodo"} <= set(got.carried)


# view words with a topic of their own: a new question, read alone
TOPIC_QUESTIONS = [
    "¿Qué grupos armados operan en Nariño?",
    "¿Qué dicen los documentos sobre la minería ilegal?",
    "¿Cómo ha evolucionado el reclutamiento de menores?",
    "y qué actores financian la deforestación",
    "¿Quiénes son los líderes sociales asesinados en el Cauca?",
    "hola",
    "gracias",
]


@pytest.mark.parametrize("q", TOPIC_QUESTIONS)
def test_questions_with_a_topic_of_their_own_do_not_carry(reader, q):
    assert _follow(reader, q, PRESENCE) is None, q


def test_an_anaphor_carries_the_place_a_new_entity_replaces(reader):
    got = _follow(reader, "¿y la presencia del Clan del Golfo ahí?", PRESENCE)
    assert got.componentes[0] == "mapa_presencia"
    assert (got.filtros["entidad"], got.filtros["lugar"]) == ("clan_del_golfo", "department:19")
    assert "lugar" in got.carried and "entidad" in got.changed


@pytest.mark.parametrize(
    "q,phen",
    [
        ("¿y en seguridad espacial?", "space_security"),
        ("lo mismo pa basura espacial", "space_security"),
        ("¿y en lo territorial?", "territorial"),
    ],
)
def test_a_new_phenomenon_keeps_the_view_and_the_period(reader, q, phen):
    got = _follow(reader, q, QUADRANT)
    assert got.componentes == ("cuadrante",) and got.filtros["fenomeno"] == phen and got.filtros["desde"] == 2020
    assert "periodo" in got.carried and got.changed == ("fenomeno",)


@pytest.mark.parametrize(
    "q,dropped",
    [
        ("ahora para todo el país", "lugar"),
        ("a nivel nacional", "lugar"),
        ("y en toda Colombia", "lugar"),
        ("para todos los años", "periodo"),
        ("sin filtro de fecha", "periodo"),
    ],
)
def test_widening_a_filter_drops_it_and_keeps_the_rest(reader, q, dropped):
    got = _follow(reader, q, PRESENCE)
    assert got.changed == (dropped,) and "quito el filtro" in got.note
    if dropped == "lugar":
        assert got.filtros["lugar"] is None and got.filtros["desde"] == 2018
    else:
        assert got.filtros["desde"] is None and got.filtros["lugar"] == "department:19"
    assert got.filtros["entidad"] == "eln" and got.componentes == ("mapa_presencia",)


@pytest.mark.parametrize("q", ["y explícame por qué", "¿por qué?", "cuéntame más de eso", "xq?"])
def test_asking_why_keeps_the_view_and_adds_the_explanation(reader, q):
    got = _follow(reader, q, PRESENCE)
    assert got.ruta == "both" and got.componentes == ("mapa_presencia",)
    assert got.filtros["entidad"] == "eln" and set(got.carried) >= {"entidad", "lugar", "periodo", "vista"}


SAN_PABLO = _prev("Alertas en San Pablo, Bolívar", "visualization", ["mapa_alertas"], lugar="municipality:13670")


@pytest.mark.parametrize("q", ["¿y en el de Nariño?", "y el d nariño", "¿y el de nariño?"])
def test_the_one_of_another_department_is_the_namesake(reader, q):
    got = _follow(reader, q, SAN_PABLO)
    assert got.filtros["lugar"] == "municipality:52693" and got.componentes == ("mapa_alertas",)  # San Pablo, Nariño


@pytest.mark.parametrize("q,place", [("¿y en Nariño?", "department:52"), ("la del Cauca?", "department:19")])
def test_a_department_alone_or_without_namesake_is_the_department(reader, q, place):
    assert _follow(reader, q, SAN_PABLO).filtros["lugar"] == place


TEXT_TURN = _prev("¿Qué dicen los documentos sobre la presencia del Clan del Golfo en Córdoba?", "text", [])


@pytest.mark.parametrize("q", ["muéstralo en un mapa", "ponlo en el mapa porfa"])
def test_a_text_answer_shown_on_a_map_carries_its_question_filters(reader, q):
    got = _follow(reader, q, followup.PreviousTurn(TEXT_TURN.pregunta, "text", (), {}))
    assert got.ruta == "visualization" and got.componentes[0] == "mapa_presencia"
    assert (got.filtros["entidad"], got.filtros["lugar"]) == ("clan_del_golfo", "department:23")


def test_a_text_answer_followed_by_a_filter_stays_text_and_alerts_keep_their_map(reader):
    got = _follow(reader, "¿y en Sucre?", followup.PreviousTurn(TEXT_TURN.pregunta, "text", (), {}))
    assert got.ruta == "text" and got.componentes == ()
    assert (got.filtros["entidad"], got.filtros["lugar"]) == ("clan_del_golfo", "department:70")
    alerts = followup.PreviousTurn("¿Cuántas alertas tempranas hubo en el Chocó en 2020?", "text", (), {})
    for q in ("muéstramelo en el mapa", "y en un mapa?"):
        got = _follow(reader, q, alerts)
        assert got.componentes[0] == "mapa_alertas" and got.filtros["lugar"] == "department:27", q
        assert (got.filtros["desde"], got.filtros["hasta"]) == (2020, 2020)


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


def test_a_text_answer_is_carried_by_the_next_turn(engine, reader):
    r = _runner(engine, reader)
    hello = _ask(r, "hola", "conv-t", "k1")
    assert hello.ruta == "text" and not hello.visualizacion
    # a greeting is no context: the next turn is read alone
    alone = _ask(r, "¿Y en Nariño?", "conv-t", "k1")
    assert not alone.respuesta.startswith("Mantengo") and _view(alone)[1].get("entidad") is None
    # a text answer as the store keeps it (no view in the contract): its question's filters carry
    text = dataclasses.replace(
        hello,
        run_id=uuid.uuid4().hex,
        conversacion_id="conv-u",
        pregunta="¿Qué dicen los documentos sobre la presencia del Clan del Golfo en Córdoba?",
    )
    r.store_trace(text, assemble(text).model_dump(mode="json"))
    prev = r.store.previous_view("conv-u", key_id="k1")
    assert prev is not None and prev.componentes == () and prev.ruta == "text"
    shown = _ask(r, "muéstralo en un mapa", "conv-u", "k1")
    comps, f = _view(shown)
    assert comps[0] == "mapa_presencia" and (f["entidad"], f["lugar"]) == ("clan_del_golfo", "department:23")
    assert shown.respuesta.startswith("Mantengo de la pregunta anterior:")
