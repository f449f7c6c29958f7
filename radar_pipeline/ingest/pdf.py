"""PDF extraction: PyMuPDF text layer per page, a cheap usability judgement, OCR only where needed.

Per page:
1. ``get_text`` with ligatures expanded (NFKC in ``normalize`` is the second guard).
2. :func:`judge_text_layer` on the raw string (string statistics only, no rendering):
   - ``empty``: no text → OCR if the page shows anything (``no_text_layer -> ocr``), otherwise a
     blank page (never OCR'd, never called a scan);
   - ``garbled``: control characters / replacement characters / private-use glyphs, or a Latin
     text with almost no stopwords that looks like shifted glyph ids (",QIRUPH" = "Informe") →
     ``garbled_text_layer -> ocr``; the native text is discarded;
   - ``glyph_fallback``: readable text, but words hold glyph-id / unmapped-glyph characters where
     a font's ToUnicode map missed a ligature ("o\u13b2cina" for "oficina", U+0000, U+FFFD,
     private use between Latin letters) → ``glyph_fallback -> ocr``; the native text is kept
     (page ``partial``) only when OCR is disabled, fails or reads nothing reliable;
   - ``ok``: kept. Only when it is short (< ``IMAGE_PAGE_MAX_CHARS`` non-space characters) are the
     page's images measured; if they cover ≥ ``IMAGE_COVERAGE_MIN`` of the page →
     ``image_dominant_page -> ocr`` and the OCR text is appended to the native text, minus the
     OCR lines that repeat native lines (so a stamped header is not duplicated).
3. MuPDF warnings raised while reading the page ("cannot load content stream part …") mark the
   page ``partial`` (truncated content stream).

Document status: encrypted (user password) → ``encrypted``, no page read, no OCR; repaired xref,
missing ``%%EOF``, truncated pages or pages missing in a repaired file → ``damaged`` with the
reasons; pages that needed OCR but got none (disabled/failed) → ``partial``; no text at all →
``empty``; else ``ok``.

Note: MuPDF's warning buffer is process-global; run extractions in separate processes (not
threads) to keep the per-page truncation detection exact.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from .document import ExtractedDocument, PageText
from .normalize import json_safe, normalize_text
from .ocr import RELIABLE_MIN_CONFIDENCE, OcrSettings, is_reliable, ocr_page

__all__ = ["extract_pdf", "judge_text_layer", "glyph_fallback_words", "image_coverage", "merge_native_and_ocr"]

# A page whose native text has fewer non-space characters than this is checked for image
# coverage. Case 07 (header stamp over a scanned letter) has 68; a normal text page has 1,500+.
IMAGE_PAGE_MAX_CHARS = 400
# Share of the page area covered by images above which a short-text page is OCR'd.
IMAGE_COVERAGE_MIN = 0.5
# Minimum letter tokens before the dictionary-word test is applied.
MIN_TOKENS_FOR_WORD_TEST = 12

_WORD_RE = re.compile(r"[^\W\d_]+")
_LATIN_RE = re.compile(r"^[A-Za-z\u00c0-\u024f]+$")
_VOWELS = set("aeiouyáéíóúàèìòùâêîôûãõäëïöüåæø")
_TRUNCATION_MARKERS = (
    "cannot load content stream",
    "premature end",
    "object is not a stream",
    "unexpected end of",
    "truncated",
)
# Stopwords of en/es/pt plus the commonest of fr/de/it, so that a real page in those languages is
# never judged "no dictionary words".
_STOP_ANY = frozenset(
    """the of and to in is that for it with as was on are by this be from or an which at have
    el la los las de del y en que por con para una un se su es al lo como más
    o os a as da do das dos e em no na nos nas com uma um é ao não mais
    le les des et du une est pour pas qui dans sur au der die das und ist von zu den mit im nicht
    il di che per non sono""".split()
)


# Control characters (not \t \n \r), DEL/C1, replacement character, private-use glyphs.
_BAD_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ue000-\uf8ff]")
_SPACE_RE = re.compile(r"\s")


# Offsets tried between glyph id and character code. Subset TrueType fonts give 29 (gid 3 = space,
# the classic ``,QIRUPH\x03GH`` layer); Type3 / symbolic fonts and other subsetters give other
# constants (3, 31, 32, ...), in either direction. One offset is one cmap bug, so the search is over
# a single constant per page.
# +-32 is excluded: it only flips ASCII case, so real text "decodes" to itself after lower().
_GLYPH_SHIFTS = tuple(k for k in (29, *range(1, 29), *range(30, 97), *range(-1, -65, -1)) if abs(k) != 32)


def _shift_decodes(tokens: list[str], shift: int | None = None) -> bool:
    """True when shifting every character by one constant offset yields real stopwords (a text
    layer made of glyph ids = char code - offset, e.g. 29 for subset TrueType fonts).

    Args:
        tokens: whitespace-separated tokens of the page (the first 400 are used).
        shift: the offset to test; ``None`` tries every offset in ``_GLYPH_SHIFTS``.
    """
    # Only tokens holding a letter: real numbers ("278279") decode to letters under offsets near
    # 48 ('4','5' -> 'd','e'). Words of >= 2 letters only: one-letter fragments hit 'a', 'e', 'o'
    # by chance. The share is over tokens, so a page whose real words decode to nothing is not
    # judged by the few fragments that do.
    sample = [t for t in tokens if _WORD_RE.search(t)][:400]
    if not sample:
        return False
    for k in (shift,) if shift is not None else _GLYPH_SHIFTS:
        decoded = ["".join(chr(max(0, ord(ch) + k)) for ch in t).lower() for t in sample]
        words = [w for d in decoded for w in _WORD_RE.findall(d) if len(w) >= 2]
        hits = [w for w in words if w in _STOP_ANY]
        # >= 5 DIFFERENT stopwords on >= 20% of the tokens: one word repeated down a table
        # ("radicado" -> "al" under -3) or a few hits in a short figure/URL page are chance
        # (measured on the corpus: real pages reach <= 4 distinct / 14%, or 3 distinct / 30%);
        # shifted prose gives de, la, el, en, que, ... (variant shift 3: 10 distinct / 43%).
        if len(set(hits)) >= 5 and len(hits) / len(sample) >= 0.2:
            return True
    return False


# --- glyph fallback inside words --------------------------------------------------------------
# A font whose ToUnicode map misses (or maps to U+0000/U+FFFD/private use) a ligature glyph makes
# MuPDF emit the glyph id as the character (TEXT_USE_CID_FOR_UNKNOWN_UNICODE): "oﬁcina" in
# DejaVu Sans becomes "o\u13b2cina" (Cherokee), in Liberation "o\u0295cina" (IPA), in DejaVu
# Sans Oblique "o\u127fcina" (Ethiopic). The rest of the page is fine, so the page statistics above
# never notice; the tell is a character that no Latin word contains, glued to Latin letters.

# Characters that may legitimately touch a Latin letter: Latin (Basic to Extended-B, Extended
# Additional/C/D/E), spacing modifiers and combining marks, phonetic extensions, superscripts,
# letterlike symbols, alphabetic presentation forms (ligatures), full-width Latin, math letters.
_LATINISH_RANGES = (
    (0x0000, 0x024F),
    (0x02B0, 0x036F),
    (0x1AB0, 0x1AFF),
    (0x1D00, 0x1EFF),
    (0x2000, 0x2E7F),  # punctuation, super/subscripts, letterlike, symbols, arrows, math, Latin-C
    (0xA720, 0xA7FF),
    (0xAB30, 0xAB6F),
    (0xFB00, 0xFB06),
    (0xFE20, 0xFE2F),
    (0xFF00, 0xFFEF),
    (0x1D400, 0x1D7FF),
)
# Scripts that do appear next to Latin text (Greek symbols "εu", "mdσ"; Cyrillic names; CJK in
# Chinese pages "和Corr") and private-use symbol-font glyphs (bullets "\uf0b7FECHA", Symbol-font
# sigma "\uf073s"): a fallback only when Latin letters touch them on *both* sides ("o\ue001cina").
# Control characters and U+FFFD follow the same rule (see _foreign_in_word).
_BOTH_SIDES_RANGES = (
    (0x0370, 0x052F),  # Greek, Cyrillic
    (0x1F00, 0x1FFF),  # Greek extended
    (0x2E80, 0xD7FF),  # CJK, kana, Hangul
    (0xE000, 0xF8FF),  # private use
    (0xF900, 0xFAFF),
    (0x20000, 0x3FFFF),
)
_CANDIDATE_RE = re.compile("[^\x09\x0a\x0d\x20-\x7e\u00a0-\u024f]")
# Fires with this many words, or with one on a page of fewer than _GLYPH_SHORT_PAGE Latin words.
GLYPH_FALLBACK_MIN_WORDS = 2
_GLYPH_SHORT_PAGE = 60
# Pages whose letters are less than this share Latin are not judged (Chinese, Russian pages).
_GLYPH_MIN_LATIN_SHARE = 0.7


def _in_ranges(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(a <= cp <= b for a, b in ranges)


def _is_latin_letter(ch: str) -> bool:
    cp = ord(ch)
    return ch.isalpha() and (cp <= 0x024F or 0x1E00 <= cp <= 0x1EFF)


def _foreign_in_word(ch: str, left: str, right: str) -> bool:
    """True when ``ch`` between ``left`` and ``right`` (neighbouring characters, '' at an edge)
    can only be a glyph-id / unmapped-glyph fallback inside a Latin word."""
    lat_l, lat_r = _is_latin_letter(left) if left else False, _is_latin_letter(right) if right else False
    if not (lat_l or lat_r):
        return False
    cp = ord(ch)
    cat = unicodedata.category(ch)
    if cat == "Cc" or ch == "\ufffd":
        # U+0000 / U+FFFD for an unmapped ligature ("o\x00cina"); at a word's edge a control is a
        # bullet or tab glyph ("\x07CONTEXT" in UN reports), so only inside a word.
        return lat_l and lat_r
    if cat in ("Cn", "Cs") or (cp & 0xFFFE) == 0xFFFE or 0xFDD0 <= cp <= 0xFDEF:
        return True  # unassigned, surrogate, non-character: never text
    if 0x0250 <= cp <= 0x02AF:  # IPA letters ("o\u0295cina")
        return True
    if _in_ranges(cp, _LATINISH_RANGES):
        return False
    if _in_ranges(cp, _BOTH_SIDES_RANGES):
        return lat_l and lat_r
    return cat[0] in "LMN" or cat == "Co"  # a letter of another script (Cherokee, Ethiopic...)


def glyph_fallback_words(raw: str) -> list[str]:
    """Words of ``raw`` that contain a glyph-id / unmapped-glyph fallback character.

    Args:
        raw: a page's native text as ``get_text`` returns it.
    Returns:
        The offending words (whitespace-delimited, in order, each once), e.g. ``['o\u13b2cina']``;
        empty when the page's letters are less than 70 % Latin (other-script pages are not judged).
    """
    if not _CANDIDATE_RE.search(raw):
        return []
    letters = [c for c in raw if c.isalpha()]
    if not letters or sum(1 for c in letters if _is_latin_letter(c)) < _GLYPH_MIN_LATIN_SHARE * len(letters):
        return []
    found: dict[str, None] = {}
    for m in _CANDIDATE_RE.finditer(raw):
        i = m.start()
        left = raw[i - 1] if i else ""
        right = raw[i + 1] if i + 1 < len(raw) else ""
        if _foreign_in_word(raw[i], left, right):
            a = i
            while a > 0 and not raw[a - 1].isspace():
                a -= 1
            b = i
            while b < len(raw) and not raw[b].isspace():
                b += 1
            found.setdefault(raw[a:b], None)
    return list(found)


def judge_text_layer(raw: str) -> tuple[str, str | None]:
    """Judge whether a page's native text is usable, from the string alone (cheap).

    Returns:
        ``('empty', 'no_text_layer')``, ``('garbled', detail)``, ``('glyph_fallback', detail)`` or
        ``('ok', None)``. Garbled: see :func:`_judge_statistics`. Glyph fallback: the page reads as
        text but ≥ 2 of its words (1 on a page of < 60 Latin words) hold a glyph-id / unmapped-glyph
        character glued to Latin letters (:func:`glyph_fallback_words`, "o\u13b2cina" for
        "oficina"); ``detail`` names the count and up to three such words.
    """
    verdict, detail = _judge_statistics(raw)
    if verdict != "ok":
        return verdict, detail
    words = glyph_fallback_words(raw)
    if not words:
        return "ok", None
    if len(words) < GLYPH_FALLBACK_MIN_WORDS and len(_WORD_RE.findall(raw)) >= _GLYPH_SHORT_PAGE:
        return "ok", None
    sample = ", ".join(ascii(w)[1:-1][:40] for w in words[:3])
    return "glyph_fallback", f"{len(words)} word(s) with glyph-id characters ({sample})"


def _judge_statistics(raw: str) -> tuple[str, str | None]:
    """Page statistics of the native text.

    Returns:
        ``('empty', 'no_text_layer')``, ``('garbled', detail)`` or ``('ok', None)``. Garbled when
        > 5% of the non-space characters are control/replacement/private-use characters (unless
        the rest is real prose: ≥ 10 stopwords and ≥ 10% of tokens, e.g. prose with symbol-font
        equations), or when
        ≥ 12 Latin letter tokens contain < 8% stopwords and look like glyph ids shifted by one
        constant offset (``_GLYPH_SHIFTS``), or contain < 3% stopwords and are > 60% ALL-CAPS or
        > 35% have no vowel.
    """
    stripped = raw.strip()
    if not stripped:
        return "empty", "no_text_layer"
    nonspace = len(stripped) - len(_SPACE_RE.findall(stripped))
    bad = len(_BAD_RE.findall(stripped))
    if nonspace and bad >= 3 and bad / nonspace > 0.05:
        # Symbol-font glyphs (private use) around real prose, e.g. equations, are not garbage:
        # they are dropped by normalize. Garbled only if the rest is not real prose either.
        clean_tokens = _WORD_RE.findall(_BAD_RE.sub(" ", stripped))
        hits = sum(1 for t in clean_tokens if t.lower() in _STOP_ANY)
        if hits < 10 or hits / max(1, len(clean_tokens)) < 0.1:
            return "garbled", "control characters in text layer"
    tokens = _WORD_RE.findall(stripped)
    if len(tokens) < MIN_TOKENS_FOR_WORD_TEST:
        return "ok", None
    latin = [t for t in tokens if _LATIN_RE.match(t)]
    if len(latin) < 0.8 * len(tokens):
        return "ok", None  # other scripts: no dictionary test
    lower = [t.lower() for t in latin]
    stop_share = sum(1 for t in lower if t in _STOP_ANY) / len(lower)
    if stop_share >= 0.08:
        return "ok", None  # real prose: ~30% stopwords
    # A shifted layer splits into fragments at the punctuation the shift produces ("CFP@>IF>"),
    # and one-letter fragments can hit a stopword by chance: test the shift before the 3% cut.
    if _shift_decodes(re.findall(r"\S+", stripped)):
        return "garbled", "shifted glyph ids in text layer"
    if stop_share >= 0.03:
        return "ok", None
    longish = [t for t in latin if len(t) >= 2]
    if not longish:
        return "ok", None
    caps = sum(1 for t in longish if t.isupper()) / len(longish)
    novowel = sum(1 for t in longish if not (set(t.lower()) & _VOWELS)) / len(longish)
    if caps > 0.6 or novowel > 0.35:
        return "garbled", "no dictionary words in text layer"
    return "ok", None


def image_coverage(page) -> float:
    """Share (0-1) of the page area covered by images (union, on a 64×64 grid when several)."""
    rect = page.rect
    area = rect.width * rect.height
    if area <= 0:
        return 0.0
    boxes = []
    for info in page.get_image_info():
        x0, y0, x1, y1 = info["bbox"]
        x0, y0 = max(x0, rect.x0), max(y0, rect.y0)
        x1, y1 = min(x1, rect.x1), min(y1, rect.y1)
        if x1 > x0 and y1 > y0:
            boxes.append((x0, y0, x1, y1))
    if not boxes:
        return 0.0
    if len(boxes) == 1:
        x0, y0, x1, y1 = boxes[0]
        return (x1 - x0) * (y1 - y0) / area
    n = 64
    cw, ch = rect.width / n, rect.height / n
    covered = set()
    for x0, y0, x1, y1 in boxes:
        for i in range(int((x0 - rect.x0) / cw), min(n, int((x1 - rect.x0) / cw) + 1)):
            for j in range(int((y0 - rect.y0) / ch), min(n, int((y1 - rect.y0) / ch) + 1)):
                cx, cy = rect.x0 + (i + 0.5) * cw, rect.y0 + (j + 0.5) * ch
                if x0 <= cx <= x1 and y0 <= cy <= y1:
                    covered.add((i, j))
    return len(covered) / (n * n)


def _line_key(line: str) -> str:
    return re.sub(r"[\W_]+", "", line.lower())


def merge_native_and_ocr(native: str, ocr: str) -> str:
    """Native text first, then the OCR lines that do not repeat a native line.

    An OCR line is a repeat when its letters/digits match a native line with a difflib ratio
    ≥ 0.8 (OCR misreads a character or two of the header it also sees on the rendered page).
    """
    native_keys = [k for k in (_line_key(x) for x in native.splitlines()) if k]
    kept: list[str] = []
    for line in ocr.splitlines():
        k = _line_key(line)
        if k and native_keys:
            dup = False
            for nk in native_keys:
                if abs(len(nk) - len(k)) <= 0.3 * max(len(nk), len(k)):
                    if k == nk or difflib.SequenceMatcher(None, k, nk, autojunk=False).ratio() >= 0.8:
                        dup = True
                        break
            if dup:
                continue
        kept.append(line)
    body = "\n".join(kept).strip()
    return (native.strip() + "\n\n" + body).strip() if body else native.strip()


def _is_blank(page) -> bool:
    """True when the page draws nothing: no content stream, or a low-res render of one colour."""
    try:
        if not page.get_contents():
            return True
    except Exception:  # noqa: BLE001 - broken page object: treat as blank-with-content? no: render
        pass
    try:
        import pymupdf

        pix = page.get_pixmap(matrix=pymupdf.Matrix(0.25, 0.25), colorspace=pymupdf.csGRAY, alpha=False)
        return bool(pix.is_unicolor)
    except Exception:  # noqa: BLE001 - an unrenderable page is judged blank
        return True


def _page_warnings(pymupdf) -> str:
    try:
        return pymupdf.TOOLS.mupdf_warnings(reset=True) or ""
    except Exception:  # noqa: BLE001 - MuPDF warnings are advisory
        return ""


@dataclass
class _PdfLog:
    """What a PDF extraction accumulates across pages, in reading order.

    ``damage`` feeds the 'damaged' status (and makes a blank page "missing in a damaged file");
    ``needs_ocr_unmet`` lists pages that needed OCR but got none (disabled or failed);
    ``warnings`` and ``metadata`` go to the ExtractedDocument as they are.
    """

    warnings: list[str] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)
    needs_ocr_unmet: list[str] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)


_OCR_LABELS = {
    "garbled": "garbled_text_layer",
    "glyph_fallback": "glyph_fallback",
    "empty": "no_text_layer",
    "image": "image_dominant_page",
}
# Actions whose native text is kept when OCR cannot replace it (a few odd words beat no page).
_KEEP_NATIVE = ("image", "glyph_fallback")


def _open_pdf(pymupdf, data: bytes):
    """Open the PDF bytes: ``(doc, open_warnings, None)`` or ``(None, '', corrupt document)``.

    ``open_warnings`` are the MuPDF warnings raised while opening (e.g. xref repair).
    """
    _page_warnings(pymupdf)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - any MuPDF open failure means a corrupt file
        return (
            None,
            "",
            ExtractedDocument(format="pdf", status="corrupt", reason=f"{type(exc).__name__}: {exc}", pages=[]),
        )
    return doc, _page_warnings(pymupdf), None


def _encrypted_result(doc, n_total: int) -> ExtractedDocument | None:
    """The 'encrypted' document when a user password is required (the empty one fails), else None."""
    if doc.needs_pass and not doc.authenticate(""):
        return ExtractedDocument(
            format="pdf",
            status="encrypted",
            reason="user password required",
            pages=[],
            n_pages_total=n_total,
            metadata={"encrypted": True},
        )
    return None


def _note_file_damage(doc, data: bytes, log: _PdfLog) -> None:
    """File-level damage: a repaired xref, a missing ``%%EOF`` (a warning only when alone)."""
    if doc.is_repaired:
        log.damage.append("xref repaired (damaged or truncated file)")
    if b"%%EOF" not in data[-2048:]:
        # Alone (xref intact, every page readable) this is cosmetic: a few bytes cut at the end.
        # With a repaired xref or cut pages it is part of the damage reason.
        if doc.is_repaired:
            log.damage.append("truncated file (no %%EOF)")
        else:
            log.warnings.append("file does not end with %%EOF (possibly truncated)")


def _document_metadata(doc, open_warnings: str) -> dict:
    """Initial metadata: non-empty PDF info fields, ``is_repaired``, title, open warnings (≤ 20)."""
    meta = {k: v for k, v in (doc.metadata or {}).items() if v}
    metadata: dict = {"pdf": meta, "is_repaired": bool(doc.is_repaired)}
    if isinstance(meta.get("title"), str) and meta["title"].strip():
        metadata["title"] = normalize_text(meta["title"])
    if open_warnings:
        metadata["open_warnings"] = open_warnings.splitlines()[:20]
    return metadata


def _select_pages(n_total: int, pages: Sequence[int] | None, max_pages: int | None, log: _PdfLog) -> list[int]:
    """1-based page numbers to read: ``pages`` within range (default all), cut to ``max_pages``;
    warns when fewer than all pages are read."""
    numbers = list(range(1, n_total + 1)) if pages is None else [p for p in pages if 1 <= p <= n_total]
    if max_pages is not None and len(numbers) > max_pages:
        numbers = numbers[: max(0, max_pages)]
    if len(numbers) < n_total:
        log.warnings.append(f"extracted {len(numbers)} of {n_total} pages")
    return numbers


def _ocr_action(page, verdict: str, native: str) -> str | None:
    """Why a page needs OCR: 'garbled', 'glyph_fallback', 'empty', 'image' (short text over a large
    image), or None."""
    if verdict in ("garbled", "glyph_fallback"):
        return verdict
    if verdict == "empty" or not native:
        return "empty"
    short = len(re.sub(r"\s", "", native)) < IMAGE_PAGE_MAX_CHARS
    if short and page.get_images(full=False) and image_coverage(page) >= IMAGE_COVERAGE_MIN:
        return "image"
    return None


def _blank_page(no: int, truncated: bool, log: _PdfLog) -> PageText:
    """An empty page that draws nothing: a blank page, or missing content in a damaged file."""
    if log.damage or truncated:
        reason = "no content (missing in damaged file)"
        log.damage.append(f"page {no}: no content")
    else:
        reason = "blank page"
    return PageText(no, "", "text_layer", reason, status="empty")


def _page_without_ocr(no: int, action: str, native: str, log: _PdfLog) -> PageText:
    """A page that needed OCR with OCR disabled: its native text (image pages) or nothing."""
    label = _OCR_LABELS[action]
    log.needs_ocr_unmet.append(f"page {no}: {label}")
    if action in _KEEP_NATIVE and native:
        return PageText(no, native, "text_layer", f"{label} (ocr disabled)", status="partial")
    return PageText(no, "", "text_layer", f"{label} (ocr disabled)", status="empty")


def _run_ocr(page, settings: OcrSettings):
    """OCR the page: ``(result, reliable normalized text or '', error or None)``; never raises."""
    try:
        res = ocr_page(page, settings)
        return res, (normalize_text(res.text) if is_reliable(res) else ""), None
    except Exception as exc:  # noqa: BLE001 - tesseract missing / timeout
        return None, "", f"{type(exc).__name__}: {exc}"


def _page_from_ocr(
    no: int, action: str, native: str, res, ocr_text: str, ocr_err: str | None, log: _PdfLog
) -> PageText:
    """Assemble a page from its OCR outcome: failed, merged with native text (image pages),
    OCR text alone, or, when OCR found no reliable text, the native text (glyph-fallback pages,
    'partial') or an empty page."""
    label = _OCR_LABELS[action]
    if ocr_err is not None:
        log.needs_ocr_unmet.append(f"page {no}: ocr failed")
        keep = action in _KEEP_NATIVE and bool(native)
        return PageText(
            no,
            native if keep else "",
            "text_layer",
            f"{label} -> ocr failed ({ocr_err[:200]})",
            status="partial" if keep else "empty",
        )
    if action == "image":
        if ocr_text:
            return PageText(
                no,
                merge_native_and_ocr(native, ocr_text),
                "text_layer+ocr",
                f"{label} -> ocr",
                ocr_rotation=res.rotation,
            )
        return PageText(no, native, "text_layer", f"{label} -> ocr (no reliable text)")
    if ocr_text:
        return PageText(no, ocr_text, "ocr", f"{label} -> ocr", ocr_rotation=res.rotation)
    if action == "glyph_fallback" and native:
        log.needs_ocr_unmet.append(f"page {no}: {label} (ocr found no reliable text)")
        return PageText(no, native, "text_layer", f"{label} -> ocr (no reliable text)", status="partial")
    # An image without readable text (photo, logo): nothing to index, not an error.
    return PageText(no, "", "ocr", f"{label} -> ocr (no reliable text)", status="empty")


def _record_ocr(no: int, res, ocr_text: str, log: _PdfLog) -> None:
    """Per-page OCR facts in ``metadata['ocr']``; a warning when kept text has low confidence."""
    log.metadata.setdefault("ocr", []).append(
        {
            "page": no,
            "rotation": res.rotation,
            "mean_confidence": res.mean_confidence,
            "words": res.n_words,
            "tried": res.tried,
            "kept": bool(ocr_text),
        }
    )
    if ocr_text and res.mean_confidence < RELIABLE_MIN_CONFIDENCE:
        log.warnings.append(f"page {no}: low OCR confidence ({res.mean_confidence})")


def _ocr_page_text(page, no: int, action: str, native: str, settings: OcrSettings, log: _PdfLog) -> PageText:
    """The page that needs OCR (``action``): without OCR when disabled, else from its OCR run."""
    if not settings.enabled:
        return _page_without_ocr(no, action, native, log)
    res, ocr_text, ocr_err = _run_ocr(page, settings)
    pt = _page_from_ocr(no, action, native, res, ocr_text, ocr_err, log)
    if res is not None:
        _record_ocr(no, res, ocr_text, log)
    return pt


def _mark_truncated(pt: PageText, no: int, log: _PdfLog) -> None:
    """A page whose content stream was cut: status 'partial', reason prefixed, damage noted."""
    pt.status = "partial"
    pt.reason = "truncated content stream" + (f"; {pt.reason}" if pt.reason else "")
    log.damage.append(f"page {no}: truncated content stream")


def _extract_page(pymupdf, doc, no: int, flags: int, settings: OcrSettings, log: _PdfLog) -> PageText:
    """One page by the module's rules: read the text layer, judge it, OCR if needed, mark truncation."""
    _page_warnings(pymupdf)
    try:
        page = doc.load_page(no - 1)
        raw = page.get_text("text", flags=flags)
    except Exception as exc:  # noqa: BLE001 - one unreadable page must not lose the others
        log.damage.append(f"page {no}: unreadable")
        return PageText(no, "", "text_layer", f"page error: {type(exc).__name__}: {exc}", status="empty")
    # Read (and reset) MuPDF's warnings ONCE: inside the generator each marker would read a fresh,
    # already emptied buffer, so only the first marker could ever match.
    page_warnings = _page_warnings(pymupdf).lower()
    truncated = any(m in page_warnings for m in _TRUNCATION_MARKERS)
    verdict, detail = judge_text_layer(raw)
    native = normalize_text(raw) if verdict in ("ok", "glyph_fallback") else ""
    action = _ocr_action(page, verdict, native)
    if action == "empty" and _is_blank(page):
        return _blank_page(no, truncated, log)
    if action is None:
        pt = PageText(no, native, "text_layer")
    else:
        pt = _ocr_page_text(page, no, action, native, settings, log)
        if detail and action in ("garbled", "glyph_fallback"):
            key = "garbled_pages" if action == "garbled" else "glyph_fallback_pages"
            log.metadata.setdefault(key, []).append({"page": no, "detail": detail})
    if truncated:
        _mark_truncated(pt, no, log)
    return pt


def _document_status(pages: list[PageText], log: _PdfLog) -> tuple[str, str | None]:
    """Document status and reason: damaged > empty > partial (pages without usable text) > ok."""
    if log.damage:
        return "damaged", "; ".join(dict.fromkeys(log.damage))
    unmet = log.needs_ocr_unmet
    if not any(p.text for p in pages):
        return "empty", "no extractable text" + (f" ({'; '.join(unmet[:5])})" if unmet else "")
    if unmet:
        more = f" (+{len(unmet) - 5} more)" if len(unmet) > 5 else ""
        return "partial", "pages without usable text: " + "; ".join(unmet[:5]) + more
    return "ok", None


def extract_pdf(
    data: bytes,
    *,
    ocr: OcrSettings | None = None,
    max_pages: int | None = None,
    pages: Sequence[int] | None = None,
) -> ExtractedDocument:
    """Extract a PDF from its bytes (see module docstring for the page rules).

    Args:
        data: the PDF file's bytes.
        ocr: OCR settings (default ``OcrSettings()``; ``enabled=False`` never OCRs).
        max_pages: read only the first N pages (of the selection).
        pages: 1-based page numbers to read (default all).
    Returns:
        ExtractedDocument with format 'pdf'. Raises nothing for bad PDFs except unexpected
        programming errors, which ``extract()`` turns into status 'corrupt'.
    """
    import pymupdf

    settings = ocr or OcrSettings()
    doc, open_warnings, corrupt = _open_pdf(pymupdf, data)
    if corrupt is not None:
        return corrupt
    try:
        n_total = doc.page_count  # before any page load can trigger a repair
        encrypted = _encrypted_result(doc, n_total)
        if encrypted is not None:
            return encrypted
        log = _PdfLog()
        _note_file_damage(doc, data, log)
        log.metadata = _document_metadata(doc, open_warnings)
        numbers = _select_pages(n_total, pages, max_pages, log)
        flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
        out = [_extract_page(pymupdf, doc, no, flags, settings, log) for no in numbers]
        if doc.is_repaired and not log.metadata["is_repaired"]:  # repair triggered while loading pages
            log.metadata["is_repaired"] = True
            log.damage.insert(0, "xref repaired (damaged or truncated file)")
        status, reason = _document_status(out, log)
        return ExtractedDocument(
            format="pdf",
            status=status,
            reason=reason,
            pages=out,
            metadata=json_safe(log.metadata),
            warnings=log.warnings,
            n_pages_total=n_total,
        )
    finally:
        doc.close()
