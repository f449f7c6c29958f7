"""A premise's slot filled otherwise: the sentence that names what the premise names, but with
another actor, another year, another counted object or the opposite action.

Analysts' false premises are mostly *substitutions*: the question is right about the thing and
wrong about one fact of it — "la OTAN lanzó el programa 'In the Moment'" (DARPA's programme), "el
Informe Allard de 2001" (2008; 2001 was the Rumsfeld Report), "Finlandia compró 64 cazas Gripen"
(64 F-35), "en 2025 se lanzó la MSS" (it closed in 2025), "el ELN combate al Batallón N.º 12" (a
FARC dissident column does). The passage that refutes such a premise never repeats the wrong fact,
so the rules that look for the premise's whole event (``premise.judge_slots``, built on verb
families) do not see it. This rule needs no verb family: it is anchored on the premise's
*distinctive name* — a quoted title, a designation with digits, an acronym, a capitalised word that
is no common noun — and compares one slot at a time in the one sentence that names it.

``anchors(text)`` finds the names; ``judge(premise_text, years, sentence)`` returns the kind of
substitution (``actor_distinto``, ``conflicto_de_anio``, ``objeto_distinto``, ``accion_opuesta``)
or None. Only contradictions: the rule never supports a premise (agreement on one slot says
nothing of the others). Guards, each against a true premise called false: a modal or negated
sentence says nothing; a different actor counts only where the sentence shares a content word of
the premise's predicate besides the anchor and names none of the premise's actors; a year counts
only where it is bound to the name in both ("el Informe Allard de 2001" / "the 2008 Allard
Report") and the premise's year is absent from the sentence; an opposite action only where the
sentence has no year other than the premise's. Pure functions; texts folded with ``textfold``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from radar_pipeline.agent.reading.requirements import glossary_terms
from radar_pipeline.agent.reading.understanding import name_set_patterns
from radar_pipeline.retrieval.glossary import load_induced_lexicon
from radar_pipeline.textfold import fold_question, fold_spans

__all__ = ["Anchor", "anchor_names", "anchors", "judge", "names_anchor"]

_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")
_MODAL = re.compile(
    r"(?<!\w)(?:would|could|might|may|should|if|whether|podria\w*|podra\w*|quiza\w*|tal vez|si se|hipotetic\w*)(?!\w)"
)
_NEGATED = re.compile(r"(?<!\w)(?:not|never|no|nunca|jamas|n't|ni|neither|nor)(?!\w)")
# Generic heads of institutional and document names: capitalised inside a name ("el Informe
# Allard", "la Misión de Apoyo…", "el Batallón de Operaciones…") but no name themselves, in
# Spanish and English. A name made only of these (and function words) is no anchor unless it has
# a designation.
_GENERIC = frozenset(
    """informe reporte report programa program programme plan estrategia strategy mision mission
    ministerio ministry fuerza fuerzas force forces ejercito army armada navy batallon battalion brigada
    brigade division comando command oficina office agencia agency departamento department consejo
    council sistema system red network proyecto project operacion operaciones operation operations
    acuerdo agreement tratado treaty ley law politica policy nacional national internacional
    international multinacional multinational general defensa defense defence seguridad security apoyo
    support union organizacion organization centro center centre instituto institute alerta alert
    alertas temprana tempranas early warning columna column frente front movil mobile bloque bloc
    fondo fund grupo group comision commission secretaria secretariat direccion directorate junta
    estado state estados states republica republic gobierno government corte court tribunal
    resolucion resolution decreto decree conferencia conference cumbre summit declaracion declaration
    iniciativa initiative oficial official primera primer first segundo second nueva nuevo new
    inteligencia intelligence artificial espacial space militar military
    doctrina doctrine directiva directive libro book blanco white paper revision review memorando
    memorandum hoja ruta roadmap agenda manual lineamientos guidelines orden order act concepto concept
    documento document reglamento regulation protocolo protocol convencion convention carta charter
    estudio study evaluacion assessment acuerdos accords accord agreements tratados treaties""".split()
)
# (each document or body head above with its counterpart in the other language — "la Estrategia X"
# and "the X Strategy", "la Revisión X" and "the X Review" — so that a name is a document's name,
# and binds a year, the same way in either language)
_FUNCTION = frozenset("de del la las el los y e en a al para por con of the and for in on to da do das dos".split())
# verb stems of actions that undo each other (Spanish and English, folded): the premise's action
# and one of the other family in the sentence that names the anchor
_ACTIONS = {
    "inicio": r"lanz\w*|cre[oóa]\w*|creacion|inici\w*|abri(?:o|eron|da|do|r)|establec\w*|fund[oó]\w*|inaugur\w*|launch\w*|creat\w*|start\w*|"
    r"establish\w*|open\w*|found(?:ed|ing)|initiat\w*|began|begun|begin\w*|set up",
    "fin": r"cerr(?:o|aron|ada|ado|ar)|cierre|termin(?:o|aron|ada|ado|ar)|conclu(?:yo|yeron|ida|ido)|"
    r"finaliz(?:o|aron|ada|ado)|disolv\w*|disuel\w*|clausur\w*|closed|closes|closure|ended|"
    r"terminated|dissolved|wound down|shut down|discontinued",
    "aprobacion": r"aprob\w*|aprueb\w*|ratific\w*|approv\w*|adopt\w*|ratif\w*|passed",
    "rechazo": r"rechaz\w*|reject\w*|veto\w*|vetoed|blocked|bloque[oó]",
    "aumento": r"aument\w*|crec\w*|creci\w*|subi[oó]\w*|increas\w*|rose|grew|grow\w*|ris(?:e|en|ing)",
    "descenso": r"disminu\w*|reduj\w*|reduc\w*|baj[oó]\w*|cay[oó]\w*|decreas\w*|declin\w*|fell|dropp?\w*|shrank",
}
_OPPOSITE = {
    "inicio": "fin",
    "fin": "inicio",
    "aprobacion": "rechazo",
    "rechazo": "aprobacion",
    "aumento": "descenso",
    "descenso": "aumento",
}
_NUMBER_MARK = re.compile(r"n\W*[oº°]?\W*|no\.?|num\.?|nro\.?")  # "N.º", "No.", "Nº" before a number
_BRIDGE = frozenset(
    "de del la las el los y e a al of the and".split()
)  # inside a name: "Misión de Apoyo a la Seguridad"
# words that pair two actors in one relation (a dispute, a confrontation, a joint work)
_PAIR = re.compile(
    r"(?<!\w)(?:disput\w*|enfrent\w*|combat\w*|confront\w*|choque\w*|clash\w*|alian\w*|alia(?:do|dos|da|das|ron)|"
    r"allian\w*|allied|cooperaci\w*|cooperat\w*|coopera\w*|junto (?:a|con)|together with|jointly|conjunt\w*)(?!\w)"
)
_NEAR = 50  # characters: a negation this close to a name or number bears on it
_ACTION_RE = {k: re.compile(rf"(?<!\w)(?:{v})(?!\w)") for k, v in _ACTIONS.items()}


@dataclass(frozen=True)
class Anchor:
    """A distinctive name of a premise: ``strong`` folded tokens that identify it alone (a quoted
    title as one phrase, an acronym, a word with digits of three characters or more, a proper
    word), and ``weak`` ones (the name's other content words and short numbers: "N.º 12") that
    must all appear beside a short-number anchor. ``span``: its (start, end) in the folded premise."""

    strong: tuple[str, ...]
    weak: tuple[str, ...]
    span: tuple[int, int]
    headed: bool = (
        False  # the name has a generic head ("Informe Allard", "Plan Colombia"): a document, programme or body
    )

    def found(self, folded: str) -> tuple[int, int] | None:
        """The span of this name in a folded sentence, or None."""
        spans = [re.search(rf"(?<![\w-]){re.escape(tok)}(?![\w-])", folded) for tok in self.strong]
        if spans and all(spans):
            return spans[0].span()  # every strong word: "Corinto López Adentro" is no "López" alone
        if self.weak and all(re.search(_weak_re(w), folded) for w in self.weak):
            m = re.search(_weak_re(self.weak[0]), folded)
            return m.span() if m else None
        return None


def _weak_re(word: str) -> str:
    """A weak word as a whole word; a number also glued to its marker ("N°12", "No.12")."""
    if word.isdigit():
        return rf"(?<!\d){word}(?!\d)"
    return rf"(?<!\w){re.escape(word)}(?!\w)"


def _actor_patterns() -> tuple[tuple[str, str, re.Pattern], ...]:
    """``(key, kind, pattern)`` of every country and group of the shared name sets, as
    ``understanding.name_set_patterns`` spells them, a name inside a hyphenated designation
    ("USA-193") left out."""
    return tuple((ns.key, ns.kind, pat) for ns, pat in name_set_patterns(boundary=r"\w-"))


@functools.lru_cache(maxsize=256)
def _premise_actors(folded: str) -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """``actors`` of a folded premise, once per premise (a judge calls it for every sentence read)."""
    return actors(folded)


def actors(folded: str) -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """Countries and groups named in a folded text: ``{key: (kind, spans)}``."""
    out: dict[str, tuple[str, list[tuple[int, int]]]] = {}
    for key, kind, pat in _actor_patterns():
        spans = [m.span() for m in pat.finditer(folded)]
        if spans:
            out[key] = (kind, spans)
    return out


COMMON_COSINE = 0.8  # a lexicon pair below this is noise ("saravena"→"sars" 0.73, "tame"→"tamil" 0.71)


@functools.lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    """Folded words common in the corpus in either language: the induced es→en lexicon's pairs of
    cosine ≥ ``COMMON_COSINE`` (``retrieval/data/lexicon_induced_es_en.tsv``: terms of document
    frequency ≥ 20), both sides. A capitalised word among them ("Terrestres", "Informe") is part of
    a name, not the name; a frequent place name pairs with noise below the threshold and stays a name."""
    from radar_pipeline.retrieval.glossary import INDUCED_LEXICON_PATH

    out: set[str] = set()
    if INDUCED_LEXICON_PATH.is_file():
        for line in INDUCED_LEXICON_PATH.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if line.startswith("#") or len(parts) < 3:
                continue
            try:
                cosine = float(parts[2])
            except ValueError:
                continue
            if cosine >= COMMON_COSINE:
                out.update(parts[:2])
    return frozenset(out)


def _proper(word: str) -> bool:
    """A capitalised word that is a name: not a generic head of one (``_GENERIC``), a function word,
    a number marker ("N.º") or a word common in the corpus (``_common_words``)."""
    f = fold_question(word)
    return (
        len(re.sub(r"\W", "", f)) >= 3
        and f not in _GENERIC
        and f not in _FUNCTION
        and f not in _common_words()
        and not _NUMBER_MARK.fullmatch(f)
        and not _YEAR.fullmatch(f)
    )


@functools.lru_cache(maxsize=256)
def anchors(text: str) -> tuple[Anchor, ...]:
    """The distinctive names of a premise ``text`` (original case): quoted titles ('In the
    Moment', “Golden Dome”), and maximal runs of capitalised or digit-bearing words (the first word
    of the text only when another capitalised word follows it) whose strong tokens are acronyms,
    words with digits (≥ 3 characters: "F-35", "1408") or proper words; a run of generic words
    with a short number ("Batallón de Operaciones Terrestres N.º 12") is an anchor by all its
    words. Countries and groups of the name sets are actors, never anchors; years are not names."""
    folded = fold_spans(text)
    out: list[Anchor] = []
    taken: list[tuple[int, int]] = []
    actor_spans = [sp for _, spans in actors(folded).values() for sp in spans]
    for m in re.finditer(r"['‘’“”\"«»]([^'‘’“”\"«»]{3,60})['‘’“”\"«»]", text):
        phrase = fold_question(m.group(1)).strip()
        if phrase:
            out.append(Anchor((phrase,), (), m.span(1)))
            taken.append(m.span(1))
    tokens = list(re.finditer(r"[^\W_][\w\-\.º°/]*", text))
    runs: list[list[re.Match]] = []
    cur: list[re.Match] = []
    for i, t in enumerate(tokens):
        w = t.group(0).rstrip(".")
        if cur and re.search(r"[(),;:]", text[cur[-1].end() : t.start()]):
            runs.append(cur)  # a parenthesis or a comma ends a name: "Juradó (Chocó)" is two
            cur = []
        is_name = (w[:1].isupper() or any(ch.isdigit() for ch in w)) and not _YEAR.fullmatch(w)
        if is_name and (i > 0 or (i + 1 < len(tokens) and tokens[i + 1].group(0)[:1].isupper())):
            cur.append(t)
        elif cur and fold_question(w) in _BRIDGE and i + 1 < len(tokens) and tokens[i + 1].group(0)[:1].isupper():
            cur.append(t)  # "Batallón de Operaciones", "Misión de Apoyo a la Seguridad"
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    for run in runs:
        start, end = run[0].start(), run[-1].end()
        if any(s < end and start < e for s, e in taken):
            continue
        strong, weak, coded = [], [], []
        headed = False
        for t in run:
            w = t.group(0).rstrip(".")
            f = fold_question(w)
            if f in _FUNCTION or _NUMBER_MARK.fullmatch(f):
                continue
            if any(s <= t.start() and t.end() <= e for s, e in actor_spans):
                continue  # "OTAN", "ELN", "Finlandia": actors, compared apart
            digits = any(ch.isdigit() for ch in w)
            acronym = len(w) >= 3 and w.isupper() and w.isalpha()
            if digits and len(re.sub(r"\W", "", f)) >= 3 and not re.fullmatch(r"n\W*o?\W*\d+", f):
                coded.append(f)
            elif digits:
                weak.append(re.sub(r"^n\W*o?\W*", "", f))
            elif glossary_terms(w):
                weak.append(f)  # a term of the field ("GPS", "IA"), no name
                headed = headed or f in _GENERIC  # "Estrategia" is a term and a document's head
            elif acronym or _proper(w):
                strong.append(f)
            else:
                headed = headed or f in _GENERIC
                weak.append(f)
        if coded:
            # a designation names the thing alone: "Cosmos 1408" is no "Cosmos 886"
            out.append(Anchor(tuple(coded), (), (start, end), headed))
        elif strong:
            out.append(Anchor(tuple(strong), (), (start, end), headed))
        elif any(any(ch.isdigit() for ch in w) for w in weak) and len(weak) >= 3:
            out.append(Anchor((), tuple(weak), (start, end), True))
    return tuple(out)


def names_anchor(premise_text: str, sentence: str) -> bool:
    """Could ``sentence`` refute the premise by substitution, so that the analyst reads its passage:
    it names one of the premise's anchors, or it has the premise's count (a number of two to four
    digits, no year) beside one of the premise's actors ("Finland's acquisition of 64 F-35 fighters"
    for "Finlandia compró 64 cazas Gripen")."""
    f = fold_question(sentence)
    if any(a.found(f) for a in anchors(premise_text)):
        return True
    p = fold_spans(premise_text)
    counts = [n for n in re.findall(r"(?<![\d.,])(\d{2,4})(?![\d.,]?\d)", p) if not _YEAR.fullmatch(n)]
    return bool(
        counts
        and any(re.search(rf"(?<![\d.,]){n}(?![\d.,]?\d)", f) for n in counts)
        and set(_premise_actors(p)) & set(actors(f))
    )


def anchor_names(premise_text: str) -> list[str]:
    """The premise's anchors as the question spells them (quoted titles, designations, acronyms,
    proper words of three letters or more), for a search inside the documents that name them
    (``RetrievalService.documents_naming``); short-number anchors ("N.º 12") are left out."""
    out = []
    folded = fold_spans(premise_text)
    for a in anchors(premise_text):
        for tok in a.strong:
            at = folded.find(tok, a.span[0])
            out.append(premise_text[at : at + len(tok)] if at >= 0 else tok)
    return list(dict.fromkeys(t for t in out if len(t) >= 3))


def _content_words(folded: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z]{4,}", folded) if w not in _FUNCTION}


_PUBLISHED = (
    r"(?:first |originally )?(?:published|released|issued|adopted|approved|presented|signed|"
    r"publicad[oa]|emitid[oa]|aprobad[oa]|presentad[oa]|adoptad[oa]|expedid[oa]|firmad[oa]|lanzad[oa])"
)


def _bound_year(folded: str, span: tuple[int, int]) -> set[int]:
    """Years written right at a name: "the 2008 Allard Report", "Informe Allard de 2001", "(2019)",
    "Strategy 2021–2025", "Allard's 2008 report" (at most one word between), or the name's
    publication stated right after it ("the Allard Report, published in March 2008")."""
    s, e = span
    before = folded[max(0, s - 12) : s]
    after = folded[e : e + 48]
    years = set()
    m = re.search(r"(1[89]\d\d|20\d\d)\W*(?:\w+\W+)?$", before)
    if m:
        years.add(int(m.group(1)))
    for m in re.finditer(
        # (a space, a parenthesis or a bracket between; never a comma or a full stop: "In the X Review,
        # 2005 figures show…" binds nothing)
        r"^(?:'s)?[\s(\[]*(?:(?:de|del|of|from|in|en)\W+)?(1[89]\d\d|20\d\d)(?:\W+(1[89]\d\d|20\d\d))?",
        after,
    ):
        years |= {int(y) for y in m.groups() if y}
    m = re.match(rf"^\W{{0,3}}{_PUBLISHED}\W+(?:in|en|el|on)\W+(?:\w+\W+){{0,2}}?(1[89]\d\d|20\d\d)(?!\d)", after)
    if m:
        years.add(int(m.group(1)))
    return years


def _name_extent(sentence: str, span: tuple[int, int], words: int = 4) -> tuple[int, int]:
    """``span`` (of ``textfold.fold_spans(sentence)``, the same offsets as ``sentence``) widened over
    the name's other words around it: capitalised words, the document heads of ``_GENERIC`` and the
    joining words between them, at most ``words`` on each side — "the Tessaro **Strategic Review**
    (2005)" for "Tessaro", so that a year after an English name's head binds as it does after a
    Spanish one ("el Informe Tessaro de 2005")."""
    start, end = span
    tokens = list(re.finditer(r"[^\W_][\w\-]*", sentence))

    def part(i: int) -> bool:
        w = tokens[i].group(0)
        f = fold_question(w)
        return ((w[:1].isupper() and f not in _FUNCTION) or f in _GENERIC) and not _YEAR.fullmatch(w)

    after = [i for i, t in enumerate(tokens) if t.start() >= end]
    taken = 0
    for n, i in enumerate(after):
        gap = sentence[(tokens[after[n - 1]].end() if n else end) : tokens[i].start()]
        if taken >= words or re.search(r"[^\s]", gap):
            break  # a comma, a parenthesis or a quote ends the name
        w = fold_question(tokens[i].group(0))
        if part(i) or (w in _BRIDGE and n + 1 < len(after) and part(after[n + 1])):
            end, taken = tokens[i].end(), taken + 1
        else:
            break
    before = [i for i, t in enumerate(tokens) if t.end() <= start][::-1]
    taken = 0
    for n, i in enumerate(before):
        gap = sentence[tokens[i].end() : (tokens[before[n - 1]].start() if n else start)]
        if taken >= words or re.search(r"[^\s]", gap):
            break
        w = fold_question(tokens[i].group(0))
        if part(i) or (w in _BRIDGE and n + 1 < len(before) and part(before[n + 1])):
            start, taken = tokens[i].start(), taken + 1
        else:
            break
    return start, end


def _sentence_bound_years(sentence: str, anchor: Anchor, span: tuple[int, int], folded: str) -> set[int]:
    """The years a sentence binds to ``anchor``: at the anchor's own words (``span`` in ``folded``,
    the sentence as ``judge`` folds it) and at the whole name around them (``_name_extent``)."""
    years = _bound_year(folded, span)
    spans_fold = fold_spans(sentence)
    at = anchor.found(spans_fold)
    if at is not None:
        years |= _bound_year(spans_fold, _name_extent(sentence, at))
    return years


def _after_number(folded: str, number: str) -> list[str]:
    """The (up to three) words after each occurrence of ``number`` in a folded text."""
    out = []
    for m in re.finditer(rf"(?<![\d.,]){re.escape(number)}(?![\d.,]\d)", folded):
        out += re.findall(r"[\w\-]+", folded[m.end() : m.end() + 40])[:3]
    return out


# (5) a figure of the premise stated otherwise: "cerca del 40 % de los empleos de datos e IA" / "26
# percent of workers in data and AI roles"; "unos 200 proyectos Erasmus" / "nearly 2.000 Erasmus
# projects". A number with its unit (a share, or a count of the words after it), thousands written
# "2.000", "2,000" or "2 000"; a year, a designation ("S. 584", "035-18", "N.º 12") or a day of a
# date is no figure.
_PERCENT_UNIT = r"(?:%|por ?ciento|percent|per cent|pct|porcento)"
_FIGURE = re.compile(
    r"(?<![\w.,/-])(\d{1,3}(?:(?:[.,]| (?=\d{3}(?!\d)))\d{3})+|\d+(?:[.,]\d+)?)(?![\w/-]|[.,]\d)\s*("
    + _PERCENT_UNIT
    + r"(?!\w))?"
)
_NUMBER_WORDS = {"docena": 12, "veintena": 20, "centenar": 100, "millar": 1000, "dozen": 12, "hundred": 100}
_NUMBER_WORD = re.compile(r"(?<!\w)(?:una|un|a|one)\s+(docena|veintena|centenar|millar|dozen|hundred)(?!\w)")
# counts written in words, two to ninety-nine ("twenty-nine countries", "veintinueve países", "dos
# redes"); "one"/"uno"/"una" are left out (a pronoun or an article far more often than a count)
_UNITS_EN = "two three four five six seven eight nine".split()
_TEENS_EN = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS_EN = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_UNITS_ES = "dos tres cuatro cinco seis siete ocho nueve".split()
_TEENS_ES = "diez once doce trece catorce quince dieciseis diecisiete dieciocho diecinueve".split()
_TENS_ES = "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa".split()
_WORD_VALUES: dict[str, int] = {}
for _i, _w in enumerate(_UNITS_EN + _UNITS_ES):
    _WORD_VALUES[_w] = 2 + _i % 8
for _i, _w in enumerate(_TEENS_EN + _TEENS_ES):
    _WORD_VALUES[_w] = 10 + _i % 10
for _i, _w in enumerate(_TENS_EN + _TENS_ES):
    _WORD_VALUES[_w] = 20 + 10 * (_i % 8)
for _u, _v in zip(["uno", "un", "una", *_UNITS_ES], [1, 1, 1, *range(2, 10)], strict=True):
    _WORD_VALUES["veinti" + _u] = 20 + _v
_COUNT_WORD = re.compile(
    r"(?<![\w-])(" + "|".join(sorted(_WORD_VALUES, key=len, reverse=True)) + r")"
    r"(?:(?:-| y | )(one|uno|una|" + "|".join(_UNITS_EN + _UNITS_ES) + r"))?(?![\w-])"
)
_DATE_WORD = re.compile(
    r"^\s*(?:de\s+)?(?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|"
    r"diciembre|january|february|march|april|may|june|july|august|september|october|november|december)(?!\w)"
)
_FIGURE_WINDOW = 60  # characters after a figure read as what it counts
_FIGURE_TOLERANCE = 0.15  # two figures within 15 % of the larger are the same figure ("cerca del 40 %" / "38 %")


def _figure_value(raw: str) -> float | None:
    """``"2.000"`` / ``"2,000"`` / ``"2 000"`` → 2000.0; ``"3,5"`` / ``"3.5"`` → 3.5; None if unreadable."""
    t = raw.replace(" ", "")
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", t):
        return float(re.sub(r"[.,]", "", t))
    try:
        return float(t.replace(",", "."))
    except ValueError:
        return None


def figures(text: str) -> list[tuple[float, str, str]]:
    """The figures of a text as ``(value, unit, what)``: ``unit`` ``"%"`` for a share, ``"n"`` for a
    count; ``what`` the folded text after it (``_FIGURE_WINDOW`` characters), which says what it
    counts. Left out: years (1800–2099 written plainly), the day of a date, and designations — a
    number after a capitalised word ("Alerta Temprana 036", "Cosmos 1408"), with a leading zero
    ("036"), after "S.", "N.º", "No." or before "-18". ``text`` as written (its case is read) or folded."""
    folded = fold_spans(text)  # same offsets as ``text``
    out: list[tuple[float, str, str]] = []
    for m in _FIGURE.finditer(folded):
        raw, unit = m.group(1), "%" if m.group(2) else "n"
        before = folded[max(0, m.start() - 4) : m.start()]
        after = folded[m.end() : m.end() + _FIGURE_WINDOW]
        if unit == "n" and (_YEAR.fullmatch(raw) or _DATE_WORD.match(after)):
            continue
        if re.search(r"(?:\bs|\bn|no|nro|num)\W{0,2}$", before) or re.match(r"\s*[-–]\s*\d", after):
            continue  # "S. 584", "N.º 12", "035-18": a designation
        prev = re.search(r"([^\W\d_][\w-]*)\s+$", text[max(0, m.start() - 40) : m.start()])
        if unit == "n" and (raw[:1] == "0" and len(raw) > 1 or prev is not None and prev.group(1)[:1].isupper()):
            continue  # "Alerta Temprana 036", "Cosmos 1408": a name's number
        value = _figure_value(raw)
        if value is not None:
            out.append((value, unit, after))
    for m in _NUMBER_WORD.finditer(folded):
        out.append((float(_NUMBER_WORDS[m.group(1)]), "n", folded[m.end() : m.end() + _FIGURE_WINDOW]))
    for m in _COUNT_WORD.finditer(folded):
        value = _WORD_VALUES[m.group(1)]
        if m.group(2) and value >= 20 and value % 10 == 0:
            value += {"one": 1, "uno": 1, "una": 1}.get(m.group(2), _WORD_VALUES.get(m.group(2), 0))
        elif m.group(2):
            continue  # "dos tres": no number
        after = folded[m.end() : m.end() + _FIGURE_WINDOW]
        if re.match(r"\s*(?:%|por ?ciento|percent)", after):
            out.append((float(value), "%", after))
        elif re.match(r"\s*[a-z]", after):  # a count of the words after it
            out.append((float(value), "n", after))
    return out


def _same_figure(a: float, b: float) -> bool:
    return abs(a - b) <= _FIGURE_TOLERANCE * max(abs(a), abs(b), 1e-9)


@functools.lru_cache(maxsize=256)
def _word_patterns(folded: str) -> tuple[tuple[str, re.Pattern], ...]:
    """``(word, pattern)`` per content word of a folded text (two letters or more, no function
    word): the pattern finds the word's first five letters, or those of its English translation in
    the induced lexicon (``retrieval.glossary.load_induced_lexicon``: "mujeres" → "women", "empleos"
    → "jobs"). Cached: the premise judge asks it once per sentence read."""
    lexicon = load_induced_lexicon()
    out = []
    for w in dict.fromkeys(re.findall(r"[a-z]{2,}", folded)):
        if w in _FUNCTION or len(w) < 4 and w not in lexicon:
            continue
        stems = {w[:5], *(t[:5] for t in (lexicon.get(w) or "").split() if len(t) >= 2)}
        out.append((w, re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(x) for x in sorted(stems)) + ")")))
    return tuple(out)


def _word_matchers(folded: str, predicate: tuple[Callable[[str], bool], ...] = ()) -> list[Callable[[str], bool]]:
    """One matcher per content word of a folded text (``_word_patterns``), also true on a text
    meeting a ``predicate`` concept the word itself meets (its glossary aliases: "datos" → "data")."""
    out = []
    for w, pat in _word_patterns(folded):
        own = tuple(f for f in predicate if f(w))
        out.append(lambda text, pat=pat, own=own: pat.search(text) is not None or any(f(text) for f in own))
    return out


def other_figure(
    premise_text: str, sentence: str, predicate: tuple[Callable[[str], bool], ...], strong: set[str]
) -> bool:
    """Rule (5): the premise (as written) gives a figure, the sentence gives another for
    the same thing and never the premise's. The same thing: what follows the sentence's figure meets
    a matcher (a ``predicate`` concept, a word of the premise or its lexicon translation, a ``strong``
    anchor token) that what follows the premise's figure meets, and the sentence meets at least two
    of the premise's word matchers (or a strong anchor) in all; the units agree (a share with a
    share, a count with a count)."""
    p_figs = figures(premise_text)
    if not p_figs:
        return False
    s_figs = figures(sentence)
    p, s = fold_spans(premise_text), fold_question(sentence)
    if not s_figs or _NEGATED.search(s) and len(s_figs) == 1:
        return False
    words = _word_matchers(p, predicate)
    matchers = [*predicate, *words]
    names_in_s = any(re.search(rf"(?<!\w){re.escape(t)}(?!\w)", s) for t in strong)
    if sum(1 for f in words if f(s)) < 2 and not names_in_s:
        return False
    for value, unit, what in p_figs:
        if any(u == unit and _same_figure(v, value) for v, u, _ in s_figs):
            continue  # the premise's figure is there
        counted = [f for f in matchers if f(what)]
        names = {t for t in strong if re.search(rf"(?<!\w){re.escape(t)}(?!\w)", what)}
        if not counted and not names:
            continue
        for v, u, s_what in s_figs:
            if u != unit or _same_figure(v, value):
                continue
            if any(f(s_what) for f in counted) or any(
                re.search(rf"(?<!\w){re.escape(t)}(?!\w)", s_what) for t in names
            ):
                return True
    return False


def judge(
    premise_text: str,
    years: tuple[int, ...],
    sentence: str,
    predicate: tuple[Callable[[str], bool], ...] = (),
    agents: tuple[str, ...] | None = None,
    collective: bool = False,
) -> str | None:
    """The substitution one sentence shows against a positive premise, or None.

    ``premise_text``: the premise as written; ``years``: its years; ``sentence``: one evidence
    sentence, verbatim. Returns ``actor_distinto`` (the anchor's sentence names another country or
    group of the premise actor's kind, and none of the premise's actors), ``conflicto_de_anio``
    (a year bound to the anchor in the premise and another bound to it in the sentence, the
    premise's absent), ``objeto_distinto`` (the premise's number counts a named object, the
    sentence's same number counts another name and the premise's is absent), ``accion_opuesta``
    (the premise's action and, at the anchor, the opposite one: launched/closed, approved/rejected,
    rose/fell). ``predicate``: matchers (``premise.Concept.found_in``, cross-language aliases) of the
    premise's content words other than its names; one must match for another actor to count, else
    the premise's own content words (first five letters) are compared. ``agents``: the name-set keys
    of who did it (``premise.Slots.who_keys``); None: the actors named before the premise's first
    name ("la OTAN lanzó el programa 'X'"; an owner after it, "un satélite chino", is none).
    ``collective``: a predicate several actors share (presence in a place): no actor substitution,
    but a pair in a dispute still has its partner compared (2b).
    See the module docstring for the guards."""
    s = fold_question(sentence)
    if _MODAL.search(fold_question(_MONTH_MAY.sub(" ", sentence))):  # "in May" is a month, not a modal
        return None
    p = fold_spans(premise_text)  # same length as the text: an anchor's span reads the same
    s_years = {int(y) for y in _YEAR.findall(s)}
    p_actors = _premise_actors(p)
    s_actors = actors(s)

    def negated(at: tuple[int, int]) -> bool:
        # a negation within ~8 words of the span ("not local personnel" at the end of a long
        # sentence says nothing of the name at its start)
        return any(abs(m.start() - at[0]) <= _NEAR or abs(m.start() - at[1]) <= _NEAR for m in _NEGATED.finditer(s))

    # (0) the number of a counted, named object ("64 cazas Gripen"), counting another name ("64
    # F-35 fighters") in a sentence of the premise's actor: the premise's name is absent there
    if not p_actors or set(p_actors) & set(s_actors):
        all_anchors = anchors(premise_text)
        for num in re.findall(r"(?<![\d.,])(\d{2,4})(?![\d.,]?\d)", p):
            if _YEAR.fullmatch(num):
                continue
            p_next = [w for w in _after_number(p, num) if w not in _FUNCTION]
            named = [w for w in p_next if any(w == t for a in all_anchors for t in a.strong)]
            if not named or any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", s) for w in named):
                continue
            s_next = [w for w in _after_number(s, num) if w not in _FUNCTION]
            at = re.search(rf"(?<![\d.,]){re.escape(num)}", s)
            if at is None or negated(at.span()):
                continue
            names = sentence_names(sentence)
            if any(any(ch.isdigit() for ch in w) or w in names for w in s_next if w not in p_next):
                return "objeto_distinto"
    # (5) a figure of the premise stated otherwise, for the same thing (``other_figure``)
    strong = {t for a in anchors(premise_text) for t in a.strong if not t.isdigit()}
    if other_figure(premise_text, sentence, predicate, strong):
        return "cifra_distinta"
    found = [(a, a.found(s)) for a in anchors(premise_text)]
    found = [(a, sp) for a, sp in found if sp is not None]
    if not found:
        return None
    # (1) a year bound to the name, otherwise (a fact about the name whatever else the sentence denies)
    for a, sp in found:
        if not a.headed:
            continue  # a series or a company ("Cosmos", "Iridium") has many years; a document one
        p_bound = _bound_year(p, a.span)
        s_bound = _sentence_bound_years(sentence, a, sp, s)
        if p_bound and s_bound and not (p_bound & s_bound) and not (set(years) & s_years):
            return "conflicto_de_anio"
    # (1b) the year something named began, otherwise: "la IAWN y el SMPAG … fueron creadas en 2018" /
    # "two entities established in 2014: the International Asteroid Warning Network (IAWN) and …": the
    # premise's beginning verb with its year, the sentence's beginning verb with another year within
    # ``_BEGUN_WINDOW`` characters before the name or 60 after it, the premise's year nowhere in it
    if years and not (set(years) & s_years) and _ACTION_RE["inicio"].search(p):
        for _a, (a_start, a_end) in found:
            window = s[max(0, a_start - _BEGUN_WINDOW) : a_end + 60]
            if _BEGUN_IN.search(window) and not negated((a_start, a_end)):
                return "conflicto_de_anio"
    if any(negated(sp) for _, sp in found):
        return None
    # (2) another actor of the same kind in the anchor's sentence; for a role in an organisation
    # ("alias “Joel” era cabecilla del Clan del Golfo"), the organisation is who, and any role word
    # at the name ("un presunto miembro del EPL, conocido bajo el alias de “Joel”") shares the predicate
    role = _ROLE_IN.search(p)
    if agents is None and role is not None:
        agents = tuple(k for k, (_, spans) in p_actors.items() if any(st >= role.start() for st, _ in spans))
        predicate = (*predicate, lambda text: _ROLE_IN_WORDS.search(text) is not None)
    if agents is None:
        first = min((a.span[0] for a in anchors(premise_text)), default=len(p))
        agents = tuple(k for k, (_, spans) in p_actors.items() if any(e <= first for _, e in spans))
    if agents and not collective and not set(p_actors) & set(s_actors):
        kinds = {p_actors[k][0] for k in agents if k in p_actors}
        others = [key for key, (kind, _) in s_actors.items() if kind in kinds]
        anchor_words = {w[:5] for a, _ in found for tok in (*a.strong, *a.weak) for w in tok.split()}
        predicate_words = _content_words(p) - anchor_words - {w[:5] for k in p_actors for w in re.findall(r"\w+", k)}
        shares = any(f(s) for f in predicate) if predicate else bool(predicate_words & _content_words(s))
        if others and shares:
            return "actor_distinto"
    # (2b) the partner swapped: the premise pairs two actors ("las AGC se disputan Juradó con las
    # disidencias", "desarrollado junto con China"); the sentence at the name pairs one of them, or
    # the name alone, with a third actor of the other's kind, and never names the other
    if len(p_actors) >= 2 and _PAIR.search(p) and _PAIR.search(s):
        for a_key in p_actors:
            for b_key, (b_kind, _) in p_actors.items():
                if b_key == a_key or b_key in s_actors:
                    continue
                third = [k for k, (kind, _) in s_actors.items() if kind == b_kind and k not in p_actors]
                if third and (a_key in s_actors or not set(p_actors) & set(s_actors)):
                    return "actor_distinto"
    # (2c) a titled person swapped: "el senador Ted Cruz presentó la Act…" / "Senator Cornyn (R-TX)
    # introduced … the Act": the sentence at the name gives the title to another person and never
    # names the premise's
    if _other_person(premise_text, sentence, s):
        return "actor_distinto"
    # (2d) the partner of a joint act swapped: "el GeoTech Center coorganizó el Space Salon con
    # Microsoft" / "the GeoTech Center and Amazon Web Services (AWS) jointly hosted … Space Salon"
    if _other_partner(premise_text, sentence, s):
        return "actor_distinto"
    # (3) the opposite action at the name
    for fam, pat in _ACTION_RE.items():
        if pat.search(p) and not pat.search(s) and _ACTION_RE[_OPPOSITE[fam]].search(s):
            if s_years and years and not (s_years & set(years)):
                return None
            return "accion_opuesta"
    return None


_ROLE_WORDS = (
    r"cabecilla|lider|jefe|jefa|comandante|fundador|fundadora|cofundador|director|directora|presidente|"
    r"presidenta|miembro|integrante|portavoz|vocero|vocera|member|leader|head|commander|founder|spokesman|"
    r"spokesperson|militante|combatiente|alias"
)
_ROLE_IN = re.compile(rf"(?<!\w)era (?:el |la |un |una )?(?:{_ROLE_WORDS})(?!\w)")
_ROLE_IN_WORDS = re.compile(rf"(?<!\w)(?:{_ROLE_WORDS})(?!\w)")
_MONTH_MAY = re.compile(r"(?<=[\s(])May(?=[\s.,;)]|$)")
_BEGUN_WINDOW = 120
_BEGUN_IN = re.compile(
    rf"(?<!\w)(?:{_ACTIONS['inicio']})\W+(?:\w+\W+){{0,2}}?(?:in|en|em|since|desde)\W+(?:\w+\W+){{0,2}}?(?:1[89]\d\d|20\d\d)(?!\d)"
)
_TITLES = {
    "senador": "senator", "senadora": "senator", "senator": "senator", "sen.": "senator",
    "ministro": "minister", "ministra": "minister", "minister": "minister",
    "presidente": "president", "presidenta": "president", "president": "president",
    "representante": "representative", "representative": "representative", "rep.": "representative",
    "congresista": "representative", "congressman": "representative", "congresswoman": "representative",
    "gobernador": "governor", "gobernadora": "governor", "governor": "governor",
    "secretario": "secretary", "secretaria": "secretary", "secretary": "secretary",
    "general": "general", "almirante": "admiral", "admiral": "admiral",
    "director": "director", "directora": "director", "embajador": "ambassador", "ambassador": "ambassador",
}  # fmt: skip
_TITLED = re.compile(
    r"(?<![\w.])((?i:" + "|".join(re.escape(t) for t in sorted(_TITLES, key=len, reverse=True)) + r"))\s+"
    r"((?:[A-ZÁÉÍÓÚÑ][\w'’-]+\s+){0,2}[A-ZÁÉÍÓÚÑ][\w'’-]+)"
)
_CAPS_NAME = re.compile(r"(?<![\w-])[A-ZÁÉÍÓÚÑ][\w&.-]*(?:\s+(?:of\s+|de\s+|del\s+)?[A-ZÁÉÍÓÚÑ][\w&.-]*)*")
_PARTNER_CUE = re.compile(r"(?<!\w)(?:con|junto con|junto a|with|together with|along with|com)\s+$")
_JOINT = re.compile(
    r"(?<!\w)(?:jointly|together|co-?\w+|junto|conjunt\w*|in (?:partnership|collaboration|cooperation) with|"
    r"en (?:colaboraci[oó]n|alianza|asociaci[oó]n) con|partner\w*)(?!\w)"
)


def _titled_people(text: str) -> set[tuple[str, str]]:
    """``(title, surname)`` of each titled person a text names ("Senator Cornyn" → ("senator",
    "cornyn"), "el senador Ted Cruz" → ("senator", "cruz")): the title in English, the last
    capitalised word folded."""
    out = set()
    for m in _TITLED.finditer(text):
        words = m.group(2).split()
        if words and words[-1][:1].isupper():
            out.add((_TITLES[m.group(1).lower()], fold_question(words[-1])))
    return out


def _other_person(premise_text: str, sentence: str, folded: str) -> bool:
    """Rule (2c): the premise's titled people, none named in the sentence, and the sentence gives one
    of their titles to someone else."""
    mine = _titled_people(premise_text)
    if not mine or any(re.search(rf"(?<!\w){re.escape(sur)}(?!\w)", folded) for _, sur in mine):
        return False
    titles = {t for t, _ in mine}
    return any(t in titles for t, _ in _titled_people(sentence))


def _other_partner(premise_text: str, sentence: str, folded: str) -> bool:
    """Rule (2d): the premise names a partner after "con"/"with" ("… con Microsoft"), the sentence
    never names it, says the act was joint (``_JOINT``) and pairs one of the premise's other names
    with a name the premise does not have ("the GeoTech Center and Amazon Web Services")."""
    partners, others = [], []
    for m in _CAPS_NAME.finditer(premise_text):
        if m.start() == 0:
            continue
        key = fold_question(m.group(0))
        (partners if _PARTNER_CUE.search(premise_text[: m.start()]) else others).append(key)
    if not partners or not others or not _JOINT.search(folded):
        return False
    if any(re.search(rf"(?<!\w){re.escape(p.split()[0])}(?!\w)", folded) for p in partners):
        return False
    premise_folded = fold_question(premise_text)
    for o in others:
        at = folded.find(o)
        if at < 0:
            continue
        tail = sentence[at + len(o) : at + len(o) + 80]
        m = re.match(
            r"\s*(?:,\s*)?(?:and|y|e|with|con|together with)\s+(?:the\s+|el\s+|la\s+)?([A-ZÁÉÍÓÚÑ][\w&.-]*(?:\s+[A-ZÁÉÍÓÚÑ][\w&.-]*)*)",
            tail,
        )
        if m and fold_question(m.group(1)).split()[0] not in premise_folded:
            return True
    return False


def sentence_names(sentence: str) -> set[str]:
    """Folded capitalised words and designations of a sentence (original case read)."""
    return {
        fold_question(w)
        for w in re.findall(r"[\w\-]+", sentence)
        if (w[:1].isupper() and len(w) >= 2) or (any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w))
    }
