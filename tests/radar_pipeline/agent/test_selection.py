"""Issue 22 (selection): which sentences of the passages read an extractive answer quotes —
pieces cleaned before they are judged (footnote markers, headings run into the sentence), the
question's terms met through their English translations and weighted by how rare they are among
the candidates, quantities in words, and no quote below the score floor."""

from __future__ import annotations

import numpy as np
import pytest

from radar_pipeline.agent.roles.selection import (
    MIN_SCORE,
    clean_piece,
    states_quantity,
    strip_heading,
    term_coverage,
    term_groups,
)
from radar_pipeline.agent.roles.verifier import check_answer
from radar_pipeline.agent.roles.writer import ExtractiveWriter
from radar_pipeline.agent.statements import is_statement
from tests.radar_pipeline.agent.test_answer_shape import _p  # one passage builder for the writer tests


@pytest.mark.parametrize(
    ("piece", "expected"),
    [
        # a note marker glued to the full stop
        (
            "From 2017 to 2021 the ministry spent around USD145M on AI-related technology development.50",
            "From 2017 to 2021 the ministry spent around USD145M on AI-related technology development.",
        ),
        (
            "However, the intercept created 130 pieces of trackable debris with some pieces thrown higher.21",
            "However, the intercept created 130 pieces of trackable debris with some pieces thrown higher.",
        ),
        (
            "El gasto militar en inteligencia artificial creció de forma sostenida durante la década (2020).3",
            "El gasto militar en inteligencia artificial creció de forma sostenida durante la década (2020).",
        ),
        # a title block, fact sheet header or section label run into the first sentence
        (
            "Space Debris Fact Sheet Updated March 2, 2011 Main Author: Ana Ruiz, aruiz@example.org Summary "
            "On March 1, 2011, two inactive satellites collided at an altitude of about 790 kilometres.",
            "On March 1, 2011, two inactive satellites collided at an altitude of about 790 kilometres.",
        ),
        (
            "Summary of “Drone Swarms in Modern Warfare” Findings This report examines hundreds of procurement "
            "notices published by the navy between 2019 and 2022.",
            "This report examines hundreds of procurement notices published by the navy between 2019 and 2022.",
        ),
        (
            "-- Página 3 --> 7) Defensoría del Pueblo COLOMBIA La Alerta Temprana 031-19 advierte que el riesgo "
            "para la población campesina del municipio persiste por la presencia de grupos armados ilegales.",
            "La Alerta Temprana 031-19 advierte que el riesgo para la población campesina del municipio persiste "
            "por la presencia de grupos armados ilegales.",
        ),
        (
            "Annual Orbital Report 2024 Our planet is surrounded by thousands of active satellites that deliver "
            "navigation and communication services.",
            "Our planet is surrounded by thousands of active satellites that deliver navigation and communication "
            "services.",
        ),
    ],
)
def test_a_piece_is_cleaned_to_the_sentence_it_holds(piece, expected):
    cleaned = clean_piece(piece)
    assert cleaned == expected
    assert cleaned in piece  # still a verbatim substring: the quote stays checkable
    assert is_statement(cleaned)


@pytest.mark.parametrize(
    "sentence",
    [
        "The United States and China are leading the development of military artificial intelligence systems.",
        "In 2019 India and the United States signed a new agreement on space situational awareness data.",
        "La Defensoría del Pueblo emitió la Alerta Temprana 045-20 para Tumaco por la presencia de disidencias.",
        "European Space Agency officials said the Zero Debris Charter was signed by twelve countries in 2023.",
    ],
)
def test_a_sentence_whose_subject_is_a_name_is_never_cut(sentence):
    assert clean_piece(sentence) == sentence
    assert strip_heading(sentence, openers_only=True) in (None, sentence)


def test_an_ocr_number_sign_is_not_an_unbalanced_quote():
    # "N”060-18", "N*069-18": how OCR reads «N.º» in the Defensoría's alerts
    for code in ("N”060-18", "N*069-18", 'N"012-20'):
        s = f"La Alerta Temprana {code} da cuenta de que el escenario de riesgo en el municipio persiste."
        assert is_statement(s), s
    assert not is_statement("Los grupos armados ” se disputan el control del territorio desde entonces.")


def test_quantities_in_words_count_as_figures():
    assert states_quantity("Overall, there have been eleven known or suspected flight tests.")
    assert states_quantity("Hundreds of satellites were launched by private companies.")
    assert states_quantity("La Defensoría registró ocho alertas en el departamento.")
    assert states_quantity("It created more than 3,000 fragments.")
    assert not states_quantity("The test was widely criticised by the international community.")
    assert not states_quantity("The satellite was launched in 2019.")  # a year is not a quantity


def test_the_question_terms_carry_their_english_translations():
    groups = term_groups("¿Cuántas pruebas de vuelo tuvieron los misiles?")
    flat = {t for g in groups for t in g}
    assert {"pruebas", "tests"} <= flat and {"vuelo", "flight"} <= flat


def test_term_coverage_weighs_rare_terms_over_common_ones():
    question = "¿Cuántas pruebas de vuelo del sistema Nudol tuvieron éxito?"
    sentences = [
        "The Nudol system is a Russian direct-ascent anti-satellite weapon.",
        "Overall, there have been eleven known or suspected flight tests of the Nudol system.",
        "The Nudol system was reportedly first tested in 2014.",
        "Russian officials rarely discuss the Nudol system in public.",
    ]
    cov = term_coverage(question, sentences)
    assert cov.shape == (4,) and np.all((cov >= 0) & (cov <= 1))
    # "Nudol" and "system" are in every sentence and weigh little; "flight" only in one ("tested"
    # meets "tests" too, in another)
    assert int(np.argmax(cov)) == 1
    assert cov[1] > 2 * max(cov[0], cov[2], cov[3])
    assert term_coverage("¿Qué es la guerra electrónica?", []).shape == (0,)


@pytest.fixture(scope="module")
def writer(use_encoder):
    return ExtractiveWriter(use_encoder)


def test_the_sentence_stating_the_asked_fact_is_quoted(writer):
    passages = [
        _p(
            1,
            "The Nudol system is a Russian direct-ascent anti-satellite weapon based near Plesetsk. "
            "What little is known publicly about the programme suggests an orbital intercept capability. "
            "Overall, there have been eleven known or suspected flight tests, at least eight of which were likely "
            "successful.",
        ),
        _p(2, "Russian officials rarely discuss the Nudol system in public and its budget is classified."),
    ]
    q = "¿Cuántas pruebas de vuelo conocidas o sospechadas del sistema Nudol hubo y cuántas tuvieron éxito?"
    draft = writer.write(q, passages)
    assert any("eleven known or suspected flight tests" in s for s, _ in draft.sentences), draft.text
    assert check_answer(draft.text, {p["chunk_id"]: p for p in passages}).ok


def test_nothing_is_quoted_below_the_score_floor(writer):
    # passages on another subject entirely: no sentence reaches MIN_SCORE, nothing is quoted
    passages = [
        _p(1, "The recipe calls for three cups of flour, two eggs and a spoonful of sugar mixed slowly."),
        _p(2, "Local football clubs reported record attendance during the summer tournament last year."),
    ]
    draft = writer.write("¿Qué capacidades antisatélite tiene Rusia en órbita geoestacionaria?", passages)
    assert draft.text == "" and draft.sentences == []
    assert MIN_SCORE > 0


def test_a_sentence_gains_the_support_of_its_neighbours_in_the_passage():
    from radar_pipeline.agent.roles.writer import neighbour_support

    a, b = _p(1, "One. Two. Three."), _p(2, "Four. Five.")
    cands = [("One.", a), ("Four.", b), ("Two.", a), ("Five.", b), ("Three.", a)]
    scores = np.array([0.9, 0.1, 0.2, 0.4, 0.7], dtype=np.float32)
    support = neighbour_support(cands, scores)
    # One↔Two↔Three in passage 1 (in text order, not candidate order); Four↔Five in passage 2
    assert support.tolist() == pytest.approx([0.2, 0.4, 0.9, 0.1, 0.2])


def test_key_facts_in_consecutive_sentences_are_quoted_together(writer):
    passage = _p(
        1,
        "Executive summary of the procurement study on military artificial intelligence. "
        "This report leverages a novel dataset of 2,857 AI-related contract award notices published by the PLA. "
        "From these documents, we identified 1,560 different organizations that won at least one such contract. "
        "We focus our analysis on the 338 entities awarded at least two AI-related contracts. "
        "The weather in Beijing was unusually warm during the year the notices were collected.",
    )
    q = "¿Cuántos avisos de adjudicación de contratos de IA del EPL analiza el informe y cuántas organizaciones ganaron al menos uno?"
    quoted = [s for s, _ in writer.write(q, [passage]).sentences]
    assert any("2,857" in s for s in quoted) and any("1,560" in s for s in quoted), quoted
    assert not any("weather" in s for s in quoted)


def test_the_day_of_a_date_is_no_figure():
    from radar_pipeline.agent.roles.selection import figures_in

    assert figures_in("On November 15, 2021, Russia conducted an intercept test of the Nudol system.") == []
    assert figures_in("El 15 de noviembre de 2021 Rusia destruyó el Cosmos 1408 y dejó 1.500 fragmentos.") == ["1.500"]
    assert figures_in("Em 3 de março de 2020 foram lançados 60 satélites.") == ["60"]
    assert figures_in("The test on 12 March created 130 pieces of debris.") == ["130"]
