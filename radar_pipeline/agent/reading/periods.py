"""Periods in a question, read as a person reads them: open and closed year ranges.

``parse_period(question, reference_year)`` finds at most one period expression and returns a
``Period`` with inclusive bounds (``desde``/``hasta``, either may be ``None`` for an open range):

=====================================  ==========================================
"en 2021", "durante 2021"              2021–2021
"entre 2015 y 2020", "de 2015 a 2020"  2015–2020 (also "del 2015 al 2020", "2015-2020",
                                       "entre 2015 e 2020")
"2018-22", "del 2018 al 22"            2018–2022 (a two-digit end in the start's century;
                                       "del 18 al 22" is left alone: days as often as years)
"la década de 2010", "los años 90"     2010–2019 / 1990–1999 ("los noventa", "the 1990s")
"desde 2019", "a partir de 2019"       2019–open ("de 2019 en adelante", "2019 en adelante")
"después de 2018", "posterior al 2018" 2019–open (the year itself excluded; "tras 2018")
"antes de 2018", "previo al 2018"      open–2017 (the year itself excluded)
"hasta 2020", "hasta 2020 inclusive"   open–2020
"en los últimos cinco años"            (R-4)–R, R = ``reference_year`` (any number 1–20 in
                                       digits or words; "los 5 años más recientes")
"el último lustro" / "la última década" (R-4)–R / (R-9)–R ("decenio", "quinquenio", "the past decade")
"las dos últimas décadas"              (R-19)–R
"desde hace una década", "desde hace   (R-9)–R / (R-4)–R ("de hace N años para acá", "N años
5 años"                                para acá")
"hace cuatro años", "hace una década"  (R-4)–(R-4) / (R-10)–(R-10): that one year
"el último año" / "este año"           R–R ("en lo que va del año")
"el año pasado", "el año anterior"     (R-1)–(R-1)
"del 2020 para acá"                    2020–open
"desde la firma del acuerdo de paz"    2016–open (``ANCHORS``: dated events)
=====================================  ==========================================

"en los últimos años" (no number) is no period. English and Portuguese forms of the same families
are read too ("over the past two decades", "nos últimos dez anos", "depois de 2018", "até 2020").

Relative expressions need ``reference_year``: the year of the newest dated document (SPEC
"Publication dates from source metadata only"), so "the last five years" means the last five
years *of the corpus*; the answer states it (``Period.describe``). Without a reference year a
relative expression is returned with ``relative=True`` and no bounds.

Two loose years without range wording ("compara 2019 y 2023") are **not** a period: they are two
coverage requirements (``requirements.extract_requirements``), and a visual filter spans them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from radar_pipeline.agent.reading.rules import rulebook
from radar_pipeline.textfold import fold_question

_RULES = rulebook()

__all__ = ["Period", "parse_period", "year_span", "YEAR_MIN", "YEAR_MAX"]

YEAR_MIN, YEAR_MAX = 1950, 2049
_Y = r"((?:19[5-9]|20[0-4])\d)"
_NUM_WORDS = {
    "un": 1,
    "uno": 1,
    "una": 1,
    "dos": 2,
    "tres": 3,
    "cuatro": 4,
    "cinco": 5,
    "seis": 6,
    "siete": 7,
    "ocho": 8,
    "nueve": 9,
    "diez": 10,
    "once": 11,
    "doce": 12,
    "trece": 13,
    "catorce": 14,
    "quince": 15,
    "dieciseis": 16,
    "diecisiete": 17,
    "dieciocho": 18,
    "diecinueve": 19,
    "veinte": 20,
    # English and Portuguese, as analysts mix them in
    "one": 1,
    "a": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "dois": 2,
    "duas": 2,
    "quatro": 4,
    "sete": 7,
    "oito": 8,
    "dez": 10,
    "vinte": 20,
}
_N = r"(\d{1,2}|" + "|".join(sorted(_NUM_WORDS, key=len, reverse=True)) + r")"
# Spans of years a relative expression counts in, and how many years each is
_UNITS = {
    "ano": 1,
    "anos": 1,
    "year": 1,
    "years": 1,
    "lustro": 5,
    "lustros": 5,
    "quinquenio": 5,
    "quinquenios": 5,
    "bienio": 2,
    "trienio": 3,
    "decada": 10,
    "decadas": 10,
    "decenio": 10,
    "decenios": 10,
    "decade": 10,
    "decades": 10,
}
_UNIT = r"(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")(?!\w)"
_ART = r"(?:el |los |la |las |del |al |ano |anos |año |años )*"


@dataclass(frozen=True)
class Period:
    """An inclusive year range read from a question. ``desde``/``hasta`` ``None`` = open end.

    ``relative``: the range came from a relative expression and was resolved against
    ``reference_year`` (the newest dated document). ``text``: the words it came from."""

    desde: int | None
    hasta: int | None
    text: str
    relative: bool = False
    reference_year: int | None = None

    @property
    def closed(self) -> bool:
        return self.desde is not None and self.hasta is not None

    def years(self) -> list[int]:
        """Every year of a closed range (empty for an open one)."""
        return list(range(self.desde, self.hasta + 1)) if self.closed else []

    def contains(self, year: int | None) -> bool:
        """Whether ``year`` falls inside the range (an unknown year never does)."""
        if year is None:
            return False
        return (self.desde is None or year >= self.desde) and (self.hasta is None or year <= self.hasta)

    def describe(self) -> str:
        """Spanish wording for the answer, e.g. ``desde 2019`` or ``2021–2025 (los últimos 5 años
        del corpus: el documento fechado más reciente es de 2025)``."""
        if self.desde is not None and self.hasta is not None:
            core = str(self.desde) if self.desde == self.hasta else f"{self.desde}–{self.hasta}"
        elif self.desde is not None:
            core = f"desde {self.desde}"
        elif self.hasta is not None:
            core = f"hasta {self.hasta}"
        else:
            core = self.text
        if self.relative and self.reference_year is not None:
            core += f" («{self.text}», contado desde {self.reference_year}, el año del documento fechado más reciente)"
        return core


def _n(word: str) -> int | None:
    return int(word) if word.isdigit() else _NUM_WORDS.get(word)


def _relative(folded: str, ref: int | None) -> tuple[int | None, int | None, str] | None:
    """A relative period: ``(desde, hasta, words)`` resolved against ``ref``; ``(None, None,
    words)`` without a reference year; None when the question has none.

    Families (Spanish, with the English and Portuguese forms): the last N units ("los últimos
    cinco años", "la última década", "el último lustro", "las dos últimas décadas", "the past
    decade", "nos últimos dez anos") and "desde hace N units" / "N units para acá" → the last N×unit
    years up to ``ref``; "hace N units" alone → that one year; "el año pasado" → ``ref``-1; "este
    año", "el último año", "en lo que va del año" → ``ref``. N is digits or a number word (uno…veinte)."""
    last = _LAST
    # months, at the year granularity of the views: "los últimos 24 meses" spans 2 calendar years
    folded = re.sub(
        r"(?<!\w)(\d{1,3}) (?:meses|months|meses)(?!\w)",
        lambda m: f"{max(1, -(-int(m.group(1)) // 12))} anos",
        folded,
    )
    if re.search(r"(?<!\w)(?:anos?|anual\w*|years?)(?!\w)", folded):
        # "año a año, últimos 5": the unit said once, elsewhere in the question, is the count's unit
        folded = re.sub(rf"(?<!\w)(ultim[oa]s|last|past) ({_N})(?=\W*$|\s*[,;.?!])", r"\1 \2 anos", folded)
    lead = r"(?:(?:en|durante|de|in|over|during|for|na|nas|no|nos)\s)?(?:(?:el|la|los|las|the|o|a|os|as)\s)?"
    rules: list[tuple[str, str]] = [
        # "los últimos cinco años", "las dos últimas décadas", "the last two decades", "los 5 años más recientes"
        (rf"{lead}{last} {_N} {_UNIT}", "n_unit"),
        (rf"(?<!\w){lead}{_N} {last} {_UNIT}", "n_unit"),
        (rf"(?<!\w){lead}{_N} {_UNIT} (?:mas recientes|recientes|pasad[oa]s)", "n_unit"),
        # "desde hace una década", "desde hace 5 años", "hace diez años para acá", "de hace 3 años a la fecha"
        (rf"(?:desde|a partir de) hace {_N} {_UNIT}", "n_unit"),
        (rf"(?:de )?hace {_N} {_UNIT},? (?:para aca|a esta parte|hasta (?:hoy|ahora|la fecha)|a la fecha)", "n_unit"),
        (rf"(?<!\w){_N} {_UNIT},? (?:para aca|a esta parte|atras para aca)", "n_unit"),
        (rf"(?:since|for the past|in the past) {_N} {_UNIT}", "n_unit"),
        # "la última década", "el último lustro", "the past decade"; "el último año" is one year
        # ("en los últimos años", with no number, is no period)
        (
            rf"{lead}(?:ultim[oa]|past|last) (lustro|quinquenio|bienio|trienio|decada|decenio|decade|ano)(?!\w)(?! y medio)",
            "unit",
        ),
        # "hace diez años", "hace una década": that year
        (rf"(?<!desde )(?<!partir de )hace {_N} {_UNIT}", "ago"),
        (rf"(?<!\w){_N} {_UNIT} ago", "ago"),
        # "desde el año pasado": from that year on, like "desde 2024"
        (r"(?:desde|a partir de|a partir del) (?:el )?ano (?:pasado|anterior)|since last year", "since_prev"),
        # "hasta el año pasado": open start; "antes del año pasado": up to the year before it
        (r"(?:hasta|until|through|up to|ate) (?:el |o )?ano (?:pasado|anterior|passado)|until last year", "until_prev"),
        (r"antes del? (?:el )?ano (?:pasado|anterior)|before last year", "before_prev"),
        (r"(?:en |durante |de )?(?:el |del )?ano (?:pasado|anterior)|last year|(?:no |o )?ano passado", "prev"),
        (
            r"(?:en |durante )?(?:este|el presente|el actual) ano|this year|en lo que va del? ano|(?:neste|este) ano",
            "this",
        ),
    ]
    for rx, kind in rules:
        m = re.search(rx, folded)
        if not m:
            continue
        if ref is None:
            return None, None, m.group(0).strip()
        if kind == "prev":
            return ref - 1, ref - 1, m.group(0).strip()
        if kind == "since_prev":
            return ref - 1, None, m.group(0).strip()
        if kind == "until_prev":
            return None, ref - 1, m.group(0).strip()
        if kind == "before_prev":
            return None, ref - 2, m.group(0).strip()
        if kind == "this":
            return ref, ref, m.group(0).strip()
        if kind == "unit":
            n = _UNITS[m.group(1)]
        else:
            count = _n(m.group(1))
            if not count:
                continue
            n = count * _UNITS[m.group(2)]
        if kind == "ago":
            return ref - n, ref - n, m.group(0).strip()
        return ref - n + 1, ref, m.group(0).strip()
    return None


# The period phrasing: up-to-now wordings ("del 2016 para acá"), spoken contractions ("pa' acá"), the
# words before a year that open or close a period, the events analysts date periods by: data in
# precompute/data/reading_rules.yaml (kinds period, period_anchor; rewrite period_spoken)
_TO_NOW = _RULES.pattern("period_to_now")
_SPOKEN = _RULES.rewrites("period_spoken")
_LAST = _RULES.pattern("period_last")
_AFTER = _RULES.pattern("period_after")
_FROM_LEAD = _RULES.pattern("period_from_lead")
_SINCE = _RULES.pattern("period_since")
_BEFORE = _RULES.pattern("period_before")
_UNTIL = _RULES.pattern("period_until")
_ANCHOR_AFTER = _RULES.pattern("period_anchor_after")
_ANCHOR_BEFORE = _RULES.pattern("period_anchor_before")

_DECADE_WORDS = {"cincuenta": 1950, "sesenta": 1960, "setenta": 1970, "ochenta": 1980, "noventa": 1990}
# what may follow a two-digit end year ("del 2018 al 22"): the end, punctuation or a joining word,
# never "de" ("del 2018 al 22 de marzo" is a date) nor a noun ("2018 a 22 municipios")
_END2 = r"(\d{2})(?!\d)(?=\s*(?:$|[^\w\s]|(?:y|e|en|sobre|para|con|and|in|on)\b))"


def _closed_two_digit(folded: str) -> tuple[int, int, str] | None:
    """ "2018-22", "del 2018 al 22", "entre 2018 y 22": the end year written with two digits, in
    the start year's century; only when it falls after the start year. Two two-digit years ("del
    18 al 22") are left alone: they read as days of a month as often as years."""
    for rx in (
        rf"(?<!\d){_Y} ?[-–/] ?{_END2}",
        rf"(?:desde|de|del) (?:el )?(?:ano )?{_Y} (?:al|a|hasta(?: el)?) (?:el )?{_END2}",
        rf"entre (?:el )?(?:ano )?{_Y} y (?:el )?{_END2}",
    ):
        m = re.search(rx, folded)
        if m:
            a = int(m.group(1))
            b = a // 100 * 100 + int(m.group(2))
            if b > a:
                return a, b, m.group(0)
    return None


def _decade(folded: str) -> tuple[int, int, str] | None:
    """ "la década de 2010", "los años 90", "los noventa", "the 1990s" → that decade's ten years."""
    m = re.search(rf"decada (?:de |del )?(?:los )?(?:anos )?{_Y}(?!\d)|(?<!\d){_Y}s(?!\w)", folded)
    if m:
        y = int(m.group(1) or m.group(2))
        if y % 10 == 0:
            return y, y + 9, m.group(0)
    m = re.search(
        r"(?:decada de |los |anos |the )(?:los )?(?:anos )?(?:19)?([5-9]0)(?:s|'s)?(?![\w.,]\d)(?!\d)", folded
    )
    if m and re.search(r"(?:decada|anos|the)", m.group(0)):
        y = 1900 + int(m.group(1))
        return y, y + 9, m.group(0)
    m = re.search(r"(?:decada de |los |anos )(?:los )?(" + "|".join(_DECADE_WORDS) + r")(?!\w)", folded)
    if m and re.search(r"(?:decada|anos)", m.group(0)):
        y = _DECADE_WORDS[m.group(1)]
        return y, y + 9, m.group(0)
    return None


def _absolute(folded: str) -> tuple[int | None, int | None, str] | None:
    closed = [
        rf"entre {_ART}{_Y} y {_ART}{_Y}",
        rf"(?:desde|de|del) {_ART}{_Y} (?:a|al|hasta|hasta el) {_ART}{_Y}",
        rf"(?<!\d){_Y} ?[-–] ?{_Y}(?!\d)",
        rf"between {_Y} and {_Y}",
        rf"from {_Y} to {_Y}",
        rf"(?:entre|de) {_Y} (?:e|a) {_Y}",  # Portuguese "entre 2015 e 2020"
        rf"(?<![\d\w]){_Y} (?:a|al|hasta) {_ART}{_Y}(?!\d)",  # "2015 a 2020", "periodo 2015 al 2020"
    ]
    for rx in closed:
        m = re.search(rx, folded)
        if m:
            a, b = sorted((int(m.group(1)), int(m.group(2))))
            return a, b, m.group(0)
    two = _closed_two_digit(folded)
    if two:
        return two
    decade = _decade(folded)
    if decade:
        return decade
    # a dated event between the word and the year: "antes del acuerdo de 2016", "después de la prueba
    # india de 2019", "desde el informe de 2020" (the event's year bounds the period as the year would)
    event = r"(?:(?:(?:el|la|los|las|the) )?(?:[a-z]+ ){1,4}?(?:de|del|en|of|in) )?"
    after_excl = rf"{_AFTER} {event}{_ART}{_Y}"
    m = re.search(after_excl, folded)
    if m:
        return int(m.group(1)) + 1, None, m.group(0)
    m = re.search(rf"{_FROM_LEAD} {_ART}{_Y},? {_TO_NOW}", folded)
    if m:
        return int(m.group(1)), None, m.group(0)
    m = re.search(rf"(?<![\w-]){_Y},? {_TO_NOW}", folded)  # "2015 en adelante", "2019 onwards"
    if m:
        return int(m.group(1)), None, m.group(0)
    since = rf"{_SINCE} {event}{_ART}{_Y}"
    m = re.search(since, folded)
    if m:
        return int(m.group(1)), None, m.group(0)
    before = rf"{_BEFORE} {event}{_ART}{_Y}"
    m = re.search(before, folded)
    if m:
        return None, int(m.group(1)) - 1, m.group(0)
    until = rf"{_UNTIL} {_ART}{_Y}"
    m = re.search(until, folded)
    if m:
        return None, int(m.group(1)), m.group(0)
    years = list(dict.fromkeys(int(y) for y in re.findall(rf"(?<!\d){_Y}(?!\d)", folded)))
    if len(years) == 1:
        m = re.search(rf"(?<!\d){years[0]}(?!\d)", folded)
        return years[0], years[0], m.group(0)
    return None


# Events an analyst dates periods by, with their year (reviewed; domain knowledge, not the corpus):
# "desde la firma del acuerdo de paz" = from 2016. The answer states the year it used. Rules of kind
# period_anchor, their ``value`` the year.
ANCHORS: tuple[tuple[str, int], ...] = tuple((r.pattern, int(r.value)) for r in _RULES.of_kind("period_anchor"))


def _anchored(folded: str) -> tuple[int | None, int | None, str] | None:
    for rx, year in ANCHORS:
        m = re.search(
            rf"{_ANCHOR_AFTER} (?:la |el |los )?(?:{rx})",
            folded,
        )
        if m:
            return year, None, m.group(0)
        m = re.search(rf"{_ANCHOR_BEFORE} (?:la |el |los )?(?:{rx})", folded)
        if m:
            return None, year - 1, m.group(0)
    return None


def parse_period(question: str, reference_year: int | None = None) -> Period | None:
    """The period a question asks about, or ``None`` when it names none (or only loose years).

    ``reference_year`` resolves relative expressions ("los últimos cinco años"); see the module
    table. A year before ``YEAR_MIN`` or after ``YEAR_MAX`` is ignored."""
    folded = fold_question(question)
    # "Ley 1448 de 2011", "CONPES 3975": a year inside a legal or document citation is not a period
    folded = re.sub(r"(?:ley|decreto|resolucion|conpes|directiva|sentencia)\s+[\w.\-]+\s+de\s+\d{4}", " ", folded)
    for rx, full in _SPOKEN:
        folded = rx.sub(full, folded)
    # "antes d 2018", "desde d 2019": a lone "d" typed for "de"; "dsde" for "desde"
    folded = re.sub(r"(?<=\w )d(?= \d)", "de", folded)
    folded = re.sub(r"(?<!\w)(?:dsde|dsd|desd)(?= \d)", "desde", folded)
    # "¿se publicó más antes de 2018 o después?": a year to compare around, not a period
    if re.search(r"(?:antes|despues) de(?:l)? (?:ano )?\d{4} o (?:despues|antes|luego)", folded):
        return None
    rel = _relative(folded, reference_year)
    if rel is not None:
        a, b, text = rel
        return Period(a, b, text, relative=True, reference_year=reference_year)
    ab = _absolute(folded) or _anchored(folded)
    if ab is None:
        return None
    a, b, text = ab
    if (a is not None and not YEAR_MIN <= a <= YEAR_MAX + 1) or (b is not None and not YEAR_MIN - 1 <= b <= YEAR_MAX):
        return None
    return Period(a, b, text.strip())


def year_span(question: str) -> list[int]:
    """Every distinct year written in the question, in order (coverage requirements)."""
    return list(dict.fromkeys(int(y) for y in re.findall(rf"(?<!\d){_Y}(?!\d)", question)))
