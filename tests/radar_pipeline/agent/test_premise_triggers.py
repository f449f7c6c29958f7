"""Issue 22, two kinds of premise the check used to miss, each in both directions (a false premise
flagged with the passage that refutes it; a true premise or a plain question never flagged):

* **presupposition triggers** (``premise._TRIGGERS``): question forms whose complement is taken for
  granted — a reason noun ("¿Cuáles fueron los motivos por los que X?"), a temporal clause of a
  wh-question ("¿Qué cambió tras X?", "¿Qué pasó después de que X?"), a response predicate ("¿Cómo
  reaccionó X ante Y?"), a consequence noun with who bore it ("¿Qué consecuencias tuvo para Z que
  X?"); Spanish, English, Portuguese;
* **a year bound to a named document across languages** (``substitution._bound_year``,
  ``_name_extent``): "el Informe X de 2003" against "the 2005 X Strategic Review", "the X Strategic
  Review (2005)", "X's 2005 review", "the X Review, published in 2005"; "la Estrategia X de 2019"
  (a head that is also a glossary term) against "the 2021 X Strategy", and the reverse.

The evidence passages are the corpus' own where it has them (``codefest/F2`` CSIS/SWF reports: the
Fengyun-1C, Cosmos 1408 and Malligyong-1 sentences of ``test_premise_slots``; the Allard Report and
the Artemis Accords below), else written here (the Tessaro and Marlowe documents are invented, so
that no true fact of the corpus decides them). The questions are ours, none from the answer sets.
"""

from __future__ import annotations

import inspect
import re

import pytest

from radar_pipeline.agent.reading.understanding import name_set_patterns
from radar_pipeline.agent.roles import premise as premise_module
from radar_pipeline.agent.roles import substitution
from radar_pipeline.agent.roles.premise import assess, extract_premise
from tests.radar_pipeline.agent.test_premise_slots import COSMOS, DPRK, FENGYUN, READ

# F2-CSIS (Space Threat Assessment): the Allard Report's year
ALLARD = "The 2008 Allard Report even warned that “no one is in charge” of our space strategy."
# F2-SWF (Global Counterspace Capabilities): Japan and the Artemis Accords
ARTEMIS = "Separately, Japan was one of seven original signatories to NASA’s Artemis Accords in 2020."


def _one(text: str, language: str | None = None) -> dict[str, dict]:
    return {"c1": {"doc_id": "d1", "chunk_id": "c1", "text": text, "language": language}}


# ------------------------------------------------------------------ presupposition triggers
@pytest.mark.parametrize(
    ("question", "kind", "text"),
    [
        (
            "¿Cuáles fueron los motivos por los que India destruyó un satélite chino en 2019?",
            "motivos",
            "India destruyó un satélite chino en 2019",
        ),
        (
            "¿Cuáles fueron las razones por las que la OTAN lanzó el programa 'In the Moment'?",
            "motivos",
            "la OTAN lanzó el programa 'In the Moment'",
        ),
        ("What were the reasons why China destroyed Cosmos 1408?", "motivos", "China destroyed Cosmos 1408"),
        (
            "¿Por qué motivo la OTAN lanzó el programa 'In the Moment'?",
            "por_que",
            "la OTAN lanzó el programa 'In the Moment'",
        ),
        (
            "¿Qué cambió tras la destrucción del satélite Cosmos 1408 por China en 2021?",
            "tras",
            "la destrucción del satélite Cosmos 1408 por China en 2021",
        ),
        (
            "¿Qué ha cambiado desde que el ELN firmó el acuerdo de paz en 2016?",
            "tras",
            "el ELN firmó el acuerdo de paz en 2016",
        ),
        (
            "What happened after India destroyed a Chinese satellite in 2019?",
            "tras",
            "India destroyed a Chinese satellite in 2019",
        ),
        (
            "¿Cómo reaccionó Estados Unidos ante la prueba antisatélite de China en 2007?",
            "reaccion",
            "la prueba antisatélite de China en 2007",
        ),
        (
            "How did the United States react to India's destruction of a Chinese satellite?",
            "reaccion",
            "India's destruction of a Chinese satellite",
        ),
        (
            "¿Qué consecuencias tuvo para la seguridad espacial que China destruyera el satélite Cosmos 1408 en 2021?",
            "consecuencias",
            "China destruyera el satélite Cosmos 1408 en 2021",
        ),
        (
            "¿Qué implicaciones tuvo que Rusia destruyera el Cosmos 1408?",
            "consecuencias",
            "Rusia destruyera el Cosmos 1408",
        ),
    ],
)
def test_a_presupposing_question_form_yields_its_complement_as_the_premise(question, kind, text):
    p = extract_premise(question)
    assert p is not None, question
    assert (p.kind, p.text, p.polarity) == (kind, text, "positiva"), p


@pytest.mark.parametrize(
    "question",
    [
        # "before" does not presuppose its clause (it may never have happened)
        "¿Qué pasó antes de que India destruyera un satélite chino?",
        # a period after the temporal word, no event
        "¿Qué grupos llegaron a Tumaco después de 2016?",
        "¿Por qué aumentaron las pruebas antisatélite después de 2007?",
        # a reason or reaction with no checkable event (no actor, no distinctive name)
        "¿Cuáles son las causas de la basura espacial?",
        "¿Cómo reaccionan los mercados a la inteligencia artificial militar?",
        "¿Qué cambió en la doctrina rusa tras la guerra en Ucrania?",
        "What changed after the pandemic?",
        # the complement ends with its question: what follows the "?" is another request
        "¿Cómo evolucionaron las menciones del ELN después de 2016? Muéstralo y explica si coincide con el Acuerdo de Paz.",
    ],
)
def test_no_premise_where_the_form_presupposes_no_checkable_event(question):
    assert extract_premise(question) is None, extract_premise(question)


# each trigger, a false premise refuted by a corpus sentence read in the run
REFUTED = [
    ("¿Cuáles fueron los motivos por los que Rusia derribó el Fengyun-1C en 2007?", "actor_distinto", FENGYUN),
    ("What were the reasons why Russia shot down Fengyun-1C in 2007?", "actor_distinto", FENGYUN),
    ("Quais foram os motivos pelos quais a Rússia derrubou o Fengyun-1C em 2007?", "actor_distinto", FENGYUN),
    (
        "¿Qué cambió tras la destrucción del satélite Cosmos 1408 por Estados Unidos en 2021?",
        "actor_distinto",
        COSMOS,
    ),
    ("¿Qué cambió tras la destrucción del satélite Cosmos 1408 por Rusia en 2019?", "conflicto_de_anio", COSMOS),
    ("What changed after South Korea launched Malligyong-1 in 2023?", "actor_distinto", DPRK),
    ("¿Cómo reaccionó Japón ante el derribo del Fengyun-1C por Rusia en 2007?", "actor_distinto", FENGYUN),
    ("How did Japan react to the destruction of Fengyun-1C by Russia in 2007?", "actor_distinto", FENGYUN),
    (
        "¿Qué consecuencias tuvo para la ISS que Estados Unidos destruyera el Cosmos 1408 en 2021?",
        "actor_distinto",
        COSMOS,
    ),
]


@pytest.mark.parametrize(("question", "reason", "passage"), REFUTED, ids=[q[:55] for q, _, _ in REFUTED])
def test_a_false_presupposed_event_is_flagged_with_the_refuting_passage(question, reason, passage):
    p = extract_premise(question)
    assert p is not None, question
    v = assess(p, READ)
    assert (v.estado, v.reason) == ("falsa", reason), (question, v)
    assert READ[v.chunk_id]["text"] == passage and v.fragment in passage
    said = f"La pregunta presupone {p.text}" if p.nominal else f"La pregunta da por sentado que {p.text}"
    assert v.shown and v.sentence().startswith(f"{said}, pero no es así"), v.sentence()


@pytest.mark.parametrize(
    ("question", "said"),
    [
        (
            "¿Qué cambió tras la destrucción del satélite Cosmos 1408 por China en 2021?",
            "La pregunta presupone la destrucción del satélite Cosmos 1408 por China en 2021",
        ),
        (
            "¿Cómo reaccionó Estados Unidos ante la prueba antisatélite de China en 2007?",
            "La pregunta presupone la prueba antisatélite de China en 2007",
        ),
        ("What changed after the Allard Report of 2001?", "La pregunta presupone the Allard Report of 2001"),
        # a clause keeps "da por sentado que"
        (
            "¿Qué pasó después de que Rusia destruyera el satélite Cosmos 1408 en 2021?",
            "La pregunta da por sentado que Rusia destruyera el satélite Cosmos 1408 en 2021",
        ),
        (
            "What happened after the ELN signed the peace deal in 2016?",
            "La pregunta da por sentado que the ELN signed the peace deal in 2016",
        ),
    ],
)
def test_a_presupposed_noun_phrase_is_restated_as_one(question, said):
    v = assess(extract_premise(question), {})
    assert v.sentence().startswith(f"{said}; no pude verificarlo"), v.sentence()


CONFIRMED = [
    "¿Cuáles fueron los motivos por los que China derribó el Fengyun-1C en 2007?",
    "What were the reasons why China shot down Fengyun-1C in 2007?",
    "¿Qué cambió tras la destrucción del satélite Cosmos 1408 por Rusia en 2021?",
    "¿Qué pasó después de que Rusia destruyera el satélite Cosmos 1408 en 2021?",
    "What changed after North Korea launched Malligyong-1 in 2023?",
    "¿Cómo reaccionó Japón ante el derribo del Fengyun-1C por China en 2007?",
    "¿Qué consecuencias tuvo para la ISS que Rusia destruyera el Cosmos 1408 en 2021?",
]


@pytest.mark.parametrize("question", CONFIRMED)
def test_a_true_presupposed_event_is_never_flagged(question):
    p = extract_premise(question)
    assert p is not None, question
    v = assess(p, READ)
    assert v.estado == "verdadera", (question, v)


# ------------------------------------------------------------- a document's year across languages
TESSARO_ES = "Dado que el Informe Tessaro de 2003 recomendó crear un comando espacial, ¿qué se hizo?"
MARLOWE_ES = "Ya que la Estrategia Marlowe de 2019 priorizó la IA, ¿qué presupuesto tuvo?"
MARLOWE_EN = "Given that the 2019 Marlowe Strategy prioritized AI, what budget did it have?"

YEAR_REFUTED = [
    # corpus sentences
    (
        "Dado que el Informe Allard de 2001 advirtió que nadie estaba a cargo de la estrategia espacial, ¿qué cambió?",
        ALLARD,
    ),
    ("¿Qué cambió tras el Informe Allard de 2001?", ALLARD),
    ("Ya que Japón firmó los Acuerdos Artemis en 2018, ¿qué compromisos asumió?", ARTEMIS),
    # written here: the English name's year before it, after its head, in parentheses, possessive,
    # or in a publication phrase; a Spanish head that is a glossary term ("Estrategia"); and the
    # other direction (an English premise, a Spanish passage)
    (TESSARO_ES, "The 2005 Tessaro Strategic Review recommended the creation of a space command."),
    (TESSARO_ES, "The Tessaro Strategic Review (2005) recommended the creation of a space command."),
    (TESSARO_ES, "Tessaro's 2005 strategic review recommended the creation of a space command."),
    (TESSARO_ES, "The Tessaro Strategic Review, published in 2005, recommended a space command."),
    (MARLOWE_ES, "The 2021 Marlowe Strategy prioritized artificial intelligence for the armed forces."),
    (MARLOWE_EN, "La Estrategia Marlowe de 2021 priorizó la inteligencia artificial."),
]


@pytest.mark.parametrize(("question", "text"), YEAR_REFUTED, ids=[t[:50] for _, t in YEAR_REFUTED])
def test_a_wrong_year_of_a_named_document_is_caught_across_languages(question, text):
    p = extract_premise(question)
    assert p is not None, question
    v = assess(p, _one(text))
    assert (v.estado, v.reason) == ("falsa", "conflicto_de_anio"), (question, text, v)
    assert v.fragment == text


YEAR_CONTROLS = [
    # the right year, however each language writes it
    (
        "Dado que el Informe Allard de 2008 advirtió que nadie estaba a cargo de la estrategia espacial, ¿qué cambió?",
        ALLARD,
    ),
    ("¿Qué cambió tras el Informe Allard de 2008?", ALLARD),
    ("Ya que Japón firmó los Acuerdos Artemis en 2020, ¿qué compromisos asumió?", ARTEMIS),
    (TESSARO_ES, "The 2003 Tessaro Strategic Review recommended the creation of a space command."),
    (TESSARO_ES, "The Tessaro Strategic Review (2003) recommended the creation of a space command."),
    (TESSARO_ES, "The Tessaro Strategic Review, published in 2003, recommended a space command."),
    (MARLOWE_ES, "The 2019 Marlowe Strategy prioritized artificial intelligence for the armed forces."),
    (MARLOWE_EN, "La Estrategia Marlowe de 2019 priorizó la inteligencia artificial."),
    # another year near the name but not bound to it: a comma, another document's year
    (TESSARO_ES, "In the Tessaro Strategic Review, 2005 figures show a need for a space command."),
    (TESSARO_ES, "The Tessaro Strategic Review cited the 2005 Allard Report on a space command."),
    # the premise's year in the sentence too: a later edition, not another date for the same one
    (TESSARO_ES, "The 2005 Tessaro Strategic Review updated the 2003 one on a space command."),
]


@pytest.mark.parametrize(("question", "text"), YEAR_CONTROLS, ids=[t[:50] for _, t in YEAR_CONTROLS])
def test_a_right_or_unbound_year_is_never_a_conflict(question, text):
    p = extract_premise(question)
    assert p is not None, question
    v = assess(p, _one(text))
    assert v.estado != "falsa", (question, text, v)


def test_a_document_head_binds_the_same_in_either_language():
    # "la Estrategia X" (a glossary term as head) and "the X Strategy" are both a document's name
    for text in (
        "la Estrategia Marlowe de 2019",
        "the 2019 Marlowe Strategy",
        "el Informe Tessaro",
        "the Tessaro Review",
    ):
        assert any(a.headed for a in substitution.anchors(text)), text
    sentence = "The Tessaro Strategic Review (2005) recommended a space command."
    at = re.search("tessaro", sentence.lower()).span()
    assert sentence[slice(*substitution._name_extent(sentence, at))] == "Tessaro Strategic Review"


# ----------------------------------------------------------------- one builder of name-set patterns
def test_premise_and_substitution_read_names_through_one_builder():
    text = "la otan y el eln, no el satelite usa-193"
    keys = {k for _s, _e, k, _c in premise_module._name_hits(text)}
    assert keys == set(substitution.actors(text)) and len(keys) == 2  # "usa-193" is an object
    hyphen = dict((ns.key, pat) for ns, pat in name_set_patterns(boundary=r"\w-"))
    assert all(hyphen[k] is pat for k, _kind, pat in substitution._actor_patterns())
    assert name_set_patterns() is name_set_patterns()  # compiled once
    for module in (premise_module, substitution):
        assert "ns.aliases if len(a)" not in inspect.getsource(module), module.__name__


# ------------------------------------------------------ a source named by attribution is no actor
# (found end to end on the evaluation corpus: "… debris field of over 1,500 objects according to
# U.S. Space Command … destroyed … Cosmos 1408" confirmed "Estados Unidos destruyó el Cosmos 1408").
# Passages written here, one per language, each read against the wrong and the right actor.
ATTRIBUTED = [
    (
        "On November 15, 2021, Russia destroyed the Cosmos 1408 satellite with a Nudol interceptor, "
        "according to U.S. Space Command.",
        "¿Por qué Estados Unidos destruyó el satélite Cosmos 1408 en 2021?",
        "¿Por qué Rusia destruyó el satélite Cosmos 1408 en 2021?",
    ),
    (
        "China shot down its Fengyun-1C weather satellite in 2007, according to India's Ministry of External Affairs.",
        "Dado que la India derribó el satélite Fengyun-1C en 2007, ¿qué desechos quedaron?",
        "Dado que China derribó el satélite Fengyun-1C en 2007, ¿qué desechos quedaron?",
    ),
    (
        "Según China, Rusia destruyó el satélite Cosmos 1408 en noviembre de 2021.",
        "¿Qué cambió tras la destrucción del satélite Cosmos 1408 por China en 2021?",
        "¿Qué cambió tras la destrucción del satélite Cosmos 1408 por Rusia en 2021?",
    ),
    (
        "North Korea launched the Malligyong-1 satellite in November 2023, according to Russia's state media.",
        "¿Por qué Rusia lanzó el satélite Malligyong-1 en 2023?",
        "¿Por qué Corea del Norte lanzó el satélite Malligyong-1 en 2023?",
    ),
    (
        "Segundo os Estados Unidos, a Rússia destruiu o satélite Cosmos 1408 em 2021.",
        "Por que os Estados Unidos destruíram o satélite Cosmos 1408 em 2021?",
        "Por que a Rússia destruiu o satélite Cosmos 1408 em 2021?",
    ),
]


@pytest.mark.parametrize(("text", "false_q", "true_q"), ATTRIBUTED, ids=[t[:40] for t, _, _ in ATTRIBUTED])
def test_the_source_of_a_report_is_not_the_actor_of_its_event(text, false_q, true_q):
    wrong = assess(extract_premise(false_q), _one(text))
    assert (wrong.estado, wrong.reason) == ("falsa", "actor_distinto"), (false_q, wrong)
    right = assess(extract_premise(true_q), _one(text))
    assert right.estado == "verdadera", (true_q, right)
