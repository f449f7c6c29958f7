"""A premise's slot filled otherwise at its distinctive name (roles/substitution.py): another actor,
a year bound to the name, another counted object, the opposite action — and the guards that keep a
true premise from being called false. Examples are ours (not the answer sets' wording)."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.roles import substitution
from radar_pipeline.agent.roles.premise import extract_premise
from tests.radar_pipeline.agent.support_reading import premise_verdict

_verdict = premise_verdict


@pytest.mark.parametrize(
    ("question", "text", "why"),
    [
        # another actor of the same kind at the name (an organisation for an organisation, a country
        # for a country), the premise's actor absent from that sentence
        (
            "¿Por qué la OTAN creó el programa 'Blue Harbor' para la logística predictiva?",
            "DARPA runs its “Blue Harbor” program for predictive logistics of spare parts.",
            "actor_distinto",
        ),
        (
            "¿Por qué Francia lanzó el satélite Helios-3B en 2021?",
            "Italy launched Helios-3B, a reconnaissance satellite, in 2021 from Kourou.",
            "actor_distinto",
        ),
        (
            "Why did the ELN attack the Brigada Móvil N.º 31 in Tame?",
            "Las disidencias de las FARC atacaron a la Brigada Móvil N.º 31 en la vereda Puerto Gaitán.",
            "actor_distinto",
        ),
        # a year bound to a named document, another year bound to it in the sentence
        (
            "Dado que el Informe Halvorsen de 2015 advirtió sobre la basura espacial, ¿qué se hizo?",
            "The 2019 Halvorsen Report warned that debris mitigation rules were not enforced.",
            "conflicto_de_anio",
        ),
        (
            "Ya que el Plan Quimbaya de 2010 creó la red de radares, ¿cuántos hay?",
            "El Plan Quimbaya de 2016 dispuso la instalación de una red de radares en la costa.",
            "conflicto_de_anio",
        ),
        # the number of a counted, named object counting another name
        (
            "Ya que Noruega compró 12 helicópteros Merlin, ¿cómo cambió su defensa?",
            "Norway's purchase of 12 NH90 helicopters for the coast guard was delayed for years.",
            "objeto_distinto",
        ),
        (
            "Since Chile ordered 24 Leopard tanks, how did its doctrine change?",
            "Chile ordered 24 M1A2 tanks under a government-to-government agreement.",
            "objeto_distinto",
        ),
        # the partner swapped: one actor of the pair kept, the other replaced by a third
        (
            "Ya que en Saravena las AGC se disputan el territorio con el ELN, ¿qué consecuencias hubo?",
            "En Saravena, las AGC se encuentran en disputa por el control territorial con las disidencias de las FARC.",
            "actor_distinto",
        ),
        (
            "Given that Brazil built the Tupi-7 drone jointly with France, what does it carry?",
            "The Tupi-7 drone is a Brazilian design built jointly with Italy, according to the ministry.",
            "actor_distinto",
        ),
        # the other slot in the sentence after the one naming the thing
        (
            "Dado que Egipto desarrolló el misil Horus-9 junto con Rusia, ¿qué alcance tiene?",
            "Horus-9 is an air-launched cruise missile of the Egyptian air force. Developed in cooperation "
            "with India, it reaches 300 km.",
            "actor_distinto",
        ),
        # the opposite action at the name
        (
            "Dado que en 2024 se creó la Misión Ovalo (MOV) en Chad, ¿qué otra misión empezó?",
            "Three missions closed during the year: the Mission Ovalo in Chad (MOV) and two others.",
            "accion_opuesta",
        ),
        (
            "Given that the Senate approved the Kestrel Act in 2019, what changed?",
            "The Senate rejected the Kestrel Act in 2019 by a wide margin.",
            "accion_opuesta",
        ),
    ],
)
def test_a_slot_filled_otherwise_at_the_name_is_a_false_premise_with_its_sentence(question, text, why):
    v = _verdict(question, text)
    assert (v.estado, v.reason) == ("falsa", why), v
    assert v.chunk_id == "c1" and v.fragment and v.fragment in text


@pytest.mark.parametrize(
    ("question", "text"),
    [
        # the premise's own actor is in the sentence too: no substitution
        (
            "¿Por qué Francia lanzó el satélite Helios-3B en 2021?",
            "France launched Helios-3B in 2021; Italy and Spain share its images.",
        ),
        # another actor speaks about the thing, with none of the premise's predicate: no substitution
        (
            "¿Por qué la OTAN creó el programa 'Blue Harbor' para la logística predictiva?",
            "Germany praised “Blue Harbor” in a speech.",
        ),
        # an owner after the thing is no agent ("un satélite chino"): another country near it is no actor swap
        (
            "¿Por qué chocó el satélite Iridium con un satélite chino?",
            "The United States added the Iridium constellation to its daily conjunction screening.",
        ),
        # presence is shared: another group present in the place does not deny the premise's group
        (
            "Dado que el ELN tiene presencia en Puerto Gaitán, ¿qué riesgos hay?",
            "En Puerto Gaitán hay presencia de las disidencias de las FARC y del Clan del Golfo.",
        ),
        # a series or company name ("Cosmos") has many years: only a designation or a named document binds one
        (
            "¿Por qué Rusia destruyó el satélite Cosmos 1408 en 2021?",
            "Dec. 17, 1976 Cosmos 886 intercepted and destroyed Cosmos 880.",
        ),
        # a negation at the name: the sentence denies, it does not substitute
        (
            "Given that the Senate approved the Kestrel Act in 2019, what changed?",
            "The Senate never rejected the Kestrel Act.",
        ),
        # the opposite action at another date: the thing may have been launched and later closed
        (
            "Dado que en 2024 se creó la Misión Ovalo (MOV) en Chad, ¿qué otra misión empezó?",
            "The Mission Ovalo in Chad (MOV) closed in 2031 after seven years.",
        ),
        # the pair as the premise has it (a third actor named beside them is no swap)
        (
            "Ya que en Saravena las AGC se disputan el territorio con el ELN, ¿qué consecuencias hubo?",
            "En Saravena, las AGC se disputan el territorio con el ELN, mientras las disidencias de las FARC avanzan.",
        ),
        # the sentence after the thing's sentence speaks of another thing
        (
            "Dado que Egipto desarrolló el misil Horus-9 junto con Rusia, ¿qué alcance tiene?",
            "Horus-9 was developed by Egypt together with Russia. India tested another missile in 2020.",
        ),
        # the same number counting the premise's named object
        (
            "Ya que Noruega compró 12 helicópteros Merlin, ¿cómo cambió su defensa?",
            "Norway bought 12 Merlin helicopters in a deal with Leonardo.",
        ),
    ],
)
def test_no_substitution_where_the_sentence_does_not_deny_the_premise(question, text):
    v = _verdict(question, text)
    assert v.estado != "falsa", v


def test_anchors_are_names_not_actors_terms_or_series():
    names = substitution.anchors("la OTAN lanzó el programa 'In the Moment' y el satélite Cosmos 1408 con GPS")
    strong = {t for a in names for t in a.strong}
    assert "in the moment" in strong and "1408" in strong
    assert "cosmos" not in strong  # a series name: the designation identifies the satellite
    assert "otan" not in strong and "gps" not in strong  # an actor, a term of the field
    weak = substitution.anchors("el Batallón de Operaciones Terrestres N.º 12 en Corinto")
    assert any(a.weak and "12" in a.weak and a.headed for a in weak)
    assert any(a.headed for a in substitution.anchors("el Informe Allard de 2001"))


def test_a_positive_why_with_a_distinctive_name_is_an_implicit_premise():
    p = extract_premise("¿Por qué el ELN está combatiendo al Batallón de Infantería N.º 23 en Arauca?")
    assert p is not None and p.implicit
    # a term of the field is no name: still no premise
    assert extract_premise("¿Por qué Rusia interfiere las señales GPS?") is None


@pytest.mark.parametrize(
    ("question", "text"),
    [
        # a fresh tester's cases (not the author's): the older slot rule supports the premise on its
        # shared words while the same sentence swaps one slot (the opposite action, the partner)
        (
            "¿Por qué en 2023 se lanzó el programa Orion Watch de vigilancia espacial?",
            "El programa Orion Watch de vigilancia espacial fue cerrado en 2023 tras una serie de recortes "
            "presupuestarios del Congreso.",
        ),
        (
            "Dado que Brasil firmó con Chile el acuerdo de cooperación Condor-7, ¿qué capacidades se transfirieron?",
            "En 2021 Brasil firmó el acuerdo de cooperación Condor-7 con Argentina, que incluye la transferencia "
            "de tecnología de radares de vigilancia aérea.",
        ),
    ],
)
def test_support_beside_a_substitution_is_a_conflict_never_a_confirmed_premise(question, text):
    v = _verdict(question, text, language="es")
    assert v.estado == "no_verificada" and v.reason == "evidencia_en_conflicto", v
