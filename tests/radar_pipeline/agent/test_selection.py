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


# --------------------------------------------------------------------------- issue 22, second pass: the
# kinds of loss found on the dev set's "right passage cited, other sentence quoted" questions


@pytest.mark.parametrize(
    ("question", "money"),
    [
        ("¿Cuánto dinero ha asignado Israel a proyectos de IA para defensa?", True),
        ("¿Cuál es el presupuesto de defensa de Colombia para 2024?", True),
        ("¿Cuánto invirtió el ministerio en inteligencia artificial entre 2017 y 2021?", True),
        ("How much funding did the Pentagon request for AI in 2024?", True),
        ("¿Cuántos satélites lanzó China en 2023?", False),  # a count, not money
        ("¿Qué países aumentaron su gasto militar?", False),  # asks for countries
    ],
)
def test_a_question_asking_for_money_is_recognised(question, money):
    from radar_pipeline.agent.roles.selection import QuestionProfile

    assert QuestionProfile.of(question, []).money is money


def test_an_amount_of_money_is_told_from_other_figures():
    from radar_pipeline.agent.roles.selection import states_money

    for s in (
        "The government allocated NIS550 million (around €140 million) to several critical projects.",
        "From 2017 to 2021 the ministry spent around USD145M on AI-related technology development.",
        "Spending on AI contracts reached roughly $920 million in 2019.",
        "El Ministerio destinó 3.000 millones de pesos al programa de desminado.",
        "The agency received two billion dollars for the programme.",
    ):
        assert states_money(s), s
    for s in (
        "The test created more than 3,000 pieces of trackable debris.",
        "In 2019 India tested an anti-satellite missile against its own satellite.",
        "The budget of the ministry is classified and not available to parliament.",
        "The company won 20 contracts with the navy.",
    ):
        assert not states_money(s), s


@pytest.mark.parametrize(
    ("question", "time"),
    [
        ("¿Cuándo anunció EE.UU. la nueva guía del MTCR?", True),
        ("Cuando fue la primera prueba ASAT de la India?", True),  # unaccented, opening the question
        ("¿Quién lanzó el satélite y cuándo?", True),
        ("¿Qué medidas recomienda CSET a los comandantes cuando usan sistemas de apoyo a la decisión?", False),
        ("¿Qué riesgos corre la población cuando los grupos armados se disputan el territorio?", False),
        ("¿En qué año entró en vigor el Convenio sobre responsabilidad?", True),
    ],
)
def test_cuando_asks_for_a_date_only_as_an_interrogative(question, time):
    from radar_pipeline.agent.roles.selection import QuestionProfile

    assert QuestionProfile.of(question, []).time is time


def test_a_question_asking_for_recommendations_rewards_prescriptive_sentences():
    from radar_pipeline.agent.roles.selection import QuestionProfile

    for q in (
        "¿Qué medidas recomienda CSET a los comandantes para mitigar los riesgos?",
        "¿Qué recomendaciones hace la Defensoría a las autoridades de Tumaco?",
        "¿Qué debería hacer la ONU para reducir los desechos espaciales?",
    ):
        profile = QuestionProfile.of(q, [])
        assert profile.prescriptive, q
        said = "Commanders should set the time, place, and context for deploying and authorizing DSS use."
        told = "This paper reviews recently proposed uses of AI-enabled DSS and the risks they carry."
        dicho = "Las autoridades deben adoptar medidas de protección para los líderes sociales del municipio."
        assert profile.fit(said, said.lower()) > profile.fit(told, told.lower())
        assert profile.fit(dicho, dicho.lower()) > profile.fit(told, told.lower())
    assert not QuestionProfile.of("¿Cuántas pruebas ASAT hizo Rusia?", []).prescriptive


def test_each_concept_of_the_question_is_counted_once():
    from radar_pipeline.agent.roles.selection import _one_group_per_concept

    groups = [
        ("estados",),
        ("unidos",),
        ("riesgos", "risk"),
        ("defensa", "defense"),
        ("defense",),
        ("estados unidos", "united states", "us"),
        ("riesgos", "risks"),
        ("defensa", "defense", "defence"),
    ]
    glossary = [("estados unidos", "united states", "us"), ("riesgos", "risks"), ("defensa", "defense", "defence")]
    out = _one_group_per_concept(groups, glossary)
    assert ("estados",) not in out and ("unidos",) not in out  # components of a glossary term, no translation
    assert ("riesgos", "risk", "risks") in out  # same Spanish term: merged
    assert ("defense",) not in out and ("defensa", "defense", "defence") in out  # held by another group
    assert len(out) == 3


def test_an_english_sentence_is_not_outweighed_by_its_spanish_translation_on_repeated_words():
    # the question names a country the glossary translates: a Spanish sentence must not gain its
    # words three times over ("estados", "unidos", "estados unidos") against the English original
    q = "¿Qué prueba de intercepción co-orbital ha hecho Estados Unidos y en el marco de qué programa?"
    sentences = [
        "The United States conducted one co-orbital intercept test in 1986 with the Delta 180 experiment.",
        "Los Estados Unidos han llevado a cabo múltiples pruebas de tecnologías de aproximación y encuentro.",
        "The United States has three operational electronic warfare counterspace systems.",
        "Russia has deployed two sub-satellites at high velocity in low Earth orbit.",
    ]
    groups = term_groups(q)
    assert not any(g in (("estados",), ("unidos",)) for g in groups)
    cov = term_coverage(q, sentences)
    # one concept (the country) no longer weighs three times: the English original is within reach
    assert cov[0] > 0.2 and cov[1] < 0.8, cov


@pytest.mark.parametrize(
    "sentence",
    [
        # long findings of the Defensoría's alerts and of policy articles: one sentence per finding
        "El análisis de contexto y de la respuesta estatal a las recomendaciones incluidas en la Alerta Temprana "
        "para el municipio da cuenta de la permanencia de riesgos para la población indígena que habita en el "
        "resguardo, relacionados con la presencia y accionar del Ejército de Liberación Nacional y de estructuras "
        "disidentes de las FARC-EP, ya que el territorio donde se ubica la población resulta estratégico para los "
        "grupos armados ilegales para el tránsito y movilidad de combatientes, armas, insumos, abastecimiento y "
        "contrabando de ganado y gasolina.",
        "The U.S. shift jettisons a policy approach that for years had enforced an even higher bar than the "
        "guidelines' strong presumption of denial for transfers of Category I systems, which include complete "
        "rocket systems, including ballistic missiles, space launch vehicles and sounding rockets, and complete "
        "unmanned aerial vehicle systems, including cruise missiles, target drones and reconnaissance drones, "
        "capable of delivering at least a 500 kg payload to a range of at least 300 km.",
    ],
)
def test_a_long_sentence_of_prose_is_quotable(sentence):
    from radar_pipeline.agent.roles.selection import LONG_CHARS, MAX_CHARS, _usable

    assert LONG_CHARS < len(sentence) <= MAX_CHARS
    assert _usable(sentence) and is_statement(sentence)


@pytest.mark.parametrize(
    "piece",
    [
        # an infographic's labels run into a sentence
        "Stakeholder sustainability action development countries engagement ensure space remains drive climate "
        "action Advance progress on ensure developing Accelerate the available for future through space sustainable "
        "development countries can contribute to achievement of objectives generations through the committee, "
        "which is the intergovernmental body responsible for developing the global governance of outer space and "
        "for coordinating the work of its members on long-term sustainability.",
        # a memo's header block run into its first sentence
        "Secretary Of War 1000 Defense Pentagon Washington Memorandum For Senior Pentagon Leadership Commanders "
        "Of The Combatant Commands Subject Artificial Intelligence Strategy For The Department President Trump "
        "has directed that the department accelerate the adoption of artificial intelligence across all "
        "components, and this memorandum sets out how the department will do so over the coming years while "
        "AI-enabled capability development will re-define the character of military affairs.",
        # a map legend run into a sentence
        "Mapa Resguardos Indígenas Chaparral Barronegro Facciones Disidentes Convenciones Municipios Veredas "
        "Resguardos Las dimensiones del escenario de riesgo se redefinen por los mecanismos y la intensidad de la "
        "violencia que aplican los actores armados no estatales parte del conflicto armado para garantizar el "
        "ejercicio de control sobre la población rural y campesina de estos municipios, con el fin de imponer "
        "lealtades y subordinación mediante amenazas, homicidios selectivos y restricciones a la movilidad.",
    ],
)
def test_a_long_piece_that_opens_with_labels_is_not_quotable(piece):
    from radar_pipeline.agent.roles.selection import LONG_CHARS, _usable

    assert len(piece) > LONG_CHARS
    assert not _usable(piece)


def test_the_sentence_stating_the_amount_is_quoted_for_a_money_question(writer):
    passage = _p(
        1,
        "Israel's leading position in defense AI has emerged from the security challenges it faces, requiring "
        "the defense establishment and academia to stay alert to new technologies and critical projects. "
        "Israel's investment in AI for defense purposes is challenging to quantify due to the lack of "
        "transparency regarding its defense budget. "
        "However, the significance of investing in AI has been recognized, resulting in the allocation of "
        "NIS550 million (around €140 million) to several critical projects. "
        "Israel's implementation of AI extends beyond unmanned systems, air defense and cyber warfare. "
        "The defense AI ecosystem of Israel is shaped by an informal culture and by market forces.",
    )
    q = "¿Cuánto dinero ha asignado Israel a proyectos críticos de IA para defensa?"
    quoted = [s for s, _ in writer.write(q, [passage]).sentences]
    assert any("NIS550 million" in s for s in quoted), quoted


@pytest.mark.parametrize(
    ("piece", "expected"),
    [
        # a running footer with its page number, then the sentence
        (
            "Center for Security and Emerging Technology | 22 Recommendations AI-DSS could have strategic benefits "
            "in certain contexts, but those benefits are not without risks, which commanders must control.",
            "Recommendations AI-DSS could have strategic benefits in certain contexts, but those benefits are not "
            "without risks, which commanders must control.",
        ),
        # a web address in capitals with page numbers, a chapter title, then the sentence
        (
            "WWW.DEFENSEAI.EU 21 5 Funding Defense AI 22 EMBRACING THE ORGANIZED MESS Neither the amount of funding "
            "dedicated to defense AI in Israel, nor the national budget allocated to defense, is publicly known.",
            "Neither the amount of funding dedicated to defense AI in Israel, nor the national budget allocated to "
            "defense, is publicly known.",
        ),
        # page counters "22|02" of a series' title page
        (
            "Defense AI in Sweden DAIO Study 23|14 La Defensoría del Pueblo emitió la Alerta Temprana 045-20 para "
            "Tumaco por la presencia de disidencias.",
            "La Defensoría del Pueblo emitió la Alerta Temprana 045-20 para Tumaco por la presencia de disidencias.",
        ),
        # a subject that is a name survives the cut (no heading stripped after the header)
        (
            "Annual Report 2023 | 14 The United States and China are leading the development of military artificial "
            "intelligence systems.",
            "The United States and China are leading the development of military artificial intelligence systems.",
        ),
    ],
)
def test_a_running_header_before_the_sentence_is_cut(piece, expected):
    cleaned = clean_piece(piece)
    assert cleaned == expected
    assert cleaned in piece and is_statement(cleaned)


@pytest.mark.parametrize(
    "piece",
    [
        # two PDF columns read across: the footnote column's entries and web addresses inside the prose
        "The analysis provided by 133 Elsa Kania, “China’s Strategic Situational the Center suggested that a piece "
        "of Cosmos 1408 debris would pass within 14.5 meters of the satellite.",
        "China had its first 7 Sandeep Unnithan, “India has all the building successful ASAT missile test intercept "
        "in 2007, which generated space debris.",
        "However, no 37b-otv-5.html. such deployment was announced nor catalogued by the US military after the launch.",
        "India held a kinetic ASAT test in -the-beginnings-of-indias-daz- 2019 where it destroyed one of its own "
        "satellites.",
        "En , China lanzó el centro de monitoreo de desechos t20150610_148380.shtml. con apoyo de la agencia espacial.",
    ],
)
def test_a_sentence_with_a_footnote_column_interleaved_is_not_quotable(piece):
    from radar_pipeline.agent.roles.selection import _usable

    cleaned = clean_piece(piece)
    assert cleaned == piece  # no part of it is clean: never cut into a quotable-looking suffix
    assert not _usable(cleaned)


@pytest.mark.parametrize(
    "sentence",
    [
        "The state-of-the-art sensors were delivered to the air force in 2021 after two years of tests.",
        "In 2019, 12 countries signed the agreement, “a milestone” according to the ministry.",
        "La misión de largo-plazo-en-órbita fue anunciada por la agencia espacial en 2022.",
        "The report cites 3 Russian officials who confirmed the test in public statements.",
    ],
)
def test_ordinary_sentences_are_not_taken_for_interleaved_notes(sentence):
    from radar_pipeline.agent.roles.selection import _usable

    assert _usable(clean_piece(sentence)), sentence


# --------------------------------------------------------------------------- a heading scopes the passage
# A passage that opens with a heading or title line that names the question's place or subject: the
# sentence under it that states what is asked is quoted, though it does not repeat the name (issue 22:
# an Ombudsman alert on Tumaco, read and not quoted); a sentence under it that states nothing asked is
# not lifted by the heading; a heading naming another place lifts nothing.
HEADED = [
    (
        "¿Qué grupos armados operan en Tumaco?",
        "Alerta Temprana de Inminencia N° 001-20 para el municipio de Tumaco, Nariño. "
        "El escenario de riesgo de inminencia se configura por la presencia del ELN y de la Segunda Marquetalia.",
        "Segunda Marquetalia",
    ),
    (
        "¿Qué grupos armados hacen presencia en Ituango?",
        "Informe de Seguimiento N° 014-21 al municipio de Ituango, Antioquia. "
        "Las disidencias de las FARC y el Clan del Golfo se disputan el control de las veredas del cañón.",
        "Clan del Golfo",
    ),
    (
        "¿Cuántas personas fueron desplazadas en Bojayá?",
        "Nota de Seguimiento N° 007-19 para Bojayá, Chocó. "
        "Entre enero y marzo se registraron 1.243 personas desplazadas de forma masiva por los combates.",
        "1.243 personas",
    ),
    (
        "Which armed groups operate in Catatumbo?",
        "Early Warning 035-20 for the Catatumbo region, Norte de Santander. "
        "The risk stems from the presence of the ELN and of FARC dissident fronts along the border.",
        "presence of the ELN",
    ),
]


@pytest.mark.parametrize(("question", "text", "fact"), HEADED)
def test_the_fact_under_a_heading_that_names_the_place_is_quoted(writer, question, text, fact):
    lang = "en" if question.startswith("Which") else "es"
    draft = writer.write(question, [_p(1, text, lang)])
    quoted = [s for s, _ in draft.sentences]
    assert any(fact in s for s in quoted), (quoted, draft.text)
    assert check_answer(draft.text, {"0000000000000001-1": _p(1, text, lang)}).ok


def test_a_heading_does_not_lift_a_sentence_that_states_nothing_asked(use_encoder):
    from radar_pipeline.agent.roles.selection import QuestionProfile, passage_leads, score

    q = "¿Qué grupos armados operan en Tumaco?"
    text = (
        "Alerta Temprana de Inminencia N° 001-20 para el municipio de Tumaco, Nariño. "
        "El clima de la región fue especialmente lluvioso durante los meses de la visita. "
        "El escenario de riesgo se configura por la presencia del ELN y de la Segunda Marquetalia."
    )
    p = _p(1, text, "es")
    sents = [
        "El clima de la región fue especialmente lluvioso durante los meses de la visita.",
        "El escenario de riesgo se configura por la presencia del ELN y de la Segunda Marquetalia.",
    ]
    leads = passage_leads(sents, [p, p])
    assert leads == ["Alerta Temprana de Inminencia N° 001-20 para el municipio de Tumaco, Nariño."] * 2
    qv = np.asarray(use_encoder.encode_queries([q])[0])
    cos = np.asarray(use_encoder.encode_passages(sents)) @ qv
    profile = QuestionProfile.of(q, [])
    plain, scoped = score(q, sents, cos, [0.5, 0.5], profile), score(q, sents, cos, [0.5, 0.5], profile, leads)
    assert scoped[0] == pytest.approx(plain[0])  # the weather: nothing of its own, nothing from the heading
    assert scoped[1] > plain[1] and scoped[1] >= MIN_SCORE  # the groups: the heading's place is theirs


@pytest.mark.parametrize(
    "text",
    [
        # a heading naming another municipality
        "Alerta Temprana de Inminencia N° 003-18 para el municipio de Ituango, Antioquia. "
        "El escenario de riesgo se configura por la presencia del Clan del Golfo.",
        # no heading: the passage opens with prose
        "El escenario de riesgo se configura por la presencia del Clan del Golfo en la zona rural del municipio.",
    ],
)
def test_no_heading_naming_the_place_lifts_nothing(use_encoder, text):
    from radar_pipeline.agent.roles.selection import QuestionProfile, passage_leads, score

    q = "¿Qué grupos armados operan en Tumaco?"
    p = _p(1, text, "es")
    sent = [s for s in text.split(". ") if "Clan del Golfo" in s][0]
    sent = sent if sent.endswith(".") else sent + "."
    qv = np.asarray(use_encoder.encode_queries([q])[0])
    cos = np.asarray(use_encoder.encode_passages([sent])) @ qv
    profile = QuestionProfile.of(q, [])
    leads = passage_leads([sent], [p])
    assert score(q, [sent], cos, [0.5], profile, leads)[0] == pytest.approx(score(q, [sent], cos, [0.5], profile)[0])


@pytest.mark.parametrize(
    ("question", "actors"),
    [
        ("Which armed groups operate in Catatumbo?", True),
        ("What foreign companies supply the satellites?", True),
        ("¿Qué otros países han probado armas antisatélite?", True),
        ("¿Qué grupos armados operan en Tumaco?", True),
        ("¿Quiénes financian el programa?", True),
        ("What armed drones does Turkey export?", False),
        ("¿Qué riesgos plantea la basura espacial?", False),
    ],
)
def test_a_question_asking_for_actors_is_recognised_with_an_adjective_between(question, actors):
    from radar_pipeline.agent.roles.selection import QuestionProfile

    assert QuestionProfile.of(question, []).actors is actors


@pytest.mark.parametrize(
    "sentence, figures",
    [
        ("The launch happened at 6:10 am near 12th Street in the 21st Century.", []),
        ("It created 3,000 pieces, 35 % of them above 800km and 140 tracked.", ["3,000", "35 %", "140"]),
        ("La alerta AT-018 advierte riesgos en 27 municipios.", ["27"]),
    ],
)
def test_figures_are_numbers_standing_alone(sentence, figures):
    """A clock time, an ordinal, a number glued to letters or inside a code is no figure the opening
    may state (blind4 judges: "la cifra 10" from "6:10 am", "12 y 21" from "12th Street")."""
    from radar_pipeline.agent.roles.selection import figures_in

    assert figures_in(sentence) == figures
