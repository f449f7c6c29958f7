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

from radar_pipeline.agent import intent
from radar_pipeline.agent.learned import combine_route
from radar_pipeline.agent.periods import Period, parse_period
from radar_pipeline.agent.understanding import QuestionFacts, name_sets
from radar_pipeline.textfold import fold_question

try:  # the reviewed domain glossary of the retrieval package (Spanish → English)
    from radar_pipeline.retrieval.glossary import glossary_matches as _glossary_matches
except ImportError:  # pragma: no cover - glossary not present in this checkout
    _glossary_matches = None


def glossary_terms(text: str) -> list[tuple[str, tuple[str, ...], str]]:
    """``[(spanish, english terms, domain)]`` of the glossary entries found in ``text`` ([] without a glossary)."""
    if _glossary_matches is None:
        return []
    try:
        return [(e.spanish, tuple(e.english), e.domain) for e in _glossary_matches(text)]
    except Exception:  # noqa: BLE001 - a broken glossary file must not break the agent
        return []


def _find_all(folded: str, name: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", folded) is not None


def mentions(text_folded: str, aliases: tuple[str, ...] | list[str]) -> bool:
    """Does folded ``text`` mention any alias (word boundaries)?"""
    return any(_find_all(text_folded, a) for a in aliases if a)


# --------------------------------------------------------------------------- requirements
@dataclass(frozen=True)
class Requirement:
    """One coverage requirement: ``kind`` year | range | item | country | group; met when a read
    passage mentions one of ``aliases`` (folded, word boundaries). A ``range`` requirement is one
    year (``label`` ``"2017"``) of the question's closed period ``span`` (inclusive ``(desde,
    hasta)``); it is also met by a passage whose document is dated in that year (``met_by_passage``)."""

    kind: str
    label: str
    aliases: tuple[str, ...]
    span: tuple[int, int] | None = None

    def met_by(self, folded_text: str) -> bool:
        """Does the folded text mention one of the aliases?"""
        return mentions(folded_text, self.aliases)

    def describe(self) -> str:
        """``kind: label`` for a model's prompt; a ``range`` year also names its period."""
        if self.kind == "range" and self.span:
            return f"año {self.label} del periodo {self.span[0]}–{self.span[1]}"
        return f"{self.kind}: {self.label}"

    def met_by_passage(self, folded_text: str, publication_year: int | None = None) -> bool:
        """``met_by``, or, for a ``range`` year, a passage whose document's publication year
        (``publication_year``, None when undated or unknown) is that year."""
        if self.met_by(folded_text):
            return True
        return self.kind == "range" and publication_year is not None and str(publication_year) == self.label


_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)")
_PN_WORD = r"[A-ZÁÉÍÓÚÑ][\wÁÉÍÓÚÑáéíóúñü\.\-]*"
_PN = rf"(?:{_PN_WORD}(?:\s+(?:de|del|la|las|los|da|do)?\s*{_PN_WORD})*(?:\s*\([A-ZÁÉÍÓÚÑ]{{2,8}}\))?)"
_PN_LIST = re.compile(rf"({_PN}(?:\s*,\s*{_PN})*\s*,?\s+(?:y|e|o|u|and|or)\s+{_PN})")
_LC_LIST = re.compile(r"([^,;:¿?¡!.]{3,80}(?:,\s*[^,;:¿?¡!.]{2,80}){1,6},?\s+(?:y|e|o|u|and|or)\s+[^,;:¿?¡!.]{2,80})")
_ACRONYM = re.compile(r"\(([A-ZÁÉÍÓÚÑ]{2,8})\)")
_QWORDS = {
    "cómo",
    "como",
    "qué",
    "que",
    "cuál",
    "cuáles",
    "cual",
    "cuales",
    "de",
    "en",
    "por",
    "para",
    "dónde",
    "quién",
    "quiénes",
}


_ARTICLES = r"(?:el|la|los|las|un|una|unos|unas|del|de|para|como|en|sobre|the|a|an|of)"
_ITEM_STOP = {
    "que",
    "para",
    "por",
    "en",
    "con",
    "utilizados",
    "utilizadas",
    "usados",
    "usadas",
    "sobre",
    "a",
    "al",
    "frente",
    "entre",
    "desde",
    "hasta",
    "y",
    "e",
    "o",
    "that",
    "for",
    "in",
    "with",
    "by",
}


def _item_requirement(item: str, proper_list: bool) -> Requirement | None:
    """A requirement for one list item: proper nouns/acronyms (and gazetteer names) match by name;
    common-noun items by their head glossary term (Spanish + English); None when nothing to match."""
    item = item.strip(" ¿?¡!.,;:")
    item = re.sub(r"^(?:el|la|los|las|un|una|unos|unas|the|a|an)\s+", "", item, flags=re.I)
    if not item:
        return None
    folded = fold_question(item)
    aliases: list[str] = []
    label = item
    for ns in name_sets():
        if ns.named_in(folded):
            aliases += list(ns.aliases)
            label = ns.label if not proper_list else item
    if proper_list:
        acr = _ACRONYM.findall(item)
        aliases += [fold_question(_ACRONYM.sub("", item).strip())] + [fold_question(a) for a in acr]
        for spanish, english, _ in glossary_terms(item):
            aliases += [fold_question(spanish)] + [fold_question(e) for e in english]
    elif not aliases:
        terms = glossary_terms(item)
        if terms:
            spanish, english, _ = terms[0]
            aliases += [fold_question(spanish)] + [fold_question(e) for e in english]
    aliases = [a for a in dict.fromkeys(aliases) if len(a) >= 2]
    if not aliases:
        return None
    return Requirement("item", label, tuple(aliases))


def _first_item(segment: str) -> str:
    words = segment.split()
    idx = max((i for i, w in enumerate(words) if re.fullmatch(_ARTICLES, w, flags=re.I)), default=-1)
    return " ".join(words[idx + 1 :][-6:])


def _last_item(segment: str) -> str:
    words = re.sub(r"^(?:el|la|los|las|un|una|unos|unas|the)\s+", "", segment.strip(), flags=re.I).split()
    out = []
    for w in words:
        if out and fold_question(w) in _ITEM_STOP:
            break
        out.append(w)
    return " ".join(out[:4])


def range_requirements(period: Period | None) -> list[Requirement]:
    """One ``range`` requirement per year of a closed ``period`` of more than one year, in order
    ([] for None, an open period or a single year)."""
    if period is None or not period.closed or period.hasta <= period.desde:
        return []
    span = (period.desde, period.hasta)
    return [Requirement("range", str(y), (str(y),), span) for y in period.years()]


def extract_requirements(question: str, period: Period | None = None) -> list[Requirement]:
    """Coverage requirements of a question (see module docstring). Deterministic, no model.

    ``period``: the question's period as ``understanding.QuestionReader`` read it (a relative one
    resolved against the newest dated document); None reads it here with ``periods.parse_period``
    and no reference year (absolute periods only)."""
    if period is None:
        period = parse_period(question)
    reqs = range_requirements(period)
    years = list(dict.fromkeys(_YEAR.findall(question)))
    if reqs:  # the period's years are range requirements; a year written outside it stays a year
        inside = {r.label for r in reqs}
        reqs += [Requirement("year", y, (y,)) for y in years if y not in inside]
    elif len(years) >= 2:
        reqs += [Requirement("year", y, (y,)) for y in years]
    items: list[tuple[str, bool]] = []
    for m in _PN_LIST.finditer(question):
        parts = re.split(r"\s*,\s*|\s+(?:y|e|o|u|and|or)\s+", m.group(1))
        parts = [
            p
            for p in parts
            if p
            and fold_question(p) not in _QWORDS
            and not re.match(r"^(?:¿|Cómo|Qué|Cuál|Cuáles|De|En|Por|Para)\b", p)
        ]
        if len(parts) >= 2:
            items += [(p, True) for p in parts]
    for m in _LC_LIST.finditer(question):
        span = m.group(1)
        if any(span in it or it in span for it, _ in items):
            continue
        parts = re.split(r"\s*,\s*|\s+(?:y|e|o|u|and|or)\s+", span)
        if len(parts) < 3:
            continue
        parts[0] = _first_item(parts[0])
        parts[-1] = _last_item(parts[-1])
        items += [(p, False) for p in parts]
    seen: set[str] = set()
    for it, proper in items:
        r = _item_requirement(it, proper)
        if r and fold_question(r.label) not in seen:
            seen.add(fold_question(r.label))
            reqs.append(r)
    folded = fold_question(question)
    covered = " ".join(a for r in reqs for a in r.aliases)
    for ns in name_sets():  # every named country or organisation (gazetteer and entity dictionary)
        hit = ns.named_in(folded)
        if hit and not mentions(covered, [hit]) and all(r.label != ns.label for r in reqs):
            reqs.append(Requirement(ns.kind, ns.label, ns.aliases))
    return reqs


# --------------------------------------------------------------------------- routing
_GREETING = re.compile(
    # an interjection may open it: "oye, ¿cómo estás?", "bueno, hola"
    r"^(?:(?:oye|oiga|ey|eh|mira|bueno|ok|okay|listo|ah|ahh|uy|hey)\W+)?(?:hola|holi|buen(?:os|as)? (?:dias|tardes|noches)|saludos|hey|hi|hello|good (?:morning|afternoon|evening)|"
    r"que tal|como estas|como esta|ola|oi|bom dia|boa tarde|buenas|quiubo|quihubo|que hubo|que mas pues|que onda)\b"
)
_STRETCHED = re.compile(r"([a-z])\1{2,}")
_THANKS = re.compile(
    r"^(?:muchas |mil |un millon de |muchisimas )?(?:gracias|thanks|thank you|obrigad[oa]|perfecto,? gracias|adios|chao|hasta luego|bye)\b"
    # a farewell anywhere in a short message: "Listo, chao, nos vemos mañana"
    r"|(?<!\w)(?:chao|adios|hasta luego|hasta manana|hasta pronto|nos vemos|bye|goodbye|tchau|ate logo|eso es todo|"
    r"es todo por hoy|por hoy es todo|nada mas por hoy|that's all|thats all)(?!\w)"
)
# Thanks anywhere in a short message ("ok gracias", "Perfecto, muchas gracias por la información");
# "gracias a…" is a preposition ("gracias a los drones…"), not thanks.
_THANKS_ANYWHERE = re.compile(
    r"(?<!\w)(?:gracias(?! a(?:l)?\b)|thanks|thank you|thx|obrigad[oa]|valeu|te lo agradezco|se agradece|"
    r"muy amable|agradecid[oa])(?!\w)"
)
# What turns a thanks into a new request: an interrogative or a request verb after it.
_NEW_REQUEST = re.compile(
    r"(?<!\w)(?:que|como|cual|cuales|donde|cuando|quien|quienes|cuanto|cuantos|por que|what|how|which|where|when|who|why|"
    r"dime|muestra\w*|muestrame|explica\w*|necesito|quiero|puedes|podrias|ahora|tambien|ademas|busca|compara|"
    r"tell me|show me|explain|can you|could you|now|also|quais|mostre|explique)(?!\w)"
)
# A request verb (imperative or "can you…"): a new request even without a question mark
_REQUEST_VERB = re.compile(
    r"(?<!\w)(?:dime|muestra\w*|muestrame|explica(?:me|melo|mela|nos|r)?|necesito|quiero|puedes|podrias|busca\w*|compara\w*|dame|"
    r"grafica\w*|pinta\w*|ubica\w*|resume\w*|haz|hazme|tell me|show me|explain|can you|could you|mostre|explique)(?!\w)"
)
_CAPABILITIES = re.compile(
    r"(?:quien eres|que eres|quien te (?:programo|creo|hizo|entreno|diseno|construyo)|eres (?:una persona|un humano|humano|un robot|una ia|real)|como te llamas|cual es tu nombre|"
    r"que puedes hacer|que sabes hacer|como funcionas|para que sirves|who are you|what can you do|ayuda$|^help$|^ayuda\b)"
)
_DOMAIN = re.compile(
    r"(?<!\w)(?:ia|ai|inteligencia|artificial|militar\w*|military|defensa|defense|defence|segur\w*|security|armad\w*|arma\w*|weapon\w*|"
    r"guerra\w*|war\w*|conflict\w*|dron\w*|autonom\w*|espaci\w*|space|satel\w*|orbit\w*|asat|antisatel\w*|debris|desech\w*|"
    r"ciber\w*|cyber\w*|nuclear\w*|misil\w*|missil\w*|grupo\w*|group\w*|crimen|crimin\w*|narco\w*|droga\w*|drug\w*|miner\w*|"
    r"ilegal\w*|ilicit\w*|illegal|territor\w*|colombia\w*|amazon\w*|frontera\w*|border\w*|alerta\w*|defensoria|clan|"
    r"disiden\w*|violencia|violen\w*|estado\w*|state\w*|polit\w*|estrateg\w*|strateg\w*|tecnolog\w*|technolog\w*|amenaza\w*|"
    r"threat\w*|riesgo\w*|risk\w*|ejercito|army|fuerza\w*|forces|policia|police|terror\w*|insurg\w*|paz|peace|acuerdo\w*|"
    r"tratado\w*|treaty|gps|spoofing|jamming|interferencia\w*|vigilancia|surveillance|inteligencia|intelligence|"
    r"municipio\w*|departamento\w*|region\w*|america latina|latin america|mapa|map|documento\w*|document\w*|corpus|fuente\w*|"
    r"semiconductor\w*|chip\w*|algoritm\w*|datos|data|economia\w*|econom\w*|oro|gold|coca\w*|cocaina|contrabando|trafico|"
    r"traffick\w*|extorsion\w*|secuestro\w*|desplaz\w*|reclut\w*|comunidad\w*|poblacion|civil\w*|humanitar\w*|derecho\w*|"
    r"law|gobierno|government|corea)"
)
# A named country, armed group or organisation (``understanding.name_sets``) is on topic too.
# Weather, sports, food and money chatter: off topic even when it names a country or a city
# ("¿Cómo quedó la Selección Colombia?"), unless the message also carries a security word.
_CHATTER = (
    r"que temperatura|temperatura (?:hace|de hoy|en|para|manana)|hace (?:frio|calor)|(?:va a |vai )?(?:llover|chover)|"
    r"lluvia\w*|lloviendo|soleado|nublado|previsao do tempo|tempo (?:em|para|hoje|amanha)|weather|forecast|"
    r"is it (?:going to )?rain\w*|temperature (?:in|today|tomorrow)|"
    r"peliculas?|peli|series? de (?:tv|television|netflix)|netflix|fin de semana|(?:que|q) hora es|"
    r"seleccion colombia|selecao|(?:la|una|the) liga|champions(?: league)?|copa (?:america|libertadores|del mundo|do mundo)|"
    r"goleador\w*|mundial|world cup|who won the (?:match|game|final|league|cup)|quien va a ganar (?:el|la)|"
    r"partido de (?:futbol|ayer|hoy)|campeonato|"
    # who won a game, the time of day: chatter even with a country or a city in it ("¿quién ganó el
    # partido de Colombia anoche?", "¿qué hora es en Cali?")
    r"quien gano (?:el|la|los|las) (?:partido|juego|clasico|final|copa|liga|carrera|pelea|etapa)|"
    r"(?:el |un )?partido (?:de|del|entre) (?:\w+ ){1,3}?(?:anoche|ayer|hoy|manana|esta noche|el domingo|el sabado)|"
    r"que hora es|(?:la )?hora (?:local|actual|exacta) (?:en|de)|cual es la hora (?:en|de|actual)|what time is it|"
    r"a que hora (?:juega|empieza|es el partido|comienza el partido)|"
    r"brasileirao|nba|nfl|formula 1|tour de francia|"
    r"como se (?:prepara|cocina|hace) (?:un |una |el |la )?(?:[\w]+ ){0,2}?(?:paisa|ajiaco|arepa\w*|sancocho|tamal\w*|"
    r"empanada\w*|pan|torta|postre|sopa|arroz|pollo|carne|pescado|ensalada|salsa|cafe|jugo|bebida|coctel|plato|comida)|"
    r"receita\w*|comida|ingredientes|ingredients|"
    r"(?:precio|cotizacion|valor|cuanto esta|cuanto vale) (?:del |el )?(?:dolar|euro|bitcoin)|dolar hoy|tasa de cambio|bitcoin"
)
# A leisure recommendation is off topic whatever its subject ("una película de guerra", "una serie sobre espías")
_LEISURE = re.compile(
    r"(?<!\w)(?:cuentame|dime|echame|hazme|escribeme) un (?:chiste|poema|cuento|chascarrillo|haiku)(?!\w)|"
    r"(?<!\w)recomienda\w* (?:una|un|alguna|algun|unas|unos) (?:buena |buen )?(?:pelicula|peli|serie|novela|cancion|"
    r"restaurante|plan|viaje|videojuego|juego)s?(?!\w)"
)
_STRONG_DOMAIN = re.compile(
    r"(?<!\w)(?:militar\w*|military|defensa|defense|defence|armad\w*|armas?|weapon\w*|guerra\w*|war|conflict\w*|dron\w*|"
    r"satel\w*|espaci\w*|space|orbit\w*|ciber\w*|cyber\w*|nuclear\w*|misil\w*|crimen|crimin\w*|narco\w*|ilegal\w*|"
    r"farc|eln|disiden\w*|violencia|terror\w*|inteligencia artificial|ia|ai|alerta\w*|defensoria|amenaza\w*|threat\w*|"
    r"seguridad|security|ataque\w*|attack\w*|extorsion\w*|secuestro\w*|desplaz\w*|reclut\w*)(?!\w)"
)
_OFF_TOPIC = re.compile(
    r"(?:que tiempo (?:va a )?(?:hace|hara|hacer)|que clima|clima (?:hace|hoy)|pronostico del tiempo|va a llover|temperatura de hoy|(?:el|del) clima (?:en|de|para|este|hoy|manana)|"
    r"como (?:va a estar|estara) el clima|quien gano|clasico|mundial de futbol|liga (?:betplay|de futbol)|(?<!\w)gol(?:es)?(?!\w))|"
    r"(?<!\w)(?:" + _CHATTER + r")(?!\w)|"
    r"(?<!\w)(?:receta\w*|recipe\w*|cocina\w*|cook\w*|futbol|football|soccer|partido de|equipo de futbol|horoscopo|"
    r"chiste\w*|joke\w*|poema\w*|poem\w*|cancion\w*|song\w*|pelicula\w*|movie\w*|serie de tv|novela|clima de hoy|"
    r"weather|tiempo (?:hace|hara)|pizza|pasta|tarta|pastel|cafe|vino|cerveza|dieta|ejercicio fisico|gimnasio|"
    r"maquillaje|moda|celebridad\w*|farandula|videojuego\w*|video game\w*|mascota\w*|perro\w*|gato\w*|vacaciones|"
    r"(?:tu|su) (?:\w+ )?favorit[oa]s?|hotel\w*|restaurante\w*|almorzar|almuerzo\w*|cenar|desayunar|donde comer|turismo|playas?|tiquetes?|capital de(?!l\b)|cuantos anos tiene|traduce|translate|escribe un (?:poema|cuento|ensayo)|"
    r"matematica\w*|ecuacion|integral de|derivada|programa en python|codigo en|javascript)"
)
# A direction asked with a confirmation tag: "¿crece o no?", "¿va subiendo, no?"
_TREND_TAG = re.compile(
    r"(?<!\w)(?:crece\w*|sube\w*|suben|subiendo|baja\w*|aumenta\w*|disminuye\w*|cae|caen|decae\w*)\s*,?\s*"
    r"(?:o no|o que|no|verdad)(?!\w)"
)
_PHEN_RULES = {
    "ai_military": r"inteligencia artificial|(?<!\w)ia(?!\w)|(?<!\w)ai(?!\w)|dron\w*|autonom\w*|algoritm\w*|semiconductor\w*|aprendizaje automatico|machine learning|armas autonomas|enjambre\w*|targeting|nbqr|cbrn",
    "space_security": r"espaci\w*|satel\w*|orbit\w*|antisatel\w*|asat|desechos|debris|gps|spoofing|guerra electronica|energia dirigida|constelacion\w*",
    "territorial": r"grupos? armad\w*|(?<!\w)gao\w*|(?<!\w)eln(?!\w)|farc|disiden\w*|mineria|narco\w*|crimen organizado|economias? ilicit\w*|defensoria|alertas? temprana\w*|municipio\w*|departamento\w*|colombia\w*|amazon\w*|territori\w*|control social|contrabando",
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


_STOP = set(
    fold_question(w)
    for w in """
el la los las un una unos unas de del al a en y o u e que qué cómo como cuál cuáles cual cuales por para con sin sobre entre
se su sus lo le les es son ha han han sido está están este esta estos estas ese esa esos esas más mas muy ya no ni
qué quién quiénes dónde cuándo cuánto cuántos manera forma modo tiene tienen tendría hay existen existe frente
the of and or to in on for with by is are what how which why who when where does do
""".split()
)


def keywords(question: str) -> list[str]:
    """Content words of the question (folded, stop words out), in order."""
    return [w for w in re.findall(r"\w+", fold_question(question)) if w not in _STOP and len(w) > 2 or w.isupper()]


@dataclass
class Plan:
    kind: str
    ruta: str
    formulations: list[str] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    phenomenon: str | None = None
    reason: str = ""


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


def plan(question: str, facts: QuestionFacts | None = None) -> Plan:
    """Route and decompose ``question`` with rules (offline orchestrator). ``facts``: what
    ``understanding.QuestionReader`` read in it (places, entities), which the route rules use, and
    its period, which the coverage requirements use (``extract_requirements``)."""
    q = " ".join(question.split())
    folded = re.sub(r"^[\W_]+", "", fold_question(q))
    period = facts.period if facts is not None else None
    reqs = extract_requirements(q, period)
    phen = classify_phenomenon(q)
    words = re.findall(r"\w+", folded)
    topical = _DOMAIN.search(folded) is not None
    named = any(ns.named_in(folded) for ns in name_sets())
    has_domain = topical or named
    # letters stretched in chat ("holaaa", "buenasss", "graciaaas", "chaooo"): no Spanish word has a
    # letter three times in a row, so a run of three or more is one letter for the small-talk words
    chat = _STRETCHED.sub(r"\1", folded)
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
    read = intent.classify(
        q,
        has_armed_group=bool(facts) and any(e.category == "armed_group" for e in facts.entities),
        has_place=bool(facts and (facts.places or facts.ambiguous)),  # "¿qué grupos hay en Miraflores?" (two of them)
        has_country=bool(facts) and any(e.category == "country" for e in facts.entities),
    )
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
    from radar_pipeline.agent.premise import extract_premise  # premise → writer → router: import late

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
    return Plan("question", ruta, forms[:3], reqs, phen, reason="pregunta")
