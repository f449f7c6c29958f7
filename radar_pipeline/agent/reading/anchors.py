"""The question's anchors, and the named things a sentence mentions.

**Anchors.** A question may be about something specific that the passages must name for an answer
to exist: a named programme ("el programa Halcón Dorado"), a quoted name («Cóndor Azul»), a code
or an acronym ("SJ-21", "X-37B"), a year ("en 2031"). When the passages read never mention it, the
nearest text is not an answer (issue 22, item 5). ``question_anchors`` finds them by kind:

* ``cita`` — text between quotes («…», “…”, "…") of 2–60 characters;
* ``codigo`` — a token mixing letters and digits (``SJ-21``, ``X-37B``, ``Kosmos-2553``) or an
  upper-case acronym of 2–8 letters;
* ``año`` — a year 1950–2049;
* ``nombre`` — a run of capitalised words that does not open the question (connectors ``de``,
  ``del``, ``la``… allowed inside).

What is not an anchor: anything a coverage requirement already tracks (countries, armed groups and
organisations of ``understanding.name_sets``, listed items, the years of a comparison or a period:
``requirements.extract_requirements``), and the **generic terms**: a term of the reviewed Spanish→English
glossary (``retrieval/data/glossary_es_en.tsv``: "IA", "NBQR", "Derecho Internacional
Humanitario", "Fuerzas Militares"), or a name made only of everyday corpus words (the Spanish side
of the induced lexicon, ``lexicon_induced_es_en.tsv``: words seen in 20+ documents, such as
"Fuerza", "Espacial") — a capitalised description, not a name. A name keeps only its *distinctive*
words (not in that lexicon, not function words) as what must be found.

**Matching** is folded (``textfold.fold_question``, word boundaries) and cross-lingual: an anchor
that is a country or organisation name, or a glossary term, also matches through its English and
Portuguese aliases (``name_sets``, the glossary); a year also matches a passage whose document is
dated in it (``publication_year``). A distinctive word is matched as written (names are not
translated).

**Named things of a sentence.** ``named_sets(text)`` returns the countries and organisations a text
names (every ``NameSet`` whose ``names`` occur, via one compiled alternation), used by the writer's
opening sentence and by the verifier's check of it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from radar_pipeline.agent.reading.requirements import Requirement
from radar_pipeline.agent.reading.rules import rulebook
from radar_pipeline.agent.reading.understanding import NameSet, _default_shared_dir, name_sets
from radar_pipeline.config import env
from radar_pipeline.textfold import fold_question

try:  # the reviewed glossary and the induced lexicon of the retrieval package
    from radar_pipeline.retrieval.glossary import glossary_matches, load_glossary, load_induced_lexicon
except ImportError:  # pragma: no cover - retrieval data absent in this checkout
    glossary_matches = load_glossary = load_induced_lexicon = None

YEAR_RE = re.compile(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)")
_QUOTED = re.compile(r"[«“\"]([^«»“”\"]{2,60})[»”\"]")
_CODE = re.compile(
    r"(?<![\w-])(?:[A-Z][A-Za-z]{0,11}[-‐ ]?\d[\w-]*|[A-Za-z]{1,12}[-‐]\d[\w-]*|\d+[A-Z]{1,4}\b|"
    r"[A-ZÁÉÍÓÚÑ]{2,8}(?:-[A-Z0-9]{1,6})?)(?![\w-])"
)
_CAP_WORD = r"[A-ZÁÉÍÓÚÑ][\wáéíóúñü'’\-]*"
_NAME = re.compile(rf"{_CAP_WORD}(?:\s+(?:(?:de|del|la|las|los|el|da|do|dos|das|of|the)\s+)?{_CAP_WORD})*")
# The phrasing of names (function words, clause openers, the nouns that introduce a name, where a
# question splits into parts): data in precompute/data/reading_rules.yaml
_RULES = rulebook()
_FUNCTION = frozenset(fold_question(w) for w in _RULES.word_set("anchor_function_words"))
_OPENERS = frozenset(fold_question(w) for w in _RULES.word_set("anchor_openers"))
_DESIGNATOR = _RULES.regex("anchor_designator")
_CAPITAL_ARTICLES = frozenset({"Los", "Las", "El", "La"})
# the English heads of documents and agreements named after a place or a person ("el Acuerdo de
# Valdivia" = "the Valdivia Agreement"); a head not listed is met by the name's own words
_HEAD_NAMES = {
    "acuerdo": ("agreement", "accord", "accords"),
    "tratado": ("treaty",),
    "declaracion": ("declaration",),
    "convencion": ("convention",),
    "protocolo": ("protocol",),
    "pacto": ("pact",),
    "cumbre": ("summit",),
}
_SELF = frozenset({"radar"})  # the assistant's own name ("¿Qué sabe Radar de…?") is not a topic


@dataclass(frozen=True)
class Anchor:
    """One anchor of a question: ``kind`` (``nombre`` | ``cita`` | ``codigo`` | ``año``), ``label``
    as written, ``aliases`` (folded forms, any of which meets it), ``words`` (for a ``nombre``: its
    distinctive folded words, all of which must occur; empty otherwise)."""

    kind: str
    label: str
    aliases: tuple[str, ...]
    words: tuple[str, ...] = ()
    subject: bool = False  # what the question asks about: quoted, a code, or named after "el programa…"
    decisive: bool = True  # False: a bare acronym, whose absence alone never makes a run sin_evidencia

    def requirement(self) -> Requirement:
        """The anchor as a coverage ``Requirement`` (kind ``nombre``/``cita``/``codigo``/``año``), for
        the analyst's targeted searches (``analyst.Analyst`` searches "topic + alias" for each
        requirement the passages read do not meet yet)."""
        return Requirement(self.kind, self.label, tuple(dict.fromkeys((*self.aliases, " ".join(self.words)))))

    @property
    def specific(self) -> bool:
        """A name, quoted name or code: what the question is about (a year only dates it)."""
        return self.kind != "año" and self.decisive

    def met_by(self, folded_text: str, publication_year: int | None = None) -> bool:
        """Does the folded passage text mention the anchor (or, for a year, is the passage's document
        dated in it)?"""
        if self.kind == "año" and publication_year is not None and str(publication_year) == self.label:
            return True
        if any(_mentions(folded_text, a) for a in self.aliases):
            return True
        return bool(self.words) and all(_mentions(folded_text, w) for w in self.words)


def _mentions(folded: str, word: str) -> bool:
    return bool(word) and re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", folded) is not None


@functools.lru_cache(maxsize=1)
def generic_words() -> frozenset[str]:
    """Folded everyday words: the glossary's Spanish words and the induced lexicon's Spanish side."""
    words: set[str] = set(_FUNCTION)
    if load_glossary is not None:
        for e in load_glossary():
            words.update(fold_question(e.spanish).split())
        words.update(load_induced_lexicon().keys())
    return frozenset(words)


@functools.lru_cache(maxsize=1)
def glossary_terms() -> frozenset[str]:
    """Folded terms of the glossary, both sides (``antisatélite``, ``ASAT``, ``anti-satellite``):
    domain vocabulary, never what a question is specifically about, whichever language the question
    borrows it in ("las pruebas ASAT" names the English term of «pruebas antisatélite»)."""
    if load_glossary is None:
        return frozenset()
    out: set[str] = set()
    for e in load_glossary():
        out.add(fold_question(e.spanish))
        out.update(fold_question(t) for t in e.english)
    return frozenset(out)


def _glossary_spans(question: str) -> list[tuple[str, tuple[str, ...]]]:
    """``[(folded spanish, folded english terms)]`` of the glossary terms in ``question``."""
    if glossary_matches is None:
        return []
    return [(fold_question(e.spanish), tuple(fold_question(t) for t in e.english)) for e in glossary_matches(question)]


def _covered_by(folded: str, spans: list[str]) -> bool:
    """Is the folded phrase one of (or inside one of) the folded spans?"""
    return any(folded == s or _mentions(s, folded) for s in spans if s)


def question_anchors(question: str, requirements=()) -> list[Anchor]:
    """The anchors of ``question`` (see the module docstring), in order, without duplicates.

    ``requirements``: the question's ``requirements.Requirement``s (what they track is not an anchor).
    Deterministic; no model."""
    q = " ".join((question or "").split())
    # a place requirement stays an anchor too: a question about a place no passage names has no
    # answer (``anchor_gaps``), while the requirement asks the quotes to name it (the writer)
    requirements = [r for r in requirements if r.kind != "lugar"]
    tracked = [a for r in requirements for a in r.aliases] + [r.label for r in requirements]
    tracked = [fold_question(t) for t in tracked]
    gloss = _glossary_spans(q)
    generic_spans = [s for s, _ in gloss] + [e for _, en in gloss for e in en]
    names = [n for ns in name_sets() for n in ns.names]
    out: list[Anchor] = []
    seen: set[str] = set()

    def add(a: Anchor) -> None:
        key = fold_question(a.label)
        if key in seen or not a.label:
            return
        seen.add(key)
        out.append(a)

    def known(folded: str) -> bool:
        return (
            _covered_by(folded, tracked)
            or _covered_by(folded, generic_spans)
            or folded in names
            or folded in glossary_terms()
        )

    for m in _QUOTED.finditer(q):
        text = m.group(1).strip()
        f = fold_question(text)
        if f and not known(f):
            add(Anchor("cita", text, (f,), subject=True))
    for y in YEAR_RE.findall(q):
        if y not in tracked:
            add(Anchor("año", y, (y,)))
    body = _QUOTED.sub(" ", q)
    code_spans: list[tuple[int, int]] = []
    for m in _CODE.finditer(body):
        tok = m.group(0).strip()
        f = fold_question(tok)
        if YEAR_RE.fullmatch(tok) or not re.search(r"[A-Za-z]", tok) or known(f):
            continue
        if (word_year := re.fullmatch(r"([A-Za-z]+) (\d+)", tok)) and YEAR_RE.fullmatch(word_year.group(2)):
            if not word_year.group(1).isupper():
                # a capitalised word then a year ("situación en Guaviare 2019", "Tumaco 2021") is a
                # word and a year, each read on its own (a place, a name, the year), not one code;
                # an acronym dated by a year ("ESA 2025") stays one
                continue
        if tok.isupper() or re.search(r"\d", tok):
            if len(tok) >= 2 and not (tok.isalpha() and tok.capitalize() == tok):
                code_spans.append(m.span())
                variants = [f, f.replace("-", " "), f.replace("-", ""), f.replace(" ", "-"), f.replace(" ", "")]
                words: tuple[str, ...] = ()
                core = re.search(r"\d+(?:-\d+)*", tok)
                letters = fold_question(re.sub(r"[\d\W_]+", " ", tok)).split()
                if core and YEAR_RE.fullmatch(core.group(0)) and letters:
                    # an acronym dated by a year ("ESA 2025"): both, anywhere in the passage
                    words = (*letters, core.group(0))
                elif core and len(core.group(0).replace("-", "")) >= 3:
                    # the number is what identifies it, whatever prefix the text writes
                    # ("AT 016-18" = "Alerta Temprana N° 16-18"; "Cosmos 1408" = "Kosmos 1408")
                    variants += [core.group(0), re.sub(r"^0+(?=\d)", "", core.group(0))]
                # a bare acronym (ONU, MTCR) is often another in the passages' language (UN): a
                # coverage row when missing, never alone the reason to answer nothing
                bare = tok.isalpha() and tok.isupper()
                add(Anchor("codigo", tok, tuple(dict.fromkeys(variants)), words, subject=not bare, decisive=not bare))
    for m in _NAME.finditer(body):
        start = m.start()
        if any(a < m.end() and start < b for a, b in code_spans):
            continue
        before = body[:start].rstrip(" ¿¡\"'«“(")
        # an English possessive is no part of the name ("ClearSpace's mission" names ClearSpace)
        phrase = re.sub(r"['’]s$", "", m.group(0)).strip("'’")
        words = phrase.split()
        if (
            before
            and not before.endswith((".", "?", "!", ":"))
            and len(words) >= 2
            and words[0] in _CAPITAL_ARTICLES
            and all(known(fold_question(w)) or fold_question(w) in _FUNCTION for w in words[1:])
        ):
            # an article written with a capital inside the sentence opens a name ("Los Mexicanos",
            # "Los Paisas": gangs), even when its other words are a country's adjective or name
            content = tuple(fold_question(w) for w in words[1:] if fold_question(w) not in _FUNCTION)
            add(Anchor("nombre", phrase, (fold_question(phrase),), content))
            continue
        if not before or before.endswith((".", "?", "!", ":")):  # the question's (or a clause's) first word
            words = words[1:]
            while words and fold_question(words[0]) in _FUNCTION:
                words = words[1:]
        if not words:
            continue
        words = [w for w in words if not known(fold_question(w)) and fold_question(w) not in _SELF]
        while words and fold_question(words[-1]) in _FUNCTION:
            words = words[:-1]
        if not words or fold_question(words[0]) in _OPENERS:
            continue
        phrase = " ".join(words)
        f = fold_question(phrase)
        if known(f) or _CODE.fullmatch(phrase):
            continue
        folded_words = [fold_question(x).strip("'’-") for x in words]
        content = [w for w in folded_words if w not in _FUNCTION and len(w) > 2]
        distinctive = tuple(w for w in content if w not in generic_words())
        designated = _DESIGNATOR.search(fold_question(body[:start])) is not None
        # a designator written as the name's capitalised head, with words of its own after it ("el
        # Acuerdo de Tallin", "la Declaración de Bletchley Park"): a name, met where its distinctive
        # words are (the head is written in the passage's language: "the Bletchley Park Declaration")
        own = tuple(w for w in distinctive if w != folded_words[0])
        headed = (
            len(folded_words) >= 2
            and words[0][:1].isupper()
            and _DESIGNATOR.search(folded_words[0] + " ") is not None
            and bool(own)
        )
        # a name: introduced by a designator noun, or made only of words that are no everyday word
        if headed:
            # met by the name as a document's name in either language ("el Acuerdo de Valdivia" /
            # "the Valdivia Agreement"), not by its place alone: a passage about the municipality of
            # Valdivia is no evidence about an accord named after it (blind5-20, an invented accord)
            heads = _HEAD_NAMES.get(folded_words[0])
            if heads:
                rest = " ".join(w for w in folded_words[1:] if w not in ("de", "del", "la", "el", "los", "las"))
                forms = [
                    f,
                    *(f"{rest} {h}" for h in heads),
                    *(f"{h} of {rest}" for h in heads),
                    *(f"{h} of the {rest}" for h in heads),
                ]
                add(Anchor("nombre", phrase, tuple(dict.fromkeys(forms)), (), subject=True))
            else:
                add(Anchor("nombre", phrase, (f,), own, subject=True))
        elif designated and content:
            add(Anchor("nombre", phrase, (f,), tuple(content), subject=True))
        elif distinctive and len(distinctive) == len(content):
            add(Anchor("nombre", phrase, (f,), distinctive))
    return out


# the words that introduce who says something rather than what it is about: "según el estudio del
# Defense AI Observatory", "en el informe de Andrew Lohn (CSET)", "according to RAND's report"
_SOURCE_CUE = re.compile(
    r"(?:seg[uú]n|de acuerdo con|conforme a|according to|estudio|informe|reporte|report|study|paper|"
    r"an[aá]lisis|art[ií]culo|publicaci[oó]n|documento|encuesta|survey|bolet[ií]n|brief|autor[ae]?s?|author|"
    r"memorando|memorandum|gu[ií]a|guide|recoge|recopila|publica|public[oó]|señala|reporta|advierte)"
    # up to two words qualifying the document ("el informe ambiental de la ESA 2025")
    r"(?:\s+(?!(?:sobre|acerca|about|regarding|para|con|contra|entre|tras|hacia)(?![a-záéíóúñ]))[a-záéíóúñ]{3,}){0,2}?"
    r"(?:\s+(?:de|del|de la|de los|el|la|los|las|the|of|by|a|an|que publica|publicado por|elaborado por))*\s*[\"«“(]?$",
    re.IGNORECASE,
)


_SOURCE_WORD = re.compile(
    r"(?<!\w)(?:seg[uú]n|according to|estudio|informe|reporte|report|study|paper|an[aá]lisis|art[ií]culo|"
    r"publicaci[oó]n|documento|encuesta|survey|bolet[ií]n)(?!\w)",
    re.IGNORECASE,
)


def names_a_source(question: str, anchor: Anchor) -> bool:
    """Does the question name ``anchor`` as the source of what it asks ("según el estudio del Defense
    AI Observatory", "en el informe de Andrew Lohn (CSET)", "(CSET)" right after such a name) rather
    than as what it is about? The answer is in that source's sentences, which need not repeat its
    name (they state the findings), so the writer does not put sentences naming it first."""
    q = " ".join((question or "").split())
    at = q.find(anchor.label)
    if at < 0:
        return False
    before = q[max(0, at - 60) : at]
    # the anchor may be the end of a longer name whose first words are everyday ones ("Defense AI
    # Observatory" keeps "Observatory"): the cue comes before the whole name
    before = re.sub(r"(?:[A-ZÁÉÍÓÚÑ][\w’'-]*\s+)+$", "", before)
    if _SOURCE_CUE.search(before):
        return True
    # an acronym in brackets after a source's author ("el estudio de Andrew Lohn (CSET)") is the
    # source too: a source cue shortly before the bracket
    prev = q[:at].rstrip()
    return prev.endswith("(") and _SOURCE_WORD.search(prev[max(0, len(prev) - 60) : -1]) is not None


def missing_anchors(anchors: list[Anchor], passages: list[dict], year_of=None) -> list[Anchor]:
    """The anchors no passage meets; ``passages`` carry ``text`` and ``doc_id``; ``year_of`` maps a
    ``doc_id`` to its publication year (None when undated)."""
    folded = [(fold_question(p.get("text") or ""), p.get("doc_id")) for p in passages]
    out = []
    for a in anchors:
        if not any(a.met_by(t, year_of(d) if year_of is not None and d else None) for t, d in folded):
            out.append(a)
    return out


@dataclass(frozen=True)
class AnchorGaps:
    """The anchors of a question that the passages read do not mention (``anchor_gaps``)."""

    anchors: tuple[Anchor, ...]
    missing: tuple[Anchor, ...]

    @property
    def all_missing(self) -> bool:
        """Nothing read is about what the question asks: none of its subjects (a quoted name, a code,
        a name after "el programa…", "la operación…") is mentioned, when it has any; else none of
        its names; for a question whose only anchors are years, none of them."""
        for group in ([a for a in self.anchors if a.subject], [a for a in self.anchors if a.specific]):
            if group:
                return all(a in self.missing for a in group)
        years = [a for a in self.anchors if a.kind == "año"]
        return bool(years) and all(a in self.missing for a in years)

    def labels(self) -> list[str]:
        return [a.label for a in self.missing]

    def pairs(self) -> list[tuple[str, str]]:
        return [(a.label, a.kind) for a in self.missing]


_CLAUSE_SPLIT = _RULES.regex("clause_split")


def topic_met(question: str, anchors: list[Anchor], passages: list[dict]) -> bool:
    """Is another part of the question answered? A question of coordinated parts ("¿Qué es X y qué
    desechos generan las pruebas ASAT?", two questions in one) has a part that names none of
    ``anchors`` but a domain topic (a glossary term, in Spanish or its English terms) that
    ``passages`` speak of: then a question whose anchors are all missing is partly answered
    (``incompleta``), not without evidence. A topic in the same part as the anchor ("¿Qué capacidades
    antisatélite tiene el satélite XQ-77?") only qualifies it and answers nothing."""
    parts = [p for p in _CLAUSE_SPLIT.split(" ".join((question or "").split())) if p and p.strip()]
    if len(parts) < 2:
        return False
    folded = fold_question(" ".join(p.get("text") or "" for p in passages))
    for part in parts:
        fp = fold_question(part)
        if any(any(_mentions(fp, a) for a in anc.aliases) for anc in anchors):
            continue
        if any(_mentions(folded, t) for s, en in _glossary_spans(part) for t in (s, *en)):
            return True
    return False


def anchor_gaps(question: str, requirements, passages: list[dict], year_of=None) -> AnchorGaps | None:
    """The question's anchors that ``passages`` (the relevant passages read) do not mention, or None
    when it has no anchor or every anchor is mentioned."""
    anchors = question_anchors(question, requirements)
    if not anchors:
        return None
    missing = missing_anchors(anchors, passages, year_of)
    return AnchorGaps(tuple(anchors), tuple(missing)) if missing else None


# --------------------------------------------------------------------------- named things
@functools.lru_cache(maxsize=4)
def _names_index(shared_key: int) -> tuple[re.Pattern, dict[str, NameSet]]:
    by_name: dict[str, NameSet] = {}
    for ns in name_sets():
        for n in (*ns.names, fold_question(ns.label)):  # the label too: the opening sentence writes it
            by_name.setdefault(n, ns)
    alts = "|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True))
    return re.compile(rf"(?<![\w])(?:{alts})(?![\w])"), by_name


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """One character folded as ``fold_question`` folds it ('' for a format character)."""
    if unicodedata.category(ch) == "Cf":
        return ""
    piece = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", ch))
    return "".join(c for c in piece if not unicodedata.combining(c)).lower()


def _fold_with_map(text: str) -> tuple[str, list[int]]:
    """``text`` folded as ``textfold.fold_question`` folds it (compatibility forms, accents and format
    characters out, lower case, blank runs collapsed, stripped), with, for each folded character, the
    index in ``text`` of the character it comes from; so a match in the folded text can be read back
    as written (its case, the word before it)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        for c in _fold_char(ch):
            out.append(c)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


# Where a sentence (or a list item, a quote, a bracket) begins: the word after one is capitalised by
# position, not because it is part of a name
_SENTENCE_OPENERS = frozenset('.!?:;¿¡«“"([•*–—-')
_ARTICLES = frozenset({"el", "la", "los", "las", "the", "o", "a", "os", "as", "les", "le"})
_CAPITALISED = re.compile(r"[A-ZÁÉÍÓÚÑÜÇÂÊÔÃÕÀ][a-záéíóúñüçâêôãõà]+")


def _sentence_initial(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens the text, a sentence, a line, a list item, a quote or a bracket."""
    prefix = text[:start].rstrip()
    return not prefix or prefix[-1] in _SENTENCE_OPENERS or "\n" in text[len(prefix) : start]


@functools.lru_cache(maxsize=4)
def _lowercase_demonyms(shared_key: int) -> frozenset[str]:
    """Folded country adjectives that Spanish and Portuguese write in lower case ("mexicanos",
    "colombiana", "estadounidense", "russo"): those ``places.yaml: demonyms`` lists in lower case
    (the English ones are listed capitalised: "Mexican", "Russian"), less any word that is also a
    country's name ("china" is the adjective and the country) or folds like an English adjective
    ("israelí" and "Israeli"). Capitalised mid-sentence, such a word is
    part of a name ("Los Mexicanos", a gang), never the adjective."""
    from radar_pipeline.precompute.places import load_country_names

    countries = load_country_names(Path(_default_shared_dir(env("RADAR_SHARED_DIR"))) / "geo")
    names = {fold_question(n) for c in countries for n in c.names}
    # an English adjective that folds the same ("Israeli" / "israelí") is capitalised in English text
    english = {fold_question(d) for c in countries for d in c.demonyms if d != d.lower()}
    return frozenset(
        fold_question(d)
        for c in countries
        for d in c.demonyms
        if d == d.lower() and fold_question(d) not in names | english
    )


def inside_longer_name(text: str, start: int, end: int, ns: NameSet) -> bool:
    """Whether the mention ``text[start:end]`` of ``ns`` is a word of a longer proper name rather than
    the country or organisation itself:

    * it follows, with only blanks between, a capitalised word that does not open a sentence —
      "…los Locos Yam, Los Mexicanos", "New Mexico", "Plan Colombia", "Fuerza Aérea Colombiana"; for
      an organisation the word must be no article ("los Rastrojos" / "Los Rastrojos" is the group);
    * or it is a country adjective that Spanish and Portuguese write in lower case
      (``_lowercase_demonyms``) written capitalised where no sentence begins ("la banda Los
      Mexicanos", "Mexicanos" opening no sentence).

    Real mentions stay: "the Mexican government", "el gobierno mexicano", "Estados Unidos",
    "Colombia's army", "Los mexicanos votaron", "de Colombia"."""
    written = text[start:end]
    if not written[:1].isupper():
        return False
    before = text[:start]
    if before[-1:].isspace():
        word = before.rstrip().rsplit(None, 1)[-1] if before.strip() else ""
        at = len(before.rstrip()) - len(word)
        if word and _CAPITALISED.fullmatch(word) and not _sentence_initial(text, at):
            if ns.kind == "country" or fold_question(word) not in _ARTICLES:
                return True
    if ns.kind == "country" and not _sentence_initial(text, start):
        first = fold_question(written.split()[0]) if written.split() else ""
        if first in _lowercase_demonyms(id(name_sets())):
            return True
    return False


def named_sets(text: str) -> list[NameSet]:
    """The countries and organisations ``text`` names (``NameSet.names``, folded, word boundaries),
    in order of first mention, each once. A word that is part of a longer proper name
    (``inside_longer_name``: the gang «Los Mexicanos», "New Mexico") does not name the country."""
    rx, by_name = _names_index(id(name_sets()))
    text = text or ""
    folded = fold_question(text)
    matches = list(rx.finditer(folded))
    if not matches:
        return []
    if len(folded) != len(text) or re.search(r"\s\s|[^ \S]", text):
        # folding moved the offsets (blank runs, compatibility forms): fold again, keeping each
        # character's origin (``_fold_with_map`` folds as ``fold_question`` does)
        folded, where = _fold_with_map(text)
        matches = list(rx.finditer(folded))
    else:
        where = range(len(text))
    out: list[NameSet] = []
    for m in matches:
        ns = by_name[m.group(0)]
        if ns in out:
            continue
        start, end = where[m.start()], where[m.end() - 1] + 1
        if inside_longer_name(text, start, end, ns):
            continue
        out.append(ns)
    return out


def names_in(folded_text: str, ns: NameSet) -> bool:
    """Does the folded text mention ``ns`` — or another set shown under the same label (two
    organisations may share a Spanish name) — by any of its aliases (what a passage may say for it)?"""
    return any(_mentions(folded_text, a) for other in _same_label(ns.label) for a in other.aliases)


@functools.lru_cache(maxsize=1024)
def _same_label(label: str) -> tuple[NameSet, ...]:
    return tuple(ns for ns in name_sets() if ns.label == label)
