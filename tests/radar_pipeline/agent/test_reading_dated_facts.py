"""Questions that ask which entities or events, each with its date (issue 23): a text answer, not
the timeline.

"¿Qué países han realizado pruebas antisatélite de ascenso directo y en qué años?" asks a list of
facts with their years; the timeline draws documents per year and names no country. The kind
(rule ``dated_facts`` in ``precompute/data/reading_rules.yaml``, applied by ``intent.classify``):
an entity-asking head joined to a when-question, in either order, or a list asked "con sus
fechas". A count or a change over time, a chart, or the documents themselves (rule
``dated_facts_counted``) stay views, and so do presence and alerts questions.

Every question below was written for this file (none is copied from a Stage-2 set), Spanish and
English.
"""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading import intent
from radar_pipeline.agent.reading import learned as L
from tests.radar_pipeline.agent.support_reading import read_question

DATED_FACTS = [
    "¿Qué países han realizado pruebas antisatélite de ascenso directo y en qué años?",
    "¿Qué países han probado armas antisatélite y cuándo?",
    "¿Quiénes firmaron el acuerdo y en qué año?",
    "¿Qué pruebas se hicieron y en qué fechas?",
    "¿Qué grupos armados llegaron al Catatumbo y en qué año?",
    "¿Qué empresas lanzaron constelaciones de satélites y cuándo lo hicieron?",
    "¿Cuándo y qué países derribaron un satélite propio?",
    "dime qué grupos armados llegaron al Catatumbo, con sus fechas",
    "¿Cuáles acuerdos de paz se firmaron en Colombia y en qué fecha?",
    "Which countries have conducted ASAT tests and when?",
    "Who signed the Outer Space Treaty and in what year?",
    "What weapons did Ukraine receive and on which dates?",
]

# a count or a change over time, a chart, a named timeline, the documents: the timeline stays
TIME_VIEWS = [
    "¿En qué años se realizaron pruebas antisatélite?",
    "¿Cómo ha cambiado el número de documentos sobre pruebas antisatélite por año?",
    "Evolución de las pruebas ASAT desde 2005",
    "¿Cuántas pruebas antisatélite hubo y en qué años? Grafícalo",
    "Muéstrame en una línea de tiempo qué países hicieron pruebas ASAT y cuándo",
    "¿Qué países aparecen en los documentos sobre ASAT y en qué años?",
    "How many documents mention ASAT tests per year?",
]


@pytest.mark.parametrize("question", DATED_FACTS)
def test_which_entities_and_when_is_a_text_question(reader, question):
    assert read_question(reader, question)[0] == "text", question
    read = intent.classify(question)
    assert read.reasons[:1] == ["texto:explícito"], read.reasons
    assert L.rule_tier(read.reasons) == "explicit"


@pytest.mark.parametrize("question", DATED_FACTS)
def test_a_confident_learned_reader_does_not_turn_it_into_a_timeline(reader, question):
    # the failure of issue 23: the rules read text, the learned reader (p >= its threshold) a view
    th = L.LearnedReader(mode="rules").thresholds
    sure = L.LearnedReading("visualization", 1.0, "linea_tiempo", 1.0, None, 1.0, "combined", th)

    class _Sure:
        def read(self, q):
            return sure

    assert read_question(reader.with_learned(_Sure()), question)[0] == "text", question


@pytest.mark.parametrize("question", TIME_VIEWS)
def test_a_count_or_change_over_time_keeps_the_timeline(reader, question):
    route, comps, _, _ = read_question(reader, question)
    assert route in ("visualization", "both") and "linea_tiempo" in comps, (question, route, comps)


@pytest.mark.parametrize(
    ("question", "component"),
    [
        ("¿En qué municipios está el ELN en Arauca y desde cuándo?", "mapa_presencia"),
        ("¿Qué grupos armados hay en Tame y en qué año llegaron?", "mapa_presencia"),
        ("¿Qué alertas tempranas emitió la Defensoría en Nariño y cuándo?", "mapa_alertas"),
    ],
)
def test_presence_and_alerts_keep_their_map(reader, question, component):
    route, comps, _, _ = read_question(reader, question)
    assert route in ("visualization", "both") and comps[:1] == [component], (question, route, comps)


def test_the_rule_reads_the_kind_and_not_its_neighbours():
    rx, counted = intent._DATED_FACTS, intent._DATED_COUNTED
    prepared = intent.prepared
    for q in DATED_FACTS:
        assert rx.search(prepared(q)) and not counted.search(prepared(q)), q
    # one half alone is no dated-facts question
    for q in (
        "¿Qué países han realizado pruebas antisatélite?",
        "¿Cuándo fue la prueba antisatélite de la India?",
        "¿En qué año firmó Colombia el acuerdo de paz?",
        "¿Cómo ha cambiado con los años lo que se publica sobre basura espacial?",
        "When did India test an ASAT weapon?",
    ):
        assert not rx.search(prepared(q)), q


def test_the_bundled_combination_reads_them_as_text(reader, use_encoder):
    # the real learned reader reads several of these as views at p >= its route threshold (the
    # first at 0.85); the rules' explicit reading is what the combination keeps
    combined = reader.with_learned(L.LearnedReader(mode="combined", encoder=use_encoder))
    for question in DATED_FACTS:
        assert read_question(combined, question)[0] == "text", question
