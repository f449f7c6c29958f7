"""A country's name or adjective inside a longer proper name is not the country (tester, 2026-12-07:
the writer's opening turned the gang «Los Mexicanos», in "…los Locos Yam, Los Mexicanos…", into
México). ``anchors.named_sets`` reads the words as written: a name after a capitalised word that
opens no sentence, or a Spanish/Portuguese adjective written capitalised mid-sentence, is part of a
longer name; real mentions keep naming the country. The writer's opening and the verifier's check of
it use the same reading."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading.anchors import named_sets
from radar_pipeline.agent.roles.verifier import check_answer, summary_gaps
from radar_pipeline.agent.roles.writer import Quote, opening


def _labels(text: str) -> list[str]:
    return [ns.label for ns in named_sets(text)]


@pytest.mark.parametrize(
    "text",
    [
        # a gang named like a demonym, after a capitalised article mid-sentence (es)
        "En Cancún operan los Locos Yam, Los Mexicanos y otras células.",
        "La banda Los Colombianos controla el microtráfico en Quito.",
        "Detuvieron a tres miembros de Los Venezolanos en Lima.",
        # a capitalised Spanish adjective opening no sentence: part of a name
        "La disputa con Mexicanos Unidos por el puerto continúa.",
        "El grupo conocido como Peruanos del Sur amenaza a los líderes.",
        # a country's name after a capitalised word mid-sentence (en / es)
        "Smuggling routes through New Mexico grew in 2021.",
        "The gang Los Mexicanos was dismantled in 2022.",
        "Los recursos del Plan Colombia se redujeron.",
        "expulsó a la congresista del Partido Colombia Democrática",
    ],
)
def test_a_country_word_inside_a_longer_name_names_no_country(text):
    assert not {"México", "Colombia", "Venezuela", "Perú"} & set(_labels(text)), _labels(text)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("The Mexican government deployed the National Guard.", "México"),
        ("el gobierno mexicano desplegó la Guardia Nacional", "México"),
        ("Los mexicanos votaron en 2024.", "México"),
        ("Mexicanos y guatemaltecos cruzan la frontera.", "México"),  # capitalised by position
        ("Estados Unidos y China firmaron el acuerdo.", "Estados Unidos"),
        ("Colombia's army fought the ELN.", "Colombia"),
        ("según el Ejército Nacional de Colombia", "Colombia"),
        ("The Russian Federation tested a missile.", "Rusia"),
        ("en la frontera colombo-venezolana, el ejército colombiano", "Colombia"),
        ("- Colombia registró 12 ataques.", "Colombia"),
        # an English adjective that folds like a Spanish one ("Israeli" / "israelí") stays capitalised
        ("As of 2024, there is no single Israeli body overseeing defense AI.", "Israel"),
        ("the Iranian drones reached Ukraine", "Irán"),
    ],
)
def test_real_mentions_still_name_the_country(text, label):
    assert label in _labels(text), _labels(text)


def test_organisations_keep_their_own_article():
    assert {"Los Rastrojos", "Los Choneros"} <= set(_labels("Los Rastrojos y Los Choneros operan en la frontera."))
    assert "Los Choneros" in _labels("En Guayaquil, Los Choneros y Los Lobos se disputan el puerto.")


def test_the_opening_and_its_check_agree():
    gang = Quote(
        "En Quintana Roo operan el Cártel Jalisco Nueva Generación, los Locos Yam, Los Mexicanos y Los Pelones.",
        "00000000000000a1",
        "00000000000000a1-0",
    )
    first = opening("¿Qué pandillas operan en Quintana Roo?", [gang])
    assert "México" not in first, first
    government = Quote(
        "The Mexican government sent 3,000 troops to Cancún in 2019.", "00000000000000b2", "00000000000000b2-0"
    )
    second = opening("¿Qué hizo el gobierno de México en Cancún?", [government])
    assert "México" in second, second
    # the verifier reads the opening's names the same way: each is met by its evidence
    for line, q in ((first, gang), (second, government)):
        assert summary_gaps(line.split(" [")[0], [q.sentence]) == [], line
        read = {q.chunk_id: {"doc_id": q.doc_id, "chunk_id": q.chunk_id, "text": q.sentence}}
        assert check_answer(f"{line}\n\n{q.line()}", read).ok, line
