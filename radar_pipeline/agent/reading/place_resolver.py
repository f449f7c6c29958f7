"""The one place resolver of a question: which place (or subregion) the question means, as a person
reads it, from the gazetteer (``precompute.places``) and the subregions (``precompute/data/subregions.yaml``).

``PlaceResolver.resolve`` runs five explicit steps over a question:

1. **candidate spans** — subregion names ("el Catatumbo", "Montes de María", "el Bajo Cauca",
   "la subregión PDET de Arauca"), then the gazetteer's place names outside them and outside the
   spans the caller excludes (entity mentions, places the question sets aside);
2. **gazetteer candidates** — each name's places, with the gazetteer's passage rules (level cue,
   a department next to it, country default: ``precompute.places`` rules 3-8) and the question
   policy (``_question_policy``: a lone candidate, a department and its namesakes → the department);
3. **qualifiers and appositions** that pick among homonyms: a department written next to the
   name ("Toribío, Cauca", "Puerto Rico (Caquetá)", "Mercaderes, el del Cauca", "Bolívar del
   Cauca", "Puerto Rico en el Meta", "Córdoba, el municipio del Quindío") selects the municipality
   in it and is no place of its own; one set aside ("La Unión, no el de Nariño", "Bolívar, ni el de
   Santander") removes that department's candidates and is no place either;
4. **level choice** — a level cue ("el departamento de Córdoba", "el municipio de Arauca") keeps
   that level; a department named with the plural of its parts ("municipios de Nariño") is the
   department; otherwise a department and same-named municipalities → the department;
5. **fuzzy fallback** (``FuzzyPlaces``) — a misspelt name ("Putumallo", "Antiokia", "Tumako") is
   read as the one place name within Damerau-Levenshtein distance 1 (5-8 letters) or 2 (9+),
   only after a place cue ("en", "de", "municipio de", …), never for a word listed as a real word
   (``question_places.yaml: not_place_typos``, measured over the question sets and the corpus: see
   ``evals/stage2.py --place-typos``); its candidates then go through steps 2-4 like any name.

The result (``QuestionPlaces``) lists the places the question names (``Place`` or ``Subregion``),
the names left ambiguous (with their candidates) and the countries (the caller makes them entities).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from rapidfuzz import process as _fuzz_process
from rapidfuzz.distance import DamerauLevenshtein

from radar_pipeline.agent.reading.rules import rulebook
from radar_pipeline.precompute.places import Gazetteer, Place, PlaceHit
from radar_pipeline.precompute.places.subregions import Subregion, subregions
from radar_pipeline.textfold import fold_phrase, fold_spans

__all__ = ["FuzzyPlaces", "PlaceResolver", "QuestionPlaces", "TERRITORIAL_CUES", "department_adjectives"]

QUESTION_PLACES_PATH = Path(__file__).resolve().parents[2] / "precompute" / "data" / "question_places.yaml"

DEFAULT_SCOPE_COUNTRY = "COL"
# The place phrasing (territorial cues, a department's parts, the gaps that qualify a municipality or
# set a department aside, its cardinal parts, the level written after a name, a date or the joins of a
# list of municipalities, examples, the subregion word, the fuzzy cue, the homophone spellings): data
# in precompute/data/reading_rules.yaml
_RULES = rulebook()
TERRITORIAL_CUES = _RULES.regex("territorial_cues")
_PARTS_OF = _RULES.regex("parts_of")
_QUALIFIER_GAP = _RULES.regex("qualifier_gap")
_EXCLUDING_GAP = _RULES.regex("excluding_gap")
_EXAMPLE_BEFORE = _RULES.regex("example_before")
_SUBREGION_WORD = _RULES.regex("subregion_word")
# a cardinal part of the department between a municipality and the department still qualifies it
_DIRECTIONS = _RULES.pattern("directions")
_DIRECTION_GAP = _RULES.regex("direction_gap")
# the level written as an apposition after a name shared by a department and a municipality
_MUNICIPALITY_APPOSITION = _RULES.regex("municipality_apposition")
_DEPARTMENT_APPOSITION = _RULES.regex("department_apposition")
# a date before a list names no region; what joins the names of an enumeration of municipalities
_TIME_WORD = _RULES.regex("time_word")
_ENUMERATION_JOIN = _RULES.regex("enumeration_join")


@functools.lru_cache(maxsize=1)
def department_adjectives() -> dict[str, str]:
    """Folded adjective form → DIVIPOLA department code (2 digits), every ending of each
    ``question_places.yaml: department_adjectives`` entry ("antioqueno" → antioqueno, antioquena,
    antioquenos, antioquenas; "cordobes" → cordobes, cordobesa, cordobeses; "huilense" → huilense,
    huilenses). Raises ``ValueError`` for a code that is not two digits."""
    data = yaml.safe_load(QUESTION_PLACES_PATH.read_text(encoding="utf-8")) or {}
    out: dict[str, str] = {}
    for adj, code in (data.get("department_adjectives") or {}).items():
        code = str(code)
        if not re.fullmatch(r"\d{2}", code):
            raise ValueError(f"question_places.yaml: department_adjectives.{adj} needs a two-digit code")
        adj = fold_phrase(str(adj))
        if adj.endswith("o"):
            forms = [adj, adj[:-1] + "a", adj + "s", adj[:-1] + "as"]
        elif adj.endswith("es"):
            forms = [adj, adj + "a", adj + "es", adj + "as"]
        else:
            forms = [adj, adj + "s"]
        out.update(dict.fromkeys(forms, code))
    return out


# Short names of departments that the gazetteer does not read alone ("el Valle" is also a valley):
# after a homonym, as its qualifier, they are the department ("La Unión, Valle", "Bolívar (Valle)")
_SHORT_NAMES = {"valle": "76", "san andres": "88", "guajira": "44", "norte de santander": "54"}


# A department's adjective after a name, as its qualifier: "Argelia antioqueña", "El Tambo, el
# caucano", "Rionegro (el antioqueño)", "Morales, en el sur bolivarense", "en el oriente antioqueño"
def _adjective_qualifier(after: str) -> str | None:
    """The department code an adjective right after a name gives (``after``: the folded text that
    follows the name), or None."""
    adjs = department_adjectives()
    if not adjs:
        return None
    short = re.match(r"\s*[,(\-]?\s*(?:(?:en|del|de)\s+)?(?:el |la )?(" + "|".join(_SHORT_NAMES) + r")(?!\w)", after)
    if short and not after[short.end() :].lstrip().startswith("del cauca"):
        return _SHORT_NAMES[short.group(1)]
    m = re.match(
        r"\s*[,(\-]?\s*(?:(?:en|hacia|por|del|de)\s+)?(?:el |la |al |lo )?(?:(?:municipio|pueblo|ciudad)\s+)?"
        r"(?:(?:extremo |zona |parte )?" + _DIRECTIONS + r"\s+)?([a-z]+)(?!\w)",
        after,
    )
    return adjs.get(m.group(1)) if m else None


@dataclass
class QuestionPlaces:
    """What ``PlaceResolver.resolve`` found: ``places`` ``[(Place | Subregion, matched text)]`` in
    question order; ``ambiguous`` ``[(matched, candidates)]`` (names with several candidates and
    nothing in the question to choose); ``countries`` ``[(Place, matched)]`` (other than Colombia:
    the caller's entity filter); ``qualifiers`` the department ids that only qualified another name;
    ``corrections`` ``[(typed, read)]`` of the fuzzy fallback; ``notes`` the sentences the answer
    owes the user about how a place was read (which definition of a subregion, a list read as a
    set), each starting with "Nota:"."""

    places: list[tuple[Place | Subregion, str]] = field(default_factory=list)
    ambiguous: list[tuple[str, tuple[Place, ...]]] = field(default_factory=list)
    countries: list[tuple[Place, str]] = field(default_factory=list)
    qualifiers: set[str] = field(default_factory=set)
    corrections: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # names written with another country as their own ("Marsella, Francia", "Córdoba (Argentina)",
    # "Santa Rosa en Perú"): a place abroad the gazetteer does not hold, never its Colombian namesake
    abroad: list[str] = field(default_factory=list)
    # a municipality placed in a department that holds none of that name ("Miranda, en Nariño"): the
    # question's premise about where it lies, corrected from the gazetteer ("Nota: no hay…")
    misplaced: list[str] = field(default_factory=list)


# Between a place name and the country it lies in: "Marsella, Francia", "Santa Rosa (Perú)",
# "Cartagena en España", "Lyon in France"
_COUNTRY_OF = re.compile(r"\s*(?:,|\(|\s(?:en|in|em|de)\s)\s*(?:(?:el|la|los|las|the)\s+)?$")


def _abroad(question: str, hit: PlaceHit, hits: list[PlaceHit]) -> bool:
    """Whether Colombian name ``hit`` is written as a place of another country: the next name is a
    country other than Colombia, joined to it by a comma, a bracket or "en"/"in" ("Marsella,
    Francia": Marseille, not Marsella of Risaralda)."""
    end = hit.start + len(hit.matched)
    for h in hits:
        if h.start < end or h.place is None or h.place.level != "country":
            continue
        return (
            h.place.code != DEFAULT_SCOPE_COUNTRY and _COUNTRY_OF.fullmatch(" " + question[end : h.start]) is not None
        )
    return False


_FUZZY_CUE = _RULES.regex("fuzzy_cue")
_SOUNDS = _RULES.rewrites("sounds")


def sound_key(word: str) -> str:
    """``word`` (folded) with Spanish homophone spellings unified (``_SOUNDS``): qu/k/c, c/s/z, ll/y, v/b, h."""
    for rx, to in _SOUNDS:
        word = re.sub(rx, to, word)
    return word


_LINK = {"de", "del", "la", "las", "los", "el", "y", "e"}


def _limit(n: int) -> int:
    """Edits allowed for a word of ``n`` letters: none up to 4, 1 for 5-8, 2 from 9."""
    return 0 if n <= 4 else 1 if n <= 8 else 2


def _aligned(typed: str, alias: str) -> bool:
    """Whether ``typed`` misspells ``alias`` word by word: as many words, each within its own
    limit (``_limit``), directly or with the same sound (``sound_key``). "tierras a" is no "tierralta", "bogota
    hoy" no "bogota dc", "casa blanca" no "casabianca": a typo changes letters, not words."""
    tw, aw = typed.split(), alias.split()
    if len(tw) != len(aw):
        return False
    for t, a in zip(tw, aw, strict=True):
        lim = _limit(min(len(t), len(a)))
        if DamerauLevenshtein.distance(t, a) > lim and sound_key(t) != sound_key(a):
            return False
    return True


class FuzzyPlaces:
    """Misspelt Colombian place names (step 5 of the module doc).

    ``names``: folded alias → place ids (departments and municipalities, aliases of 5+ letters
    that need no context, and ``contextual`` ones of 7+ letters that need it); ``not_typos``:
    folded real words never read as a place; ``departments``: the folded department names, whose
    mention right after a word (rule ``fuzzy_department_after``: "Segobia, Antioquia") is a place
    cue too and gives a contextual name its context. A word (or two
    or three words) typed after a place cue is read as the alias within Damerau-Levenshtein
    distance ≤ 1 for 5-8 letters, ≤ 2 for 9+ (both lengths), with the same first letter, when
    exactly one alias is nearest (ties read nothing); thresholds as the view vocabulary's typo
    tolerance (``views.ViewVocabulary.correct``). Words run together
    ("Sanjose del Guaviare", "Puertoasis") are read as the one alias with exactly those letters,
    and a name of three or more words without its leading article ("Carmen de Bolívar") as that name."""

    def __init__(
        self,
        names: dict[str, tuple[str, ...]],
        not_typos: frozenset[str] = frozenset(),
        known: frozenset[str] = frozenset(),
        contextual: frozenset[str] = frozenset(),
        departments: frozenset[str] = frozenset(),
    ):
        self.names = names
        self.known = known  # every folded name of the gazetteer (countries, context-required ones): never a typo
        # names that need context in a passage (a foreign namesake: "Caucasia", "Segovia", "Florencia"):
        # read as a misspelling only where the question gives that context (``find``'s ``context``,
        # or the department written after the name)
        self.contextual = contextual
        self._after = (
            re.compile(
                "(?:"
                + _RULES.pattern("fuzzy_department_after")
                + ")(?:"
                + "|".join(re.escape(d) for d in sorted(departments, key=len, reverse=True))
                + r")(?!\w)"
            )
            if departments
            else None
        )
        self.choices = tuple(sorted(names))
        self.sounds: dict[str, set[str]] = {}
        for n in self.choices:
            self.sounds.setdefault(sound_key(n), set()).add(n)
        self.not_typos = not_typos
        self._cache: dict[str, str | None] = {}
        # words run together ("Sanjose del Guaviare", "Puertoasís", "elcharco"): the alias whose
        # letters, spaces aside, are exactly the typed ones, in more words (unique ones only; a name
        # split apart is not read: "santa cruz" is no Santacruz, measured with --place-typos)
        joined: dict[str, set[str]] = {}
        for n in self.choices:
            joined.setdefault(n.replace(" ", ""), set()).add(n)
        self.joined = {k: next(iter(v)) for k, v in joined.items() if len(v) == 1}
        # a name written without its leading article ("Carmen de Bolívar" for El Carmen de Bolívar,
        # "Carmen de Viboral"): only where two or more words remain ("Bagre" alone is a fish)
        bare: dict[str, set[str]] = {}
        for n in self.choices:
            ws = n.split()
            if len(ws) >= 3 and ws[0] in ("el", "la", "los", "las"):
                bare.setdefault(" ".join(ws[1:]), set()).add(n)
        self.joined.update(
            {k.replace(" ", ""): next(iter(v)) for k, v in bare.items() if len(v) == 1 and k not in self.names}
        )

    @classmethod
    def from_gazetteer(cls, gazetteer: Gazetteer, not_typos: frozenset[str] = frozenset()) -> FuzzyPlaces:
        """The Colombian aliases of ``gazetteer`` and the listed real words. Context-required names
        of under 7 letters are left out ("Meta", "Cali" are too short to guess at); longer ones
        ("Caucasia", "Segovia", "Florencia": a foreign namesake) are ``contextual``, read only where
        the question gives the context (``find``)."""
        names: dict[str, list[str]] = {}
        contextual: set[str] = set()
        departments: set[str] = set()
        for p in gazetteer.places.values():
            if not p.is_colombian_subdivision:
                continue
            for text, _ in p.aliases:
                key = fold_phrase(text)
                if p.level == "department" and len(key) >= 4:
                    departments.add(key)
                if len(key.replace(" ", "")) >= 5 and key not in gazetteer.ctx_keys:
                    names.setdefault(key, []).append(p.place_id)
                elif len(key.replace(" ", "")) >= 7 and key in gazetteer.ctx_keys:
                    # "Caucasia", "Segovia": long enough to guess at where the question gives context
                    names.setdefault(key, []).append(p.place_id)
                    contextual.add(key)
        known = frozenset(fold_phrase(t) for p in gazetteer.places.values() for t, _ in p.aliases)
        return cls(
            {k: tuple(dict.fromkeys(v)) for k, v in names.items()},
            not_typos,
            known,
            frozenset(contextual - {k for k, v in names.items() if k not in contextual}),
            frozenset(departments),
        )

    def nearest(self, word: str, context: bool = False) -> str | None:
        """The one alias ``word`` (folded) is a misspelling of, or None (see the class doc);
        ``context``: the question gives the context a ``contextual`` name needs (else such a name
        is never the answer, and a word nearest to one reads nothing)."""
        if not context and self.contextual:
            out = self.nearest(word, True)
            return None if out in self.contextual else out
        if word in self._cache:
            return self._cache[word]
        out = None
        if (
            word not in self.names
            and word not in self.known
            and word not in self.not_typos
            and not any(w in self.not_typos for w in word.split())
        ):
            spaced = self.joined.get(word.replace(" ", ""))
            if spaced is not None and len(spaced.split()) > len(word.split()):
                if len(self._cache) < 65536:
                    self._cache[word] = spaced
                return spaced
            found = _fuzz_process.extract(
                word, self.choices, scorer=DamerauLevenshtein.distance, score_cutoff=2, limit=None
            )
            near = [
                (dist, cand)
                for cand, dist, _ in found
                if 0 < dist <= (2 if min(len(word), len(cand)) >= 9 else 1)
                and cand[0] == word[0]
                and _aligned(word, cand)
            ]
            if not near:  # the same sound spelt otherwise ("Putumallo", "Antiokia"): equal sound keys only
                near = [(0, cand) for cand in self.sounds.get(sound_key(word), ()) if cand != word]
            if near:
                best = min(d for d, _ in near)
                cands = {c for d, c in near if d == best}
                out = next(iter(cands)) if len(cands) == 1 else None
        if len(self._cache) < 65536:
            self._cache[word] = out
        return out

    def find(
        self,
        question: str,
        covered: list[tuple[int, int]],
        exact: list[tuple[int, int]],
        case_known: bool,
        context: bool = False,
    ) -> list[tuple[int, int, str, str]]:
        """``(start, end, typed, alias)`` of each misspelt place name in ``question``, right after a
        place cue, outside the ``covered`` spans and the ``exact`` names (a longer misspelt name may
        hold an exact one: "Santander de Quilichau" holds "Santander"); in a question written with
        capitals the typed name must start with one. Up to four words, "de"/"del"/"la" inside. A
        department written right after the name is a place cue too ("Segobia, Antioquia"), and
        gives a ``contextual`` name its context, as ``context`` (the question's armed groups,
        presence or alerts) does."""
        folded = fold_spans(question)
        words = [(m.start(), m.end()) for m in re.finditer(r"[^\W\d_]+", folded)]
        out: list[tuple[int, int, str, str]] = []
        taken_to = -1
        for i, (ws, _we) in enumerate(words):
            if ws < taken_to or folded[ws:_we] in _LINK:
                continue
            cued = bool(_FUZZY_CUE.search(folded[max(0, ws - 40) : ws]))
            if not cued and self._after is None:
                continue
            if case_known and not question[ws].isupper():
                continue
            for j in range(min(len(words), i + 4) - 1, i - 1, -1):
                start, end = ws, words[j][1]
                typed = " ".join(folded[a:b] for a, b in words[i : j + 1])
                if folded[words[j][0] : words[j][1]] in _LINK or len(typed.replace(" ", "")) < 5:
                    continue
                if not re.fullmatch(r"[^\W\d_]+(?:[ ,]+[^\W\d_]+)*", folded[start:end].replace("  ", " ")) or any(
                    c in folded[start:end] for c in ",.;:()?!"
                ):
                    continue
                if any(s < end and start < e for s, e in covered):
                    continue
                if any(
                    s < end and start < e and not (start <= s and e <= end and (s, e) != (start, end)) for s, e in exact
                ):
                    continue
                # the department written right after it is a place cue too: "Segobia, Antioquia"
                qualified = self._after is not None and bool(self._after.match(folded, end))
                if not (cued or qualified):
                    continue
                alias = self.nearest(typed, context or qualified)
                if alias is not None:
                    out.append((start, end, question[start:end], alias))
                    taken_to = end
                    break
        return out


# ------------------------------------------------------------------------------------ resolver
class PlaceResolver:
    """The question's places in five steps (module doc). Immutable; thread-safe (the fuzzy cache
    only grows)."""

    def __init__(
        self,
        gazetteer: Gazetteer,
        regions: dict[str, Subregion] | None = None,
        fuzzy: FuzzyPlaces | None = None,
    ):
        self.gazetteer = gazetteer
        self.subregions = subregions() if regions is None else regions
        self.fuzzy = fuzzy
        alts = sorted({n for s in self.subregions.values() for n in s.names}, key=len, reverse=True)
        self._sub_names = (
            re.compile(r"(?<!\w)(?:" + "|".join(re.escape(a) for a in alts) + r")(?!\w)") if alts else None
        )
        self._sub_by_name = {n: s for s in self.subregions.values() for n in s.names}
        labels = sorted({fold_phrase(s.label) for s in self.subregions.values()}, key=len, reverse=True)
        self._sub_labels = re.compile("|".join(re.escape(a) for a in labels)) if labels else None
        self._sub_by_label = {fold_phrase(s.label): s for s in self.subregions.values()}

    # -- step 1
    def _subregion_spans(self, folded: str, excluded: list[tuple[int, int]]) -> list[tuple[int, int, Subregion]]:
        out: list[tuple[int, int, Subregion]] = []
        if self._sub_labels is not None:
            for w in _SUBREGION_WORD.finditer(folded):
                m = self._sub_labels.match(folded, w.end())
                if m and not re.match(r"\w", folded[m.end() : m.end() + 1]):
                    out.append((w.start(), m.end(), self._sub_by_label[m.group(0)]))
        if self._sub_names is not None:
            for m in self._sub_names.finditer(folded):
                if any(s < m.end() and m.start() < e for s, e in excluded) or any(
                    s <= m.start() < e for s, e, _ in out
                ):
                    continue
                out.append((m.start(), m.end(), self._sub_by_name[m.group(0)]))
        return sorted(out, key=lambda x: x[0])

    def _fuzzy_hits(
        self,
        question: str,
        covered: list[tuple[int, int]],
        exact: list[tuple[int, int]],
        case_known: bool,
        out: QuestionPlaces,
        territorial: bool = False,
    ) -> list[PlaceHit]:
        """Step 5's names as unresolved gazetteer hits: their candidates go through steps 2-4
        (``territorial``: the question's armed groups, presence or alerts give a contextual name its context)."""
        if self.fuzzy is None:
            return []
        hits = []
        for start, end, typed, alias in self.fuzzy.find(question, covered, exact, case_known, territorial):
            pids = self.fuzzy.names[alias]
            places = [self.gazetteer.places[p] for p in pids]
            place = places[0] if len(places) == 1 else None
            hits.append(PlaceHit(place, start, end, typed, "fuzzy" if place else "unresolved", tuple(sorted(pids))))
            out.corrections.append((typed, alias))
        return hits

    def resolve(
        self, question: str, excluded: list[tuple[int, int]], *, case_known: bool, territorial: bool | None = None
    ) -> QuestionPlaces:
        """The places of ``question`` (see the module doc). ``excluded``: spans that hold no place
        (entity mentions, places set aside); ``case_known``: whether capitals carry meaning;
        ``territorial``: whether the question is about armed groups/presence/alerts (default: read
        from the question with ``TERRITORIAL_CUES``)."""
        out = QuestionPlaces()
        folded = fold_spans(question)
        if territorial is None:
            territorial = TERRITORIAL_CUES.search(fold_phrase(question)) is not None
        # 1. candidate spans: subregions, then gazetteer names outside them, then misspelt names
        subs = self._subregion_spans(folded, excluded)
        sub_spans = [(s, e) for s, e, _ in subs]
        hits = self.gazetteer.find(question, decoy_spans=list(excluded) + sub_spans, case_known=case_known)
        fuzzy = self._fuzzy_hits(
            question,
            list(excluded) + sub_spans,
            [(h.start, h.start + len(h.matched)) for h in hits],
            case_known,
            out,
            territorial,
        )
        # an exact name inside a longer misspelt one ("Santander" in "Santander de Quilichau") is that name's
        hits = [h for h in hits if not any(f.start <= h.start and h.start + len(h.matched) <= f.end for f in fuzzy)]
        hits = sorted(hits + fuzzy, key=lambda h: h.start)
        # 3. qualifiers: departments written next to a name (selecting or setting aside)
        selects, sets_aside, consumed = self._qualifiers(question, hits)
        where: dict[str, int] = {}  # place id → where the question names it
        ends: dict[str, int] = {}  # place id → where that name ends
        named_depts = {
            (h.start, h.place.code)
            for h in hits
            if h.place is not None and h.place.level == "department" and h.start not in consumed
        }
        for hit in hits:
            if hit.start in consumed:
                continue
            if (hit.place is None or hit.place.level != "country") and _abroad(question, hit, hits):
                out.abroad.append(hit.matched)  # "Marsella, Francia": no Colombian place
                continue
            # 2. gazetteer candidates and the question policy
            p = self._question_policy(hit, territorial)
            # 4. level choice: the parts of a department name it ("municipios de Nariño")
            if _PARTS_OF.search(fold_phrase(question[: hit.start])):
                p = self._department_named(hit.matched) or p
            # 3. a department the question names picks the municipality in it, and only qualifies it
            # (it is no place filter of its own): "Puerto Rico, el municipio del Caquetá"
            qualified = self._qualified_by_department(
                hit, {c for start, c in named_depts if start != hit.start} | selects.get(hit.start, set())
            )
            if qualified is not None and (
                p is None
                or p.level != "municipality"
                # the passage rules read the department set aside as the name's ("Balboa,
                # Risaralda, no el del Cauca" is no Balboa of Cauca)
                or p.department_code in {c for v in sets_aside.values() for c in v}
            ):
                p = qualified
                out.qualifiers.add(f"department:{qualified.department_code}")
            elif qualified is None and not any(
                0 <= h2.start - (hit.start + len(hit.matched)) <= 3 for h2 in hits if h2 is not hit
            ):
                # 4. the level written after the name: "Arauca capital", "Córdoba, el departamento"
                # (not a place name next to it: "Risaralda (Pueblo Rico y Mistrató)")
                p = self._level_apposition(question, hit, p)
            misplaced = self._misplaced(hit, p, selects.get(hit.start, set()))
            if misplaced is not None and misplaced not in out.misplaced:
                out.misplaced.append(misplaced)
            aside = sets_aside.get(hit.start, set())
            if aside:
                p = self._without(hit, p, aside)
            if p is None:
                self._ambiguous(question, hit, aside, out)
                continue
            if (
                p.level == "municipality"
                and p.department_code in {c for _, c in named_depts} | {c for v in selects.values() for c in v}
                and _EXAMPLE_BEFORE.search(fold_phrase(question[: hit.start]).rstrip(" ,"))
            ):
                continue  # an example of the department's municipalities, not the view's place
            if p.level == "country":
                if p.code != DEFAULT_SCOPE_COUNTRY and not any(c.place_id == p.place_id for c, _ in out.countries):
                    out.countries.append((p, hit.matched))
                continue
            if not any(q.place_id == p.place_id for q, _ in out.places):
                out.places.append((p, hit.matched))
                where[p.place_id] = hit.start
                ends[p.place_id] = hit.start + len(hit.matched)
        for s, e, sub in subs:
            self._add_subregion(question, s, e, sub, out, where)
        if out.qualifiers:
            out.places = [(q, m) for q, m in out.places if q.place_id not in out.qualifiers]
        self._enumeration(question, out, where, ends)
        return out

    def _enumeration(self, question: str, out: QuestionPlaces, where: dict[str, int], ends: dict[str, int]) -> None:
        """A region the question defines by listing its municipalities is the set of them: "el
        Pacífico caucano (Guapi, Timbiquí, López de Micay)", "la costa: Tumaco, Mosquera y El
        Charco", "el corredor — Segovia y Remedios" → a place set ``municipality:<a>,municipality:<b>``
        (``subregions.PLACE_SET``), the region as the person defined it. Only a list that defines a
        name written before it (in parentheses, or after ":", "—", "es decir", "o sea") and only
        when every place the question names is one of its municipalities, none left ambiguous
        (measured on corpus text: ``evals/stage2_false_hits.py``): a bare enumeration
        ("presencia en Segovia y Remedios") names several places, which one place filter cannot hold
        (the sets' convention: no place filter)."""
        if len(out.places) < 2 or not all(isinstance(q, Place) and q.level == "municipality" for q, _ in out.places):
            return
        if out.ambiguous or out.countries:
            return  # a member left unresolved ("Manizales; Pereira; Armenia"): the list is no defined set
        order = sorted(out.places, key=lambda x: where.get(x[0].place_id, -1))
        if any(q.place_id not in where for q, _ in order):
            return
        for (a, _), (b, _) in zip(order, order[1:], strict=False):
            gap = fold_phrase(question[ends[a.place_id] : where[b.place_id]])
            if not _ENUMERATION_JOIN.fullmatch(gap):
                return
        start, end = where[order[0][0].place_id], ends[order[-1][0].place_id]
        before = question[max(0, start - 60) : start]
        m = re.search(r"([^\W\d_][\w ]{1,50}?)\s*(?:\(|:|—|–|-|,\s*(?:es decir|o sea),?)\s*$", before)
        if m is None or (before.rstrip().endswith("(") and not question[end:].lstrip().startswith(")")):
            return
        words = m.group(1).split()[-4:]
        if fold_phrase(words[-1]) in _LINK | {"en", "entre", "por", "para", "a"}:
            return  # "alertas en (Tumaco, Barbacoas)": no name before the list
        if _TIME_WORD.search(fold_phrase(" ".join(words))):
            return  # "23 y 24 de abril: Caloto y Caldono" dates a list of events, it names no region
        while len(words) > 1 and fold_phrase(words[0]) in _LINK | {"en", "a", "al", "hacia"}:
            words = words[1:]
        region = " ".join(words)
        ids = tuple(sorted(q.place_id for q, _ in order))
        names = [q.name.title() if q.name.isupper() else q.name for q, _ in order]
        label = ", ".join(names[:-1]) + " y " + names[-1]
        places_set = Subregion(",".join(ids), label, (), ids, "municipios que la pregunta enumera")
        out.places = [(places_set, question[start:end])]
        out.notes.append(f"Nota: «{region}» se leyó como los {len(ids)} municipios que la pregunta nombra ({label}).")

    def _level_apposition(self, question: str, hit: PlaceHit, p: Place | None) -> Place | None:
        """The level an apposition after a name shared by a department and municipalities picks
        (``_MUNICIPALITY_APPOSITION``, ``_DEPARTMENT_APPOSITION``): the department, or the
        municipality — the one in the department of the same name ("Arauca capital" is the capital
        of Arauca), else the one municipality of that name; several left → None (ambiguous).
        ``p`` unchanged when no apposition follows or the name is not shared."""
        places = self.gazetteer.places
        cands = [places[c] for c in hit.candidates if c in places]
        if p is not None and not any(c.place_id == p.place_id for c in cands):
            cands.append(p)
        depts = [c for c in cands if c.level == "department"]
        if p is not None and p.level == "department" and p not in depts:
            depts.append(p)
        if not depts:
            named = self._department_named(hit.matched)
            depts = [named] if named is not None else []
        if len(depts) != 1:
            return p
        munis = [c for c in cands if c.level == "municipality"]
        if not munis:
            key = fold_phrase(hit.matched)
            munis = [
                m
                for m in places.values()
                if m.level == "municipality"
                and (fold_phrase(m.name) == key or any(fold_phrase(t) == key for t, _ in m.aliases))
            ]
        if not munis:
            return p
        after = fold_phrase(question[hit.start + len(hit.matched) : hit.start + len(hit.matched) + 50])
        if _DEPARTMENT_APPOSITION.match(after):
            return depts[0]
        if not _MUNICIPALITY_APPOSITION.match(after):
            return p
        own = [m for m in munis if m.department_code == depts[0].code]
        if len(own) == 1:
            return own[0]
        return munis[0] if len(munis) == 1 else None

    def _add_subregion(
        self, question: str, start: int, end: int, sub: Subregion, out: QuestionPlaces, where: dict[str, int]
    ) -> None:
        """A subregion is the place unless the question names a more precise one: a municipality
        inside it ("Tibú … en el Catatumbo", "Hacarí, en pleno Catatumbo") or a department named
        apart ("el ELN en Norte de Santander … por qué en el Catatumbo"). A department of the
        subregion written right after it qualifies it ("el Catatumbo, Norte de Santander")."""
        if any(q.level == "municipality" and q.place_id in sub.municipalities for q, _ in out.places):
            return
        qualifying = set()
        for q, _ in out.places:
            if q.level != "department":
                continue
            gap = fold_phrase(question[end : where.get(q.place_id, -1)]) if where.get(q.place_id, -1) >= end else None
            if (
                q.code in sub.department_codes
                and gap is not None
                and (_QUALIFIER_GAP.fullmatch(gap) or re.fullmatch(r"\s*,\s*(?:en|de|del)\s+(?:el\s+)?", gap))
            ):
                qualifying.add(q.place_id)
            else:
                return  # a department named apart is the place
        if not any(q.place_id == sub.place_id for q, _ in out.places):
            out.places.append((sub, question[start:end]))
            out.notes.append(self._definition_note(question, start, end, sub))
        out.qualifiers |= qualifying

    def _definition_note(self, question: str, start: int, end: int, sub: Subregion) -> str:
        """What the answer says about the subregion it read (a person may mean another definition).

        Radar's subregions are the PDET ones (``subregions.yaml``). A question that names the
        department's own subregion form — its adjective ("el Bajo Cauca antioqueño", "el Pacífico
        nariñense") or "subregión … de <departamento>" — means the department's administrative
        subregion, whose municipality list Radar does not hold (``<shared>/geo`` has DIVIPOLA and
        the boundaries, no department subregions): the note says so and that the PDET list was read."""
        matched = question[start:end]
        n = len(sub.municipalities)
        pdet = f"la subregión PDET «{sub.label}» ({n} municipios, {sub.source})"
        adjs = department_adjectives()
        words = (
            re.findall(r"[a-z]+", fold_phrase(matched))
            + re.findall(r"[a-z]+", fold_phrase(question[end : end + 15]))[:1]
        )
        dept_code = next((adjs[w] for w in words if w in adjs), None)
        if dept_code is None:  # "el Bajo Cauca de Antioquia", "la subregión Urabá, en Antioquia"
            m = re.match(
                r"\s*,?\s*(?:de|del|en)\s+(?:el\s+)?(?:departamento\s+(?:de|del)\s+)?([a-z]+(?: [a-z]+){0,3})",
                fold_phrase(question[end : end + 40]),
            )
            dept = None
            if m:
                ws = m.group(1).split()
                dept = next((d for k in range(len(ws), 0, -1) if (d := self._department_named(" ".join(ws[:k])))), None)
            dept_code = dept.code if dept is not None else None
        if dept_code is not None and dept_code in sub.department_codes:
            dept = self.gazetteer.places.get(f"department:{dept_code}")
            dname = (
                dept.name.title() if dept is not None and dept.name.isupper() else (dept.name if dept else dept_code)
            )
            return (
                f"Nota: «{matched}» se leyó como {pdet}; la subregión administrativa de {dname} del mismo "
                "nombre puede tener otros municipios y Radar no tiene esa lista."
            )
        return f"Nota: «{matched}» se leyó como {pdet}."

    # -- step 3
    def _qualifiers(
        self, question: str, hits: list[PlaceHit]
    ) -> tuple[dict[int, set[str]], dict[int, set[str]], set[int]]:
        """``(selecting, setting aside, consumed)`` by hit start: the department codes a later name
        written after it as its qualifier can be ("Puerto Rico, Meta": Meta is unresolved alone);
        the departments set aside right after it ("La Unión, no el de Nariño ni el del Valle"); the
        starts of the names that only set a department aside (they name no place)."""
        selects: dict[int, set[str]] = {}
        sets_aside: dict[int, set[str]] = {}
        consumed: set[int] = set()
        for i, h in enumerate(hits):
            end = h.start + len(h.matched)
            chain = True
            for h2 in hits[i + 1 :]:
                gap = fold_phrase(question[end : h2.start])
                depts = {c.split(":")[1] for c in h2.candidates if c.startswith("department:")}
                if h2.place is not None and h2.place.level == "department":
                    depts = {h2.place.code}
                if chain and depts and _EXCLUDING_GAP.fullmatch(" " + gap + " "):
                    sets_aside.setdefault(h.start, set()).update(depts)
                    consumed.add(h2.start)
                    end = h2.start + len(h2.matched)
                    continue
                chain = False
                gap = fold_phrase(question[h.start + len(h.matched) : h2.start])
                if depts and (_QUALIFIER_GAP.fullmatch(gap) or _DIRECTION_GAP.fullmatch(gap)):
                    selects.setdefault(h.start, set()).update(depts)
            # a department's adjective right after the name: "Argelia antioqueña", "El Tambo, el caucano"
            code = _adjective_qualifier(fold_phrase(question[end : end + 60]))
            if code is not None:
                selects.setdefault(h.start, set()).add(code)
        return selects, sets_aside, consumed

    def _misplaced(self, hit: PlaceHit, p: Place | None, depts: set[str]) -> str | None:
        """The note when the department written as ``hit``'s qualifier ("Miranda, en Nariño", "Tumaco
        (Cauca)") holds none of the municipalities of that name, while the gazetteer knows it
        elsewhere: the question places it wrongly, a premise the answer corrects (blind4: "el
        municipio de Miranda, en Nariño" for the Miranda of Cauca went unremarked). None otherwise
        (no qualifier, a department of the name, or a name that is no municipality)."""
        if not depts or p is None or p.level != "municipality":
            return None
        places = self.gazetteer.places
        munis = [places[c] for c in hit.candidates if c in places and places[c].level == "municipality"]
        if not munis or any(m.department_code in depts for m in munis):
            return None
        named = [places.get(f"department:{c}") for c in sorted(depts)]
        where = sorted(
            {
                places[f"department:{m.department_code}"].name
                for m in munis
                if f"department:{m.department_code}" in places
            }
        )
        if not where or not all(named):
            return None
        return (
            f"Nota: no hay un municipio «{hit.matched}» en {' ni en '.join(d.name for d in named)}; "
            f"el nomenclátor de municipios (DIVIPOLA) lo sitúa en {' y en '.join(where)}."
        )

    def _qualified_by_department(self, hit: PlaceHit, depts: set[str]) -> Place | None:
        """The one municipality among ``hit``'s candidates whose department the question also names."""
        munis = [
            self.gazetteer.places[c]
            for c in hit.candidates
            if c in self.gazetteer.places and self.gazetteer.places[c].level == "municipality"
        ]
        inside = [m for m in munis if m.department_code in depts]
        return inside[0] if len(inside) == 1 and len(hit.candidates) > 1 else None

    def _without(self, hit: PlaceHit, p: Place | None, aside: set[str]) -> Place | None:
        """The place ``hit`` means once the departments ``aside`` are set aside: ``p`` when it lies
        outside them, else the one candidate left (None: several left, or none)."""
        places = self.gazetteer.places
        cands = [places[c] for c in hit.candidates if c in places]
        inside = lambda c: c.is_colombian_subdivision and (c.department_code or c.code) in aside  # noqa: E731
        if p is not None and not inside(p):
            return p
        left = [c for c in cands if not inside(c)]
        return left[0] if len(left) == 1 else None

    def _ambiguous(self, question: str, hit: PlaceHit, aside: set[str], out: QuestionPlaces) -> None:
        cands = [self.gazetteer.places[c] for c in hit.candidates if c in self.gazetteer.places]
        cands = [c for c in cands if not (c.is_colombian_subdivision and (c.department_code or c.code) in aside)]
        # in a sentence-case question a lower-case "la paz" is words; typed all in lower case, it
        # may be the place, so the ambiguity is said
        words_only = hit.matched.islower() and any(c.isupper() for c in question)
        if len(cands) > 1 and not words_only:
            out.ambiguous.append((hit.matched, tuple(cands)))

    # -- step 2
    def _question_policy(self, hit: PlaceHit, territorial: bool) -> Place | None:
        """The gazetteer's passage rules, read for a question (which is short and has no context):

        1. a name with one candidate left unresolved only for lack of context ("Tibú") → that place;
        2. a department and same-named municipalities, no municipality cue ("Nariño") → the
           department, as a person reads it ("el municipio de Nariño" already resolved by the cue);
        3. a country that is also a Colombian municipality ("Argelia") in a territorial question
           (armed groups, presence, alerts, municipalities) → ambiguous, not the country;
        4. anything else unresolved stays unresolved (ambiguous)."""
        places = self.gazetteer.places
        cands = [places[c] for c in hit.candidates if c in places]
        if hit.place is not None:
            if hit.resolution == "country_default" and territorial and any(c.level == "municipality" for c in cands):
                return None
            return hit.place
        if len(cands) == 1:
            return cands[0]
        depts = [c for c in cands if c.level == "department"]
        if len(depts) == 1 and all(c.level in ("department", "municipality") for c in cands):
            return depts[0]
        return None

    def _department_named(self, matched: str) -> Place | None:
        """The department whose name (or alias) is ``matched``, or None."""
        key = fold_phrase(matched)
        return next(
            (
                p
                for p in self.gazetteer.places.values()
                if p.level == "department"
                and (fold_phrase(p.name) == key or any(fold_phrase(t) == key for t, _ in p.aliases))
            ),
            None,
        )
