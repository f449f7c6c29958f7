"""Naive users' words, by kind (issue 23, second round): a phenomenon described without its name,
a view described by its look or by what it relates, letters stretched in chat, and a model's
phenomenon that contradicts a territorial map. Every question was written for this file (none
copied from ``evals/stage2``); several phrasings per kind, Spanish and English where relevant."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading import learned as L
from radar_pipeline.agent.reading.intent import stated_phenomenon
from radar_pipeline.agent.roles import router
from tests.radar_pipeline.agent.support_reading import read_question


@pytest.mark.parametrize(
    ("question", "phenomenon"),
    [
        # autonomy in lay words
        ("¿dónde se habla de armas que deciden solas a quién atacar?", "ai_military"),
        ("drones que eligen solos sus blancos, ¿qué países los tienen?", "ai_military"),
        ("máquinas que disparan por su cuenta, sin nadie que las controle", "ai_military"),
        ("armas sin control humano: ¿cómo ha crecido el tema?", "ai_military"),
        ("¿qué países están metidos en los robots soldado?", "ai_military"),
        # anti-satellite weapons and debris in lay words
        ("¿quiénes han hecho ensayos de misiles contra satélites?", "space_security"),
        ("los países que pueden derribar satélites de otros", "space_security"),
        ("cohetes para destruir un satélite: ¿desde cuándo se habla de eso?", "space_security"),
        ("la chatarra que da vueltas alrededor de la Tierra, año por año", "space_security"),
        ("los pedazos que flotan en torno al planeta", "space_security"),
        # drug trafficking and the internal war
        ("¿en qué partes se habla de narcotráfico?", "territorial"),
        ("rutas de tráfico de cocaína en el Pacífico", "territorial"),
        ("documentos sobre el conflicto armado interno", "territorial"),
        ("where is drug trafficking mentioned?", "territorial"),
    ],
)
def test_a_phenomenon_described_without_its_name(question, phenomenon):
    assert stated_phenomenon(question) == phenomenon


@pytest.mark.parametrize(
    "question",
    [
        "¿dónde hay comunidades sin nadie que las proteja?",  # no autonomy: people unprotected
        "¿qué satélites tiene Colombia?",  # a satellite named is no weapon against it
        "las personas que deciden solas votar",  # deciding alone is no weapon
        "robots en la industria automotriz",
    ],
)
def test_everyday_words_that_state_no_phenomenon(question):
    assert stated_phenomenon(question) is None


@pytest.mark.parametrize(
    ("question", "component"),
    [
        # the heat matrix by its look
        ("quiero una tablita de colores con cada grupo y sus temas", "matriz_calor"),
        ("ponme los actores en un cuadrito de colores por tema", "matriz_calor"),
        ("una cuadrícula con colores de países contra temas", "matriz_calor"),
        ("hazme un cuadro a colores de quién sale en qué tema", "matriz_calor"),
        # the network by what it relates: the kinds of actors linked to something
        ("¿qué personas y organizaciones salen vinculadas con el Clan del Golfo?", "red_entidades"),
        ("gobiernos, empresas y grupos relacionados con los satélites de órbita baja", "red_entidades"),
        ("¿quiénes aparecen conectados con el ELN?", "red_entidades"),
    ],
)
def test_a_view_described_in_everyday_words(reader, question, component):
    route, comps, _, _ = read_question(reader, question)
    assert route in ("visualization", "both") and comps[0] == component, (route, comps)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("holaaa buenas, como estas?", "greeting"),
        ("buenasss", "greeting"),
        ("holiii radar", "greeting"),
        ("graciaaas!!", "thanks"),
        ("ok chaooo", "thanks"),
        ("muchas graciaaaas por todo", "thanks"),
    ],
)
def test_letters_stretched_in_chat_are_small_talk(reader, question, kind):
    assert router.plan(question, reader.read(question)).kind == kind


def test_stretched_letters_leave_questions_alone(reader):
    plan = router.plan("holaaa, muéstrame la presencia del ELN en Arauca", reader.read("x"))
    assert plan.kind == "question"


class _Always:
    """A stand-in model that always reads the same (the combination under test, not the model)."""

    def __init__(self, reading):
        self.reading = reading

    def read(self, question):
        return self.reading


@pytest.mark.parametrize(
    "question",
    [
        "presencia armada en el Meta",
        "¿dónde hay alertas de la Defensoría en el Cauca?",
        "mapa de presencia de grupos ilegales en Arauca",
    ],
)
def test_a_model_phenomenon_that_contradicts_a_territorial_map_is_not_set(reader, question):
    """Armed presence and early warnings are territorial by what they count: the model's AI or
    space phenomenon there is dropped; its territorial one, or another view's, is kept."""
    thresholds = {"cue": 0.6, "fallback": 0.5, "phenomenon": 0.7, "route_cue": 0.8, "route_fallback": 0.7}
    ai = L.LearnedReading("visualization", 1.0, "mapa_lugares", 0.1, "ai_military", 0.99, "combined", thresholds)
    _, comps, filters, _ = read_question(reader.with_learned(_Always(ai)), question)
    assert comps[0] in ("mapa_presencia", "mapa_alertas") and filters.get("fenomeno") is None, (comps, filters)
    terr = L.LearnedReading("visualization", 1.0, "mapa_lugares", 0.1, "territorial", 0.99, "combined", thresholds)
    _, _, filters, _ = read_question(reader.with_learned(_Always(terr)), question)
    assert filters.get("fenomeno") == "territorial"


def test_a_model_phenomenon_on_other_views_is_still_set(reader):
    thresholds = {"cue": 0.6, "fallback": 0.5, "phenomenon": 0.7, "route_cue": 0.8, "route_fallback": 0.7}
    ai = L.LearnedReading("visualization", 1.0, "linea_tiempo", 0.1, "ai_military", 0.99, "combined", thresholds)
    _, comps, filters, _ = read_question(
        reader.with_learned(_Always(ai)), "línea de tiempo de lo que se publica por año"
    )
    assert comps[0] == "linea_tiempo" and filters.get("fenomeno") == "ai_military"
