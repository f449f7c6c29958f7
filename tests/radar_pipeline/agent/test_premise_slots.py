"""Slot-based premise checking (issue 22, item 4): a premise's who / what / when / where are each
checked against read sentences, in every question form ("¿Por qué…?", "¿Cuándo…?", "Dado que…",
"Ya que…", "Tras…", "Después de que…", a confirmation tag; English and Portuguese too).

The evidence sentences are passages of the corpus (``codefest/F2`` CSIS, SWF, UNOOSA reports and a
territorial report), whitespace and column breaks of the PDF text layer repaired. A premise is
``falsa`` only with a sentence about the same event naming another actor, object, year or place;
``verdadera`` when a sentence confirms every slot; otherwise ``no_verificada``."""

from __future__ import annotations

import pytest

from radar_pipeline.agent import guards
from radar_pipeline.agent.roles import verifier
from radar_pipeline.agent.roles.premise import about_event, assess, extract_premise, judge_sentence, search_query

# F2-CSIS-049 (Space Threat Assessment): Mission Shakti
INDIA = (
    "On March 27, 2019, India successfully launched a Prithvi Delivery Vehicle Mark-II (PDV MK-II) missile defense "
    "interceptor at one of its own satellites. Launched in late 2018, the target satellite, Microsat-R, was "
    "specifically placed in a low-altitude sun-synchronous orbit as the target for an ASAT test."
)
# F2-SWF (Global Counterspace Capabilities)
FENGYUN = (
    "That momentum was reversed early this century when China infamously shot down its Fengyun-1C weather "
    "satellite on January 11th, 2007, generating thousands of pieces of space debris."
)
# F2-CSIS (Space Threat Assessment 2022): the Nudol test
COSMOS = (
    "On November 15, 2021, Russia conducted a test of the Nudol, which intercepted and destroyed Cosmos 1408, "
    "a defunct Russian satellite, and created nearly 1,500 pieces of trackable debris."
)
# F2-CSIS (Space Threat Assessment 2024): North Korea's reconnaissance satellite
DPRK = (
    "In November 2023, North Korea launched its military reconnaissance satellite Malligyong-1 on a Chollima-1 "
    "rocket from the Sohae Satellite Launching Station, after two failed attempts."
)
# a territorial report (Valle del Cauca, 2024)
JAMUNDI = (
    "En mayo de 2024, las disidencias de las FARC atacaron Jamundí, en el Valle del Cauca, con drones y "
    "explosivos, según la Defensoría del Pueblo."
)
# F2-SWF (collisions in orbit)
COLLISION = (
    "In 2009, the privately owned American communication satellite Iridium-33 and the Russian military "
    "satellite Kosmos-2251 collided at a speed of 11.7 kilometers per second."
)
# F3-ALERTAS-379 (seguimiento a la AT 018-18, Argelia, Cauca)
ALERT_018 = (
    "La Alerta Temprana No 018-18 fue emitida el 28 de enero de 2018, la sesión de CIPRAT se efectuó el 2 de "
    "febrero de 2018."
)
PASSAGES = (INDIA, FENGYUN, COSMOS, DPRK, JAMUNDI, COLLISION, ALERT_018)


def _read(*texts: str) -> dict[str, dict]:
    out = {}
    for i, t in enumerate(texts):
        doc = f"{i + 1:016x}"
        out[f"{doc}-0"] = {"doc_id": doc, "chunk_id": f"{doc}-0", "text": t, "language": None}
    return out


READ = _read(*PASSAGES)

# (question, expected estado, expected reason, the passage the verdict must cite or None)
CASES = [
    # ---- wrong actor
    ("¿Por qué Rusia derribó el Fengyun-1C en 2007?", "falsa", "actor_distinto", FENGYUN),
    (
        "Dado que Estados Unidos destruyó el satélite Cosmos 1408 en 2021, ¿qué riesgos hubo para la ISS?",
        "falsa",
        "actor_distinto",
        COSMOS,
    ),
    ("¿Cuándo destruyó Estados Unidos el Fengyun-1C?", "falsa", "actor_distinto", FENGYUN),
    ("¿Cuándo atacó el Clan del Golfo Jamundí?", "falsa", "actor_distinto", JAMUNDI),
    ("Why did Russia shoot down Fengyun-1C in 2007?", "falsa", "actor_distinto", FENGYUN),
    # the means ("con un misil") is not the object
    ("¿Por qué Estados Unidos derribó con un misil el satélite Cosmos 1408?", "falsa", "actor_distinto", COSMOS),
    # ---- wrong object (the target's owner)
    ("¿Por qué India destruyó un satélite chino en 2019?", "falsa", "objeto_distinto", INDIA),
    ("¿Cuándo derribó China un satélite estadounidense?", "falsa", "objeto_distinto", FENGYUN),
    (
        "Ya que Rusia destruyó un satélite estadounidense en 2021, ¿qué dijo la OTAN?",
        "falsa",
        "objeto_distinto",
        COSMOS,
    ),
    ("India destruyó un satélite chino en 2019, ¿cierto?", "falsa", "objeto_distinto", INDIA),
    ("Por que a Índia destruiu um satélite chinês em 2019?", "falsa", "objeto_distinto", INDIA),
    # a quantity ("800 km") is no name of the object
    (
        "Dado que India destruyó un satélite chino a 800 km de altitud, ¿cuántos desechos hubo?",
        "falsa",
        "objeto_distinto",
        INDIA,
    ),
    # ---- wrong year
    ("¿Por qué China derribó el Fengyun-1C en 2009?", "falsa", "conflicto_de_anio", FENGYUN),
    (
        "Después de que Rusia destruyó el satélite Cosmos 1408 en 2019, ¿qué hizo la tripulación de la ISS?",
        "falsa",
        "conflicto_de_anio",
        COSMOS,
    ),
    (
        "Dado que Corea del Norte lanzó el satélite Malligyong-1 en 2021, ¿qué cambió en su doctrina?",
        "falsa",
        "conflicto_de_anio",
        DPRK,
    ),
    ("¿Por qué India destruyó su propio satélite en 2017?", "falsa", "conflicto_de_anio", INDIA),
    # a nominal event dated before its object, with no actor: the names pin it down
    (
        "Tras el choque de 2011 entre un satélite Iridium y un satélite ruso, ¿qué procedimientos cambiaron?",
        "falsa",
        "conflicto_de_anio",
        COLLISION,
    ),
    # a reflexive passive: the object comes before the verb; "No 018-18" is a number, not a negation
    (
        "Dado que la alerta temprana 018-18 se emitió en 2020, ¿qué hizo la CIPRAT?",
        "falsa",
        "conflicto_de_anio",
        ALERT_018,
    ),
    # ---- wrong place
    ("¿Por qué Corea del Norte lanzó el Malligyong-1 desde Irán en 2023?", "falsa", "lugar_distinto", DPRK),
    (
        "Dado que las disidencias de las FARC atacaron Jamundí en Antioquia en 2024, ¿qué respuesta hubo?",
        "falsa",
        "lugar_distinto",
        JAMUNDI,
    ),
    (
        "Tras el lanzamiento del Malligyong-1 por Corea del Norte desde Corea del Sur en 2023, ¿qué hizo Japón?",
        "falsa",
        "lugar_distinto",
        DPRK,
    ),
    # ---- true premises: a read sentence confirms every slot
    ("Dado que India destruyó su propio satélite en 2019, ¿qué dijo la ONU?", "verdadera", "respaldada", INDIA),
    ("¿Por qué China derribó el Fengyun-1C en 2007?", "verdadera", "respaldada", FENGYUN),
    ("¿Cuándo destruyó Rusia el satélite Cosmos 1408?", "verdadera", "respaldada", COSMOS),
    ("Ya que la alerta temprana 018-18 se emitió en 2018, ¿qué hizo la CIPRAT?", "verdadera", "respaldada", ALERT_018),
    (
        "Tras el lanzamiento del Malligyong-1 por Corea del Norte en 2023, ¿qué cambió?",
        "verdadera",
        "respaldada",
        DPRK,
    ),
    (
        "Ya que las disidencias de las FARC atacaron Jamundí en 2024, ¿qué dijo la Defensoría?",
        "verdadera",
        "respaldada",
        JAMUNDI,
    ),
    # ---- no evidence about the event: not verified
    ("¿Por qué Japón destruyó un satélite chino en 2015?", "no_verificada", "sin_evidencia", None),
    ("Dado que Irán lanzó el satélite Noor-3 en 2023, ¿qué cambió?", "no_verificada", "sin_evidencia", None),
    # same actor, a generic object, another year: India may have hit another satellite; not the same event
    ("¿Por qué India destruyó un satélite en 2021?", "no_verificada", "sin_evidencia", None),
]


@pytest.mark.parametrize(("question", "estado", "reason", "passage"), CASES, ids=[c[0][:60] for c in CASES])
def test_slot_verdicts(question, estado, reason, passage):
    p = extract_premise(question)
    assert p is not None and p.slots is not None, question
    v = assess(p, READ)
    assert (v.estado, v.reason) == (estado, reason), (question, p.slots.describe(), v)
    if passage is None:
        assert v.chunk_id is None and v.fragment is None
        assert v.sentence().startswith(f"La pregunta da por sentado que {p.text}; no pude verificarlo")
        return
    # the cited passage is the one about the event, quoted verbatim, and its quotes pass the verifier
    assert READ[v.chunk_id]["text"] == passage and v.fragment in passage
    sentence = v.sentence()
    verdict = ", pero no es así: un pasaje leído" if estado == "falsa" else ", y un pasaje leído lo confirma: «"
    assert sentence.startswith(f"La pregunta da por sentado que {p.text}{verdict}"), sentence
    assert f"[{v.doc_id}:{v.chunk_id}]" in sentence
    assert verifier.check_answer(v.evidence_lines(), READ).ok, v.evidence_lines()


def test_each_kind_of_false_premise_is_covered_in_several_forms():
    kinds: dict[str, set[str]] = {}
    for q, estado, reason, _ in CASES:
        if estado == "falsa":
            kinds.setdefault(reason, set()).add(extract_premise(q).kind)
    assert set(kinds) == {"actor_distinto", "objeto_distinto", "conflicto_de_anio", "lugar_distinto"}
    assert all(len(forms) >= 2 for forms in kinds.values()), kinds


def test_the_slots_of_the_issue_question():
    p = extract_premise("¿Por qué India destruyó un satélite chino en 2019?")
    assert p.text == "India destruyó un satélite chino en 2019" and p.kind == "por_que" and p.years == (2019,)
    assert p.slots.describe() == {
        "quien": ["india"],
        "accion": "destruir",
        "objeto": "satelite",
        "nombres": [],
        "propietario": ["china"],
        "donde": [],
    }
    # the English word order puts the owner before its noun; the "¿Cuándo…?" order puts the actor after the verb
    en = extract_premise("Why did India destroy a Chinese satellite in 2019?").slots
    assert (en.head.term, [c.term for c in en.owners]) == ("satellite", ["china"])
    when = extract_premise("¿Cuándo destruyó India un satélite chino?")
    assert when.text == "India destruyó un satélite chino" and [c.term for c in when.slots.who] == ["india"]
    assert extract_premise("Tras la destrucción del satélite Cosmos 1408 por Rusia en 2021, ¿qué pasó?").slots.who


def test_the_premise_search_is_for_the_event_not_the_disputed_owner():
    q = search_query(extract_premise("¿Por qué India destruyó un satélite chino en 2019?"))
    assert "india" in q and "destroyed" in q and "satellite" in q and "2019" in q
    assert "chin" not in q  # the owner is what is checked, not what is searched
    # the analyst reads a passage about the event even when it contradicts a slot
    p = extract_premise("¿Por qué India destruyó un satélite chino en 2019?")
    assert about_event(p, INDIA.split(". ")[0]) and not about_event(p, DPRK)


@pytest.mark.parametrize(
    "question",
    [
        "¿Por qué la minería ilegal financia a los grupos armados?",  # no actor named
        "¿Por qué Rusia interfiere las señales GPS?",  # an actor and a verb, but nothing to pin the event down
        "¿Por qué aumentaron las pruebas antisatélite después de 2007?",
        "¿Cuándo se creó la Fuerza Espacial?",  # no actor of the name sets, no verb family
        "Why does China invest in space?",
    ],
)
def test_positive_why_or_when_without_a_checkable_event_is_no_premise(question):
    assert extract_premise(question) is None


@pytest.mark.parametrize(
    ("question", "restated", "insult", "estado"),
    [
        (
            "¿Por qué esos malditos rusos destruyeron el satélite Cosmos 1408 en 2021?",
            "esos rusos destruyeron el satélite Cosmos 1408 en 2021",
            "maldit",
            "verdadera",
        ),
        # the slur goes, the check stays: the passage names the FARC dissidents, not the ELN
        (
            "¿Por qué los hijueputas del ELN atacaron Jamundí en 2024?",
            "el ELN atacaron Jamundí en 2024",
            "hijueput",
            "falsa",
        ),
        (
            "Why did the damn Russians destroy Cosmos 1408 in 2021?",
            "the Russians destroy Cosmos 1408 in 2021",
            "damn",
            "verdadera",
        ),
        (
            "Dado que las ratas de las disidencias de las FARC atacaron Jamundí en 2024, ¿qué pasó?",
            "las disidencias de las FARC atacaron Jamundí en 2024",
            "ratas",
            "verdadera",
        ),
    ],
)
def test_the_premise_is_restated_without_insults(question, restated, insult, estado):
    p = extract_premise(question)
    assert p is not None and p.text == restated
    v = assess(p, READ)
    said = v.sentence()
    assert insult not in said.lower() and guards.check_output(said).allowed, said
    assert v.estado == estado, v


def test_a_sentence_about_another_event_is_no_evidence():
    p = extract_premise("¿Por qué India destruyó un satélite chino en 2019?")
    assert judge_sentence(p, FENGYUN) is None  # China's own test is another event
    assert judge_sentence(p, "India could destroy a Chinese satellite if it wanted to.") is None  # modal
    assert judge_sentence(p, "India has never destroyed a Chinese satellite.") == "contradicha"
    # F2-SWF-013: "anti-satellite" names the weapon, not the object, and China's test is not the
    # owner of India's target — nothing here confirms (or denies) "a Chinese satellite"
    swf = (
        "The document traces the development of India's direct-ascent anti-satellite capability from early "
        "political debate after China's 2007 anti-satellite test through a series of missile defense "
        "interceptor tests and, ultimately, Mission Shakti."
    )
    q = extract_premise("Dado que la India destruyó un satélite chino en la Mission Shakti, ¿cuántos desechos hubo?")
    assert judge_sentence(q, swf) is None and assess(q, _read(swf)).estado == "no_verificada"
    # an owner named elsewhere in the sentence does not qualify the object, nor does the actor as subject;
    # the actor's name right at the noun does ("an Indian satellite")
    assert judge_sentence(p, "In 2019 India destroyed a satellite, months after a Chinese delegation visited.") is None
    assert judge_sentence(p, "In March 2019 India destroyed Microsat-R, an Indian satellite.") == "objeto_distinto"


@pytest.mark.parametrize(
    "question, head",
    [
        ("¿Por qué Corea del Sur esperó hasta 2022 para lanzar su primera estrategia nacional de IA?", "estrategia"),
        ("Dado que Irán lanzó en 2015 su primer satélite militar, ¿qué órbita alcanzó?", "satelite"),
        ("Why did Japan launch its first satellite in 2010?", "satellite"),
        ("¿Por qué Brasil lanzó en 2020 su segunda estrategia de defensa?", "estrategia"),
    ],
)
def test_an_ordinal_before_the_object_is_no_head_noun(question, head):
    """ "su primera estrategia" is a strategy: the object a passage must name is the noun, not the
    ordinal (a passage about "the first national AI strategy" names no "primera")."""
    premise = extract_premise(question)
    assert premise is not None and premise.slots is not None
    assert premise.slots.describe()["objeto"] == head
