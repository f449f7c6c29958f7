"""Which place mentions of an early-warning passage name the territory the alert covers.

A place mention in an alert is not coverage by itself: the Ombudsman's records list veredas,
resguardos and barrios ("Mapa Veredas: PALESTINA; LA ARGELIA; …; Resguardos indígenas: …") whose
names are also countries, departments or municipalities elsewhere; place names sit inside the names
of people and armed units ("Compañía Jaime Toño Obando") and of landmarks ("Ciénaga Grande de Santa
Marta"); letterheads and passing remarks name Colombia or a neighbour. :func:`coverage_frame` keeps a
mention only when the text frames it as a territory, in this order:

1. **rejected** — inside a list of sub-municipal localities (after a "Veredas:" / "Resguardos
   indígenas:" / "Barrios:" … header, while the list runs in capitals, or an upper-case item closed
   by ";"); right after a locality word ("vereda El Cauca", "resguardo Puerto Nare", "barrio …");
   right after a capitalized word that is not a frame word (part of a longer proper name); any
   country (a Colombian alert covers municipalities and departments: in its text a country is a
   letterhead, "República de Colombia", a neighbour or a passing remark);
2. **framed** — a cue before it, possibly through a list of names ("municipio de X", "municipios de
   A, B y C", "departamento del X", "ciudad de X", "distrito de X"); or a department after it
   ("Suárez, departamento de Cauca", "Teorama, Hacarí y San Calixto, en Norte de Santander" is
   enough when "Norte de Santander" is a department mention, as is "Soacha, Cundinamarca"; so are
   the word "departamento" and a parenthesis: "Atrato (Chocó)"); "Bogotá D.C." (the district
   names itself; not its dateline "Bogotá D.C., 24 de mayo"); or the mention is
   inside a follow-up's subject reference window ("Seguimiento … N° 25-18 para Bagadó …"), which
   the caller passes as ``in_reference=True``;
3. anything else is not coverage (``None``).

The frame words are Spanish: the alerts are Colombian. Pure functions over the original text.
"""

from __future__ import annotations

import re

__all__ = ["coverage_frame", "department_after", "LOCALITY_HEADERS"]

# headers of the alerts' locality lists ("Mapa Veredas: …; Resguardos indígenas: …")
LOCALITY_HEADERS = (
    r"veredas?|resguardos?(?:\s+ind[ií]genas?)?|barrios?|corregimientos?|consejos?\s+comunitarios?|"
    r"centros?\s+poblados?|caser[ií]os?|sectores|comunidades(?:\s+ind[ií]genas)?|territorios?\s+colectivos?|"
    r"asentamientos?|cabildos?|parcialidades|inspecciones(?:\s+de\s+polic[ií]a)?|comunas?|urbanizaci[oó]n(?:es)?|"
    r"localidades"
)
_HEADER = re.compile(r"(?:^|(?<=[\s:;.]))(?:" + LOCALITY_HEADERS + r")\s*:", re.IGNORECASE)
# a locality word right before a name: "vereda El Cauca", "resguardo indígena Puerto Nare"
_LOCALITY_WORD = re.compile(
    r"(?:\b(?:" + LOCALITY_HEADERS + r"|ci[eé]naga|r[ií]o|quebrada|cerro|serran[ií]a|parque|finca|hacienda|"
    r"caño|laguna|isla|sierra|v[ií]a|carretera|calle|avenida|urbanizaci[oó]n)\b)"
    r"(?:\s+(?:ind[ií]gena|grande|nacional|natural|de|del|la|las|los|el))*\s+$",
    re.IGNORECASE,
)
# words after which a capitalized name is a territory, not part of a longer name
_FRAME_WORDS = {
    "municipio",
    "municipios",
    "departamento",
    "departamentos",
    "ciudad",
    "ciudades",
    "distrito",
    "capital",
    "municipal",
    "referencia",
    "en",
    "de",
    "del",
    "para",
    "y",
    "e",
}
# a cue that frames the names after it as territories
_CUE = re.compile(
    r"\b(?:municipios?|departamentos?|ciudad(?:es)?|distritos?(?:\s+especial(?:es)?)?|"
    r"capital(?:es)?\s+departamental(?:es)?|[aá]reas?\s+(?:rural(?:es)?|urbanas?)\s+de)"
    r"(?:\s+(?:de\s+la|del|de|y\s+del|y\s+de))?(?=\s)",
    re.IGNORECASE,
)
# what may stand between a cue and a framed name: other names of the same list
_NAME = r"[A-ZÁÉÍÓÚÑÜ][\wÁÉÍÓÚÑÜáéíóúñü.'’-]*"
_CONNECT = r"(?:de|del|la|las|los|el|y|e)"
_LIST_GAP = re.compile(
    r"^(?:(?:" + _NAME + r"|" + _CONNECT + r")(?:\s+|\s*,\s*|\s+y\s+|\s+e\s+|\s*-\s*|\s*\(\s*|\s*\)\s*,?\s*))*$"
)
# a department stated after a name: ", departamento de Cauca", "- departamento del Huila", " (Chocó)"
_DEPT_AFTER = re.compile(
    r"(?:[,\-–]\s*)?(?:\ben\s+)?(?:\bel\s+)?\b(?:departamento|dpto\.?)\s+(?:de\s+la\s+|del\s+|de\s+)?|\(\s*(?=[A-ZÁÉÍÓÚÑ])",
    re.IGNORECASE,
)
_MAX_GAP = 160
# "Bogotá D.C." names the capital district itself; "Bogotá D.C., 24 de mayo de 2019" is a dateline
_DISTRICT = re.compile(r"\s*(?:D\.\s?C\.?|Distrito\s+Capital)(?!\w)")
_DATELINE = re.compile(
    r"\s*(?:(?:D\.\s?C\.?|Distrito\s+Capital)\s*)?[\s,.]*(?:\(?\s*)?\d{1,2}\s+(?:de\s+)?[A-Za-záéíóú]+",
    re.IGNORECASE,
)


def _in_locality_list(text: str, start: int, end: int) -> bool:
    """Whether ``[start, end)`` is an item of a locality list: after a list header with only
    upper-case items (and ';' ',' '-' '()' digits) between the header and the name, or an upper-case
    item closed by ';' (a list whose header is on an earlier passage)."""
    lo = max(0, start - 4000)
    headers = list(_HEADER.finditer(text, lo, start))
    if headers:
        between = text[headers[-1].end() : start]
        if not any(c.islower() for c in between):
            return True
    name = text[start:end]
    after = text[end : end + 40]
    if name.isupper() and re.match(r"[^;\n.a-záéíóúñ]{0,40};", after):
        return True
    before = text[max(0, start - 3) : start]
    return name.isupper() and before.rstrip().endswith(";")


def _part_of_name(text: str, start: int) -> bool:
    """Whether the word right before ``start`` (one space away, no punctuation) is a capitalized word
    that is not a frame word: the match continues a longer proper name ("Toño Obando", "Manuel
    Marulanda"). Upper-case runs are lists, judged elsewhere."""
    m = re.search(r"([^\W\d_][\w'’.-]*)\s$", text[max(0, start - 40) : start])
    if not m:
        return False
    word = m.group(1)
    if word.lower() in _FRAME_WORDS or word.isupper():
        return False
    return word[0].isupper()


def department_after(text: str, end: int) -> int | None:
    """Offset where a department qualifier starts after the name ending at ``end``, possibly through
    a list of names (", Pailitas y Curumaní, departamento de Cesar", " (Chocó)"); None when none
    follows within ``_MAX_GAP`` characters."""
    tail = text[end : end + _MAX_GAP]
    for m in _DEPT_AFTER.finditer(tail):
        gap = tail[: m.start()].strip(" ,")
        if not gap or _LIST_GAP.match(gap + " "):
            return end + m.end()
    return None


def _department_mention_after(text: str, end: int, department_starts: frozenset[int] | set[int]) -> bool:
    """Whether a department *mention* (its start offset in ``department_starts``) follows the name
    after a comma, possibly through a list of names ("Soacha, Cundinamarca", "Tadó y Istmina, Chocó")."""
    tail = text[end : end + _MAX_GAP]
    for m in re.finditer(r",\s*(?:en\s+(?:el\s+)?)?", tail):
        gap = tail[: m.start()].strip(" ,")
        if end + m.end() in department_starts and (not gap or _LIST_GAP.match(gap + " ")):
            return True
    return False


def _cue_before(text: str, start: int) -> bool:
    """Whether a territorial cue precedes ``start`` in the same sentence, possibly through a list of
    names ("municipios de Dabeiba, Uramita, Cañasgordas y Peque")."""
    head = text[max(0, start - _MAX_GAP) : start]
    cut = max(head.rfind("."), head.rfind(";"), head.rfind("\n"), head.rfind(":"))
    head = head[cut + 1 :]
    for m in _CUE.finditer(head):
        if _LIST_GAP.match(head[m.end() :].lstrip()):
            return True
    return False


def coverage_frame(
    text: str,
    start: int,
    end: int,
    level: str | None,
    *,
    in_reference: bool = False,
    department_starts: frozenset[int] | set[int] = frozenset(),
) -> str | None:
    """How the mention ``text[start:end]`` (a place of ``level``: country, department,
    municipality…) is framed as a covered territory: ``"cue"`` (a cue before it), ``"department"``
    (a department qualifier after it), ``"qualifier"`` (a department in parentheses after a name),
    ``"reference"`` (a follow-up's subject reference window); None when it is not coverage — see
    the module doc for the rejections, applied first."""
    if _in_locality_list(text, start, end):
        return None
    if _LOCALITY_WORD.search(text[max(0, start - 60) : start]):
        return None
    if _part_of_name(text, start):
        return None
    if level == "country":  # letterheads ("República de Colombia"), neighbours, passing remarks
        return None
    if _cue_before(text, start):
        return "cue"
    if department_after(text, end) is not None or _department_mention_after(text, end, department_starts):
        return "department"
    if level == "department" and re.search(r"[A-ZÁÉÍÓÚÑ][\wáéíóúñ]+\s*(?:\(|,)\s*$", text[max(0, start - 60) : start]):
        return "qualifier"
    named_district = re.search(r"(?:D\.\s?C\.?|Distrito\s+Capital)$", text[start:end])
    if (named_district or _DISTRICT.match(text, end)) and not _DATELINE.match(text, end):
        return "district"
    if in_reference:
        return "reference"
    return None
