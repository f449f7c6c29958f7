"""Tesseract OCR of PDF pages / images, with orientation detection.

Pages are rendered at ``OcrSettings.dpi`` (300 by default) in grayscale, scaled down so the image
never exceeds ``max_pixels`` (huge posters/maps), and read with ``image_to_data`` (one Tesseract
pass gives both the text and per-word confidences).

Orientation: the page is first read as rendered (0°). When the mean word confidence is below
``OcrSettings.min_confidence``, Tesseract's OSD (``image_to_osd``) proposes a rotation, which is
tried; if the best result is still poor and the page has words, the remaining right angles are
tried. The result with the best confidence (weighted by the number of words) wins. A page that
Tesseract reads well but as vertical lines (word boxes taller than wide: a 90/270° scan its layout
analysis handled) is re-read at 90° and 270° and the upright reading is kept, so the rotation is
recorded. The applied
rotation is reported in degrees **clockwise** applied to the rendered image (OSD's "Rotate"
convention; a page scanned 90° counter-clockwise reports 90).

Tesseract is run with ``OMP_THREAD_LIMIT=1`` (set in the OCR-ing process's environment when it
first OCRs; the parallelism is across files, not inside Tesseract).
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field

__all__ = ["OcrSettings", "OcrResult", "ocr_page", "ocr_image", "render_page", "available_languages", "is_reliable"]


def _single_thread_tesseract() -> None:
    """Tesseract inherits the environment; one OpenMP thread per page is fastest when files are
    OCR'd in parallel. Set only in processes that OCR, not at import (it slows FAISS/torch)."""
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")


# Confidence points a rotated reading must gain over the 0° reading to be kept.
ROTATION_MARGIN = 10.0
# Below both of these a reading is noise (photo, logo): 'ae as' at 24.5 on a photo page.
RELIABLE_MIN_CONFIDENCE = 50.0
RELIABLE_MIN_WORDS = 20


def is_reliable(result: OcrResult) -> bool:
    """False for tiny low-confidence readings (fewer than 20 words at < 50 mean confidence)."""
    return bool(result.text.strip()) and (
        result.mean_confidence >= RELIABLE_MIN_CONFIDENCE or result.n_words >= RELIABLE_MIN_WORDS
    )


@dataclass(frozen=True)
class OcrSettings:
    """OCR configuration.

    Attributes:
        languages: Tesseract language string ('spa+eng+por'); languages not installed are dropped.
        dpi: render resolution in dots per inch (300).
        max_pixels: cap on rendered width × height in pixels (the dpi is lowered to fit);
            35 M px fits an A3 page at 300 dpi.
        enabled: when False no page is OCR'd (pages that needed it are reported, not read).
        min_confidence: mean word confidence (0-100) at 0° above which no orientation search is
            done. Measured on the case files: upright scans 94-96, sideways text read at 0° 44-58.
        timeout_s: per Tesseract call; a page that times out is reported, not fatal.
        psm: Tesseract page segmentation mode (3 = automatic).
    """

    languages: str = "spa+eng+por"
    dpi: int = 300
    max_pixels: int = 35_000_000
    enabled: bool = True
    min_confidence: float = 75.0
    timeout_s: float = 180.0
    psm: int = 3


@dataclass
class OcrResult:
    """What OCR of one image produced.

    Attributes:
        text: raw OCR text (lines joined by ``\\n``, blocks by a blank line; not yet normalized).
        rotation: degrees clockwise applied to the image before the kept reading (0/90/180/270).
        mean_confidence: mean Tesseract word confidence (0-100) of the kept reading.
        n_words: words in the kept reading.
        tried: rotations tried, in order.
        image_size: (width, height) in pixels of the rendered image.
    """

    text: str
    rotation: int = 0
    mean_confidence: float = 0.0
    n_words: int = 0
    tried: list[int] = field(default_factory=list)
    image_size: tuple[int, int] = (0, 0)


@functools.lru_cache(maxsize=1)
def available_languages() -> frozenset[str]:
    """Tesseract languages installed on this machine (cached; empty when Tesseract is missing)."""
    import pytesseract

    try:
        return frozenset(pytesseract.get_languages(config=""))
    except Exception:  # noqa: BLE001 - tesseract binary absent
        return frozenset()


def _lang_string(requested: str) -> str:
    avail = available_languages()
    langs = [x for x in requested.split("+") if x and (not avail or x in avail)]
    if not langs:
        raise RuntimeError(f"no requested Tesseract language installed ({requested}; have {sorted(avail)})")
    return "+".join(langs)


def render_page(page, settings: OcrSettings):
    """Render a PyMuPDF page to a grayscale PIL image at ``settings.dpi`` capped to
    ``settings.max_pixels`` pixels. Returns ``(image, zoom)``; zoom is pixels per PDF point."""
    import pymupdf
    from PIL import Image

    rect = page.rect
    zoom = settings.dpi / 72.0
    area = max(1.0, rect.width * rect.height)
    if area * zoom * zoom > settings.max_pixels:
        zoom = math.sqrt(settings.max_pixels / area)
    # Tesseract refuses images wider/taller than 32767 px.
    zoom = min(zoom, 32000 / max(1.0, rect.width), 32000 / max(1.0, rect.height))
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    return img, zoom


# A reading is "sideways" when most words of >= 4 characters have boxes taller than wide: Tesseract's
# layout analysis can read a page scanned at 90/270 degrees as vertical lines, with good confidence,
# so confidence alone never asks for a rotation and the page's orientation would go unrecorded.
SIDEWAYS_MIN_SHARE = 0.6
SIDEWAYS_MIN_WORDS = 5


def _read(img, lang: str, settings: OcrSettings) -> tuple[str, float, int, bool]:
    """One Tesseract pass: (text, mean word confidence, number of words, read sideways?)."""
    import pytesseract

    data = pytesseract.image_to_data(
        img,
        lang=lang,
        config=f"--psm {settings.psm}",
        output_type=pytesseract.Output.DICT,
        timeout=settings.timeout_s,
    )
    lines: list[str] = []
    current_key = None
    current_block = None
    words: list[str] = []
    confs: list[float] = []
    long_words = tall_words = 0
    for i, word in enumerate(data["text"]):
        word = (word or "").strip()
        if not word:
            continue
        if len(word) >= 4:
            long_words += 1
            tall_words += data["height"][i] > data["width"][i]
        try:
            conf = float(data["conf"][i])
        except (TypeError, ValueError):
            conf = -1.0
        key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
        if key != current_key:
            if words:
                lines.append(" ".join(words))
            if current_block is not None and data["block_num"][i] != current_block:
                lines.append("")
            words = []
            current_key = key
            current_block = data["block_num"][i]
        words.append(word)
        if conf >= 0:
            confs.append(conf)
    if words:
        lines.append(" ".join(words))
    n_words = sum(len(ln.split()) for ln in lines)
    mean_conf = sum(confs) / len(confs) if confs else 0.0
    sideways = long_words >= SIDEWAYS_MIN_WORDS and tall_words / long_words >= SIDEWAYS_MIN_SHARE
    return "\n".join(lines), mean_conf, n_words, sideways


def _osd_rotation(img, settings: OcrSettings) -> int | None:
    import pytesseract

    try:
        osd = pytesseract.image_to_osd(img, config="--psm 0", timeout=settings.timeout_s)
    except Exception:  # noqa: BLE001 - "Too few characters", no osd data: no opinion
        return None
    m = re.search(r"Rotate:\s*(\d+)", osd)
    c = re.search(r"Orientation confidence:\s*([\d.]+)", osd)
    if not m:
        return None
    rot = int(m.group(1)) % 360
    if c and float(c.group(1)) < 1.0:
        return None
    return rot


def _score(conf: float, n_words: int) -> float:
    # Confidence first; words break near-ties (log so a long garbage reading cannot win).
    return conf + 2.0 * math.log1p(n_words)


def ocr_image(img, settings: OcrSettings | None = None) -> OcrResult:
    """OCR a PIL image with orientation detection (see module docstring).

    Raises:
        RuntimeError / pytesseract errors when Tesseract is missing or times out.
    """
    settings = settings or OcrSettings()
    _single_thread_tesseract()
    lang = _lang_string(settings.languages)
    tried: list[int] = []
    results: dict[int, tuple[str, float, int, bool]] = {}

    def attempt(rot: int) -> None:
        if rot in results:
            return
        im = img if rot == 0 else img.rotate(-rot, expand=True, fillcolor=255)
        results[rot] = _read(im, lang, settings)
        tried.append(rot)

    def best() -> int:
        # A rotation must beat the page as rendered by a clear margin: on photos and covers all
        # four readings are poor and a rotated one can win by noise. (Case 08: 0° 57.9 vs 90° 94.5.)
        return max(results, key=lambda r: _score(results[r][1], results[r][2]) - (ROTATION_MARGIN if r else 0))

    attempt(0)
    text0, conf0, n0, sideways0 = results[0]
    if sideways0:
        # Read as vertical lines: the page lies at 90/270. Keep the upright reading that is
        # horizontal and at least as confident as the sideways one (minus the usual margin).
        for r in (90, 270):
            attempt(r)
        upright = [r for r in (90, 270) if not results[r][3]]
        if upright:
            r = max(upright, key=lambda k: _score(results[k][1], results[k][2]))
            if _score(results[r][1], results[r][2]) >= _score(conf0, n0) - ROTATION_MARGIN:
                text, conf, n, _ = results[r]
                return OcrResult(
                    text=text, rotation=r, mean_confidence=round(conf, 1), n_words=n, tried=tried, image_size=img.size
                )
    if conf0 < settings.min_confidence and n0 > 0:
        rot = _osd_rotation(img, settings)
        if rot:
            attempt(rot)
        b = best()
        if results[b][1] < settings.min_confidence - 15 and n0 >= 10:
            for r in (90, 270, 180):
                attempt(r)
                if results[r][1] >= settings.min_confidence:
                    break
    b = best()
    text, conf, n, _ = results[b]
    return OcrResult(text=text, rotation=b, mean_confidence=round(conf, 1), n_words=n, tried=tried, image_size=img.size)


def ocr_page(page, settings: OcrSettings | None = None) -> OcrResult:
    """Render a PyMuPDF page (``render_page``) and OCR it (``ocr_image``)."""
    settings = settings or OcrSettings()
    img, _zoom = render_page(page, settings)
    return ocr_image(img, settings)
