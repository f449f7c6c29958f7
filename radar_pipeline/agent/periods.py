"""Periods in a question, read as a person reads them: open and closed year ranges.

``parse_period(question, reference_year)`` finds at most one period expression and returns a
``Period`` with inclusive bounds (``desde``/``hasta``, either may be ``None`` for an open range):

=====================================  ==========================================
"en 2021", "durante 2021"              2021–2021
"entre 2015 y 2020", "de 2015 a 2020"  2015–2020 (also "del 2015 al 2020", "2015-2020")
"desde 2019", "a partir de 2019"       2019–open
"después de 2018", "posterior a 2018"  2019–open (the year itself excluded)
"antes de 2018", "previo a 2018"       open–2017 (the year itself excluded)
"hasta 2020", "hasta 2020 inclusive"   open–2020
"en los últimos cinco años"            (R-4)–R, R = ``reference_year``
"el último lustro" / "la última década" (R-4)–R / (R-9)–R
"el último año" / "este año"           R–R
"el año pasado"                        (R-1)–(R-1)
"del 2020 para acá"                    2020–open
"desde la firma del acuerdo de paz"    2016–open (``ANCHORS``: dated events)
=====================================  ==========================================

Relative expressions need ``reference_year``: the year of the newest dated document (SPEC
"Publication dates from source metadata only"), so "the last five years" means the last five
years *of the corpus*; the answer states it (``Period.describe``). Without a reference year a
relative expression is returned with ``relative=True`` and no bounds.

Two loose years without range wording ("compara 2019 y 2023") are **not** a period: they are two
coverage requirements (``router.extract_requirements``), and a visual filter spans them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from radar_pipeline.textfold import fold_question

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
    "quince": 15,
    "veinte": 20,
    "two": 2,
    "three": 3,
    "five": 5,
    "ten": 10,
}
_N = r"(\d{1,2}|" + "|".join(sorted(_NUM_WORDS, key=len, reverse=True)) + r")"
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
    rules: list[tuple[str, object]] = [
        (rf"(?:en |durante |de )?(?:los |las )?(?:ultimos|ultimas|pasados|past|last) {_N} (?:anos|years)", "n"),
        (rf"desde hace {_N} (?:anos|years)", "n"),
        (r"(?:en |durante )?(?:el |los )?ultimo lustro", 5),
        (r"(?:en |durante )?(?:la |las )?ultima decada", 10),
        (r"(?:en |durante )?(?:el )?ultimo ano(?! y medio)", 1),  # "el último año y …" is still one year
        (r"(?:en |durante )?este ano", 1),
        (r"(?:en |durante |de )?(?:el |del )?ano pasado|last year", "prev"),
    ]
    for rx, kind in rules:
        m = re.search(rx, folded)
        if not m:
            continue
        if ref is None:
            return None, None, m.group(0).strip()
        if kind == "prev":
            return ref - 1, ref - 1, m.group(0).strip()
        n = _n(m.group(1)) if kind == "n" else kind
        if not n:
            continue
        return ref - int(n) + 1, ref, m.group(0).strip()
    return None


# "up to now" wordings after a start year: "del 2016 para acá", "de 2018 a la fecha", "from 2019 to date"
_TO_NOW = (
    r"(?:para (?:aca|aqui|adelante)|(?:hasta |a )(?:hoy|ahora|la fecha|la actualidad|el presente|nuestros dias|"
    r"el dia de hoy|hoy en dia)|al dia de hoy|en adelante|hacia adelante|(?:up )?(?:to|until) (?:date|now|the present|today)|"
    r"onwards?|(?:and|&) (?:since|after))"
)
# Spoken contractions read as the full word: "pa' acá", "pa acá", "pa'cá", "p'acá" → "para acá"
_SPOKEN = (
    (re.compile(r"(?<!\w)(?:pa'\s?|pa\s|p')a?(ca|qui)(?!\w)"), r"para a\1"),
    (re.compile(r"(?<!\w)pa'?\s(?=adelante(?!\w))"), "para "),
)


def _absolute(folded: str) -> tuple[int | None, int | None, str] | None:
    closed = [
        rf"entre {_ART}{_Y} y {_ART}{_Y}",
        rf"(?:desde|de|del) {_ART}{_Y} (?:a|al|hasta|hasta el) {_ART}{_Y}",
        rf"(?<!\d){_Y} ?[-–] ?{_Y}(?!\d)",
        rf"between {_Y} and {_Y}",
        rf"from {_Y} to {_Y}",
    ]
    for rx in closed:
        m = re.search(rx, folded)
        if m:
            a, b = sorted((int(m.group(1)), int(m.group(2))))
            return a, b, m.group(0)
    after_excl = rf"(?:despues de|posterior(?:es)? a|con posterioridad a|luego de|after|since the end of) {_ART}{_Y}"
    m = re.search(after_excl, folded)
    if m:
        return int(m.group(1)) + 1, None, m.group(0)
    m = re.search(rf"(?:del|desde el|de|desde|from|since) {_ART}{_Y},? {_TO_NOW}", folded)
    if m:
        return int(m.group(1)), None, m.group(0)
    since = rf"(?:desde|a partir de|a partir del|since|from) {_ART}{_Y}"
    m = re.search(since, folded)
    if m:
        return int(m.group(1)), None, m.group(0)
    before = rf"(?:antes de|antes del|previo a|previos a|previas a|anterior(?:es)? a|con anterioridad a|before|prior to) {_ART}{_Y}"
    m = re.search(before, folded)
    if m:
        return None, int(m.group(1)) - 1, m.group(0)
    until = rf"(?:hasta|until|through|up to) {_ART}{_Y}"
    m = re.search(until, folded)
    if m:
        return None, int(m.group(1)), m.group(0)
    years = list(dict.fromkeys(int(y) for y in re.findall(rf"(?<!\d){_Y}(?!\d)", folded)))
    if len(years) == 1:
        m = re.search(rf"(?<!\d){years[0]}(?!\d)", folded)
        return years[0], years[0], m.group(0)
    return None


# Events an analyst dates periods by, with their year (reviewed; domain knowledge, not the corpus):
# "desde la firma del acuerdo de paz" = from 2016. The answer states the year it used.
ANCHORS: tuple[tuple[str, int], ...] = (
    (r"(?:firma del? |firmado el )?acuerdos? de paz(?: de la habana| con las farc| de 2016)?", 2016),
    (r"invasion (?:rusa )?(?:a|de) ucrania|guerra (?:en|de) ucrania", 2022),
    (r"pandemia|covid", 2020),
)


def _anchored(folded: str) -> tuple[int | None, int | None, str] | None:
    for rx, year in ANCHORS:
        m = re.search(rf"(?:desde|a partir de|despues de|tras|luego de) (?:la |el |los )?(?:{rx})", folded)
        if m:
            return year, None, m.group(0)
        m = re.search(rf"(?:antes de|previo a) (?:la |el |los )?(?:{rx})", folded)
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
