"""Premise slots checked over a passage, not one sentence (issue 22, item 4).

The passages are verbatim from the evaluation corpus (``codefest/F1``, ``F2``, ``F3``: SWF, CSIS and
DAIO reports, a Defensoría follow-up), PDF text-layer damage included ("In , Russia…", a footnote
glued to the sentence after it). What they test, each kind in several forms, both directions, in
Spanish and English:

* the actor or the date stated in the sentence before the event's sentence ("On November 15, 2021,
  Russia conducted an intercept test of the Nudol system. A Nudol … Cosmos 1408 … was destroyed");
* a neighbour's date or a designation of the same series is not the event's ("Cosmos 886 … 1976");
* an owner counts only where the event names its object ("India's most notable satellites,
  Microsat-R"; not "… high-value U.S. military satellites" after a collision);
* a nominal action's agent ("un ciberataque de Rusia contra … Viasat");
* existence premises ("Israel tiene un único organismo…") against a denial ("there is no single
  Israeli body…");
* a numbered reference entry is never evidence; an unverified implicit "¿Por qué X hizo Y?" is not said.

And, through whole offline runs on a small real index (real USE vectors, FAISS, BM25), that the
premise's event is searched inside the documents naming its designation, and the verdict reaches the
answer text and the ``premisa`` of the /chat result.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

from api.schemas import ChatResponse, assemble
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.roles import verifier
from radar_pipeline.agent.roles.premise import assess, event_names, extract_premise, judge_slots, search_query
from radar_pipeline.agent.service import AgentService, ServiceSettings
from tests.radar_pipeline.agent.support_corpus import DOCUMENTS, passage_rows
from tests.radar_pipeline.agent.support_index import OFFLINE_LLM

# F2-SWF-107 (Russian direct-ascent ASAT testing): the actor and the date in the sentence before
NUDOL = (
    "On November 15, 2021, Russia conducted an intercept test of the Nudol system. A Nudol launched from "
    "Plesetsk placed a KKV on an intercept course with Cosmos 1408, a dead Russian military satellite, which "
    "was destroyed by the resulting collision."
)
# F2-SWF (Russian co-orbital ASAT testing): a table row of the same series, another satellite
COSMOS_TABLE = (
    "Russian Co-orbital Anti-Satellite Testing • 3 Date Interceptor Launch Target Debris Result Site Created25 "
    "Dec. 17, 1976 Cosmos 886 (IS) Baikonur Cosmos 880 127 Cosmos 886 intercepted and destroyed Cosmos 880."
)
# F2-CSIS (Space Threat Assessment): a footnote of 2018 glued before the Fengyun-1C sentence
FENGYUN_NOTE = (
    "59Office of the Secretary of Defense, Annual Report to Congress: Military and Security Developments "
    "Involving the People’s Republic of China 2018 (Washington, DC: Department of Defense, 2018), p. 24. "
    "Satellite Launch Center, the Chinese ASAT destroyed a defunct Fengyun-1C weather satellite in low orbit."
)
# F2-CSIS (Space Threat Assessment 2023): India's satellite, the target of the 2019 test
MICROSAT = (
    "One of India’s most notable satellites, Microsat-R, was operated by the DRDO as an imaging satellite and "
    "used as a target for the 2019 destructive ASAT test."
)
# F2-SWF (Spanish edition) and F2-CSIS: the Viasat cyberattack
VIASAT_ES = (
    "El mayor fue un ciberataque de Rusia contra el segmento de usuarios del servicio comercial de banda ancha "
    "por satélite de Viasat en Europa, que coincidió con el primer día en que las fuerzas rusas ingresaron a "
    "Ucrania en febrero de 2022."
)
VIASAT_EN = (
    "FEBRUARY 24, 2022 Cyber Russia successfully conducts a cyberattack against Viasat ground stations, cutting "
    "off satellite communications for the Ukrainian government."
)
# F1-DAIO-017 (Defense AI in Israel)
ISRAEL = (
    "These processes create a trained and familiar talent pool and enable collaborative AI development in "
    "Israel, involving the Israel Ministry of Defense Directorate of Defense Research & Development (IMOD "
    "DDR&D), the defense industry, academia, and civil companies. As of , there is no single Israeli body "
    "responsible for overseeing the field of defense AI. Nonetheless the Ministry of Defense (IMOD) and Israel "
    "Innovation Authority are shaping it by launching several key initiatives aimed at improving the necessary "
    "infrastructure and enabling further advancement in defense AI."
)
# F1-DAIO-024 (Defense AI in Japan): the denial does not repeat "Japan", the passage is about Japan
JAPAN = (
    "Since the end of World War II, Japan has not had a full-fledged military, but only Self-Defense Forces "
    "(SDF) for the sole purpose of defensive defense. However, with the recent deterioration of the national "
    "security environment around Japan, such hesitance is weakening. Discussions about artificial intelligence "
    "(AI) for defense purposes began in earnest around 2022, with descriptions found in government and defense "
    "ministry documents, and budget appropriations beginning to be made. However, the budget size is miniscule "
    "and no special organization for defense AI exists."
)
# F2-SWF-002 (2009 Iridium-Cosmos collision fact sheet)
IRIDIUM = (
    "On February 10, 2009, an inactive Russian communications satellite, designated Cosmos 2251, collided with "
    "an active commercial communications satellite operated by U.S.-based Iridium Satellite LLC."
)
IRIDIUM_AFTER = (
    "After the collision, the U.S. military’s Joint Space Operations Center (JSpOC) added the entire Iridium "
    "constellation to its daily conjunction assessment procedures, using the same high accuracy data and "
    "calculations as are used to screen human spaceflight and high-value U.S. military satellites. In , the "
    "U.S. military had been providing daily warnings to Iridium of potential collisions between its satellites "
    "and other objects."
)
# F2-CSIS (Space Threat Assessment 2024): a numbered reference entry
DPRK_REFERENCE = (
    "227 Stephen Clark, “North Korea Launched a Satellite, Then Apparently Blew Up Its Booster,” Ars Technica, "
    "November 22, 2023, launched-a-satellite-then-apparently-blew-up-its-booster/."
)
# F3-ALERTAS-379 (follow-up of AT 018-18, Argelia, Cauca), with the letterhead the PDF glued to it
ALERT = (
    "Carrera 9 No. 16-21 - Bogotá D.C PBX: (57) (1) 314 7300 - Línea Nacional: 01 8000 914814 "
    "www.defensoria.gov.co Plantilla Vigente desde: 27/06/2017 WY) Defensoria del Pueblo COLOMBIA La Alerta "
    "Temprana No 018-18 fue emitida el 28 de enero de 2018, la sesión de CIPRAT se efectuó el 2 de febrero de 2018."
)


# F3 (SG/OEA report on the peace process, 2019): clashes between dissident groups at Piñuña Blanco
PUTUMAYO = (
    "En el departamento de Putumayo, se identifica una dinámica similar producto de enfrentamientos entre grupos "
    "disidentes, provocando confinamientos en el corredor de Piñuña Blanco en el municipio de Puerto Asís y "
    "desplazamientos forzados en zonas rurales de San Miguel, Valle del Guamuez, Puerto Guzmán y Puerto "
    "Leguízamo, principalmente."
)
# the same report: the dispute in the Catatumbo
CATATUMBO = (
    "En la región de Catatumbo, Norte de Santander, continúan las disputas entre el ELN y “Los Pelusos”, "
    "conocidos en esa región como el Ejército Popular de Liberación (EPL)."
)
# F3-ALERTAS-277: the presence of FARC-EP dissidents at Piñuña Blanco
ALERT_277 = (
    "Grave situación de riesgo que enfrentan aprox. 265 integrantes de los resguardos Santa Helena y Piñuña "
    "Blanco, campesinos del corregimiento Piñuña Blanco, municipio de Puerto Asís, por la presencia de "
    "disidentes de los Frentes 1 y 48 de las FARC-EP."
)


def _read(*texts: str) -> dict[str, dict]:
    out = {}
    for i, t in enumerate(texts):
        doc = f"{i + 1:016x}"
        out[f"{doc}-0"] = {"doc_id": doc, "chunk_id": f"{doc}-0", "text": t, "language": None}
    return out


READ = _read(NUDOL, COSMOS_TABLE, FENGYUN_NOTE, MICROSAT, VIASAT_ES, VIASAT_EN, ISRAEL, JAPAN, IRIDIUM, ALERT)

# (question, estado, reason, the passage cited or None, a word the quote must hold)
CASES = [
    # ---- the actor in the sentence before the event's sentence (and its date)
    ("¿Por qué China derribó el satélite Cosmos 1408 en 2021?", "falsa", "actor_distinto", NUDOL, "Russia"),
    ("Why did the United States destroy Cosmos 1408 in 2021?", "falsa", "actor_distinto", NUDOL, "Russia"),
    (
        "Dado que Rusia destruyó el satélite Cosmos 1408 en 2019, ¿cuántos desechos hubo?",
        "falsa",
        "conflicto_de_anio",
        NUDOL,
        "2021",
    ),
    (
        "Given that Russia destroyed Cosmos 1408 in 2017, what debris was created?",
        "falsa",
        "conflicto_de_anio",
        NUDOL,
        "2021",
    ),
    ("¿Cuándo destruyó Rusia el satélite Cosmos 1408?", "verdadera", "respaldada", NUDOL, "Cosmos 1408"),
    ("Why did Russia destroy the Cosmos 1408 satellite in 2021?", "verdadera", "respaldada", NUDOL, "Russia"),
    # ---- the owner, where the event names the object
    ("¿Por qué India destruyó un satélite chino en 2019?", "falsa", "objeto_distinto", MICROSAT, "Microsat-R"),
    ("Why did India destroy a Chinese satellite in 2019?", "falsa", "objeto_distinto", MICROSAT, "India"),
    (
        "Ya que India destruyó su propio satélite en 2019, ¿qué dijo la ONU?",
        "verdadera",
        "respaldada",
        MICROSAT,
        "2019",
    ),
    # ---- a nominal action's agent ("ciberataque de Rusia")
    ("¿Por qué China realizó un ciberataque contra Viasat en 2022?", "falsa", "actor_distinto", None, "Rusia"),
    ("Why did Iran carry out a cyberattack against Viasat in 2022?", "falsa", "actor_distinto", None, "Viasat"),
    ("¿Por qué Rusia realizó un ciberataque contra Viasat en 2022?", "verdadera", "respaldada", None, "Viasat"),
    # ---- existence premises against a denial
    (
        "Dado que Israel tiene un único organismo nacional que supervisa toda la IA de defensa, ¿cómo se llama?",
        "falsa",
        "contradicha",
        ISRAEL,
        "no single Israeli body",
    ),
    (
        "Tras la creación en 2015 de una organización especial de IA de defensa en Japón, ¿qué presupuesto tiene?",
        "falsa",
        "contradicha",
        JAPAN,
        "no special organization",
    ),
    (
        "Ya que Japón tiene una organización especial de IA de defensa, ¿cuál es su presupuesto?",
        "falsa",
        "contradicha",
        JAPAN,
        "no special organization",
    ),
    # ---- a date of 2009, a code of a Defensoría alert
    (
        "Tras el choque de 2012 entre un satélite Iridium y un satélite chino, ¿qué cambió?",
        "falsa",
        "conflicto_de_anio",
        IRIDIUM,
        "2009",
    ),
    (
        "Ya que la alerta 018-18 se emitió en marzo de 2019, ¿qué hizo la CIPRAT?",
        "falsa",
        "conflicto_de_anio",
        ALERT,
        "018-18",
    ),
    ("Ya que la alerta 018-18 se emitió en 2018, ¿qué hizo la CIPRAT?", "verdadera", "respaldada", ALERT, "2018"),
]


@pytest.mark.parametrize(("question", "estado", "reason", "passage", "word"), CASES, ids=[c[0][:60] for c in CASES])
def test_passage_verdicts(question, estado, reason, passage, word):
    p = extract_premise(question)
    assert p is not None and p.slots is not None, question
    v = assess(p, READ)
    assert (v.estado, v.reason) == (estado, reason), (question, p.slots.describe(), v)
    assert v.chunk_id is not None and v.fragment in READ[v.chunk_id]["text"].replace("\n", " ")
    if passage is not None:
        assert READ[v.chunk_id]["text"] == passage
    sentence = v.sentence()
    verdict = ", pero no es así: un pasaje leído" if estado == "falsa" else ", y un pasaje leído lo confirma: «"
    assert sentence.startswith(f"La pregunta da por sentado que {p.text}{verdict}"), sentence
    assert word in sentence and f"[{v.doc_id}:{v.chunk_id}]" in sentence
    assert verifier.check_answer(v.evidence_lines(), READ).ok, v.evidence_lines()


def test_every_kind_has_both_languages_and_both_directions():
    langs: dict[str, set[str]] = {}
    for q, _estado, reason, _, _ in CASES:
        langs.setdefault(reason, set()).add("en" if extract_premise(q).language == "en" else "es")
    assert langs["actor_distinto"] == {"es", "en"} and langs["objeto_distinto"] == {"es", "en"}
    assert langs["conflicto_de_anio"] == {"es", "en"}
    assert sum(1 for c in CASES if c[1] == "verdadera") >= 5 and sum(1 for c in CASES if c[1] == "falsa") >= 10


@pytest.mark.parametrize(
    ("question", "evidence"),
    [
        # a footnote's year next to the event is not the event's date
        ("¿Por qué China derribó el satélite Fengyun-1C en 2007?", FENGYUN_NOTE),
        ("Given that China shot down Fengyun-1C in 2007, how much debris was created?", FENGYUN_NOTE),
        # another satellite of the same series in another year: not the premise's Cosmos 1408
        ("Dado que Rusia destruyó el satélite Cosmos 1408 en 2021, ¿cuántos desechos hubo?", COSMOS_TABLE),
        ("¿Por qué Rusia destruyó el Cosmos 1408 en 2021?", COSMOS_TABLE),
        # "U.S. military satellites" after a collision, "its satellites" with no actor: not the collided object
        ("Tras el choque de 2009 entre un satélite Iridium y un satélite chino, ¿qué cambió?", IRIDIUM_AFTER),
        # a numbered reference entry's title is no evidence, neither way
        ("¿Por qué Corea del Norte lanzó el satélite Malligyong-1 en 2023?", DPRK_REFERENCE),
        ("¿Por qué Irán lanzó el satélite Malligyong-1 en 2023?", DPRK_REFERENCE),
        # a designation named in the neighbour sentence only: the anchor's alert is another one (two
        # real sentences of Defensoría follow-ups, F3, put side by side)
        (
            "Ya que la alerta temprana 036 se emitió en 2020, ¿qué respuesta dieron las autoridades?",
            "El seguimiento versa sobre el escenario de riesgo advertido en la Alerta Temprana 036 del 13 de abril "
            "de 2018. Sobre el escenario de riesgo advertido en la Alerta Temprana 002 de 2018 para el municipio de "
            "Anserma (Caldas), emitida el 02 de enero de 2018, se informa lo siguiente.",
        ),
        # a true existence premise is not contradicted by a denial of another object
        ("Dado que Israel tiene una Dirección de Investigación y Desarrollo de Defensa, ¿qué financia?", ISRAEL),
        ("Dado que Japón tiene Fuerzas de Autodefensa, ¿cómo usan la IA?", JAPAN),
    ],
)
def test_a_passage_that_does_not_state_the_event_is_no_evidence(question, evidence):
    p = extract_premise(question)
    assert p is not None
    v = assess(p, _read(evidence))
    assert v.estado == "no_verificada" and v.chunk_id is None, v


def test_a_denial_about_another_country_does_not_contradict():
    p = extract_premise("Ya que Japón tiene una organización especial de IA de defensa, ¿cuál es su presupuesto?")
    korea = "In South Korea, no special organization for defense AI exists, according to the ministry."
    assert judge_slots(p, korea) is None
    # nor in a passage that is about another country, the premise's never named
    assert assess(p, _read("Korea and Korea's ministry: " + korea)).estado == "no_verificada"


def test_designations_and_the_premise_search():
    p = extract_premise("¿Por qué China derribó el satélite Cosmos 1408 en 2021?")
    assert event_names(p) == ["Cosmos 1408"]  # as the question spells it
    q = search_query(p)
    assert "cosmos 1408" in q and "china" not in q  # a named event is searched without its disputed actor
    usa = extract_premise("Ya que Estados Unidos destruyó su satélite USA-193 en 2012, ¿qué críticas recibió?")
    assert [c.term for c in usa.slots.names] == ["usa-193"] and [c.term for c in usa.slots.who] == ["estados unidos"]
    assert event_names(extract_premise("Tras la creación de una organización de IA en Japón, ¿qué pasó?")) == []
    denial = search_query(extract_premise("Ya que Japón tiene una organización especial de IA de defensa, ¿qué hace?"))
    assert denial.startswith("no organization") and "exists" in denial and "japan" in denial


def test_an_implicit_why_is_said_only_with_a_cited_verdict():
    p = extract_premise("¿Por qué India destruyó un satélite?")
    assert p is not None and p.implicit and p.kind == "por_que"
    assert assess(p, READ).estado == "verdadera" and assess(p, READ).shown
    unverified = assess(p, _read(ISRAEL))
    assert unverified.estado == "no_verificada" and not unverified.shown
    # a name, a year, an owner or a place makes it explicit: said whatever the verdict
    named = extract_premise("¿Por qué China destruyó el satélite Cosmos 1408?")
    assert not named.implicit and assess(named, READ).estado == "falsa" and assess(named, _read(ISRAEL)).shown
    # an explicit premise is always said, verified or not
    assert assess(extract_premise("Dado que China destruyó el Cosmos 1408, ¿qué pasó?"), _read(ISRAEL)).shown


@pytest.mark.parametrize(
    ("question", "evidence", "estado"),
    [
        # the parties of a dispute: a dispute said to be between other groups there contradicts them
        (
            "Ya que en Piñuña Blanco (Puerto Asís) la disputa es entre el ELN y las AGC, ¿cuántos están en riesgo?",
            PUTUMAYO,
            "falsa",
        ),
        ("Ya que en Piñuña Blanco la disputa es entre el Clan del Golfo y el ELN, ¿qué pasó?", PUTUMAYO, "falsa"),
        ("Given that in Piñuña Blanco the dispute is between the ELN and the AGC, who is at risk?", PUTUMAYO, "falsa"),
        ("Ya que en el Catatumbo la disputa es entre el ELN y el EPL, ¿qué consecuencias hay?", CATATUMBO, "verdadera"),
        (
            "Dado que las disidencias de las FARC tienen presencia en Piñuña Blanco, ¿qué riesgos hay?",
            ALERT_277,
            "verdadera",
        ),
        # groups coexist: another group's presence says nothing against the premise's
        ("Dado que el ELN tiene presencia en Piñuña Blanco, ¿qué riesgos hay?", ALERT_277, "no_verificada"),
        ("Ya que el Clan del Golfo opera en Puerto Asís, ¿qué alertas hay?", ALERT_277, "no_verificada"),
        # another place's dispute is not this place's
        ("Ya que en Tumaco la disputa es entre el ELN y las AGC, ¿qué pasó?", CATATUMBO, "no_verificada"),
    ],
)
def test_armed_groups_in_a_place(question, evidence, estado):
    p = extract_premise(question)
    assert p is not None and p.slots is not None and p.slots.action == "operar", question
    v = assess(p, _read(evidence))
    assert v.estado == estado, (p.slots.describe(), v)
    if estado == "falsa":
        assert v.reason == "actor_distinto" and "Piñuña Blanco" in v.sentence()
        assert verifier.check_answer(v.evidence_lines(), _read(evidence)).ok


def test_a_long_pdf_sentence_is_quoted_where_it_names_the_event():
    p = extract_premise("Ya que la alerta 018-18 se emitió en marzo de 2019, ¿qué hizo la CIPRAT?")
    v = assess(p, READ)
    (quote,) = v.quotes(max_chars=160)
    assert "018-18" in quote and "PBX" not in quote and quote in ALERT


# --------------------------------------------------------------------------- whole runs
EVENTS = [
    (
        "space_security/swf_russia_da_asat.txt",
        "Russian Direct-Ascent Anti-Satellite Testing",
        "space_security",
        "en",
        [
            "Russia has been developing a direct-ascent anti-satellite capability for decades, with a series of "
            "flight tests of the Nudol interceptor from Plesetsk since 2014.",
            NUDOL,
        ],
    ),
    (
        "space_security/swf_russia_co_orbital.txt",
        "Russian Co-orbital ASAT Testing",
        "space_security",
        "en",
        [COSMOS_TABLE],
    ),
    ("ai_military/daio_japan.txt", "Defense AI in Japan", "ai_military", "en", [JAPAN]),
]


@pytest.fixture(scope="module")
def service(tmp_path_factory, use_encoder) -> AgentService:
    from radar_pipeline.stores.bm25_store import Bm25Index
    from radar_pipeline.stores.faiss_store import build_flat_ip, save_index
    from radar_pipeline.stores.passages import save_passages

    d = tmp_path_factory.mktemp("premise_passages_index") / "usem3"
    frame = pl.DataFrame(passage_rows([*DOCUMENTS, *EVENTS]))
    texts = frame["text"].to_list()
    save_passages(frame, d)
    save_index(build_flat_ip(use_encoder.encode_passages(texts)), d)
    Bm25Index.build(texts).save(d)
    settings = ServiceSettings(index_dir=d, use_database=False, trace=False, llm=LLMSettings(**OFFLINE_LLM))
    return AgentService(settings, encoder=use_encoder)


def test_documents_naming_and_the_code_first_ranking(service):
    corpus = service.corpus()
    nudol_doc = next(d for d, t in zip(corpus.doc_ids, corpus.texts, strict=True) if "Cosmos 1408" in t)
    table_doc = next(d for d, t in zip(corpus.doc_ids, corpus.texts, strict=True) if "Cosmos 886" in t)
    assert corpus.documents_naming(["cosmos 1408"]) == [nudol_doc]
    assert corpus.documents_naming(["COSMOS-1408"]) == [nudol_doc]  # case and hyphen aside
    assert corpus.documents_naming(["cosmos 1409"]) == [] and corpus.documents_naming([]) == []
    # inside given documents, the passage naming the query's designation comes first
    hits = corpus.search_passages("destroyed satellite cosmos 1408 2021", k=3, doc_ids=[table_doc, nudol_doc])
    assert "Cosmos 1408" in hits[0]["text"]


def test_a_name_written_as_no_common_word_comes_first_inside_the_documents():
    from radar_pipeline.retrieval.service import _written_names

    assert _written_names("Pakistán desarrolló el KaGeM V3 con China") == ["KaGeM"]
    assert _written_names("la MSS en Haití y la red KA-SAT de Viasat; OneWeb") == ["MSS", "KA-SAT", "OneWeb"]
    assert _written_names("¿Qué pasó en Colombia en 2021?") == []  # capitalised words are no such names


RUNS = [
    ("¿Por qué China derribó el satélite Cosmos 1408 en 2021?", "falsa", "actor_distinto", "Cosmos 1408"),
    ("Why did Russia destroy the Cosmos 1408 satellite in 2021?", "verdadera", "respaldada", "Cosmos 1408"),
    (
        "Tras la creación en 2015 de una organización especial de IA de defensa en Japón, ¿qué presupuesto tiene?",
        "falsa",
        "contradicha",
        "no special organization",
    ),
]


@pytest.mark.parametrize(("question", "estado", "reason", "key"), RUNS, ids=[r[0][:50] for r in RUNS])
def test_the_verdict_reaches_the_answer_and_the_chat_result(service, question, estado, reason, key):
    res = service.runner().run(question)
    resp = assemble(res)
    ChatResponse.model_validate(resp.model_dump(mode="json"))
    p = resp.premisa
    assert p is not None and p.estado == estado, (res.respuesta, p)
    step = [s for s in res.steps if s.role == "verificador" and "premisa" in s.detail][-1]
    assert step.detail["motivo"] == reason and step.detail["fuente"] == "reglas"
    read = {q["chunk_id"]: q for t in res.tools_called if t["name"] == "read_chunks" for q in t["output"]["passages"]}
    assert p.cita.chunk_id in read and key in p.fragmento
    first = resp.respuesta.split("\n\n")[0]
    verdict = ", pero no es así: un pasaje leído" if estado == "falsa" else ", y un pasaje leído lo confirma: «"
    assert first.startswith(f"La pregunta da por sentado que {p.texto}{verdict}"), first
    assert f"[{p.cita.doc_id}:{p.cita.chunk_id}]" in first and p.cita.chunk_id in [c.chunk_id for c in resp.citas]
    quotes = re.findall(r"«([^»]+)»", first)
    lines = "\n".join(f"- «{q}» [{p.cita.doc_id}:{p.cita.chunk_id}]" for q in quotes)
    assert quotes and verifier.check_answer(lines, read).ok
