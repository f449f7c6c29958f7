"""The premise module's pure functions: detection in es/en/pt, the sentence rule, the code verdict and the
validation of a model's proposal."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.roles import verifier
from radar_pipeline.agent.roles.premise import assess, extract_premise, judge_sentence, search_query, validate_proposal

# (question, premise text, polarity, kind, years)
PHRASINGS = [
    (
        "¿Por qué China nunca ha realizado una prueba antisatélite?",
        "China nunca ha realizado una prueba antisatélite",
        "negativa",
        "por_que",
        (),
    ),
    (
        "¿Por qué ningún país ha desplegado armas nucleares en órbita?",
        "ningún país ha desplegado armas nucleares en órbita",
        "negativa",
        "por_que",
        (),
    ),
    (
        "Dado que Rusia destruyó el satélite Kosmos 1408 en 2021, ¿qué riesgos enfrenta la estación espacial?",
        "Rusia destruyó el satélite Kosmos 1408 en 2021",
        "positiva",
        "dado_que",
        (2021,),
    ),
    (
        "Ya que Corea del Norte jamás ha lanzado un satélite de reconocimiento, ¿cómo vigila a sus vecinos?",
        "Corea del Norte jamás ha lanzado un satélite de reconocimiento",
        "negativa",
        "dado_que",
        (),
    ),
    (
        "Puesto que el ELN financia su expansión con la minería ilegal de oro, ¿qué medidas se han tomado?",
        "el ELN financia su expansión con la minería ilegal de oro",
        "positiva",
        "dado_que",
        (),
    ),
    (
        "Teniendo en cuenta que China destruyó el Fengyun-1C en 2007, ¿cuántos fragmentos se generaron?",
        "China destruyó el Fengyun-1C en 2007",
        "positiva",
        "dado_que",
        (2007,),
    ),
    (
        "¿Qué riesgos hay para la órbita baja, dado que Rusia no ha probado misiles antisatélite?",
        "Rusia no ha probado misiles antisatélite",
        "negativa",
        "dado_que",
        (),
    ),
    (
        "Si Rusia interfirió terminales Starlink en Ucrania, ¿qué lecciones dejó?",
        "Rusia interfirió terminales Starlink en Ucrania",
        "positiva",
        "si",
        (),
    ),
    (
        "¿Cuándo dejó Corea del Norte de lanzar satélites de reconocimiento?",
        "Corea del Norte dejó de lanzar satélites de reconocimiento",
        "positiva",
        "dejo_de",
        (),
    ),
    (
        "Desde que China probó su arma antisatélite en 2007, ¿cómo ha cambiado la seguridad espacial?",
        "China probó su arma antisatélite en 2007",
        "positiva",
        "desde_que",
        (2007,),
    ),
    (
        "Tras el hackeo de Viasat KA-SAT en 2022, ¿qué vulnerabilidades quedaron expuestas?",
        "el hackeo de Viasat KA-SAT en 2022",
        "positiva",
        "desde_que",
        (2022,),
    ),
    (
        "Después de que Rusia destruyó Kosmos 1408, ¿qué hizo la tripulación de la estación?",
        "Rusia destruyó Kosmos 1408",
        "positiva",
        "desde_que",
        (),
    ),
    (
        "¿Qué consecuencias tuvo que China destruyera el Fengyun-1C en 2007?",
        "China destruyera el Fengyun-1C en 2007",
        "positiva",
        "consecuencias",
        (2007,),
    ),
    (
        "¿Qué consecuencias tuvo la prueba antisatélite china de 2007 sobre los desechos orbitales?",
        "la prueba antisatélite china de 2007",
        "positiva",
        "consecuencias",
        (2007,),
    ),
    # English
    (
        "Why has China never conducted an anti-satellite test?",
        "China has never conducted an anti-satellite test",
        "negativa",
        "por_que",
        (),
    ),
    (
        "Given that Russia never tested an ASAT missile, what are the risks?",
        "Russia never tested an ASAT missile",
        "negativa",
        "dado_que",
        (),
    ),
    (
        "When did North Korea stop launching reconnaissance satellites?",
        "North Korea stopped launching reconnaissance satellites",
        "positiva",
        "dejo_de",
        (),
    ),
    (
        "What were the consequences of the 2022 Viasat KA-SAT hack?",
        "the 2022 Viasat KA-SAT hack",
        "positiva",
        "consecuencias",
        (2022,),
    ),
    # Portuguese
    (
        "Por que a China nunca realizou um teste antissatélite?",
        "a China nunca realizou um teste antissatélite",
        "negativa",
        "por_que",
        (),
    ),
    (
        "Já que a Rússia nunca testou um míssil antissatélite, quais são os riscos?",
        "a Rússia nunca testou um míssil antissatélite",
        "negativa",
        "dado_que",
        (),
    ),
    (
        "Quando a Coreia do Norte deixou de lançar satélites?",
        "a Coreia do Norte deixou de lançar satélites",
        "positiva",
        "dejo_de",
        (),
    ),
]


@pytest.mark.parametrize(("question", "text", "polarity", "kind", "years"), PHRASINGS)
def test_premise_phrasings(question, text, polarity, kind, years):
    p = extract_premise(question)
    assert p is not None, question
    assert (p.text, p.polarity, p.kind, p.years) == (text, polarity, kind, years)
    assert len(p.terms) >= 2 and not {"nunca", "never", "jamas", "realizado", "conducted"} & set(p.terms)


def test_languages():
    assert extract_premise(PHRASINGS[0][0]).language == "es"
    assert extract_premise("Why has China never conducted an anti-satellite test?").language == "en"
    assert (
        extract_premise("Já que a Rússia nunca testou um míssil antissatélite, quais são os riscos?").language == "pt"
    )


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué incidentes recientes de spoofing han comprometido servicios satelitales?",
        "¿Por qué la minería ilegal financia a los grupos armados?",  # a positive "why" is a question
        "Si Rusia atacara satélites, ¿qué pasaría?",  # hypothetical (subjunctive)
        "If Russia were to attack satellites, what would happen?",
        "Desde 2010, ¿cómo ha cambiado la doctrina?",  # a date, no content
        "¿Qué pruebas antisatélite ha realizado Australia y qué desechos generaron?",
        "",
    ],
)
def test_no_premise(question):
    assert extract_premise(question) is None


# --------------------------------------------------------------------------- verdicts
FENGYUN = (
    "Anti-satellite weapons tests are a major source of long-lived orbital debris. The 2007 Chinese ASAT test "
    "destroyed the Fengyun-1C weather satellite and created more than 3,000 trackable fragments."
)
KOSMOS = "In November 2021 a Russian direct-ascent missile test against Kosmos 1408 forced the ISS crew to shelter."
JAPAN_ES = "Japón tiene una capacidad ASAT latente a través de su sistema de defensa antimisiles, aunque nunca ha probado esa capacidad."
NUCLEAR = "A nuclear detonation in orbit would disable most satellites, and China could test such a weapon."


def _read(*texts: str) -> dict[str, dict]:
    out = {}
    for i, t in enumerate(texts):
        doc = f"{i:016x}"
        out[f"{doc}-0"] = {"doc_id": doc, "chunk_id": f"{doc}-0", "text": t, "language": None}
    return out


def test_negated_premise_contradicted_by_a_plain_statement():
    p = extract_premise("¿Por qué China nunca ha realizado una prueba antisatélite?")
    read = _read(KOSMOS, FENGYUN)
    v = assess(p, read)
    assert v.estado == "falsa" and v.chunk_id == f"{1:016x}-0" and "Fengyun-1C" in v.fragment
    assert v.fragment in FENGYUN
    sentence = v.sentence()
    assert sentence.startswith(f"La pregunta da por sentado que {p.text}, pero no es así: un pasaje leído")
    assert f"«{v.fragment.rstrip('.')}»" in sentence and f"[{v.doc_id}:{v.chunk_id}]" in sentence
    assert verifier.check_answer(v.evidence_lines(), read).ok
    assert v.contract() == {
        "texto": p.text,
        "estado": "falsa",
        "cita": {"doc_id": v.doc_id, "chunk_id": v.chunk_id},
        "fragmento": v.fragment,
    }


def test_english_and_portuguese_premises_are_judged_too():
    read = _read(FENGYUN, KOSMOS)
    assert assess(extract_premise("Why has China never conducted an anti-satellite test?"), read).estado == "falsa"
    v = assess(extract_premise("Já que a Rússia nunca testou um míssil antissatélite, quais são os riscos?"), read)
    assert v.estado == "falsa" and "Kosmos 1408" in v.fragment


def test_unverifiable_without_a_sentence_about_it():
    p = extract_premise("¿Por qué China nunca ha realizado una prueba antisatélite?")
    v = assess(p, _read(KOSMOS))  # another country's test: not about China
    assert v.estado == "no_verificada" and v.chunk_id is None and v.fragment is None
    assert v.sentence() == (
        "La pregunta da por sentado que China nunca ha realizado una prueba antisatélite; no pude verificarlo: "
        "ningún pasaje leído lo confirma ni lo contradice."
    )
    assert assess(p, {}).estado == "no_verificada"


def test_modal_sentences_neither_support_nor_contradict():
    p = extract_premise("¿Por qué China nunca ha realizado una prueba antisatélite?")
    assert judge_sentence(p, NUCLEAR) is None
    assert assess(p, _read(NUCLEAR)).estado == "no_verificada"


def test_negated_premise_supported_by_a_negated_sentence():
    p = extract_premise("¿Por qué Japón nunca ha probado su capacidad antisatélite?")
    v = assess(p, _read(JAPAN_ES))
    assert v.estado == "verdadera" and v.fragment == JAPAN_ES
    assert ", y un pasaje leído lo confirma: «" in v.sentence()


def test_positive_premise_true_needs_its_year():
    p = extract_premise(
        "Teniendo en cuenta que China destruyó el Fengyun-1C en 2007, ¿cuántos fragmentos se generaron?"
    )
    assert assess(p, _read(FENGYUN)).estado == "verdadera"
    wrong_year = extract_premise("Dado que China destruyó el Fengyun-1C en 2009, ¿cuántos fragmentos se generaron?")
    v = assess(wrong_year, _read(FENGYUN))
    assert v.estado == "falsa" and v.reason == "conflicto_de_anio"
    # the quotes pass the verifier; the restated premise (with its wrong 2009) is not the passage's claim
    assert verifier.check_answer(v.evidence_lines(), _read(FENGYUN)).ok
    assert "2009, pero no es así" in v.sentence() and "(fecha el mismo hecho en otro año)" in v.sentence()


def test_positive_premise_contradicted_by_never():
    p = extract_premise("Dado que Japón probó su capacidad antisatélite, ¿qué cambió?")
    v = assess(p, _read(JAPAN_ES))
    assert v.estado == "falsa" and v.fragment == JAPAN_ES


def test_conflicting_evidence_stays_unverified():
    p = extract_premise("¿Por qué Japón nunca ha probado su capacidad antisatélite?")
    v = assess(p, _read(JAPAN_ES, "Japón probó su capacidad antisatélite en una prueba."))
    assert v.estado == "no_verificada" and v.reason == "evidencia_en_conflicto"
    assert "se contradicen" in v.sentence()


def test_search_query_adds_english_terms():
    q = search_query(extract_premise("¿Por qué China nunca ha realizado una prueba antisatélite?"))
    assert q.startswith("China nunca ha realizado una prueba antisatélite") and "asat" in q and len(q) <= 300


# --------------------------------------------------------------------------- a model's proposal
def test_proposal_validated_against_read_passages():
    p = extract_premise("¿Por qué China nunca ha realizado una prueba antisatélite?")
    read = _read(KOSMOS, FENGYUN)
    fengyun_id, kosmos_id = f"{1:016x}-0", f"{0:016x}-0"
    span = "the 2007 chinese ASAT test destroyed the   Fengyun-1C"  # case and spacing differ
    ok = validate_proposal(p, "falsa", fengyun_id, span, read)
    assert ok.estado == "falsa" and ok.fragment.startswith("The 2007 Chinese ASAT test") and ok.chunk_id == fengyun_id
    # a passage that does not contradict the premise
    bad = validate_proposal(p, "falsa", kosmos_id, "a Russian direct-ascent missile test against Kosmos 1408", read)
    assert bad.estado == "no_verificada" and bad.reason.startswith("propuesta_no_validada")
    # a chunk not read in this run, a span not in the passage, the wrong direction, no claim
    assert validate_proposal(p, "falsa", "ffffffffffffffff-0", span, read).estado == "no_verificada"
    assert validate_proposal(p, "falsa", fengyun_id, "China has never tested an ASAT weapon", read).estado == (
        "no_verificada"
    )
    assert validate_proposal(p, "verdadera", fengyun_id, span, read).estado == "no_verificada"
    assert validate_proposal(p, "no_verificada", None, None, read).estado == "no_verificada"


def test_premise_entities_use_the_shared_name_sets():
    # "el Pentágono" is the dictionary's us_dod: an English passage saying "the Department of
    # Defense" addresses the premise; a demonym names the country
    p = extract_premise("Dado que el Pentágono nunca ha usado enjambres de drones, ¿qué hace China?")
    ent = [c for c in p.concepts if c.entity]
    assert ent and ent[0].found_in("the department of defense tested")
    q = extract_premise("Dado que los rusos nunca han probado un arma antisatélite, ¿qué dice la doctrina?")
    assert any(c.entity and c.found_in("russia tested an asat weapon") for c in q.concepts)


@pytest.mark.parametrize(
    ("question", "kind", "text"),
    [
        # causal "Como X, ¿…?" — never the interrogative "¿Cómo…?" nor a role ("Como analista, …")
        ("Como Irán ya probó un misil antisatélite, ¿qué dice la ONU?", "como", "Irán ya probó un misil antisatélite"),
        # a tag asking to confirm the assertion
        (
            "India destruyó un satélite propio en 2019, ¿cierto?",
            "confirmacion",
            "India destruyó un satélite propio en 2019",
        ),
        (
            "The ELN signed the 2016 peace deal, right? what happened next",
            "confirmacion",
            "The ELN signed the 2016 peace deal",
        ),
        (
            "O Brasil lançou um satélite militar em 2017, né?",
            "confirmacion",
            "O Brasil lançou um satélite militar em 2017",
        ),
        # a noun phrase that presupposes its event
        ("Dado el acuerdo secreto entre Rusia y China para la Luna, ¿qué riesgos hay?", "dado_que", None),
        ("A raíz de la destrucción del satélite Fengyun por China, ¿qué se hizo?", "dado_que", None),
        # "now that", "debido a que"
        ("Ahora que Starlink controla la mitad de los satélites, ¿qué pasa con la ESA?", "dado_que", None),
        # a "why … stopped" presupposes the stop, even without a negation
        ("¿Por qué Rusia dejó de publicar su doctrina espacial?", "por_que", None),
    ],
)
def test_more_premise_phrasings(question, kind, text):
    p = extract_premise(question)
    assert p is not None and p.kind == kind, (question, p)
    if text is not None:
        assert p.text == text


@pytest.mark.parametrize(
    "question",
    [
        "¿Cómo afecta la IA a la guerra electrónica, y qué dice la OTAN?",
        "Como analista de la Defensoría necesito el mapa de alertas del Cauca.",
        "Quiero el mapa de alertas del Cauca, no del Valle",
        "Pregunta para el informe: ¿qué grupos operan en Tumaco?",
        "¿Por qué aumentaron las pruebas antisatélite después de 2007?",
    ],
)
def test_no_premise_where_none_is_asserted(question):
    assert extract_premise(question) is None
