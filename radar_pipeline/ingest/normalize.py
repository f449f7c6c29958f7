"""The one place where extracted text is cleaned.

Every reader (PDF text layer, OCR, CSV/XLSX cells, JSON strings, plain text) passes its text
through :func:`normalize_text` (or :func:`clean_value` for single cell values) so that no
ligature code point, NUL, stray C1 control character, lone surrogate or line-break hyphen reaches
PostgreSQL, BM25 or an encoder. :func:`json_safe` makes metadata/records storable as JSONB.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
import unicodedata
from typing import Any

__all__ = [
    "normalize_text",
    "clean_value",
    "strip_controls",
    "map_c1_controls",
    "dehyphenate",
    "json_safe",
]

# --- character classes -------------------------------------------------------------------

# cp1252 assigns printable characters to most of 0x80-0x9F; text decoded as latin-1 (or a
# PDF/JSON that carries the raw code points) shows them as C1 controls. Map them back.
_C1_TO_CP1252: dict[int, str] = {}
for _b in range(0x80, 0xA0):
    try:
        _C1_TO_CP1252[_b] = bytes([_b]).decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8D, 0x8F, 0x90, 0x9D are undefined in cp1252
        _C1_TO_CP1252[_b] = ""

# Characters NFKC would rewrite but that carry meaning in Spanish/Portuguese text
# ("nº 12", "1ª"): NFKC turns them into plain "o"/"a", and "nº" would become the stopword "no".
_NFKC_PROTECT = {"\u00ba": "\ue000", "\u00aa": "\ue001"}
_NFKC_RESTORE = {v: k for k, v in _NFKC_PROTECT.items()}

# Deleted outright: C0 controls except \t and \n (\r, \v, \f are turned into \n first), DEL,
# C1 (after the cp1252 mapping), zero-width characters, BOM, soft hyphen, replacement char,
# private-use code points (symbol-font glyphs), lone surrogates and non-characters.
_DELETE_RE = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b\u200c\u200d\u2060\ufeff\u00ad\ufffd\ue000-\uf8ff\ud800-\udfff\ufffe\uffff]"
)
_C1_RE = re.compile("[\x80-\x9f]")
# Text made only of printable ASCII, without double/edge spaces, is already normalized.
_NOT_FAST_RE = re.compile(r"[^\x20-\x7e]|  |^ | $")
_NEWLINE_RE = re.compile("\r\n|[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_HSPACE_RE = re.compile(r"[^\S\n\t]+")  # horizontal whitespace except tab
_TABRUN_RE = re.compile(r"[^\S\n]*\t[^\S\n]*")  # a tab with surrounding spaces -> one tab
_MANY_NL_RE = re.compile(r"\n{3,}")
_LINE_EDGE_RE = re.compile(r"[^\S\n]*\n[^\S\n]*")

# A hyphen (ASCII or U+2010) at the end of a line / inside a line.
_LB_HYPHEN_RE = re.compile("[-\u2010]\n")
_INLINE_HYPHEN_RE = re.compile("[-\u2010]")
# Portuguese (and some Spanish) typesetting repeats the hyphen of a compound broken at its hyphen
# on the next line: "segunda-\n-feira" is "segunda-feira".
_REPEATED_HYPHEN_RE = re.compile("(?<=[^\\W\\d_])[-\u2010]\n[-\u2010](?=[^\\W\\d_])")

# --- line-break hyphens: the compound rules --------------------------------------------------------

# Short words that link the parts of a multi-part compound ("state-of-the-art", "cara-a-cara").
_LINK_WORDS = frozenset("of to in the and or by for on at a an up be de del la el los las y en da do e o à".split())
# Spanish/Portuguese vowels; the stress marks (not ã/õ, which mark nasality).
_VOWELS = frozenset("aeiouüáéíóúâêôãõàè")
_STRONG = frozenset("aeoáéíóúâêôãõàè")  # an accented i/u is a syllable of its own (hiatus)
_STRESS_MARKS = frozenset("áéíóúâêô")
# After "mente" the first part is an adjective ("rápida-\nmente"); enclitic pronouns follow a
# stressed verb form ("dígame-\nlo"): both are written solid.
_SOLID_RIGHT_RE = re.compile(r"mente|(?:me|te|se|nos|os|le|les|lo|los|la|las)+")
# Spanish/Portuguese combining forms that are words of their own and join two peoples with a
# hyphen when both keep their identity ("franco-colombiano", "ruso-ucraniano", "sino-soviético").
# Reviewed: fused forms are left out on purpose ("afrodescendiente", "socioeconómico",
# "hispanoamericano", "latinoamericano", "iberoamericano", "judeocristiano", "medioambiental" are
# written solid, so a line break at that morpheme boundary is joined).
_GENTILIC_FIRST = frozenset(
    "franco anglo germano ruso sino luso greco italo nipo checo austro indo chino turco sueco polaco".split()
)
# ...when the second part is an adjective of people/places: vowel (+s/n) or -és/-ol/-án/-ón/-í
# endings ("colombiano", "británico", "alemán", "español", "israelí"), not "franco-\ntirador".
_ADJECTIVE_END_RE = re.compile("(?:[aeiouáéíóú]s?|[áéó]n|ol(?:es)?|[ae]s[ae]?s?|és|í(?:es)?)$")
# English first elements of open compounds written with a hyphen as modifiers ("long-term",
# "well-known", "self-defense", "high-level", "real-time", "state-sponsored")...
_EN_FIRST = frozenset(
    """long short well self high low real full half state large small open top wide non two three
    four five six seven eight nine""".split()
)
# English second elements that are words of their own and never the tail of a split word
# ("data-driven", "risk-based", "AI-enabled", "decision-making", "mission-specific").
_EN_SECOND = frozenset(
    """based driven oriented enabled specific level wide scale term range making friendly free owned
    sponsored focused centric aware""".split()
)
# ...unless the second part is a suffix, i.e. the line break split one word ("state-\nment").
_EN_SUFFIX = frozenset(
    """s es d ed er ers ered ering est en ens ened ing ings ly ness nesses less ful ship ships hood
    ish ment ments able ible al ally ity ities ion ions ive ize ise ized ised izing ising ization
    ner ners ward wards th ths ter ters y ies ism isms ist ists istic istics istically sion sions tion
    tions teen teens ty ties fold""".split()
)


def _stress_from_end(word: str) -> int:
    """Syllable (1 = last) carrying the written stress mark of ``word``, 0 when it has none.

    Syllables are vowel nuclei: a run of vowels is one nucleus unless two strong vowels (a, e, o
    or any accented vowel) meet (hiatus: "te-ó-ri-co"); the ``u`` of que/qui/gue/gui is silent.
    """
    w = word.lower()
    nuclei: list[bool] = []  # per nucleus: does it carry a stress mark?
    strong_in_current = False
    prev_vowel = False
    for k, ch in enumerate(w):
        if ch not in _VOWELS or (ch == "u" and k and w[k - 1] in "qg" and w[k + 1 : k + 2] in ("e", "i", "é", "í")):
            prev_vowel = False
            continue
        strong = ch in _STRONG
        if not prev_vowel or (strong and strong_in_current):
            nuclei.append(False)
            strong_in_current = False
        strong_in_current = strong_in_current or strong
        if ch in _STRESS_MARKS:
            nuclei[-1] = True
        prev_vowel = True
    for idx in range(len(nuclei) - 1, -1, -1):
        if nuclei[idx]:
            return len(nuclei) - idx
    return 0


def _keep_compound_hyphen(left: str, right: str, before: str, after: str) -> bool:
    """True when ``left-\nright`` is a compound written with a hyphen, not one word split by the
    line break. ``before`` is the character just left of ``left``; ``after`` the two characters
    just right of ``right`` ('' at an edge).

    Rules, in order (each is a property of the words, no corpus vocabulary):
    1. the link word of a multi-part compound: the right part is one and another hyphen follows it
       inside the line ("state-\nof-the-art", "end-\nto-end", "cara-\na-cara"; not
       "técni-\nco-profesional"), or the left part is one and a hyphen precedes it
       ("state-of-\nthe-art"; not "científico-tec-\nnológica", "well-be-\ning");
    2. the left part is a complete esdrújula word ending in a vowel: its written stress is on the
       third syllable from its end or earlier ("político", "cívico", "económico", "teórico",
       "árabe"), so "políticomilitar" would be an impossible word — unless the right part is
       "mente" or enclitic pronouns ("rápida-\nmente", "dígame-\nlo");
    3. a gentilic combining form before an adjective ("franco-\ncolombiano", "ruso-\nucraniano");
    4. English, when the right part is not a suffix ("state-\nment", "high-\nly", "ten-\nsion"
       are joined): an acronym on the left ("UAV-\nfollower"), a listed second element
       ("data-\ndriven", "decision-\nmaking"), an adverb in -ly ("autonomously-\ncontrolled"),
       or a listed first element ("long-\nterm", "well-\nknown", "non-\nstate", "two-\nyear").
    Everything else is joined: syllable splits ("orga-\nnización") and prefixes, which Spanish
    writes solid ("anti-\nsatélite" -> "antisatélite", "contra-\ninsurgencia").
    """
    lo, ro = left.lower(), right.lower()
    if after[:1] in ("-", "\u2010") and after[1:].isalpha() and ro in _LINK_WORDS:
        return True
    if before in ("-", "\u2010") and lo in _LINK_WORDS and ro not in _EN_SUFFIX:
        return True
    if len(lo) >= 4 and lo[-1] in _VOWELS and _stress_from_end(lo) >= 3:
        return not _SOLID_RIGHT_RE.fullmatch(ro)
    if lo.replace("í", "i") in _GENTILIC_FIRST and len(ro) >= 4 and _ADJECTIVE_END_RE.search(ro):
        return True
    if ro in _EN_SUFFIX:
        return False
    if left.isupper() and len(left) >= 2:  # an acronym is never a syllable ("UAV-\nfollower")
        return True
    if ro in _EN_SECOND and (len(lo) >= 4 or left.isupper()):
        return True
    if lo.endswith("ly") and not lo.endswith("aly") and len(lo) >= 6 and len(ro) >= 3:
        # an adverb ("autonomously-\ncontrolled"), not "analy-\nsis" / "paraly-\nsis"
        return True
    return lo in _EN_FIRST and len(ro) >= 2


def map_c1_controls(text: str) -> str:
    """Replace U+0080-U+009F by the cp1252 character of the same byte ('\\x96' -> '–').

    Bytes undefined in cp1252 (0x81, 0x8D, 0x8F, 0x90, 0x9D) are dropped.
    """
    if not _C1_RE.search(text):
        return text
    return _C1_RE.sub(lambda m: _C1_TO_CP1252[ord(m.group(0))], text)


def strip_controls(text: str) -> str:
    """Remove NUL and other control/invisible code points; line breaks become ``\\n``.

    Keeps ``\\n`` and ``\\t``. Stray C1 characters are first mapped through cp1252.
    """
    text = _NEWLINE_RE.sub("\n", text)
    text = map_c1_controls(text)
    return _DELETE_RE.sub("", text)


def _nfkc(text: str) -> str:
    if text.isascii():
        return text
    for k, v in _NFKC_PROTECT.items():
        if k in text:
            text = text.replace(k, v)
    text = unicodedata.normalize("NFKC", text)
    for k, v in _NFKC_RESTORE.items():
        if k in text:
            text = text.replace(k, v)
    return text


def _word_around(text: str, i: int, j: int) -> tuple[str, str]:
    """Letters immediately left of index ``i`` and right of index ``j`` (exclusive)."""
    a = i
    while a > 0 and text[a - 1].isalpha():
        a -= 1
    b = j
    n = len(text)
    while b < n and text[b].isalpha():
        b += 1
    return text[a:i], text[j:b]


def dehyphenate(text: str) -> str:
    """Join words split by a hyphen at a line break: ``"informa-\\nción"`` -> ``"información"``,
    but keep the hyphen of a compound broken at its hyphen: ``"político-\\nmilitar"`` ->
    ``"político-militar"``.

    Hyphens inside a line are never touched ("anti-satellite", "Sierra-Nevada" stay). At a line
    break the hyphen is kept (and the line joined) when the second part starts with a capital
    ("Sierra-\\nNevada"), when the same hyphenated compound occurs inside a line elsewhere in
    the text ("anti-\\nsatellite" with "anti-satellite" elsewhere), or when the words make a
    compound by the rules of :func:`_keep_compound_hyphen` (esdrújula first elements, gentilic
    combining forms, English open compounds, multi-part compounds). A hyphen repeated at the start
    of the next line ("segunda-\\n-feira") gives one hyphen. Linear time (hyphens are located with
    a literal search, words expanded around them).
    """
    if "-\n" not in text and "\u2010\n" not in text:
        return text
    text = _REPEATED_HYPHEN_RE.sub("-", text)
    breaks = []
    for m in _LB_HYPHEN_RE.finditer(text):
        left, right = _word_around(text, m.start(), m.end())
        if left and right:
            breaks.append((m.start(), m.end(), left, right))
    if not breaks:
        return text
    compounds: set[str] | None = None
    out: list[str] = []
    last = 0
    for i, j, left, right in breaks:
        before = text[i - len(left) - 1] if i - len(left) > 0 else ""
        after = text[j + len(right) : j + len(right) + 2]
        keep = right[0].isupper() or _keep_compound_hyphen(left, right, before, after)
        if not keep:
            if compounds is None:
                compounds = set()
                for h in _INLINE_HYPHEN_RE.finditer(text):
                    l2, r2 = _word_around(text, h.start(), h.end())
                    if l2 and r2:
                        compounds.add(f"{l2}-{r2}".lower())
            keep = f"{left}-{right}".lower() in compounds
        out.append(text[last:i])
        out.append("-" if keep else "")
        last = j
    out.append(text[last:])
    return "".join(out)


def normalize_text(text: str | None, *, dehyphenate_lines: bool = True) -> str:
    """Clean extracted text for storage, BM25 and encoders.

    Steps: line breaks unified to ``\\n``; stray C1 characters mapped through cp1252; NFKC
    (expands ligatures U+FB00-U+FB06, full-width forms, odd spaces; keeps ``º``/``ª``); NUL,
    other control characters, zero-width characters, soft hyphens, U+FFFD, private-use code
    points and lone surrogates removed; line-break hyphenation joined (see :func:`dehyphenate`);
    runs of spaces collapsed to one (a tab run to one tab), lines stripped, 3+ newlines reduced to
    a blank line, the whole text stripped.

    Args:
        text: any string (``None`` gives ``""``).
        dehyphenate_lines: join line-break hyphens (default True).
    Returns:
        The cleaned string; idempotent (``normalize_text(normalize_text(t)) == normalize_text(t)``).
    """
    if not text:
        return ""
    if not isinstance(text, str):
        text = str(text)
    if text.isascii() and not _NOT_FAST_RE.search(text):
        return text
    text = _NEWLINE_RE.sub("\n", text)
    text = map_c1_controls(text)
    text = _DELETE_RE.sub("", text)  # before NFKC: private-use code points are its placeholders
    text = _nfkc(text)
    # NFKC can produce new line separators / controls from compatibility forms; clean after it.
    text = _NEWLINE_RE.sub("\n", text)
    text = _DELETE_RE.sub("", text)
    text = _TABRUN_RE.sub("\t", text)
    text = _HSPACE_RE.sub(" ", text)
    text = _LINE_EDGE_RE.sub("\n", text)
    if dehyphenate_lines:
        text = dehyphenate(text)
    text = _MANY_NL_RE.sub("\n\n", text)
    return text.strip()


def clean_value(value: str) -> str:
    """Normalize one short field value (a CSV/XLSX cell, a JSON string): same cleaning as
    :func:`normalize_text` but without joining line-break hyphens."""
    return normalize_text(value, dehyphenate_lines=False)


def json_safe(obj: Any, *, _depth: int = 0) -> Any:
    """Return a copy of ``obj`` that ``json.dumps(..., allow_nan=False)`` accepts and that
    PostgreSQL JSONB stores.

    NaN/Infinity floats -> ``None``; strings lose NUL and other control characters (keys too);
    dict keys become strings; tuples/sets -> lists; date/datetime/time -> ISO strings;
    ``Decimal`` -> float (or None when not finite); bytes -> text (UTF-8, replacement dropped);
    numpy scalars -> Python scalars; anything else -> ``str(obj)``. Nesting deeper than 100
    levels is cut to a string.
    """
    if obj is None or isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, str):
        return _DELETE_RE.sub("", map_c1_controls(obj)) if not obj.isprintable() or "\ufffd" in obj else obj
    if _depth > 100:
        return str(obj)[:1000]
    if isinstance(obj, dict):
        return {str(json_safe(k, _depth=_depth + 1)): json_safe(v, _depth=_depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [json_safe(v, _depth=_depth + 1) for v in obj]
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    if isinstance(obj, decimal.Decimal):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, (bytes, bytearray)):
        return json_safe(bytes(obj).decode("utf-8", errors="replace"), _depth=_depth + 1)
    item = getattr(obj, "item", None)  # numpy scalar
    if callable(item):
        try:
            return json_safe(item(), _depth=_depth + 1)
        except Exception:  # noqa: BLE001 - fall through to str()
            pass
    return json_safe(str(obj), _depth=_depth + 1)
