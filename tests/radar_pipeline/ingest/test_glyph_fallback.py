"""Ligature glyphs whose ToUnicode entry is missing or wrong: the page is re-read by OCR.

The PDFs are built here with PyMuPDF: real fonts of this machine with their ligature glyphs
(U+FB01/U+FB02 drawn as one glyph), then the font's ToUnicode map is rewritten so that the
ligature glyphs are unmapped or mapped to U+0000, U+FFFD or a private-use code point. MuPDF then
emits the glyph id as the character (``o\\u13b2cina`` with DejaVu Sans, ``o\\u0295cina`` with
Liberation) or the private-use code point; the rendered page still shows "oficina".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from radar_pipeline.ingest import OcrSettings, extract_bytes
from radar_pipeline.ingest.pdf import glyph_fallback_words, judge_text_layer

from .support_ingest import needs_tesseract

FONTS = Path("/usr/share/fonts/truetype")

ES_LINES = [
    "La o\ufb01cina \ufb01nanciera identi\ufb01có tres \ufb02ujos de dinero ilícito.",
    "El con\ufb02icto afectó la e\ufb01ciencia de la defensa según el informe \ufb01nal.",
    "La policía a\ufb01rmó que el bene\ufb01cio fue signi\ufb01cativo en la región.",
    "Las comunidades denunciaron amenazas y restricciones a la movilidad.",
]
EN_LINES = [
    "The of\ufb01ce con\ufb01rmed the \ufb01nancial \ufb02ows of the armed group.",
    "Its \ufb01eld teams identi\ufb01ed a signi\ufb01cant in\ufb02uence on the con\ufb02ict.",
    "The agency said that the estimates were revised in the light of new data.",
]

# Words the OCR'd page must give back (present in the rendered text of the lines above).
ES_WORDS = ["oficina", "financiera", "flujos", "conflicto", "eficiencia", "afirmó", "significativo"]
EN_WORDS = ["office", "confirmed", "financial", "flows", "conflict"]


def _font(name: str) -> Path:
    path = next(FONTS.rglob(name), None)
    if path is None:
        pytest.skip(f"font {name} not installed")
    return path


def _cmap(entries: list[tuple[int, int]]) -> bytes:
    """A ToUnicode CMap mapping 2-byte glyph codes to single UTF-16 code units."""
    body = "\n".join(f"<{g:04x}> <{u:04x}>" for g, u in entries)
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo <</Registry(Adobe)/Ordering(UCS)/Supplement 0>> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        f"{len(entries)} beginbfchar\n{body}\nendbfchar\nendcmap\n"
        "CMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode()


def build_pdf(font_file: str, lines: list[str], fault: int | None | str) -> bytes:
    """A one-page PDF drawing ``lines`` in ``font_file``; its ToUnicode maps every glyph right
    except the ligatures U+FB00-U+FB06: ``fault`` = a code point they map to, ``None`` (left
    unmapped) or ``'correct'`` (mapped to the ligature code point, i.e. a sound file)."""
    import pymupdf

    path = _font(font_file)
    font = pymupdf.Font(fontfile=str(path))
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="F0", fontfile=str(path))
    y = 90
    for line in lines:
        page.insert_text((60, y), line, fontname="F0", fontsize=13)
        y += 26
    font_xref = next(x for x in range(1, doc.xref_length()) if "/ToUnicode" in doc.xref_object(x))
    to_unicode = int(doc.xref_get_key(font_xref, "ToUnicode")[1].split()[0])
    entries = []
    for ch in sorted(set("".join(lines))):
        gid = font.has_glyph(ord(ch))
        assert gid, f"{font_file} lacks {ch!r}"
        if 0xFB00 <= ord(ch) <= 0xFB06 and fault != "correct":
            if fault is None:
                continue
            entries.append((gid, fault))
        else:
            entries.append((gid, ord(ch)))
    doc.update_stream(to_unicode, _cmap(entries))
    return doc.tobytes()


# --- the judgement, on strings ----------------------------------------------------------------------

CLEAN_ES = (
    "Durante el primer semestre se registraron desplazamientos masivos en cuatro municipios del "
    "Catatumbo. Las comunidades denunciaron amenazas y restricciones a la movilidad de la población. "
)


@pytest.mark.parametrize(
    "fallback",
    [
        "\u13b2",  # Cherokee (DejaVu Sans gid 0x13B2)
        "\u127f",  # Ethiopic (DejaVu Sans Oblique)
        "\u0295",  # IPA (Liberation Sans)
        "\u07af",  # Thaana (DejaVu Sans ExtraLight)
        "\u0ce5",  # unassigned in Kannada (DejaVu Serif Italic)
        "\u1501",  # Canadian syllabics
        "\x00",
        "\ufffd",
        "\ue001",
        "\uf8ff",
    ],
)
def test_fallback_characters_inside_latin_words_are_detected(fallback):
    text = CLEAN_ES + f"La o{fallback}cina {fallback}nanciera y el con{fallback}icto. " + CLEAN_ES
    verdict, detail = judge_text_layer(text)
    assert verdict == "glyph_fallback" and "glyph" in detail
    assert f"o{fallback}cina" in glyph_fallback_words(text)


def test_one_fallback_word_fires_on_a_short_page_only():
    short = "Acta de la o\u13b2cina regional."
    assert judge_text_layer(short)[0] == "glyph_fallback"
    long = (CLEAN_ES * 4) + "Acta de la o\u13b2cina regional."
    assert judge_text_layer(long) == ("ok", None)


@pytest.mark.parametrize(
    "text",
    [
        # symbol-font bullets and Greek/Symbol letters next to words, as in real reports
        CLEAN_ES + "\n\uf0b7FECHA_CORTE: fecha\n\uf0b7NOM_RPT: nombre\n" + CLEAN_ES,
        CLEAN_ES + "sigma \uf073s/g y \uf073p/g; las coordenadas (x\uf0a2, y\uf0a2) " + CLEAN_ES,
        CLEAN_ES + "la deformación εu y εv, la desviación (mdσ) y Fβ = (1 + β2). " + CLEAN_ES,
        CLEAN_ES + "\x07CONTEXT \x07GUIDELINES \x07Policy \x03POR l\x00 " + CLEAN_ES,
        CLEAN_ES + "ediction as ˆr, Sim˜oes, Lu´ıs, 𝑅eff, x∗, ∼p, 1.5 ◦C, ①Data " + CLEAN_ES,
        CLEAN_ES + "Diputado Иван Петров y la Duma; δ-función y el Ω-grupo " + CLEAN_ES,
        # a Chinese page quoting Latin document symbols
        "联合国大会第1721A和B (XVI)号决议，及A/AC.105/C.1和Corr.1号文件，委员会核可。" * 5,
        "Côte dʼIvoire, Hawaiʻi y Sāmoa; la 2ᵉ edición; el ℓ-ésimo término; µg y m².",
    ],
)
def test_real_text_next_to_odd_characters_is_not_a_glyph_fallback(text):
    assert judge_text_layer(text)[0] != "glyph_fallback", glyph_fallback_words(text)


# --- whole PDFs: built with a broken ToUnicode, re-read by OCR ---------------------------------------


FAULTY_PDFS = [
    ("DejaVuSans.ttf", ES_LINES, None, ES_WORDS),  # unmapped: glyph id (Cherokee)
    ("DejaVuSerif.ttf", ES_LINES, 0x0000, ES_WORDS),  # mapped to U+0000: glyph id (Kannada block)
    ("LiberationSans-Regular.ttf", EN_LINES, 0xFFFD, EN_WORDS),  # U+FFFD: glyph id (IPA)
    ("DejaVuSans-Oblique.ttf", EN_LINES, None, EN_WORDS),  # glyph id (Ethiopic)
    ("LiberationSerif-Regular.ttf", ES_LINES, 0xE001, ES_WORDS),  # private use
]


@pytest.mark.parametrize(("font", "lines", "fault", "words"), FAULTY_PDFS)
def test_built_pdfs_show_the_fault_and_are_judged(font, lines, fault, words):
    import pymupdf

    data = build_pdf(font, lines, fault)
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        raw = doc[0].get_text("text", flags=pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES)
    assert "oficina" not in raw and "office" not in raw  # the fault is really in the text layer
    assert judge_text_layer(raw)[0] == "glyph_fallback"


def test_glyph_fallback_page_keeps_native_text_when_ocr_is_off():
    data = build_pdf("DejaVuSans.ttf", ES_LINES, None)
    doc = extract_bytes(data, "informe.pdf", ocr=OcrSettings(enabled=False))
    page = doc.pages[0]
    assert page.source == "text_layer" and page.status == "partial"
    assert page.reason == "glyph_fallback (ocr disabled)"
    assert "movilidad" in page.text
    assert doc.status == "partial" and "glyph_fallback" in doc.reason
    assert doc.metadata["glyph_fallback_pages"][0]["page"] == 1


def test_sound_ligature_pdf_is_not_ocrd(monkeypatch):
    import radar_pipeline.ingest.pdf as pdf_mod

    def boom(*_a, **_k):
        raise AssertionError("a sound text layer must not be OCR'd")

    monkeypatch.setattr(pdf_mod, "ocr_page", boom)
    for font, lines, _fault, words in FAULTY_PDFS:
        doc = extract_bytes(build_pdf(font, lines, "correct"), "ok.pdf")
        assert doc.pages[0].source == "text_layer" and doc.status == "ok"
        assert all(w in doc.text for w in words)


@needs_tesseract
@pytest.mark.parametrize(("font", "lines", "fault", "words"), FAULTY_PDFS)
def test_glyph_fallback_page_is_reread_by_ocr(font, lines, fault, words):
    doc = extract_bytes(build_pdf(font, lines, fault), "informe.pdf")
    page = doc.pages[0]
    assert page.source == "ocr" and page.reason == "glyph_fallback -> ocr"
    assert doc.status == "ok"
    text = doc.text
    for w in words:
        assert w in text, (w, text)
    assert not glyph_fallback_words(text)
