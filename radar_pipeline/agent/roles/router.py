"""The orchestrator's offline half: rule-based routing, search formulations and coverage requirements.

``plan(question)`` returns a ``Plan``:

* ``kind``: ``greeting`` | ``thanks`` | ``capabilities`` | ``off_topic`` (answered without
  retrieval) or ``question``;
* ``ruta``: ``text`` | ``visualization`` | ``both`` (a question that asks to *see* something);
* ``formulations``: up to 3 search queries (the question, its second clause when it asks two
  things, and a keyword form with the glossary's English terms);
* ``requirements``: coverage the run must meet before it may close (SPEC "coverage requirements"):
  every year of a comparison (two or more distinct years), every year of a closed period of more
  than one year (see below), every item of an explicit list (proper nouns / acronyms, or items with
  a glossary term), every named country, armed group or organisation. Each has aliases in Spanish,
  English and Portuguese; it is met when a passage actually read mentions one. Countries and
  organisations, with their demonyms, metonyms and aliases, come from Radar's gazetteer and entity
  dictionary through ``understanding.name_sets`` (the premise check reads the same), never a list here.

**Periods.** A closed period of more than one year ("entre 2015 y 2020", "del 2016 al 2021",
"2015-2020", or "los últimos cinco años" resolved by ``understanding.QuestionReader``) becomes one
``range`` requirement *per year* of the period (label ``"2017"``, ``span`` ``(2015, 2020)``), in
place of the two ``year`` requirements its two written end years used to give. A ``range`` year is
met when a read passage mentions the year, or when the passage's document is dated in that year
(``Requirement.met_by_passage`` with the publication year the run's ``tools.ToolBox`` knows: the
``publication_dates`` table, else the rules on the source path; an undated document counts by its
mentions only). One requirement per year, not one for the whole range, because each year is
searched, reported and cited on its own: the analyst's targeted searches try the missing years,
the /chat ``cobertura`` lists every year with ``cubierto``, and the coverage note names exactly the
years without evidence (``messages.coverage_note``), all with the machinery every other kind uses.
Two loose years without range wording ("compara 2019 y 2023") are no period: two ``year``
requirements, as before; years written outside the period stay ``year`` requirements. An open
period ("desde 2019") adds no requirement (there is nothing to span); a relative one adds its
resolved years to the keyword formulation, since the question's words do not carry them.

The LLM orchestrator (``runner``) proposes the route and formulations itself; the requirements are
always extracted here, in code, so a model cannot drop one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from radar_pipeline.agent.reading import intent
from radar_pipeline.agent.reading.learned import combine_route
from radar_pipeline.agent.reading.requirements import (
    Requirement,
    extract_requirements,
    glossary_terms,
    keywords,
    place_requirements,
)
from radar_pipeline.agent.reading.rules import rulebook
from radar_pipeline.agent.reading.understanding import QuestionFacts, name_sets
from radar_pipeline.agent.roles.premise import extract_premise
from radar_pipeline.textfold import fold_question

# --------------------------------------------------------------------------- routing
# The phrasing rules of the route kinds (greeting, thanks, capabilities, off topic, the domain words)
# and of the phenomenon are data: precompute/data/reading_rules.yaml, read by reading.rules.
_RULES = rulebook()
_GREETING = _RULES.regex("greeting")
_THANKS = _RULES.regex("thanks")
_THANKS_ANYWHERE = _RULES.regex("thanks_anywhere")
_STRETCHED = _RULES.rewrites("stretched_letters")
_NEW_REQUEST = _RULES.regex("new_request")
_REQUEST_VERB = _RULES.regex("request_verb")
_CAPABILITIES = _RULES.regex("capabilities")
_DOMAIN = _RULES.regex("domain")
_CHATTER = _RULES.pattern("chatter")
_LEISURE = _RULES.regex("leisure")
_STRONG_DOMAIN = _RULES.regex("strong_domain")
_OFF_TOPIC = _RULES.regex("off_topic")
_TREND_TAG = _RULES.regex("trend_tag")
_PHEN_RULES = {
    "ai_military": _RULES.pattern("phenomenon_ai_military"),
    "space_security": _RULES.pattern("phenomenon_space_security"),
    "territorial": _RULES.pattern("phenomenon_territorial"),
}


def classify_phenomenon(question: str) -> str | None:
    """``ai_military`` | ``space_security`` | ``territorial`` by keyword and glossary votes; None if unclear."""
    folded = fold_question(question)
    votes = {p: len(re.findall(rx, folded)) for p, rx in _PHEN_RULES.items()}
    for _, _, domain in glossary_terms(question):
        if domain in votes:
            votes[domain] += 1
    best = max(votes, key=votes.get)
    return best if votes[best] > 0 else None


@dataclass
class Plan:
    kind: str
    ruta: str
    formulations: list[str] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    phenomenon: str | None = None
    reason: str = ""
    # the route rules' reading of a question (``intent.classify``; before the learned reader is
    # combined), which ``also_told`` reuses; None for greetings, thanks and off-topic plans
    reading: intent.Intent | None = None


def _second_clause(question: str) -> str | None:
    m = re.search(
        r",?\s+y\s+(qu[ée]|c[óo]mo|cu[áa]les?|por qu[ée]|d[óo]nde|qui[ée]nes|cu[áa]ndo|en qu[ée]|de qu[ée])\s+(.{8,})$",
        question.strip(" ?¿"),
        flags=re.I,
    )
    if not m:
        return None
    head = question.strip(" ?¿")[: m.start()]
    topic = " ".join(keywords(head)[:6])
    return f"{m.group(1)} {m.group(2)} {topic}".strip()


# the cues of a view that a question's own words fire without asking for a view: the question is
# about the alerts, a presence, a change, relations or places, and the view counts them; the words
# that ask for the view itself (named, shown, charted) or count documents and mentions are not here
_TOLD_CUES = (
    "alertas",
    "presencia",
    "grupo y lugar",
    "evolución",
    "relaciones",
    "dónde",
    "pide lugares",
    "pregunta de contenido",
)
_QUESTION_OPENER = _RULES.regex("question_opener")
_COUNTED_TEXTS = re.compile(
    r"(?<!\w)(?:" + _RULES.pattern("doc_nouns") + r"|docs?|mencion\w*|nombra\w*|citad[oa]s?|veces)(?!\w)"
)
_CHART = _RULES.regex("chart_words")
_TOLD_REQUEST = _RULES.regex("told_request")


def _rules_reading(q: str, facts: QuestionFacts | None) -> intent.Intent:
    """``intent.classify`` of the whitespace-normalised question ``q`` with what ``facts`` found."""
    return intent.classify(
        q,
        has_armed_group=bool(facts) and any(e.category == "armed_group" for e in facts.entities),
        has_place=bool(facts and (facts.places or facts.ambiguous)),  # "¿qué grupos hay en Miraflores?" (two of them)
        has_country=bool(facts) and any(e.category == "country" for e in facts.entities),
    )


def also_told(question: str, facts: QuestionFacts | None = None, read: intent.Intent | None = None) -> bool:
    """Should a question read as a view (route ``visualization``) get the passages' answer too
    (route ``both``)? True when it is asked as a question (a question word opens it, or it ends in
    "?"), its view is cued by what it asks about (the alerts, a presence, a change over time,
    relations, places: ``_TOLD_CUES``) rather than named, shown or charted, and it counts no
    documents or mentions.

    Why (issue 22, "answers an analyst can use"): an analyst's question about a fact that a view's
    words cue ("¿Cuándo se emitió la alerta temprana … y cuándo sesionó la CIPRAT?", "¿Qué grupos
    armados convergen en Maicao según la alerta?", "¿Cuándo apareció por primera vez … y qué
    institución publicó ese trabajo?") got figures only: the view counts alerts, presences or
    documents, and what the documents say — the date, the groups, the institution — was never read.
    The route the question was read with stays what ``plan`` returns (the reading's measure); this
    decides how the run answers it. False for any other route. ``read``: the rules' reading
    ``plan`` made of the same question and facts (``Plan.reading``); classified here when None."""
    q = " ".join(question.split())
    folded = re.sub(r"^[\W_]+", "", fold_question(q))
    if read is None:
        read = _rules_reading(q, facts)
    if read.route == "text" and "pregunta de contenido" in read.reasons:
        # the rules read an explained answer beside a view's cue ("…quién se impuso entre … y cómo se
        # compara con la presencia del ELN?") where the learned reader read the view: both
        return True
    if read.route != "visualization" or not read.reasons:
        return False
    cues = [r.split(":", 1)[1] if ":" in r else r for r in read.reasons]
    if not all(c in _TOLD_CUES for c in cues):
        return False
    # asked as a question, or as a request to be told ("Compara la AT 038-18 y la AT 040-19…",
    # "grupos en disputa en Bahía Solano según la alerta"): rule told_request
    asked = (
        q.rstrip().endswith("?")
        or _QUESTION_OPENER.match(folded) is not None
        or _TOLD_REQUEST.search(folded) is not None
    )
    return asked and not _COUNTED_TEXTS.search(folded) and not _CHART.search(folded)


def plan(question: str, facts: QuestionFacts | None = None) -> Plan:
    """Route and decompose ``question`` with rules (offline orchestrator). ``facts``: what
    ``understanding.QuestionReader`` read in it (places, entities), which the route rules use, and
    its period, which the coverage requirements use (``extract_requirements``)."""
    q = " ".join(question.split())
    folded = re.sub(r"^[\W_]+", "", fold_question(q))
    period = facts.period if facts is not None else None
    reqs = extract_requirements(q, period)
    if facts is not None:  # the Colombian places it is about: a quote must name them (writer, coverage)
        # a country's name that the reader resolved as a Colombian place ("el municipio de Argelia
        # (Cauca)", "Argelia, Cauca"; the country would be an entity then) is the place, not the country
        as_places = {fold_question(p.matched) for p in facts.places}
        reqs = [r for r in reqs if not (r.kind == "country" and as_places & {fold_question(r.label), *r.aliases})]
        listed = {fold_question(r.label) for r in reqs}
        reqs += [r for r in place_requirements(facts.places, q) if fold_question(r.label) not in listed]
    phen = classify_phenomenon(q)
    words = re.findall(r"\w+", folded)
    topical = _DOMAIN.search(folded) is not None
    named = any(ns.named_in(folded) for ns in name_sets())
    has_domain = topical or named
    # letters stretched in chat ("holaaa", "buenasss", "graciaaas", "chaooo"): one letter for the
    # small-talk words (rule stretched_letters)
    chat = folded
    for rx, to in _STRETCHED:
        chat = rx.sub(to, chat)
    if _GREETING.search(chat) and (len(words) <= 8 or not _REQUEST_VERB.search(folded)) and not has_domain:
        # "buenos días Radar, ¿cómo me le va? hoy vengo con varias cositas": a longer greeting too
        return Plan("greeting", "text", reason="saludo")
    thanks = _THANKS.search(chat)
    rest = chat[thanks.end() :] if thanks else ""
    # "Gracias, ¿y qué pasó en 2021?", "gracias, y ahora muéstrame lo mismo para Nariño": a new request
    follow_up = thanks is not None and (("?" in q and _NEW_REQUEST.search(rest)) or _REQUEST_VERB.search(rest))
    if thanks and (len(words) <= 8 or "?" not in q) and not has_domain and not follow_up:
        return Plan("thanks", "text", reason="agradecimiento")  # not "Gracias, ¿y qué pasó en 2021?"
    thanked = _THANKS_ANYWHERE.search(chat)
    if (
        thanked
        and "?" not in q
        and not _NEW_REQUEST.search(chat[thanked.end() :])
        and len(words) <= 16
        # "…; primero el mapa, gracias": a request closed with thanks (thanks first is only thanks)
        and not (
            has_domain
            and re.search(
                r"\w",
                re.sub(
                    r"(?:muchas|muchisimas|mil|un millon de|ok|bueno|listo|perfecto|vale)\W*",
                    "",
                    folded[: thanked.start()],
                ),
            )
        )
    ):
        return Plan("thanks", "text", reason="agradecimiento")  # "muchas gracias por tu respuesta sobre los drones"
    if _CAPABILITIES.search(folded) and not has_domain:
        return Plan("capabilities", "text", reason="capacidades")
    if not has_domain and (_OFF_TOPIC.search(folded) or len(words) <= 2):
        return Plan("off_topic", "text", reason="fuera de tema")
    if named and not topical and _OFF_TOPIC.search(folded) and not _STRONG_DOMAIN.search(folded):
        return Plan("off_topic", "text", reason="fuera de tema")  # "capital de Francia", "receta de pasta italiana"
    if re.search(r"(?<!\w)(?:" + _CHATTER + r")(?!\w)", folded) and not _STRONG_DOMAIN.search(folded):
        return Plan("off_topic", "text", reason="fuera de tema")
    if _LEISURE.search(folded):
        return Plan("off_topic", "text", reason="fuera de tema")  # "¿me recomiendas una película de guerra…?"
    read = _rules_reading(q, facts)
    ruta = read.route
    if facts is not None and facts.learned is not None:
        ruta = combine_route(ruta, read.reasons, facts.learned)  # the learned reader, where the rules are weak
    if (
        read.view_text is not None
        and period is not None
        and period.closed
        and period.desde == period.hasta
        and fold_question(period.text) not in fold_question(read.view_text)
        and not any(r.label == str(period.desde) for r in reqs)
    ):
        # "la línea de tiempo de los tests ASAT y explícame qué pasó con el test ruso de 2021": the
        # year is not the view's period (visualizer.propose) but what the explanation must cover
        reqs.append(Requirement("year", str(period.desde), (str(period.desde),)))
    premise = extract_premise(q) if ruta == "visualization" else None
    if premise is not None and premise.implicit:
        premise = None  # a positive "¿por qué X hizo Y?" asks for causes: checked, but no reason to leave a view
    if premise is not None and not (
        premise.kind == "confirmacion"
        and (_TREND_TAG.search(fold_question(q)) or any(c.startswith("mapa_") for c in read.components))
    ):
        # a premise is judged against cited passages, which a view cannot do; "¿lo de las
        # megaconstelaciones crece o no?" asks a direction, and "¿el Clan del Golfo está en Segovia o
        # no?" where a group is: views, not claims to check
        ruta = "text"
    forms = [q.strip(" ¿?")]
    second = _second_clause(q)
    if second:
        forms.append(second)
    english = []
    for _, eng, _ in glossary_terms(q):
        english += eng[:1]
    # the countries and actors the question names, by the entity dictionary's name ("Corea del Sur"
    # → "South Korea", "iraní" → "Iran"): the mostly English corpus writes them so, and a Spanish
    # name or demonym is no term the lexical stage can match (issue 26, cross-lingual gap); the
    # Colombian armed groups keep the Spanish the corpus writes them in
    for e in facts.entities if facts is not None else ():
        name = re.sub(r"\s*\([^)]*\)", "", e.name).strip()
        if e.category != "armed_group" and name and fold_question(name) != fold_question(e.matched):
            english.append(name)
    kw = keywords(q)
    # "los últimos cinco años": the resolved years, which the question's words do not carry
    years = (
        [str(y) for y in dict.fromkeys((period.desde, period.hasta))]
        if period and period.relative and period.closed
        else []
    )
    keyword_form = " ".join(dict.fromkeys((" ".join(english).split() + kw[:8])[: 16 - len(years)] + years))
    if keyword_form and fold_question(keyword_form) != fold_question(forms[0]):
        forms.append(keyword_form)
    return Plan("question", ruta, forms[:3], reqs, phen, reason="pregunta", reading=read)
