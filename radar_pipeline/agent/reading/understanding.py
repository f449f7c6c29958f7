"""What a question names: its period, its places and its entities, resolved against Radar's own
gazetteer and entity dictionary (the ones the precomputes count with), never a second list.

``QuestionReader.read(question)`` returns ``QuestionFacts``:

* ``period`` — ``periods.parse_period`` with the reader's ``reference_year`` (the newest dated
  document) for relative expressions;
* ``places`` — Colombian departments and municipalities (Bogotá D.C. apart from Cundinamarca) found
  by ``precompute.places.Gazetteer`` with its rules: cue words ("el municipio de Arauca"), a
  department written next to a municipality ("Toribío, Cauca"), homonyms, and decoys (every
  entity alias, so "Autodefensas Gaitanistas de Colombia" names no place);
* ``ambiguous`` — a name the gazetteer leaves ``unresolved`` ("La Unión": four departments):
  never forced onto one, and the answer says so (``describe_ambiguity``);
* ``entities`` — entries of ``precompute/data/entities.yaml`` (armed groups, actors, programs,
  technologies) and countries other than Colombia (the corpus' default scope), as filter values:
  the entity id, or ``country:<ISO3>``.

The period is read with typos in its trigger words corrected by the view vocabulary
(``views.view_vocabulary``, the accessor of ``precompute/data/views.yaml``).

``name_sets()`` is the one accessor the coverage requirements (``router``) and the premise check
(``premise``) read countries and organisations through: every country of the gazetteer and every
armed group and actor of the entity dictionary, with all their folded words (names, demonyms and
metonyms from ``places.yaml``, aliases and context aliases from ``entities.yaml``).

A question with no capitalised word past the first, acronyms aside ("que grupos operan en tumaco",
"¿Mapa de AT en antioquia?") is read with the case rules relaxed (``case_known=False``), since
"written with a capital" is then no signal; acronyms that are also common words stay out
(``_LOWER_ACRONYM_STOP``), and in a sentence-case question a lower-case name with several
candidates ("la paz") is taken for words, not reported as ambiguous.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from radar_pipeline.agent.reading.learned import reader_from_settings
from radar_pipeline.agent.reading.periods import Period, parse_period
from radar_pipeline.agent.reading.place_resolver import TERRITORIAL_CUES, FuzzyPlaces, PlaceResolver
from radar_pipeline.agent.reading.rules import rulebook
from radar_pipeline.agent.reading.views import view_vocabulary
from radar_pipeline.config import env
from radar_pipeline.precompute.entities import EntityDictionary, load_entity_dictionary
from radar_pipeline.precompute.places import (
    Gazetteer,
    Place,
    build_gazetteer,
    load_country_names,
)
from radar_pipeline.precompute.places.subregions import PLACE_SET, Subregion, subregions
from radar_pipeline.textfold import fold_phrase, fold_question, fold_spans

__all__ = [
    "QuestionFacts",
    "QuestionReader",
    "PlaceRef",
    "EntityRef",
    "AmbiguousPlace",
    "NameSet",
    "first_mention",
    "name_set_patterns",
    "name_sets",
]

# acronyms that are also everyday words: never taken from an all-lower-case question
_LOWER_ACRONYM_STOP = {"esa", "ese", "eso", "un", "us", "eu", "pla", "aeb", "ia", "ai", "la", "el", "mas", "ue"}
# Country adjectives (Spanish, English, Portuguese), folded: the countries the corpus reports on most
# (rules of kind ``demonym``, ``demonym_<iso3>``), a place noun before one, a place the question sets
# aside: data in precompute/data/reading_rules.yaml, read by ``rules.rulebook``
_RULES = rulebook()
_DEMONYMS: tuple[tuple[str, re.Pattern], ...] = tuple(
    (r.name.removeprefix("demonym_").upper(), r.compiled()) for r in _RULES.of_kind("demonym")
)
_PLACE_NOUN_BEFORE = _RULES.pattern("place_noun_before")
_NEGATED_PLACE = _RULES.regex("negated_place")
# entities that name Radar's own data sources (the alert system), never a filter of a view
_NOT_A_FILTER = {"defensoria_del_pueblo", "sistema_alertas_tempranas", "ciprat"}
# the entity categories that make a view's filter ("who"); programs and technologies are topics
_WHO = {"armed_group", "actor", "country"}


@dataclass(frozen=True)
class PlaceRef:
    """A resolved place: gazetteer ``place_id`` (``department:52``, ``municipality:52835``).
    ``names``: its folded names (gazetteer name and aliases; a subregion's names); ``longer``: the
    folded gazetteer and subregion names that contain one of them as whole words and name another
    place ("valle del cauca" and "bajo cauca" for Cauca): what a passage must name for the place
    itself (``requirements.place_requirements``)."""

    place_id: str
    name: str
    level: str
    matched: str
    department_code: str | None = None
    names: tuple[str, ...] = ()
    longer: tuple[str, ...] = ()


def longer_names(phrases_of: dict[str, set[str]]) -> dict[str, tuple[str, ...]]:
    """For every folded name of ``phrases_of`` (owner id → its folded names), the folded names of
    other owners that contain it as a run of whole words ("cauca" → "valle del cauca", "bajo cauca";
    "san jacinto" → "san jacinto del cauca"). Each longer name is split into its word runs once, so
    the cost is linear in the names (no pairwise comparison)."""
    owners: dict[str, set[str]] = {}
    for owner, names in phrases_of.items():
        for n in names:
            owners.setdefault(n, set()).add(owner)
    out: dict[str, set[str]] = {}
    for phrase, its_owners in owners.items():
        words = phrase.split()
        for i in range(len(words)):
            for j in range(i + 1, len(words) + 1):
                sub = " ".join(words[i:j])
                if sub == phrase or sub not in owners or owners[sub] <= its_owners:
                    continue
                out.setdefault(sub, set()).add(phrase)
    return {k: tuple(sorted(v)) for k, v in out.items()}


@dataclass(frozen=True)
class AmbiguousPlace:
    """A place name with several gazetteer candidates and nothing in the question to choose."""

    matched: str
    candidates: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class EntityRef:
    """An entity named by the question: dictionary ``entity_id`` or ``country:<ISO3>``."""

    value: str
    name: str
    matched: str
    kind: str  # "entity" | "country"
    category: str = "country"  # dictionary category, or "country"


@dataclass
class QuestionFacts:
    """What ``QuestionReader.read`` found; ``place``/``entity`` are the single filter values (None
    when the question names none or several unrelated ones: one filter holds one value)."""

    period: Period | None = None
    places: list[PlaceRef] = field(default_factory=list)
    ambiguous: list[AmbiguousPlace] = field(default_factory=list)
    entities: list[EntityRef] = field(default_factory=list)
    # what the answer owes the user about how a place was read (a subregion's definition, a list of
    # municipalities read as one set): ``place_resolver.QuestionPlaces.notes``
    place_notes: list[str] = field(default_factory=list)
    # names written as places of another country ("Marsella, Francia"): no gazetteer place, never
    # the Colombian namesake (``place_resolver.QuestionPlaces.abroad``)
    places_abroad: list[str] = field(default_factory=list)
    # a municipality the question places in a department that holds none of that name, corrected
    # (``place_resolver.QuestionPlaces.misplaced``): said first in the answer
    places_misplaced: list[str] = field(default_factory=list)
    # the learned reader's reading (``agent.learned.LearnedReading``) when the reader has one
    # (``QuestionReader.with_learned``); ``router.plan`` and ``visualizer.propose`` combine it with the rules
    learned: object | None = None

    @property
    def place(self) -> PlaceRef | None:
        if not self.places:
            return None
        if len(self.places) == 1:
            return self.places[0]
        # "Toribío, Cauca" / "Puerto Asís, Putumayo": a municipality and its own department → the municipality
        munis = [p for p in self.places if p.level == "municipality"]
        depts = {p.place_id.split(":")[1] for p in self.places if p.level == "department"}
        if len(munis) == 1 and all(p is munis[0] or p.level == "department" for p in self.places):
            if depts <= {munis[0].department_code}:
                return munis[0]
        return None

    @property
    def entity(self) -> EntityRef | None:
        """The one entity filter: the single "who" (armed group, actor, country) the question names;
        None when several compete. A "what" (program, technology: "desechos espaciales", "ASAT") is
        the question's topic, which the search handles, not a filter of the view."""
        who = {e.value: e for e in self.entities if e.value not in _NOT_A_FILTER and e.category in _WHO}
        return next(iter(who.values())) if len(who) == 1 else None

    def describe_ambiguity(self) -> str:
        """One Spanish sentence per ambiguous name ('' when none)."""
        out = []
        for a in self.ambiguous:
            out.append(
                f"«{a.matched}» puede ser {', '.join(a.labels[:-1])} o {a.labels[-1]}: no filtré por lugar; "
                f"indique el departamento (por ejemplo «{a.matched}, {a.labels[0].split(' (')[-1].rstrip(')')}»)."
                if len(a.labels) > 1
                else f"«{a.matched}» es ambiguo: no filtré por lugar."
            )
        return " ".join(out)


def _label(place: Place) -> str:
    if place.level == "municipality":
        return f"el municipio de {place.name} ({place.department_name})"
    if place.level == "department":
        return f"el departamento de {place.name}"
    return f"el país {place.name}"


class QuestionReader:
    """Reads periods, places and entities of questions. Immutable after construction; thread-safe.

    ``gazetteer``: ``precompute.places.build_gazetteer(<shared>/geo)`` (decoys added here);
    ``entities``: ``precompute.entities.load_entity_dictionary()``; ``reference_year``: year of the
    newest dated document (relative periods), or None when unknown."""

    def __init__(self, gazetteer: Gazetteer | None, entities: EntityDictionary | None, reference_year: int | None):
        self.entities = entities
        self.gazetteer = gazetteer.with_decoys(entities.alias_phrases()) if gazetteer and entities else gazetteer
        self.reference_year = reference_year
        self.learned = None  # an ``agent.learned.LearnedReader`` (``with_learned``), or None: rules alone
        self.places = (
            PlaceResolver(self.gazetteer, fuzzy=FuzzyPlaces.from_gazetteer(self.gazetteer, _not_place_typos()))
            if self.gazetteer is not None
            else None
        )
        self._names, self._longer = self._place_names()

    def _place_names(self) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        """``(place id → its folded names, folded name → longer names of other places)`` over the
        gazetteer and the subregions (``longer_names``); empty without a gazetteer."""
        if self.gazetteer is None:
            return {}, {}
        names: dict[str, set[str]] = {}
        for p in self.gazetteer.places.values():
            names[p.place_id] = {fold_question(p.name)} | {fold_question(t) for t, _ in p.aliases}
        for s in subregions().values():
            names[s.place_id] = {fold_question(n) for n in s.names} | {fold_question(s.label)}
        names = {k: {n for n in v if len(n) >= 3} for k, v in names.items()}
        return {k: tuple(sorted(v)) for k, v in names.items()}, longer_names(names)

    @classmethod
    def default(cls) -> QuestionReader:
        """A reader over ``RADAR_SHARED_DIR`` (``radar_pipeline.config``), no reference year, with
        the learned reader of ``RADAR_LEARNED_READER`` (``agent.learned.reader_from_settings``)."""
        from radar_pipeline.config import get_settings

        settings = get_settings()
        return _default_reader(str(settings.shared_dir)).with_learned(reader_from_settings(settings))

    @classmethod
    def from_shared(cls, shared_dir: Path, reference_year: int | None = None) -> QuestionReader:
        """Gazetteer from ``<shared_dir>/geo`` (none when missing) and the bundled entity dictionary."""
        return cls(_gazetteer(str(shared_dir)), _entities(), reference_year)

    def with_reference_year(self, year: int | None) -> QuestionReader:
        """The same reader with another reference year (cheap: matchers are shared)."""
        other = object.__new__(QuestionReader)
        other.entities, other.gazetteer, other.reference_year = self.entities, self.gazetteer, year
        other.places = self.places
        other._names, other._longer = self._names, self._longer
        other.learned = self.learned
        return other

    def with_learned(self, learned) -> QuestionReader:
        """The same reader whose ``read`` also attaches ``learned.read(question)`` (an
        ``agent.learned.LearnedReader``; None: rules alone) to the facts (cheap: matchers are shared)."""
        other = self.with_reference_year(self.reference_year)
        other.learned = learned
        return other

    # ------------------------------------------------------------------ reading
    def read(self, question: str, *, phenomenon: str | None = None) -> QuestionFacts:
        """Period, places, ambiguous names and entities of ``question`` (see the module doc)."""
        # the period is read from the question with typos in its trigger words corrected
        # ("ultmos" stays: too short; "despúes"/"decadas" fold; "anterioress" → "anteriores")
        facts = QuestionFacts(period=parse_period(view_vocabulary().correct(question)[0], self.reference_year))
        # capitals say something only when a name was capitalised: a word past the first that starts
        # with one and is not an acronym ("mapa de AT en antioquia" is typed without them)
        words = re.findall(r"\w+", question)
        case_known = any(w[:1].isupper() and not w.isupper() for w in words[1:])
        entity_spans = self._entities(question, facts, phenomenon, case_known)
        self._demonym_country(question, facts, entity_spans)
        # a place the question sets aside ("el municipio de Bolívar, en el Cauca (no el departamento
        # de Bolívar)") is no candidate
        negated = [(m.start(), m.end()) for m in _NEGATED_PLACE.finditer(question)]
        # "municipios de Colombia" is the country (the default scope), not Colombia, Huila
        negated += [
            (m.start(), m.end()) for m in re.finditer(r"(?i)(?<!\w)colombia(?!\s*[,(]?\s*huila)(?!\w)", question)
        ]
        # a verb after a clitic pronoun is no place ("qué le toca a cada grupo": Toca, Boyacá)
        negated += [(m.start(1), m.end(1)) for m in re.finditer(r"(?<!\w)(?:le|les|me|te|nos|se) ([a-zñ]+)", question)]
        self._places(question, facts, entity_spans + negated, case_known)
        if self.learned is not None:
            facts.learned = self.learned.read(question)
        return facts

    @staticmethod
    def is_demonym(text: str) -> bool:
        """Whether ``text`` is a country adjective ("chinos", "estadounidenses"), not a name."""
        folded = fold_spans(text).strip()
        return any(rx.fullmatch(folded) for _, rx in _DEMONYMS)

    def _demonym_country(self, question: str, facts: QuestionFacts, spans: list[tuple[int, int]]) -> None:
        """A country named by its adjective ("los programas contraespaciales chinos", "pruebas
        antisatélite rusas", "Chinese counterspace programs") when the question names no country:
        the country is the actor, as if named. ``_DEMONYMS`` lists the adjectives of the countries the
        corpus reports on most; a lower-case "india"/"china" is the country's own name already."""
        if self.gazetteer is None or any(e.category == "country" for e in facts.entities):
            return
        folded = fold_spans(question)
        found = {}
        for iso, rx in _DEMONYMS:
            m = rx.search(folded)
            # "la Amazonía brasileña", "la frontera venezolana": the adjective of a place, not an actor
            if m and re.search(_PLACE_NOUN_BEFORE, folded[: m.start()]):
                continue
            if m and f"country:{iso}" in self.gazetteer.places:
                found[iso] = m
        if len(found) != 1:
            return  # none, or a comparison of two: no single actor
        ((iso, m),) = found.items()
        place = self.gazetteer.places[f"country:{iso}"]
        facts.entities.append(EntityRef(place.place_id, place.name, question[m.start() : m.end()], "country"))
        spans.append((m.start(), m.end()))

    def _entities(
        self, question: str, facts: QuestionFacts, phenomenon: str | None, case_known: bool
    ) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        if self.entities is None:
            return spans
        # an acronym typed in lower case is read upper-cased ("presencia del eln en Arauca"); in a
        # question written with capitals only a one-word acronym of 3+ letters counts from that pass
        texts = [question, question.upper()]
        seen: set[str] = set()
        for text in texts:
            for phen in [phenomenon] if phenomenon else ["territorial", "ai_military", "space_security"]:
                for hit in self.entities.find(text, phenomenon=phen):
                    if text is not question and fold_phrase(hit.matched) in _LOWER_ACRONYM_STOP:
                        continue
                    if (
                        text is not question
                        and case_known
                        and (len(hit.matched) < 3 or " " in hit.matched.strip() or not hit.matched.isalpha())
                    ):
                        continue
                    if hit.entity_id in seen:
                        continue
                    seen.add(hit.entity_id)
                    ent = self.entities.entities[hit.entity_id]
                    facts.entities.append(
                        EntityRef(hit.entity_id, ent.name, question[hit.start : hit.end], "entity", ent.category)
                    )
                    spans.append((hit.start, hit.end))
        named_group = any(e.category == "armed_group" for e in facts.entities)
        folded = fold_phrase(question)
        if not named_group and TERRITORIAL_CUES.search(folded):
            # "las disidencias del Estado Mayor Central": a named group is what the short form qualifies
            self._context_entities(question, facts, spans, seen)
        elif not named_group and not self._other_phenomenon(folded, facts):
            # "¿Las disidencias están al alza?": a question to Radar with no other group and nothing
            # of another phenomenon is the context; only the short form standing alone counts
            # ("las disidencias del partido" qualifies it with something else)
            self._context_entities(question, facts, spans, seen, alone=True)
        elif named_group:
            # "las alertas que nombran a las disidencias y al ELN": beside another armed group the
            # short form standing alone is a group too (qualified, "las disidencias del EMC", it
            # is the named group's)
            self._context_entities(question, facts, spans, seen, alone=True)
        return spans

    def _other_phenomenon(self, folded: str, facts: QuestionFacts) -> bool:
        """Whether the question names an entity, or states a phenomenon, other than territorial."""
        if any(p != "territorial" for p in view_vocabulary().stated_phenomena(fold_question(folded))):
            return True
        return any(
            e.kind == "entity" and self.entities.entities[e.value].phenomenon != "territorial" for e in facts.entities
        )

    def _context_entities(
        self, question: str, facts: QuestionFacts, spans: list[tuple[int, int]], seen: set[str], alone: bool = False
    ) -> None:
        """Armed groups named by a context alias ("presencia de disidencias en el Cauca"): an armed
        group question is the context those short forms need. Outside any alias already matched;
        ``alone``: only where no "de/del …" qualifies the short form."""
        folded = fold_spans(question)
        for ent in self.entities.entities.values():
            if ent.category != "armed_group" or not ent.context_aliases or ent.entity_id in seen:
                continue
            words = "|".join(re.escape(fold_phrase(a)) for a in ent.context_aliases)
            tail = r"(?!\s+(?:de|del|dentro)\b)" if alone else ""
            for m in re.finditer(rf"(?<!\w)(?:{words})(?!\w){tail}", folded):
                if any(a < m.end() and m.start() < b for a, b in spans):
                    continue
                seen.add(ent.entity_id)
                facts.entities.append(
                    EntityRef(ent.entity_id, ent.name, question[m.start() : m.end()], "entity", ent.category)
                )
                spans.append((m.start(), m.end()))
                break

    def _places(
        self, question: str, facts: QuestionFacts, entity_spans: list[tuple[int, int]], case_known: bool
    ) -> None:
        """The question's places through the one place resolver (``agent.place_resolver``): places
        and subregions into ``facts.places``, names left ambiguous into ``facts.ambiguous``, countries
        other than Colombia into ``facts.entities``."""
        if self.places is None:
            return
        found = self.places.resolve(question, entity_spans, case_known=case_known)
        for p, matched in found.places:
            names = self._names.get(p.place_id, ())
            longer = tuple(sorted({x for n in names for x in self._longer.get(n, ())} - set(names)))
            if isinstance(p, Subregion):
                facts.places.append(PlaceRef(p.place_id, p.label, "subregion", matched, names=names, longer=longer))
            else:
                facts.places.append(
                    PlaceRef(p.place_id, p.name, p.level, matched, p.department_code, names=names, longer=longer)
                )
        facts.place_notes.extend(found.notes)
        facts.places_abroad.extend(found.abroad)
        facts.places_misplaced.extend(found.misplaced)
        for matched, cands in found.ambiguous:
            facts.ambiguous.append(
                AmbiguousPlace(matched, tuple(c.place_id for c in cands), tuple(_label(c) for c in cands))
            )
        for p, matched in found.countries:
            if not any(e.value == p.place_id for e in facts.entities):
                facts.entities.append(EntityRef(p.place_id, p.name, matched, "country"))

    # ------------------------------------------------------------------ values
    def resolve_place(self, value: str) -> str | None:
        """A filter value (place id, a subregion id ``subregion:catatumbo``, municipality ids joined
        by ``,``, or a name such as ``narino``/``Tumaco``/``Catatumbo``) → ``place_id`` (or the
        place set as given); None when unknown or ambiguous."""
        if self.gazetteer is None or not value:
            return None
        if value in self.gazetteer.places:
            return value
        if PLACE_SET.match(value):
            if value.startswith("subregion:"):
                return value if value in subregions() else None
            return value if all(v in self.gazetteer.places for v in value.split(",")) else None
        key = fold_phrase(value)
        sub = next((s for s in subregions().values() if key in s.names or key == fold_phrase(s.label)), None)
        if sub is not None and not any(
            fold_phrase(p.name) == key for p in self.gazetteer.places.values() if p.level == "department"
        ):
            return sub.place_id
        if key in ("bogota", "bogota d.c.", "bogota dc"):
            return "municipality:11001"
        found = [
            p
            for p in self.gazetteer.places.values()
            if fold_phrase(p.name) == key or any(fold_phrase(t) == key for t, _ in p.aliases)
        ]
        for level in ("department", "municipality", "country"):
            at = [p for p in found if p.level == level]
            if len(at) == 1:
                return at[0].place_id
            if len(at) > 1:
                return None
        return None

    def resolve_entity(self, value: str) -> str | None:
        """A filter value (entity id, ``country:ISO3``, or a name/alias) → canonical value; None when unknown."""
        if not value:
            return None
        if self.entities is not None:
            if value in self.entities.entities:
                return value
            key = fold_phrase(value)
            for ent in self.entities.entities.values():
                if fold_phrase(ent.name) == key or fold_phrase(ent.entity_id.replace("_", " ")) == key:
                    return ent.entity_id
                if any(not a.regex and fold_phrase(a.text) == key for a in ent.aliases):
                    return ent.entity_id
        if self.gazetteer is not None:
            if value.startswith("country:") and value in self.gazetteer.places:
                return value
            pid = next(
                (
                    p.place_id
                    for p in self.gazetteer.places.values()
                    if p.level == "country"
                    and (
                        fold_phrase(p.name) == fold_phrase(value)
                        or any(fold_phrase(t) == fold_phrase(value) for t, _ in p.aliases)
                    )
                ),
                None,
            )
            return pid
        return None

    def place_name(self, place_id: str) -> str:
        """Display name of a place id (the id itself when unknown)."""
        p = self.gazetteer.places.get(place_id) if self.gazetteer else None
        if p is None and place_id in subregions():
            return subregions()[place_id].label
        if p is None and "," in place_id:  # a list of municipalities: their names
            names = [self.place_name(x) for x in place_id.split(",")]
            return ", ".join(names[:-1]) + " y " + names[-1]
        return p.name if p else place_id


@functools.lru_cache(maxsize=4)
def _gazetteer(shared_dir: str) -> Gazetteer | None:
    """The gazetteer of ``<shared_dir>/geo`` (immutable; cached per directory), or None without it."""
    geo = Path(shared_dir) / "geo"
    if not (geo / "Divipola.csv").exists():
        return None
    return build_gazetteer(geo)


@functools.lru_cache(maxsize=1)
def _not_place_typos() -> frozenset[str]:
    """``question_places.yaml: not_place_typos``, folded: real words the fuzzy place fallback never
    reads as a place (a file of its own: the gazetteer's ``places.yaml`` versions the precomputes)."""
    data = yaml.safe_load(QUESTION_PLACES_PATH.read_text(encoding="utf-8")) or {}
    return frozenset(fold_phrase(str(w)) for w in data.get("not_place_typos") or [])


@functools.lru_cache(maxsize=1)
def _entities() -> EntityDictionary:
    """The bundled entity dictionary (immutable; loaded once)."""
    return load_entity_dictionary()


@functools.lru_cache(maxsize=2)
def _default_reader(shared_dir: str) -> QuestionReader:
    """One immutable reader per shared directory (matchers are costly to compile)."""
    return QuestionReader.from_shared(Path(shared_dir))


# --------------------------------------------------------------------------- name sets
@dataclass(frozen=True)
class NameSet:
    """One country or organisation and every folded word (``textfold.fold_question``) for it.

    ``kind``: ``country`` | ``group`` (an armed group or an organisation: the dictionary's
    ``armed_group`` and ``actor`` categories); ``key``: ``country:<ISO3>`` or the entity id;
    ``label``: the name answers show (Spanish where the data has it); ``names``: how a question or
    a premise names it (names, demonyms, context aliases); ``aliases``: what a passage may say for
    it — ``label`` first, then its English names, then every other word (metonyms included)."""

    kind: str
    key: str
    label: str
    names: tuple[str, ...]
    aliases: tuple[str, ...]

    def named_in(self, folded: str) -> str | None:
        """The first of ``names`` the folded text mentions (word boundaries), or None."""
        return first_mention(self.names, folded)

    @property
    def spellings(self) -> tuple[str, ...]:
        """What a text (a premise, a passage) may call it: ``names``, then the ``aliases`` of four
        letters or more (a shorter alias is an abbreviation a folded text cannot tell from a word:
        "US", "EU"), each once."""
        return tuple(dict.fromkeys((*self.names, *(a for a in self.aliases if len(a) >= 4))))


_MENTION_RE: dict[tuple[str, ...], re.Pattern] = {}


def first_mention(words: tuple[str, ...], folded: str) -> str | None:
    """The leftmost (then longest) of ``words`` that folded text mentions on word boundaries, or
    None. The alternation is compiled once per tuple of words."""
    pat = _MENTION_RE.get(words)
    if pat is None:
        alts = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True) if w)
        pat = re.compile(rf"(?<![\w])(?:{alts})(?![\w])") if alts else re.compile(r"(?!x)x")
        if len(_MENTION_RE) < 8192:
            _MENTION_RE[words] = pat
    m = pat.search(folded)
    return m.group(0) if m else None


def _usable(text: str, case_sensitive: bool) -> str | None:
    """The folded word, or None when folded text cannot tell it from an everyday word: an
    abbreviation that only counts in its own case and folds to two letters or to a common word
    ("US" → "us", "ESA" → "esa"), or a short name that is not an acronym ("Irã" → "ira")."""
    folded = fold_question(text).strip()
    if not folded or (case_sensitive and (len(folded) <= 2 or folded in _LOWER_ACRONYM_STOP)):
        return None
    if len(folded.replace(".", "")) <= 3 and not text.isupper():
        return None
    return folded


def _set(kind: str, key: str, label: str, named: list[tuple[str, bool]], english: list[tuple[str, bool]], other):
    names = tuple(dict.fromkeys(f for t, cs in named if (f := _usable(t, cs))))
    rest = [f for t, cs in [*english, *named, *other] if (f := _usable(t, cs))]
    return NameSet(kind, key, label, names, tuple(dict.fromkeys([fold_question(label), *rest])))


@functools.lru_cache(maxsize=4)
def _name_sets(shared_dir: str) -> tuple[NameSet, ...]:
    out: list[NameSet] = []
    for c in load_country_names(Path(shared_dir) / "geo"):
        named = [(n, n in c.case_sensitive) for n in c.names] + [(d, False) for d in c.demonyms]
        english = [(n, n in c.case_sensitive) for n in c.names if n.isascii()]
        out.append(_set("country", f"country:{c.iso3}", c.label, named, english, [(m, False) for m in c.metonyms]))
    for ent in _entities().entities.values():
        if ent.category not in ("armed_group", "actor") or ent.entity_id in _NOT_A_FILTER:
            continue
        literal = [a for a in ent.aliases if not a.regex]
        es = sorted((a for a in literal if a.lang == "es"), key=lambda a: a.case_sensitive)  # stable
        named = [(a.text, a.case_sensitive) for a in literal] + [(t, False) for t in ent.context_aliases]
        english = [(a.text, a.case_sensitive) for a in literal if a.lang == "en"]
        out.append(_set("group", ent.entity_id, es[0].text if es else ent.name, named, english, []))
    return tuple(s for s in out if s.names)


def name_sets(shared_dir: str | Path | None = None) -> tuple[NameSet, ...]:
    """Every country (``places.yaml`` and Natural Earth under ``<shared_dir>/geo``; default
    ``RADAR_SHARED_DIR``) and every armed group and actor of the entity dictionary (but Radar's own
    sources, such as the Defensoría), as ``NameSet``s: countries first, in Natural Earth order, then
    the dictionary's order. Immutable and cached per directory. Without the geo files only the names
    ``places.yaml`` lists are known (see ``precompute.places.load_country_names``)."""
    if shared_dir is None:
        shared_dir = _default_shared_dir(env("RADAR_SHARED_DIR"))
    return _name_sets(str(shared_dir))


_NAME_SET_PATTERNS: dict[tuple[int, str], tuple[tuple[NameSet, ...], tuple[tuple[NameSet, re.Pattern], ...]]] = {}


def name_set_patterns(
    shared_dir: str | Path | None = None, *, boundary: str = r"\w"
) -> tuple[tuple[NameSet, re.Pattern], ...]:
    """Each ``NameSet`` of ``name_sets(shared_dir)`` with one compiled pattern of how a folded text
    names it: its ``NameSet.spellings``, longest first, matched only between characters outside
    ``boundary`` (the body of a regex character class: ``\\w`` for word
    boundaries, ``\\w-`` to leave a name inside a hyphenated designation, "USA-193", unmatched).
    The one builder of these patterns (the premise check's name hits, the substitution rule's
    actors); compiled once per name sets and boundary."""
    sets = name_sets(shared_dir)
    key = (id(sets), boundary)
    cached = _NAME_SET_PATTERNS.get(key)
    if cached is not None and cached[0] is sets:
        return cached[1]
    out = []
    for ns in sets:
        alts = "|".join(re.escape(w) for w in sorted(ns.spellings, key=len, reverse=True) if w)
        out.append((ns, re.compile(rf"(?<![{boundary}])(?:{alts})(?![{boundary}])")))
    _NAME_SET_PATTERNS[key] = (sets, tuple(out))
    return _NAME_SET_PATTERNS[key][1]


@functools.lru_cache(maxsize=4)
def _default_shared_dir(env_value: str | None) -> str:
    """``RADAR_SHARED_DIR`` as the settings resolve it, once per value of the variable (settings are
    read per call and cost milliseconds; the router asks for the name sets several times a question)."""
    from radar_pipeline.config import get_settings

    return str(get_settings().shared_dir)


QUESTION_PLACES_PATH = Path(__file__).resolve().parents[2] / "precompute" / "data" / "question_places.yaml"
