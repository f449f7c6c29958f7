"""The visualizer: 1–3 dashboard components and their filters, from closed lists, validated in code.

Components map one-to-one to aggregate endpoints (``precompute.reader.AGGREGATES``), so the chart the
agent selects shows the same figures the dashboard shows. Filters (``precompute.filters.Filters``,
under their Spanish names): ``fenomeno`` (one of the three phenomena), ``desde``/``hasta`` (years
1950–2049, either open, desde ≤ hasta), ``entidad`` (an entry of the entity dictionary, by id, or a
country as ``country:<ISO3>``) and ``lugar`` (a gazetteer place id: a Colombian department or
municipality, e.g. ``municipality:52835`` for Tumaco, or a country when it is the territory the map
of places shows: ``_located_country``). Values are resolved against the same
gazetteer and dictionary the precomputes count with (``understanding.QuestionReader``); anything
else — from the rules or from a model's proposal — is dropped and reported in ``rejected``.

The offline proposal (``propose``) takes the components from ``intent.classify`` and the filters
from ``QuestionFacts`` (period, one place, one entity, the phenomenon the question names as scope).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from urllib.parse import urlencode

from radar_pipeline.agent.reading.intent import classify, stated_phenomenon
from radar_pipeline.agent.reading.learned import combine_components, combine_phenomenon
from radar_pipeline.agent.reading.periods import parse_period, year_span
from radar_pipeline.agent.reading.rules import rulebook
from radar_pipeline.agent.reading.understanding import EntityRef, PlaceRef, QuestionFacts, QuestionReader
from radar_pipeline.precompute.filters import SPANISH, Filters
from radar_pipeline.textfold import fold_question
from radar_pipeline.vocabulary import PHENOMENA

# the phrasing rules this module reads (topic_before, example_of): precompute/data/reading_rules.yaml
_RULES = rulebook()

COMPONENTS: dict[str, dict] = {
    "mapa_lugares": {"aggregate": "documents_per_place", "titulo": "Mapa: documentos que nombran cada lugar"},
    "mapa_alertas": {"aggregate": "alerts_per_department", "titulo": "Mapa: alertas tempranas por departamento"},
    "mapa_presencia": {
        "aggregate": "armed_presence",
        "titulo": "Mapa: presencia declarada de grupos armados por municipio",
    },
    "linea_tiempo": {"aggregate": "timeline", "titulo": "Línea de tiempo"},
    "red_entidades": {"aggregate": "entity_network", "titulo": "Red de coocurrencia de entidades"},
    "matriz_calor": {"aggregate": "entity_heatmap", "titulo": "Matriz de calor entidad × categoría"},
    "cuadrante": {"aggregate": "entity_quadrant", "titulo": "Cuadrante intensidad–tendencia"},
}


def validate(
    componentes: list, filtros: dict | None, reader: QuestionReader | None = None
) -> tuple[dict | None, list[str]]:
    """Keep only closed-list values; ``entidad``/``lugar`` are resolved with ``reader`` (names or ids
    → canonical id). Returns ``(visualizacion or None, rejected descriptions)``."""
    rejected: list[str] = []
    comps: list[str] = []
    for c in componentes or []:
        if isinstance(c, str) and c in COMPONENTS and c not in comps:
            comps.append(c)
        else:
            rejected.append(f"componente {str(c)[:40]!r}")
    if len(comps) > 3:
        rejected += [f"componente {c!r} (máximo 3)" for c in comps[3:]]
        comps = comps[:3]
    f = filtros if isinstance(filtros, dict) else {}
    out: dict = dict.fromkeys(SPANISH.values())
    for key, value in f.items():
        if key not in out:
            rejected.append(f"filtro {str(key)[:30]!r}")
            continue
        if value is None:
            continue
        if key == "fenomeno":
            if value in PHENOMENA:
                out[key] = value
            else:
                rejected.append(f"fenomeno {str(value)[:30]!r}")
        elif key in ("desde", "hasta"):
            if isinstance(value, int) and not isinstance(value, bool) and 1950 <= value <= 2049:
                out[key] = value
            else:
                rejected.append(f"{key} {str(value)[:10]!r}")
        elif key == "entidad":
            canon = reader.resolve_entity(str(value)) if reader else None
            if canon:
                out[key] = canon
            else:
                rejected.append(f"entidad {str(value)[:40]!r}")
        elif key == "lugar":
            pid = reader.resolve_place(str(value)) if reader else None
            if pid:  # a country too: the map of places and the dashboard's place filter take one
                out[key] = pid
            else:
                rejected.append(f"lugar {str(value)[:40]!r}")
    if out["desde"] and out["hasta"] and out["desde"] > out["hasta"]:
        out["desde"], out["hasta"] = out["hasta"], out["desde"]
    if not comps:
        return None, rejected
    return {"componentes": [component(c, out) for c in comps], "filtros": out}, rejected


def component(name: str, filtros: dict) -> dict:
    """One component: its title, aggregate and ``/aggregates`` endpoint with ``filtros`` (Spanish
    names) as the endpoint's query parameters."""
    spec = COMPONENTS[name]
    params = Filters.from_spanish(filtros).requested()
    endpoint = f"/aggregates/{spec['aggregate']}" + (f"?{urlencode(params)}" if params else "")
    return {
        "tipo": name,
        "titulo": spec["titulo"],
        "agregado": spec["aggregate"],
        "endpoint": endpoint,
        "materializado": None,
    }


# Words after which a program or technology is what the view shows, not the documents' topic:
# "matriz de calor drones", "línea de tiempo de los drones", "¿dónde se mencionan los drones?"
_SUBJECT_BEFORE = re.compile(
    r"(?:matriz(?: de calor)?|mapa de calor|heat ?map|linea de tiempo|timeline|cuadrante|(?<!\w)red|(?<!\w)mapa|"
    r"se mencionan?|se nombran?|(?<!\w)mencionan(?: a)?|(?<!\w)nombran(?: a)?)"
    r"(?:\s+(?:de|del|de la|de las|de los|a|al|los|las|el|la|the|of))?(?:\s+(?:programa|iniciativa|tecnologia))?$"
)


_DRONES = re.compile(r"(?<!\w)(?:drones?|dron)(?!\w)", re.IGNORECASE)


def _view_subject(text: str, facts: QuestionFacts, first: str) -> EntityRef | None:
    """A program or technology as the view's filter when it is what the view shows: the centre of
    a network ("la red del programa Replicator", "¿con quién sale mencionado Replicator?") or the
    word right after the view's name or a mention verb. A topic of the documents ("documentos sobre
    drones") stays the search's business. Only when the question names exactly one."""
    whats = {e.value: e for e in facts.entities if e.category in ("program", "technology")}
    if len(whats) != 1:
        return None
    (what,) = whats.values()
    if stated_phenomenon(_DRONES.sub(" ", what.matched)) is not None:
        # "línea de tiempo de la basura espacial": a sub-topic that states the phenomenon is the
        # scope, not a filter; drones are a technology the view can show ("matriz de calor drones",
        # "enjambres de drones") as well as a word that states military AI, so they stay the subject
        return None
    at = text.find(what.matched)
    if at < 0:
        return None
    before = fold_question(text[:at]).strip()
    if _TOPIC_BEFORE.search(before):
        # "quiénes se juntan con quién cuando se habla de drones", "la red en lo de drones": the
        # documents' topic, not the network's centre
        return None
    if first == "red_entidades" or _SUBJECT_BEFORE.search(before):
        return what
    return None


# Words that introduce the documents' topic rather than a view's subject (rule topic_before)
_TOPIC_BEFORE = _RULES.regex("topic_before")


@functools.lru_cache(maxsize=1)
def _proper_programs() -> frozenset[str]:
    """Ids of the dictionary's programs and technologies that are proper names (a product, a
    programme, a treaty: "Starlink", "OneWeb", "Proyecto Maven", "Bayraktar TB2", "Plan Colombia"):
    every plain alias, in every language, is capitalised. A technology class ("drones", "basura
    espacial", "armas autónomas", "megaconstelaciones") has common-noun aliases and stays the
    search's topic. Source: the bundled entity dictionary (``precompute/data/entities.yaml``)."""
    from radar_pipeline.precompute.entities import load_entity_dictionary

    out = set()
    for eid, ent in load_entity_dictionary().entities.items():
        texts = [a.text for a in ent.aliases if not a.regex]
        if (
            ent.category in ("program", "technology")
            and texts
            and all(t[:1].isupper() or t[:1].isdigit() for t in texts)
        ):
            out.add(eid)
    return frozenset(out - _NOT_A_SUBJECT)


# named in a question about early warnings or a place, these are the source or the kind of place,
# not a subject: "alertas del Sistema de Alertas Tempranas", "municipios PDET"
_NOT_A_SUBJECT = frozenset({"sistema_alertas_tempranas", "pdet"})


_EXAMPLE_OF = _RULES.regex("example_of")


def named_program(facts: QuestionFacts, question: str = "") -> EntityRef | None:
    """The one proper-named program or technology the question names (``_proper_programs``:
    "¿cuántos documentos salen por año sobre OneWeb?", "evolución de menciones de Starlink") as
    the view's entity filter, like an actor: a person asking about a product or programme by name
    wants the documents that name it. None when it names none, several, or an actor too, and when
    ``question`` (its text, where given) names it as an example of a class (rule ``example_of``:
    "las megaconstelaciones tipo Starlink", "drones como el Bayraktar": the class is the topic)."""
    if any(e.category not in ("program", "technology") for e in facts.entities):
        return None
    named = {e.value: e for e in facts.entities if e.value in _proper_programs()}
    if len(named) != 1:
        return None
    ref = next(iter(named.values()))
    if question:
        folded, key = fold_question(question), fold_question(ref.matched)
        at = folded.find(key)
        if at >= 0 and _EXAMPLE_OF.search(folded[:at]):
            return None
    return ref


def _paired(question: str, entity: EntityRef) -> bool:
    """Whether ``entity`` is one of a pair the question relates ("relaciones entre el ELN y las
    disidencias", "entre las disidencias y el ELN"): the second actor need not be a dictionary
    entry, and a view over two actors has no single entity filter."""
    folded, name = fold_question(question), re.escape(fold_question(entity.matched))
    art = r"(?:(?:el|la|los|las|the)\s+)?"
    # "entre Estados Unidos y otros actores": one actor and the rest is no pair
    rest = r"(?!(?:(?:los|las|el|the)\s+)?(?:otros|otras|demas|resto|other|others|the rest)(?!\w))"
    return bool(
        re.search(rf"(?<!\w)(?:entre|between)\s+{art}{name}\s+(?:y|e|and)\s+{rest}\w", folded)
        or re.search(rf"(?<!\w)(?:entre|between)\s+{art}[\w ]{{2,40}}?\s+(?:y|e|and)\s+{art}{name}(?!\w)", folded)
    )


# The map of places asked for where a country is named: "¿dónde se nombra a Venezuela?", "las
# menciones a Ecuador", "documentos que mencionam o Peru"; not the places named with it ("¿qué
# países se mencionan junto a la India?"), where the country is the actor the others co-occur with
_COMENTION = re.compile(
    r"(?<!\w)(?:junto|junto con|junto a|al lado de|con quien|alongside|together with|conectad\w*|vinculad\w*|"
    r"(?:mencion|nombr|aparec|cit)\w* (?:con|junto)|(?:mentioned|named) with)(?!\w)"
    # other places are the answer: other countries, or places of another level ("¿en qué
    # departamentos se habla de Venezuela?"); the country anchors them ("¿en qué lugares se nombra
    # a Venezuela?" asks where the country itself is named, like "dónde")
    r"|(?:que|cuales|which|what) (?:paises|countries|departamentos|municipios|regiones|ciudades|departments|cities)"
    r"|(?:otros|otras|other) (?:paises|countries|lugares|places)"
)


def _actor_and_country(question: str, facts: QuestionFacts) -> tuple[EntityRef, PlaceRef] | None:
    """``(actor, place)`` when the question names two countries, one as the place where something
    happens ("ataques con drones de EE.UU. en Pakistán") and the other not: the dashboard narrows
    any view to the documents naming a country (``precompute/docsets.naming_place``), so the
    stated place is the place filter and the other country the entity. None otherwise (one
    country, a pair compared, or no "en <país>")."""
    countries = list({e.value: e for e in facts.entities if e.category == "country"}.values())
    if len(countries) != 2:
        return None
    folded = fold_question(question)
    if re.search(r"(?<!\w)(?:entre|between|vs|versus|frente a|compar\w*)(?!\w)", folded):
        return None
    art = r"(?:(?:el|la|los|las|the|o|a)\s+)?"
    located = [
        c
        for c in countries
        if re.search(rf"(?<!\w)(?:en|in|em|no|na)\s+{art}{re.escape(fold_question(c.matched))}(?!\w)", folded)
    ]
    # "en Yemen y Somalia": a country coordinated with a located one is located too
    for c in countries:
        if c not in located and any(
            re.search(
                rf"(?<!\w){re.escape(fold_question(o.matched))}\s*(?:,|y|e|o|and)\s+{art}{re.escape(fold_question(c.matched))}(?!\w)",
                folded,
            )
            for o in located
        ):
            located.append(c)
    if len(located) != 1:
        return None
    (where,) = located
    (actor,) = [c for c in countries if c is not where]
    return actor, PlaceRef(where.value, where.name, "country", where.matched)


# A country as the agent of what the documents report: "los ataques con drones de Estados Unidos", "las
# pruebas antisatélite de Rusia", "la estrategia de IA de Chile": the actor, not the place mapped
_AGENT_OF = re.compile(
    r"(?<!\w)(?:ataques?|bombardeos?|pruebas?|ensayos?|tests?|programas?|estrategias?|operaciones|drones|satelites|armas|"
    r"misiles|politicas?|doctrinas?|fuerzas?|ejercitos?|capacidades|inversiones|despliegues?)(?:\s+[^\s,;.?]+){0,3}\s+"
    r"(?:de|del|de los|de la|de las|por parte de(?: la| los)?)\s*$"
)


def _located_country(question: str, first: str) -> bool:
    """Whether a country the question names is the territory of the view: the first view is the map
    of places (``documents_per_place`` filters on a country's ``place_id``; the timeline, network,
    matrix and quadrant have no place column, so a country there is the actor) and the question
    does not ask for the places named with it; or a territorial map (armed presence, early
    warnings), whose rows are municipalities and departments with no actor column a country could
    match: "¿Qué grupos criminales operan en Hallstatt, Austria?" asks for Austria's rows, of which
    there are none, never for every row under an entity filter the map cannot apply."""
    if first in _TERRITORIAL_MAPS:
        return True
    return first == "mapa_lugares" and not _COMENTION.search(fold_question(question))


# The documents' topic: "lugares mencionados en documentos sobre China" (the places named in documents
# about China: China is their actor); "¿qué lugares de Brasil aparecen en los documentos sobre…?"
# keeps Brasil the place
_TOPIC_OF = re.compile(
    r"(?<!\w)(?:documentos|docs|textos|informes|reportes|publicaciones|fuentes|documents|reports)\s+"
    r"(?:(?:que tratan|que hablan|relativos|referidos|centrados)\s+)?(?:sobre|acerca de|de|a|en|about|on)\s+"
    r"(?:(?:la|el|los|las|the)\s+)?$"
    # "los documentos de seguridad espacial donde figura Rusia": the documents the actor is in
    r"|(?<!\w)(?:documentos|docs|textos|informes|reportes|publicaciones)\b.{0,60}(?<!\w)(?:donde|en (?:los|las) que|en que)\s+"
    r"(?:figura|figuran|aparece|aparecen|sale|salen|se menciona|se nombra)\s+(?:(?:la|el)\s+)?$"
)
# A country named only as what a place borders: "San Miguel (Putumayo), frontera con Ecuador"
_BORDER_OF = re.compile(
    r"(?<!\w)(?:frontera|fronteras|limite|limites|limitrofe\w*|border)\s+(?:con|with)\s+(?:(?:el|la|the)\s+)?$"
)


def _agent_country(question: str, entity) -> bool:
    """Whether the country ``entity`` is written as the agent of a reported action ("los ataques con
    drones de Estados Unidos") or as the documents' topic ("documentos sobre China"): then it stays
    the entity even on the map of places."""
    if QuestionReader.is_demonym(entity.matched):
        return True  # "los ataques con drones estadounidenses": an adjective names an actor, never a place
    at = question.find(entity.matched)
    if at <= 0:
        return False
    before = fold_question(question[:at]) + " "
    # the documents' topic only when other places are what is asked ("lugares mencionados en documentos
    # sobre China"); "ubica los documentos que hablan de Brasil" locates Brazil itself
    asks_other_places = re.search(
        r"(?<!\w)(?:lugares|sitios|places|ubicaciones|territorios|municipios|departamentos|regiones|ciudades)(?!\w)",
        before,
    )
    return _AGENT_OF.search(before) is not None or (
        asks_other_places is not None and _TOPIC_OF.search(before) is not None
    )


def _written_in(name: str, text: str) -> bool:
    """Whether ``name`` is written in ``text`` as whole words, whatever the case ("eln" in "presencia
    del ELN"; "Tame" is not in "departamento")."""
    return re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", text.lower()) is not None


_TERRITORIAL_MAPS = frozenset({"mapa_presencia", "mapa_alertas"})

# A place written after a locative word: "en Hallstatt", "in Toronto", "cerca de Cancún", "en la
# ciudad de Lyon", "in the town of Hallstatt" (the level word and its article are no part of the name;
# an article with no level word makes the phrase no town's name: see ``unrecognised_places``)
_LOCATIVE = re.compile(
    r"(?<!\w)(?:en|in|em|cerca de|near|hacia|desde|around|alrededor de)\s+"
    r"(?P<article>(?:el|la|los|las|the|o|a)\s+)?"
    r"(?P<level>(?:municipio|ciudad|pueblo|localidad|provincia|estado|region|región|departamento|distrito|barrio|comuna|"
    r"city|town|village|province|state|region|municipality|district|neighbou?rhood)\s+(?:de|del|of)\s+)?"
    r"(?=[A-ZÁÉÍÓÚÑ])",
)
_PLACE_NAME = re.compile(
    r"[A-ZÁÉÍÓÚÑ][\wáéíóúñüÁÉÍÓÚÑÜ'’\-]*(?:\s+(?:(?:de|del|la|las|los|el|da|do)\s+)?[A-ZÁÉÍÓÚÑ][\wáéíóúñü'’\-]*)*"
)
_NOT_PLACES = frozenset(
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre "
    "january february march april may june july august september october november december "
    "lunes martes miercoles jueves viernes sabado domingo monday tuesday wednesday thursday friday saturday sunday".split()
)


# World regions and continents: written as places, never a gazetteer place either, but a scope the
# question states in words ("la política de IA en Latinoamérica"), not a town the view drops
_REGIONS = frozenset(
    fold_question(w)
    for w in (
        "Latinoamérica",
        "América Latina",
        "Latin America",
        "Iberoamérica",
        "Hispanoamérica",
        "Sudamérica",
        "Suramérica",
        "South America",
        "Centroamérica",
        "Central America",
        "Norteamérica",
        "North America",
        "América",
        "Americas",
        "Caribe",
        "Caribbean",
        "África",
        "Africa",
        "Europa",
        "Europe",
        "Asia",
        "Oceanía",
        "Oceania",
        "Medio Oriente",
        "Oriente Medio",
        "Oriente Próximo",
        "Middle East",
        "Sahel",
        "Amazonía",
        "Amazonia",
        "Amazon",
        "Andes",
        "Indo-Pacífico",
        "Indo-Pacific",
        "Ártico",
        "Arctic",
        "Antártida",
        "Antarctica",
        "Occidente",
        "the West",
        "Global South",
        "Sur Global",
    )
)


# The places are what the question asks for ("¿en qué municipios…?", "¿dónde…?", "which
# municipalities"): a name elsewhere in it is context ("soy profesora en Quito"), the view still answers
_ASKS_WHERE = re.compile(
    r"(?<!\w)(?:donde|en que (?:municipios|departamentos|lugares|regiones|paises|zonas|ciudades)|"
    r"cuales (?:municipios|departamentos|lugares|regiones)|where|which (?:municipalities|departments|places|regions))(?!\w)"
)

_PLACE_MAPS = frozenset({"mapa_presencia", "mapa_alertas", "mapa_lugares"})


def view_answers_without(question: str, vis: dict) -> bool:
    """Whether the view ``vis`` (``validate``'s proposal) still answers a question whose place was
    not recognised: it has another place filter, its first component is no map of places (a
    timeline over the question's topic), or the question asks where ("¿en qué municipios…?"). A map
    with no place filter for "¿Qué grupos operan en Cancún?" does not: its rows are other places."""
    first = (vis.get("componentes") or [{}])[0].get("tipo")
    return (
        bool((vis.get("filtros") or {}).get("lugar"))
        or first not in _PLACE_MAPS
        or bool(_ASKS_WHERE.search(fold_question(question)))
    )


def unrecognised_places(question: str, facts: QuestionFacts, reader: QuestionReader | None = None) -> list[str]:
    """The names the question writes as a place ("en Hallstatt, Austria", "in Toronto", "en la
    ciudad de Lyon") that the reading did not resolve: no gazetteer place, subregion or ambiguous
    place of ``facts``, no country or organisation (``understanding.name_sets``), no dictionary entity,
    and made of at least one word that is no everyday corpus word (``anchors.generic_words``: "en
    Derecho Internacional" is a topic) nor a month or weekday; not an acronym, a world region
    (``_REGIONS``) or a name ``reader`` (when given) resolves — unless the question writes it as a
    place of another country (``facts.places_abroad``: "Marsella, Francia"). Such a place cannot be a view's filter
    (the gazetteer has Colombian departments and municipalities and the countries), and a view
    without it would answer about other places; the caller says so (``figures.not_for_place``).
    Returns the names as written, in order, each once."""
    from radar_pipeline.agent.reading.anchors import generic_words, glossary_terms
    from radar_pipeline.agent.reading.understanding import name_sets

    read = [fold_question(x.matched) for x in (*facts.places, *facts.ambiguous, *facts.entities) if x.matched]
    known = {n for ns in name_sets() for n in ns.names}
    out: list[str] = []
    for cue in _LOCATIVE.finditer(question or ""):
        if cue.group("article") and not cue.group("level"):
            # "en el Pacífico", "en la Luna", "en la Mission Shakti": a region, a body or an event
            # with its article; a town's name takes none unless it is its own ("en La Habana")
            continue
        m = _PLACE_NAME.match(question, cue.end())
        if m is None:
            continue
        name = m.group(0).strip()
        folded = fold_question(name)
        if not folded or folded in known or folded in _REGIONS or any(folded in r or r in folded for r in read if r):
            continue
        abroad = any(fold_question(a) in folded for a in facts.places_abroad)
        if name.split()[0].replace("-", "").isupper():  # an acronym ("en LEO", "en IA de Oxford Insights")
            continue
        if folded in glossary_terms():  # a domain term written capitalised
            continue
        if reader is not None and not abroad and reader.resolve_place(name):
            continue  # a place the resolver used as another's qualifier ("Argelia en Antioquia")
        words = [w for w in folded.split() if len(w) > 2 and w not in _NOT_PLACES and w not in known]
        if not abroad and not any(w not in generic_words() for w in words):
            continue
        if name not in out:
            out.append(name)
    return out


def propose(question: str, facts: QuestionFacts) -> tuple[list[str], dict]:
    """Rule-based proposal (offline visualizer): components from ``intent.classify``, filters from
    ``facts`` (``QuestionReader.read``). A view is always proposed: a question routed here with no
    component rule gets the timeline (or the place map when it names a place)."""
    armed = any(e.category == "armed_group" for e in facts.entities)
    intent = classify(
        question,
        has_armed_group=armed,
        has_place=bool(facts.places or facts.ambiguous),
        has_country=any(e.category == "country" for e in facts.entities),
    )
    comps = intent.components or (["mapa_lugares"] if facts.places else ["linea_tiempo"])
    # only a phenomenon the question states: alerts and armed presence are territorial anyway and
    # their aggregates have no phenomenon column, so an implied one would filter nothing
    phen = stated_phenomenon(question)
    if facts.learned is not None:
        # the learned reader where the rules are weak (agent.learned: a fallback or a cued view, no stated phenomenon)
        comps = combine_components(comps, intent.reasons if intent.components else ["sin vista"], facts.learned)
        learned_phen = combine_phenomenon(phen, facts.learned)
        # armed presence and early warnings are territorial by what they count: a model's other
        # phenomenon there ("presencia armada" read as the navy, AI) contradicts the view itself
        if phen is not None or learned_phen in (None, "territorial") or comps[0] not in _TERRITORIAL_MAPS:
            phen = learned_phen
    period = facts.period
    span_text = question
    if (
        intent.view_text is not None
        and period is not None
        and fold_question(period.text) not in fold_question(intent.view_text)
        and (period.closed and period.desde == period.hasta)
    ):
        # "la línea de tiempo de los tests ASAT y explícame qué pasó con el test ruso de 2021": a
        # year only in the part to explain is a requirement of the answer, not the view's filter (a
        # range or an open period there, "…y explica los patrones entre 2018 y 2022", still bounds
        # the view the explanation reads)
        period = parse_period(intent.view_text, period.reference_year)
        span_text = intent.view_text
    desde, hasta = (period.desde, period.hasta) if period else (None, None)
    if period is None:
        # "solo 2022 y 2023", "drones 2010 2020": a view over loose years spans them
        years = year_span(span_text)
        if len(years) >= 2:
            desde, hasta = min(years), max(years)
    entity, place = facts.entity, facts.place
    if intent.view_text is not None:
        # "la red de actores alrededor de Rusia … y explica qué papel juega China", "la red del
        # programa Replicator y explícame su relación con el Pentágono": the filter comes from the
        # part that asks for the view; the explanation's actors are not
        # (compared without case: a name found in a question typed in lower case is matched upper-cased)
        view_facts = replace(facts, entities=[e for e in facts.entities if _written_in(e.matched, intent.view_text)])
        entity = (
            view_facts.entity
            or _view_subject(intent.view_text, view_facts, comps[0])
            or named_program(view_facts, intent.view_text)
        )
    elif entity is None:
        entity = _view_subject(question, facts, comps[0]) or named_program(facts, question)
    if entity is None and place is None and intent.view_text is None:
        entity, place = _actor_and_country(question, facts) or (None, None)
    if (
        entity is not None
        and entity.category == "country"
        and _BORDER_OF.search(fold_question(question[: max(0, question.find(entity.matched))]) + " ")
    ):
        entity = None  # the border of a place: context, not the view's actor
    if entity is not None and _paired(question, entity):
        entity = None  # "relaciones entre el ELN y las disidencias": two actors, no single filter
    if (
        entity is not None
        and place is None
        and entity.category == "country"
        and _located_country(question, comps[0])
        # on a territorial map, only where the question names no Colombian place: a country read
        # from a list of municipalities ("Manizales, Pereira y Armenia") is no territory of its own
        and not (comps[0] in _TERRITORIAL_MAPS and facts.places)
        and not _agent_country(question, entity)
    ):
        # "¿Dónde se nombra a Venezuela?": the country is the territory the map of places shows
        # (the dashboard's place filter takes countries); an actor of other views stays the entity
        place = PlaceRef(entity.value, entity.name, "country", entity.matched)
        entity = None
    if intent.view_text is not None and entity is not None and not _written_in(entity.matched, intent.view_text):
        entity = None  # named only in the part to explain ("…y explícame qué dice la ESA"): no view filter
    if intent.view_text is not None and facts.places:
        # likewise a place: "la presencia del ELN en Arauca y explícame por qué se concentra en
        # Saravena": the municipalities are what the explanation is about, the map is of Arauca
        in_view = [p for p in facts.places if _written_in(p.matched, intent.view_text)]
        if in_view and len(in_view) < len(facts.places):
            place = replace(facts, places=in_view).place
    filtros = {
        "fenomeno": phen,
        "desde": desde,
        "hasta": hasta,
        "entidad": entity.value if entity else None,
        "lugar": place.place_id if place else None,
    }
    return comps[:3], filtros
