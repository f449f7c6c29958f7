"""The sentence-kind classifier (``agent.statements``): several sentences of each kind, in English,
Spanish and Portuguese, and its precision/recall on the hand-labelled corpus sample."""

from __future__ import annotations

import pytest

from evals.sentence_kinds import load, measure
from radar_pipeline.agent.statements import KINDS, features, is_statement, sentence_kind

STATEMENTS = [
    "The 2007 Chinese ASAT test destroyed the Fengyun-1C weather satellite and created more than 3,000 fragments.",
    "In November 2021 a Russian direct-ascent missile test forced the crew of the International Space Station to shelter.",
    "Pakistan has not officially confirmed using AI in its military weaponry and defences.",
    "AI learns from the data it is trained on.",
    # a date clause opening prose, and a quoted event name: no citation
    "On Tuesday, March 3, 2031, the Orbit Council and Helios Labs jointly hosted a public forum, “Safe Orbits for All.”",
    "El escenario de riesgo se configura por la disputa territorial entre las AGC y el ELN en el sur de Bolívar.",
    "La minería ilegal de oro financia la expansión territorial de los grupos armados en Chocó.",
    "Es probable que las facciones disidentes ejecuten nuevos hechos violentos contra la población civil.",
    "O garimpo ilegal de ouro na Amazônia converge com o tráfico de drogas e a exploração de madeira.",
    "A ideia central é simples: decisões de curto prazo podem gerar consequências de longo prazo no espaço.",
    "China's spaceplane is rumored to be similar to the United States' X-37B (pictured above).",
]

NON_STATEMENTS = {
    "reference": [
        "393 Jonathan McDowell, Twitter Post, December 27, 2019, 8:54 PM.",
        "115 Gallese, C., 'The GPA Code of Practice, a long journey not over yet', MediaLaws, 8 Sep. 2025.",
        "1GAO, Weapon System Acquisitions: Opportunities Exist to Improve Portfolio Management (Washington, D.C.: Aug. 27, 2015).",
        "5. Pavel Podvig, “Is China Repeating the Old Soviet and U.S. Mistakes?”",
        "Pérez, J. y Gómez, A. (2019). Minería ilegal y conflicto armado en Colombia. Revista de Estudios Sociales, 45, pp. 12-30.",
        "Silva, M. “Garimpo e facções na Amazônia”, Folha de S.Paulo, 3 de março de 2023. Disponível em www.folha.uol.com.br.",
    ],
    "footnote": [
        "8 This list includes only universities that use the AI-specific CIP code for their programs, rather than general CS.",
        "74 36 La Comisión Especializada en Género de la Secretaria de Estado del MDN está trabajando a su inclusión.",
        "Ibid., p. 45.",
    ],
    "caption": [
        "Figure: Consequences of a low-altitude kinetic ASAT test on the debris population.",
        "Each line represents one of the orbital regions and the number of objects it held each year.",
        "Figure 15: Successful Orbital Launches from the Wallops Flight Facility (1957-2018).",
        "Tabla 3: Municipios con alertas tempranas emitidas entre 2018 y 2022.",
        "Fuente: elaboración propia con base en datos de la Defensoría del Pueblo.",
        "Gráfico 2. Evolución de los cultivos de coca por departamento.",
        "Este mapa muestra la presencia de grupos armados en los municipios del Pacífico.",
        "Fonte: INPE, sistema DETER, 2023.",
        "A figura mostra a evolução do desmatamento na Amazônia Legal.",
    ],
    "toc": [
        "4.2 • Creation of Working Groups............................94",
        "Table of Contents • Introduction • Methodology • Findings",
        "Índice: 1. Introducción . . . . . . . 3",
    ],
    "boilerplate": [
        "Group Name: 1 Harish Team Members • Ana • Luis • Table of Contents •",
        "Related Experts: David Bray, Wendy Hall, Tim Clement-Jones, and Steven Tiell.",
        "Find the full GeoTech Hour series here.",
        "Para más información escriba a prensa@defensoria.gov.co o llame al teléfono 314 000 0000.",
        "By Mathew Burrows, Julian Mueller-Kaler",
        "© 2023 Center for Strategic and International Studies. All rights reserved.",
        "O tutorial para o cadastro está disponível em: www.inpe.br.",
    ],
    "table": [
        "004-22 013-25 018-20 019-23 020-25 022-18 025-23 026-18 030-23 035-19 045-18",
        "Narcotráfico; Minería ilegal; Contrabando; Narcotráfico; Minería ilegal",
        "capa: au_compilado_R02, fid: 339, b_ADM2_PCODE: BR2909307, b_ADM1_PCODE: BR29, b_ADM1_PT: Bahia",
    ],
    "question": [
        "Can't the existing military services continue to manage missions in space?",
        "¿Qué pasará con la población civil si el ELN avanza sobre el río?",
    ],
    "fragment": [
        "across-u-s-southeast-coast/.",
        "For many types of military missions, the slowest part of or cyberattacks.",
        "2025, remaining the highest in the world for the fourth year in a row.",
        "2013 and 2017, only 90 reports of GPS jam- measure due to its distance from Ukraine.",
        "Colombia) representa la suma de todas las inversiones.",
        "visitadas es que la micro focalización, la mayoría de las veces,",
        "O R B I T A L D E B R I S Created by Destructive ASAT Testing The countries listed carried out tests.",
    ],
}


@pytest.mark.parametrize("sentence", STATEMENTS)
def test_statements_are_quotable(sentence):
    assert sentence_kind(sentence) == "statement" and is_statement(sentence), sentence


@pytest.mark.parametrize(("kind", "sentence"), [(k, s) for k, sentences in NON_STATEMENTS.items() for s in sentences])
def test_document_apparatus_is_never_a_statement(kind, sentence):
    got = sentence_kind(sentence)
    assert got != "statement" and not is_statement(sentence), (kind, sentence)
    assert got in KINDS


def test_each_kind_is_recognised_as_itself_for_its_clearest_cases():
    """The kind itself (not only "non-statement") for the examples whose markers are unambiguous."""
    assert sentence_kind(NON_STATEMENTS["reference"][0]) == "reference"
    assert sentence_kind(NON_STATEMENTS["caption"][1]) == "caption"
    assert sentence_kind(NON_STATEMENTS["toc"][0]) == "toc"
    assert sentence_kind(NON_STATEMENTS["table"][0]) == "table"
    assert sentence_kind(NON_STATEMENTS["boilerplate"][1]) == "boilerplate"
    assert sentence_kind(NON_STATEMENTS["question"][1]) == "question"
    assert sentence_kind(NON_STATEMENTS["footnote"][0]) == "footnote"


def test_features_are_measured():
    f = features("393 Jonathan McDowell, Twitter Post, December 27, 2019, 8:54 PM.")
    assert f.leading_note and f.cite_score >= 2
    g = features("The war in Ukraine shows that AI-assisted analysis compresses the time to strike.")
    assert g.verb_evidence and not g.leading_note and g.cite_score == 0
    assert sentence_kind("") == "fragment"


# Measured on the committed sample (evals/labelled/sentence_kinds.jsonl, 300 sentences, labelled by
# hand): all rows precision 0.956 / recall 0.927; the 210 rows the writer's shape filter lets through
# 0.931 / 0.848. The floors leave a margin of about three points.
FLOORS = {"all": (0.92, 0.89), "usable": (0.90, 0.81)}


def test_precision_and_recall_on_the_labelled_sample_stay_above_their_floor():
    rows = load()
    assert len(rows) == 300 and {r["kind"] for r in rows} <= set(KINDS)
    m = measure(rows)
    for part, (p, r) in FLOORS.items():
        assert m[part]["precision"] >= p and m[part]["recall"] >= r, (part, m[part])
