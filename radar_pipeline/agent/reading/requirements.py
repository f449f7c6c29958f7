"""The question's coverage requirements and terms: what a run must find before it may close.

``extract_requirements(question, period)`` returns the ``Requirement``s (SPEC "coverage
requirements"): every year of a comparison (two or more distinct years), every year of a closed
period of more than one year (one ``range`` requirement per year), every item of an explicit list
(proper nouns / acronyms, or items with a glossary term), every named country, armed group or
organisation (``understanding.name_sets``), and every Colombian place the question is about
(``place_requirements``: a municipality, a department or a subregion the question reader resolved,
met only where the place itself is named, not inside a longer name). ``glossary_terms`` reads the reviewed Spanish→English
domain glossary; ``keywords`` the content words. The orchestrator (``roles.router.plan``), the
analyst, the writer's sentence selection, the anchors and the premise check read them from here:
a reading of the question, below every role (see ``roles.router``'s module doc for the periods).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from radar_pipeline.agent.reading.periods import Period, parse_period
from radar_pipeline.agent.reading.rules import rulebook
from radar_pipeline.agent.reading.understanding import name_sets
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
    """One coverage requirement: ``kind`` year | range | item | country | group | lugar; met when a
    read passage mentions one of ``aliases`` (folded, word boundaries). A ``range`` requirement is one
    year (``label`` ``"2017"``) of the question's closed period ``span`` (inclusive ``(desde,
    hasta)``); it is also met by a passage whose document is dated in that year (``met_by_passage``).
    ``excluding``: folded longer names that contain an alias but name something else ("valle del
    cauca", "bajo cauca", "rio cauca" for the department of Cauca); a mention inside one of them does
    not meet the requirement."""

    kind: str
    label: str
    aliases: tuple[str, ...]
    span: tuple[int, int] | None = None
    excluding: tuple[str, ...] = ()
    # a place's department written beside it to qualify it ("Riosucio, Chocó" → "choco"), folded:
    # no name of what the question is about
    qualifiers: tuple[str, ...] = ()

    def met_by(self, folded_text: str) -> bool:
        """Does the folded text mention one of the aliases (outside the ``excluding`` names)?"""
        if self.excluding:
            folded_text = _blank(self.excluding).sub(" ", folded_text)
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


@functools.lru_cache(maxsize=256)
def _blank(phrases: tuple[str, ...]) -> re.Pattern:
    """One pattern for the folded ``phrases`` (word boundaries), longest first."""
    alts = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<![\w])(?:{alts})(?![\w])")


# A river takes the name of the place it crosses ("el río Cauca", "the Arauca River"): a mention of
# the river is no mention of the place
_RIVER_FORMS = ("rio {}", "{} river", "river {}", "cuenca del rio {}", "cuenca del {}")


_NEXT_CAPITAL = re.compile(r"\s+(?:(?:de|del|la|las|los|y|e)\s+)?([A-ZÁÉÍÓÚÑ][\wáéíóúñü]+)")


def _inside_longer_name(question: str, matched: str, others: list[str]) -> bool:
    """Is ``matched`` (a place name as the question writes it) the start of a longer capitalised
    name ("la Fundación Nacional de Ciencias Naturales de China": the municipality of Fundación is
    not what it names)? A capitalised word that starts another place of the question ("Tumaco
    Nariño", typed without a comma) does not make it so."""
    at = question.find(matched) if matched else -1
    if at < 0:
        return False
    m = _NEXT_CAPITAL.match(question, at + len(matched))
    return bool(m) and not any(o and question.startswith(o, m.start(1)) for o in others)


def place_requirements(places, question: str | None = None) -> list[Requirement]:
    """One ``lugar`` requirement per Colombian place the question is about: ``places`` are
    ``understanding.PlaceRef``s (a municipality, a department or a subregion the question reader
    resolved; a department written only to qualify a municipality, "Riosucio, Chocó", is not among
    them). Aliases: the place's folded names (``PlaceRef.names``, its name when none); excluding:
    the longer gazetteer and subregion names that contain one of them (``PlaceRef.longer``: "valle
    del cauca", "bajo cauca", "san jacinto del cauca") and the river named after it. Countries are
    ``country`` requirements (``name_sets``), not places here. With ``question``, a place read at the
    start of a longer capitalised name (``_inside_longer_name``) is no requirement."""
    out: list[Requirement] = []
    seen: set[str] = set()
    places = list(places or ())
    # "Riosucio, Chocó": a department written beside a municipality of its own qualifies it
    qualifying = {p.department_code for p in places if p.level == "municipality" and p.department_code}
    for ref in places:
        if getattr(ref, "level", None) not in ("municipality", "department", "subregion"):
            continue
        if ref.level == "department" and ref.place_id.split(":")[-1] in qualifying:
            continue
        if question and _inside_longer_name(question, ref.matched, [p.matched for p in places if p is not ref]):
            continue
        names = tuple(
            dict.fromkeys(n for n in (getattr(ref, "names", ()) or (fold_question(ref.name),)) if len(n) >= 3)
        )
        if not names or ref.place_id in seen:
            continue
        seen.add(ref.place_id)
        rivers = tuple(form.format(n) for n in names for form in _RIVER_FORMS)
        excluding = tuple(dict.fromkeys((*getattr(ref, "longer", ()), *rivers)))
        qualifiers = tuple(
            fold_question(p.matched)
            for p in places
            if ref.level == "municipality"
            and p.level == "department"
            and p.place_id.split(":")[-1] == ref.department_code
        )
        out.append(Requirement("lugar", ref.name, names, excluding=excluding, qualifiers=qualifiers))
    return out


_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)")
_PN_WORD = r"[A-ZÁÉÍÓÚÑ][\wÁÉÍÓÚÑáéíóúñü\.\-]*"
_PN = rf"(?:{_PN_WORD}(?:\s+(?:de|del|la|las|los|da|do)?\s*{_PN_WORD})*(?:\s*\([A-ZÁÉÍÓÚÑ]{{2,8}}\))?)"
_PN_LIST = re.compile(rf"({_PN}(?:\s*,\s*{_PN})*\s*,?\s+(?:y|e|o|u|and|or)\s+{_PN})")
_LC_LIST = re.compile(r"([^,;:¿?¡!.]{3,80}(?:,\s*[^,;:¿?¡!.]{2,80}){1,6},?\s+(?:y|e|o|u|and|or)\s+[^,;:¿?¡!.]{2,80})")
_ACRONYM = re.compile(r"\(([A-ZÁÉÍÓÚÑ]{2,8})\)")
# The words of lists and keywords (question words, articles, item stops, stop words): data in
# precompute/data/reading_rules.yaml
_RULES = rulebook()
_QWORDS = _RULES.word_set("requirement_question_words")


_ARTICLES = _RULES.pattern("requirement_articles")
_ITEM_STOP = _RULES.word_set("requirement_item_stop")


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


_STOP = frozenset(fold_question(w) for w in _RULES.word_set("keyword_stop_words"))


def keywords(question: str) -> list[str]:
    """Content words of the question (folded, stop words out), in order."""
    return [w for w in re.findall(r"\w+", fold_question(question)) if w not in _STOP and len(w) > 2 or w.isupper()]
