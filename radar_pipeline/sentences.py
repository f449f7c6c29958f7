"""Sentence segmentation with pysbd, made safe for Spanish/Portuguese and for OCR'd text.

``split_sentences(text, lang)`` returns pieces whose concatenation is exactly ``text``.

What it adds to plain ``pysbd.Segmenter(clean=False)``:
- **Language mapping**: 'es' → pysbd 'es'; 'en', 'pt' and unknown → pysbd 'en' (pysbd has no 'pt').
- **Abbreviations**: no boundary right after Spanish/Portuguese abbreviations (Sr., Dra., art.,
  núm., Res., FF. AA., aprox., vda., mpio., Gral., Cap., Tte., inc., Gen., Cel., …): pysbd splits
  "Sr. | Gómez" and "Res. | 0123"; those pieces are merged back. Any short dotted token (<= 5
  letters) followed by a lowercase word is not a boundary either ("10 a. m. | del lunes",
  "p. | ej.", "Cía. Ltda. | también"): a sentence does not start in lowercase. No boundary inside a run of
  dots or right before closing punctuation either.
- **Catastrophic backtracking guard** (pysbd issue #79): pysbd's ``NUMBERED_REFERENCE_REGEX``
  backtracks exponentially on ``.[`` followed by many 1-3 digit numbers ("municipio..[112 187
  245 …] y 14"). pysbd runs on a same-length *work copy* where the ``[`` after a dot is replaced by
  ``(`` (and pysbd's own placeholder characters are blanked); the boundaries found there are
  applied to the original text, so the output keeps every original character.
- **Length guard**: text is segmented in blocks of at most ``_BLOCK_CHARS`` characters, cut at
  a paragraph break, else a line break, else after ". ", else at a space (pysbd time grows with
  the block); any pysbd exception falls back to a linear-time regex splitter.
"""

from __future__ import annotations

import re
import threading

__all__ = ["split_sentences", "ABBREVIATIONS", "pysbd_language"]

# Abbreviations after which a sentence never ends (compared case-insensitively, without the dot).
# Titles, ranks, legal references and common Spanish/Portuguese shorthand.
ABBREVIATIONS: frozenset[str] = frozenset(
    """
    sr sra srta sres sras dr dra drs dras dña dña lic ing arq prof profa mons pbro fr sto sta
    gral gen cnel cel cap tte tcnel sgto sgt cabo cmdte cte alm brig mg col maj lt sub
    art arts núm num nro nº inc lit par res dec exp rad ofic
    ff aa pp cc ee uu rr hh dd
    aprox vda mpio dpto depto corr barr av avda cra cl dg tv
    pág pag págs pags vol vols ed eds fig figs cf ej pp vs
    cía cia ud uds tel secc
    """.split()
)

_ABBR_END_RE = re.compile(r"(?:^|[^\w])([^\W\d_]{1,6})\.\s*$")
_LEADING_CLOSER_RE = re.compile(r"^[.,;:)\]}»”’]")
_SHORT_DOT_END_RE = re.compile(r"(?:^|[^\w])[^\W\d_]{1,5}\.\s*$")
_DOT_BRACKET_RE = re.compile(r"(?<=\.)\[")
# pysbd's internal placeholder characters; blank them in the work copy so the text cannot confuse it.
_PYSBD_SENTINELS_RE = re.compile("[∯ȸ♨☝✂⎋ᓰᓱᓳᓴᓷᓸ∰ȹ&\r]")

# pysbd on prose: ~0.2 s per 40k chars (F1-AIINDEX-001), ~1.1 s for the 228k-char F2-ESA-013;
# on repetitive text its abbreviation scan costs ~0.8 s per 20k chars, hence bounded blocks.
_BLOCK_CHARS = 20_000

# Fallback: end punctuation (optionally closing quotes/brackets) + whitespace, before an
# uppercase letter, digit, opening quote/bracket or inverted punctuation.
_FALLBACK_RE = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+(?=[\"'“‘«(\[¿¡]?[^\W_a-zß-ÿ])|\n\s*\n")


def pysbd_language(lang: str | None) -> str:
    """pysbd language code for a document language: 'es' for Spanish, 'en' otherwise."""
    return "es" if lang == "es" else "en"


_LOCAL = threading.local()


def _segmenter(code: str):
    """One pysbd segmenter per thread and language: a ``Segmenter`` keeps per-call state on the
    instance, so sharing one across threads mixes texts (seen under the API's concurrent load)."""
    cache = getattr(_LOCAL, "segmenters", None)
    if cache is None:
        cache = _LOCAL.segmenters = {}
    if code not in cache:
        import pysbd

        cache[code] = pysbd.Segmenter(language=code, clean=False, char_span=False)
    return cache[code]


def _work_copy(text: str) -> str:
    """Same-length copy of ``text`` that pysbd can segment in linear time."""
    work = _PYSBD_SENTINELS_RE.sub(" ", text)
    return _DOT_BRACKET_RE.sub("(", work)


def _boundaries_pysbd(work: str, code: str) -> list[int]:
    """Start offsets (excluding 0) of the sentences pysbd finds in ``work``."""
    segs = _segmenter(code).segment(work)
    starts: list[int] = []
    pos = 0
    for seg in segs:
        probe = seg.strip()
        if not probe:
            continue
        i = work.find(probe, pos)
        if i < 0:
            continue  # pysbd altered this piece; no boundary from it
        if i > 0:
            starts.append(i)
        pos = i + len(probe)
    return starts


def _boundaries_regex(text: str) -> list[int]:
    return [m.end() for m in _FALLBACK_RE.finditer(text) if 0 < m.end() < len(text)]


def _blocks(text: str) -> list[tuple[int, int]]:
    """Cut ``text`` into (start, end) blocks of <= _BLOCK_CHARS at paragraph/line breaks."""
    if len(text) <= _BLOCK_CHARS:
        return [(0, len(text))]
    blocks = []
    start = 0
    n = len(text)
    while start < n:
        end = min(n, start + _BLOCK_CHARS)
        if end < n:
            lo = start + _BLOCK_CHARS // 2
            for sep in ("\n\n", "\n", ". ", " "):
                cut = text.rfind(sep, lo, end)
                if cut >= 0:
                    end = cut + len(sep)
                    break
        blocks.append((start, end))
        start = end
    return blocks


def _protected_end(piece: str) -> bool:
    m = _ABBR_END_RE.search(piece)
    return bool(m) and m.group(1).lower() in ABBREVIATIONS


def _abbreviation_before_lowercase(prev: str, piece: str) -> bool:
    """True when ``prev`` ends with a short dotted token (<= 5 letters: ``a. m.``, ``p. ej.``,
    ``Cía.``, ``Ltda.``) and ``piece`` starts with a lowercase letter: a sentence does not start in
    lowercase, so the dot belongs to an abbreviation not in ``ABBREVIATIONS``."""
    head = piece.lstrip()[:1]
    return bool(head) and head.isalpha() and head.islower() and bool(_SHORT_DOT_END_RE.search(prev))


def split_sentences(text: str, lang: str | None) -> list[str]:
    """Split ``text`` into sentences; ``''.join(result) == text`` always holds.

    Args:
        text: the (normalized) text of a page/record.
        lang: document language 'es', 'en', 'pt' or None (pt/None use pysbd's English rules).
    Returns:
        List of sentence strings, each keeping its trailing whitespace; ``[]`` for empty text.
        Pure function: no state except a cache of compiled pysbd segmenters.
    """
    if not text:
        return []
    code = pysbd_language(lang)
    work = _work_copy(text)
    cuts: list[int] = []
    for b0, b1 in _blocks(work):
        block = work[b0:b1]
        if not block.strip():
            continue
        try:
            local = _boundaries_pysbd(block, code)
        except Exception:  # noqa: BLE001 - pysbd bug on odd input: fall back, never fail
            local = _boundaries_regex(block)
        if b0 > 0:
            cuts.append(b0)
        cuts.extend(b0 + c for c in local)
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    pieces: list[str] = []
    prev = 0
    for c in cuts + [len(text)]:
        piece = text[prev:c]
        prev = c
        if pieces and (
            _protected_end(pieces[-1])
            or _LEADING_CLOSER_RE.match(piece)
            or not pieces[-1].strip()
            or _abbreviation_before_lowercase(pieces[-1], piece)
        ):
            pieces[-1] += piece
        else:
            pieces.append(piece)
    # A leading whitespace-only piece is glued to the next one.
    if len(pieces) > 1 and not pieces[0].strip():
        pieces[1] = pieces[0] + pieces[1]
        pieces.pop(0)
    return pieces
