"""Issue 22, item 4 ("false premises in every question form"): premises a question takes for granted
inside a noun phrase — a relative clause, a dated participle, a fronted figure — and the slots that
contradict them: another figure for the same thing, another titled person, another partner of a joint
act, another year for a beginning. Examples are ours (not the answer sets' wording)."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.roles import substitution
from radar_pipeline.agent.roles.premise import embedded_premise_text, extract_premise
from tests.radar_pipeline.agent.support_reading import premise_verdict

_verdict = premise_verdict


@pytest.mark.parametrize(
    ("question", "restated"),
    [
        # a relative clause with its own subject: the clause, with the noun phrase as its object
        (
            "¿Qué acuerdos salieron de la cumbre que la OTAN organizó con Japón en 2019?",
            "la OTAN organizó la cumbre con Japón en 2019",
        ),
        # a relative clause whose subject is elided: the last capitalised name before it
        (
            "¿Qué buscaba la senadora Ana Gómez con la Drone Safety Act que presentó en 2021?",
            "la senadora Ana Gómez presentó la Drone Safety Act en 2021",
        ),
        # an appositive giving a named person a role in an organisation
        (
            "¿Cómo valoró la Defensoría la captura de alias “Mono”, cabecilla del ELN en Tame?",
            "alias “Mono” era cabecilla del ELN en Tame",
        ),
        # a dated participle in an appositive: the noun phrase before the comma is what it qualifies
        (
            "¿Qué funciones cumplen la IADC y la SPARK, las dos redes creadas en 2019?",
            "la IADC y la SPARK, las dos redes, fueron creadas en 2019",
        ),
    ],
)
def test_an_embedded_premise_is_restated_as_a_clause(question, restated):
    assert embedded_premise_text(question) == restated
    premise = extract_premise(question)
    assert premise is not None and premise.kind == "incrustada" and premise.implicit


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué municipios que tienen alertas tempranas están en Nariño?",  # a present tense: a state, no event
        "¿Cuál es el programa que más creció?",  # nothing to check it by
        "¿Qué dice el informe sobre los drones?",
    ],
)
def test_no_embedded_premise_without_a_checkable_past_event(question):
    assert extract_premise(question) is None


def test_a_fronted_figure_is_a_premise():
    premise = extract_premise("Con apenas 30 satélites en órbita, ¿qué capacidades tiene la constelación Aurora?")
    assert premise is not None and premise.kind == "cifra" and premise.nominal
    assert premise.text == "apenas 30 satélites en órbita"


@pytest.mark.parametrize(
    ("question", "false_text", "true_text", "why"),
    [
        (  # a count written in digits, thousands with a dot
            "Con apenas 30 satélites en órbita, ¿qué capacidades tiene la constelación Aurora?",
            "The Aurora constellation now has nearly 3.000 satellites in orbit.",
            "The Aurora constellation has about 30 satellites in orbit.",
            "cifra_distinta",
        ),
        (  # a share, "%" against "percent"
            "Si los drones ya son el 60 % del gasto militar de Ruritania, ¿por qué se compran más?",
            "Drones account for only 12 percent of military spending in Ruritania.",
            "Drones account for 61 percent of military spending in Ruritania.",
            "cifra_distinta",
        ),
        (  # a count in words on both sides
            "Dado que una docena de países firmó el Acuerdo de Lima sobre drones, ¿qué cambió?",
            "Thirty-two countries signed the Lima Agreement on drones in May.",
            "Twelve countries signed the Lima Agreement on drones in May.",
            "cifra_distinta",
        ),
        (  # the titled person swapped
            "¿Qué buscaba la senadora Ana Gómez con la Drone Safety Act que presentó en 2021?",
            "Senator Rivera introduced the Drone Safety Act in 2021 to regulate flights over cities.",
            "Senator Gómez introduced the Drone Safety Act in 2021 to regulate flights over cities.",
            "actor_distinto",
        ),
        (  # the partner of a joint act swapped
            "¿Qué se discutió en el Orbit Forum que la Agencia Espacial coorganizó con Boeing en 2022?",
            "In 2022 the Agencia Espacial and Airbus jointly hosted the Orbit Forum in Lima.",
            "In 2022 the Agencia Espacial and Boeing jointly hosted the Orbit Forum in Lima.",
            "actor_distinto",
        ),
        (  # the organisation of a named person swapped
            "¿Cómo valoró la Defensoría la captura de alias “Mono”, cabecilla del ELN en Tame?",
            "Se registró la captura de un presunto integrante de las disidencias de las FARC conocido como alias “Mono”.",
            "Se registró la captura de un presunto integrante del ELN conocido como alias “Mono”.",
            "actor_distinto",
        ),
        (  # the year a named thing began
            "¿Qué funciones cumplen la IADC y la SPARK, las dos redes creadas en 2019?",
            "It supports two networks established in 2012: the Inter-Agency Debris Committee (IADC) and "
            "the Space Analysis Network (SPARK).",
            "It supports two networks established in 2019: the Inter-Agency Debris Committee (IADC) and "
            "the Space Analysis Network (SPARK).",
            "conflicto_de_anio",
        ),
    ],
)
def test_an_embedded_premise_is_false_only_where_the_passage_states_its_slot_otherwise(
    question, false_text, true_text, why
):
    v = _verdict(question, false_text)
    assert v.estado == "falsa" and v.reason == why and v.chunk_id == "c1", v
    assert _verdict(question, true_text).estado != "falsa"


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("nearly 2.000 Erasmus projects and 15 capacity projects", [2000.0, 15.0]),
        ("26 percent of workers", [26.0]),
        ("la Alerta Temprana 036 del 13 de abril de 2018", []),  # a name's number, a date's day, a year
        ("the Cosmos 1408 satellite, the S. 584 bill, the AT 035-18", []),
        ("veintinueve países y una docena de agencias", [29.0, 12.0]),
        ("one of the projects", []),
    ],
)
def test_figures_are_counts_and_shares_never_names_dates_or_years(text, values):
    assert sorted(v for v, _, _ in substitution.figures(text)) == sorted(values)
