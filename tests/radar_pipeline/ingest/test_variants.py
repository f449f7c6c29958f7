"""Unseen variants of every handed ingestion case (CASES.md), asserting the same correct result.

The files are generated at test time by ``support_variants`` (PyMuPDF, Pillow, openpyxl) and go
through ``extract_bytes``, the entry point the documents asset uses. Each test states the CASES.md
check of its kind, applied to a file built differently from the handed one.
"""

from __future__ import annotations

import functools
import json
import re
import time

import pytest

from radar_pipeline.ingest import extract_bytes
from radar_pipeline.sentences import split_sentences

from . import support_variants as V
from .support_ingest import needs_tesseract

LIGATURES = re.compile("[\ufb00-\ufb06]")
C1 = re.compile("[\u0080-\u009f]")


def _ocr_forbidden(monkeypatch):
    import radar_pipeline.ingest.pdf as pdf_mod

    def boom(*_a, **_k):
        raise AssertionError("OCR must not be attempted here")

    monkeypatch.setattr(pdf_mod, "ocr_page", boom)


def _storable(doc) -> None:
    """The general rule: nothing unstorable reaches the stores; an ok document has text."""
    json.dumps(doc.metadata, allow_nan=False)
    json.dumps(doc.records, allow_nan=False)
    assert "\x00" not in json.dumps(doc.records, ensure_ascii=False)
    for p in doc.pages:
        assert "\x00" not in p.text and "\ufffd" not in p.text
        assert not LIGATURES.search(p.text) and not C1.search(p.text)
    if doc.status == "ok":
        assert doc.text.strip()
    else:
        assert doc.reason


# --- 01 ligatures: ﬀ ﬃ ﬄ ﬆ (and ﬁ ﬂ) in a TrueType font ------------------------------------------------


def test_01v_other_ligatures_expanded():
    doc = extract_bytes(V.ligatures_pdf(), "informe.pdf")
    _storable(doc)
    assert doc.status == "ok"
    for word in V.LIGATURE_WORDS:
        assert word in doc.text, word
    for chunk in split_sentences(doc.text, doc.language):
        assert not any(0xFB00 <= ord(c) <= 0xFB06 for c in chunk)


# --- 03 glyph ids as text: other offsets / substitution ------------------------------------------------


@needs_tesseract
@pytest.mark.parametrize("kind", ["shift3", "caesar"])
def test_03v_other_cmap_garbage_is_ocrd(kind):
    doc = extract_bytes(V.garbled_layer_pdf(kind), "oficio.pdf")
    _storable(doc)
    assert doc.status == "ok"
    text = doc.text
    for word in ["Catatumbo", "hostigamiento", "vigilancia perimetral", "OFICIO 0931"]:
        assert word in text, word
    assert "CFP@>IF>" not in text and "Mpzjhsph" not in text
    page = doc.pages[0]
    assert page.source == "ocr"
    assert page.reason and page.reason.startswith("garbled_text_layer") and "ocr" in page.reason


def test_03v_repetitive_table_page_is_not_judged_shifted(monkeypatch):
    """The offset search must not call a real, repetitive page (ids, hex codes) garbage."""
    _ocr_forbidden(monkeypatch)
    doc = extract_bytes(V._pdf(V._long_pages(2)), "tabla.pdf")
    assert doc.status == "ok" and all(p.source == "text_layer" for p in doc.pages)
    assert "Pagina 2, linea 30" in doc.text


@pytest.mark.parametrize(
    ("path", "page"),
    [
        ("radar/ai_military/Manned-UnmannedAircraftTeaming_Sadraey__2018_.pdf", 8),
        ("radar/ai_military/chile2021ia_politica-nacional-ia.pdf", 76),
        ("radar/ai_military/oxfordinsights2023_ai-readiness-index.pdf", 47),
        ("radar/space_security/nasa_ca_handbook2023_batch2.pdf", 16),
    ],
)
def test_03v_short_real_pages_are_not_judged_shifted(corpus_dir, path, page):
    """Corpus pages (figure captions, URL lists, score tables) that a loose offset search called
    'shifted glyph ids': few tokens, few stopwords, a handful of chance hits."""
    import pymupdf

    from radar_pipeline.ingest.pdf import judge_text_layer

    flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
    with pymupdf.open(corpus_dir / path) as doc:
        raw = doc[page].get_text("text", flags=flags)
    assert judge_text_layer(raw)[0] != "garbled"


# --- 05 encryption: owner-only opens; AES-256 user password is recorded --------------------------------


def test_05v_owner_password_only_is_read(monkeypatch):
    _ocr_forbidden(monkeypatch)
    doc = extract_bytes(V.encrypted_pdf("owner"), "reservado.pdf")
    _storable(doc)
    assert doc.status == "ok"
    assert "vereda La Esperanza" in doc.text


def test_05v_aes256_user_password_recorded_and_run_goes_on(monkeypatch):
    _ocr_forbidden(monkeypatch)
    enc = extract_bytes(V.encrypted_pdf("aes256-user"), "reservado.pdf")
    ok = extract_bytes(V.ligatures_pdf(), "informe.pdf")
    assert enc.status == "encrypted" and enc.reason == "user password required"
    assert enc.pages == [] and enc.n_pages_total == 1
    assert ok.status == "ok" and "oficina" in ok.text


# --- 06 truncated download: other cut points -----------------------------------------------------------


def test_06v_cut_mid_xref_is_damaged_text_kept(monkeypatch):
    _ocr_forbidden(monkeypatch)
    doc = extract_bytes(V.truncated_pdf("mid-xref"), "descarga.pdf")
    _storable(doc)
    assert doc.status in {"damaged", "partial"}
    assert re.search(r"repair|truncat", doc.reason)
    assert "Pagina 1, linea 30" in doc.text and "Pagina 2, linea 30" in doc.text
    assert all(p.source == "text_layer" for p in doc.pages)


def test_06v_cut_mid_stream_of_page_1(monkeypatch):
    _ocr_forbidden(monkeypatch)  # page 2 lost: not a blank scan
    doc = extract_bytes(V.truncated_pdf("mid-stream-p1"), "descarga.pdf")
    _storable(doc)
    assert doc.status in {"damaged", "partial"}
    assert re.search(r"repair|truncat", doc.reason)
    assert "Pagina 1, linea 1:" in doc.text
    p1, p2 = doc.pages
    assert p1.status == "partial" and "truncated" in p1.reason
    assert p2.status == "empty" and "scan" not in (p2.reason or "") and "ocr" not in p2.source


# --- 07 mixed native/scanned: other order, stamp at the bottom -----------------------------------------


@needs_tesseract
def test_07v_scan_page_then_native_page():
    doc = extract_bytes(V.mixed_pdf("scan-then-native"), "acta.pdf")
    _storable(doc)
    p1, p2 = doc.pages
    assert p1.source == "ocr" and "Catatumbo" in p1.text and "vigilancia perimetral" in p1.text
    assert p2.source == "text_layer" and "Anexo: linea 24" in p2.text


@needs_tesseract
def test_07v_native_footer_over_scanned_body():
    doc = extract_bytes(V.mixed_pdf("footer-stamp"), "acta.pdf")
    _storable(doc)
    text = doc.text
    assert "Catatumbo" in text and "vigilancia perimetral" in text
    assert text.count("COPIA CONTROLADA - ARCHIVO CENTRAL - Folio 3") == 1
    assert doc.pages[0].source == "text_layer+ocr"
    assert doc.pages[0].reason == "image_dominant_page -> ocr"


# --- 08 rotated scans: 180, 90 and 270 with skew ---------------------------------------------------------


@functools.cache
def _rotated(rotate: int, skew: float):
    """Extract each rotated scan once per session (OCR is the slow part)."""
    return extract_bytes(V.rotated_scan_pdf(rotate, skew), "oficio.pdf")


@needs_tesseract
@pytest.mark.parametrize(("rotate", "skew"), [(180, 0.0), (90, -1.5), (270, 2.0)])
def test_08v_rotated_scan_text(rotate, skew):
    doc = _rotated(rotate, skew)
    _storable(doc)
    text = doc.text
    for word in ["OFICIO 0931", "hostigamiento", "Catatumbo", "vigilancia perimetral"]:
        assert word in text, word
    assert doc.pages[0].source == "ocr"


@needs_tesseract
@pytest.mark.parametrize(("rotate", "skew"), [(180, 0.0), (90, -1.5), (270, 2.0)])
def test_08v_rotation_recorded(rotate, skew):
    doc = _rotated(rotate, skew)
    # PIL turned the sheet ``rotate`` degrees counter-clockwise; ocr_rotation is the clockwise turn
    # applied to undo it (OSD's convention), i.e. the same number.
    assert doc.pages[0].ocr_rotation == rotate


# --- 11 pysbd backtracking: other lengths and shapes -----------------------------------------------------


@pytest.mark.parametrize(
    ("n", "digits", "dots"),
    [(6, 3, ".."), (15, 3, ".."), (25, 2, ".."), (12, 3, "."), (12, 3, "..."), (30, 1, "..")],
)
def test_11v_numeric_runs_fast_and_lossless(n, digits, dots):
    text = V.backtracking_text(n, digits, dots)
    for lang in ("es", "en", "pt"):
        t0 = time.thread_time()  # CPU time of this thread: other processes' load does not count
        sents = split_sentences(text, lang)
        assert time.thread_time() - t0 < 2.0
        assert "".join(sents) == text
        assert any("] y 7 sin dato." in s for s in sents)


# --- 12 abbreviations not in the case ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "lang", "expected", "abbrevs"), V.SPANISH_ABBREV_TEXTS)
def test_12v_other_abbreviations(text, lang, expected, abbrevs):
    sents = split_sentences(text, lang)
    assert "".join(sents) == text
    for s in sents[:-1]:
        assert not any(s.rstrip().endswith(a) for a in abbrevs), sents
    assert len(sents) == expected, sents


# --- 13 encodings, separators, number formats ---------------------------------------------------------------


def test_13v_latin1_semicolon():
    doc = extract_bytes(V.csv_latin1(), "datos.csv")
    _storable(doc)
    recs = doc.records
    assert [r["departamento"] for r in recs] == ["Nariño", "Bolívar", "Córdoba"]
    assert recs[1]["municipio"] == "Magangué"
    assert [r["eventos"] for r in recs] == [2345, 1002, 87]
    assert [r["tasa"] for r in recs] == [12.5, 7.25, 0.9]


def test_13v_utf16_bom_tab_thousands():
    doc = extract_bytes(V.csv_utf16_tab(), "datos.csv")
    _storable(doc)
    recs = doc.records
    assert len(recs) == 3 and all(len(r) == 4 for r in recs)
    assert recs[1]["municipio"] == "Tibú" and recs[0]["departamento"] == "Nariño"
    assert [r["monto"] for r in recs] == [1234.56, 98765.4, 12.5]
    assert [r["personas"] for r in recs] == [1250, 3001, 7]
    assert "monto: 1.234,56" in doc.pages[0].text


def test_13v_utf8_bom_english_numbers():
    doc = extract_bytes(V.csv_utf8_bom_english_numbers(), "data.csv")
    _storable(doc)
    recs = doc.records
    assert list(recs[0]) == ["department", "town", "amount", "people"]  # no BOM in the first name
    assert [r["amount"] for r in recs] == [1234.56, 12.5, 98765.4]
    assert [r["people"] for r in recs] == [1250, 7, 3001]
    assert recs[0]["department"] == "Nariño"


# --- 15 preamble of another length, quoted separators, CRLF ----------------------------------------------------


def test_15v_longer_preamble_crlf_quoted_separators():
    doc = extract_bytes(V.csv_preamble_crlf(), "alertas.csv")
    _storable(doc)
    recs = doc.records
    assert len(recs) == 3
    assert recs[0]["descripcion"] == 'Ataque con explosivos, dos heridos; "alerta" emitida\nsegunda línea'
    assert recs[0]["victimas"] == 2
    assert recs[1]["municipio"] == "El Tarra, Norte de Santander" and recs[1]["victimas"] == 15
    assert recs[2]["descripcion"] == "Amenaza" and recs[2]["victimas"] is None
    table = doc.metadata["tables"][0]
    assert table["header_row"] == 6
    assert table["columns"] == ["id", "municipio", "descripcion", "victimas"]
    assert not any("Sistema de Alertas" in p.text or "Corte:" in p.text for p in doc.pages)
    assert any("extra empty" in w for w in doc.warnings) and any("missing" in w for w in doc.warnings)


# --- 16 HTML disguised as .xlsx / .csv --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["reporte.xlsx", "reporte.csv"])
def test_16v_html_disguised(name):
    doc = extract_bytes(V.html_disguised(), name)
    _storable(doc)
    assert doc.format == "html_table" and doc.status == "ok"
    assert doc.records == [
        {"Departamento": "Cauca", "Municipio": "Argelia", "Casos": 1312},
        {"Departamento": "Arauca", "Municipio": "Tame", "Casos": 45},
    ]
    assert "Reporte de amenazas" not in " ".join(doc.metadata["tables"][0]["columns"])


def test_16v_html_cp1252_named_xls():
    doc = extract_bytes(V.html_cp1252(), "consulta.xls")
    _storable(doc)
    assert doc.format == "html_table" and doc.status == "ok"
    assert doc.records == [
        {"Municipio": "Bojayá", "Hecho": "\u201cConfinamiento\u201d \u2013 2024", "Personas": 856},
        {"Municipio": "Tibú", "Hecho": "Amenaza", "Personas": 1204},
    ]


# --- 18 merged cells across columns and rows, hidden sheet, dates, uncached formulas --------------------------


def test_18v_merges_across_columns_and_rows():
    doc = extract_bytes(V.xlsx_merged_2d(), "afectacion.xlsx")
    _storable(doc)
    recs = [r for r in doc.records if r.get("_sheet") == "Datos"]
    assert len(recs) == 5
    assert {r["municipio"]: r["Región"] for r in recs} == {
        "Tumaco": "Pacífico nariñense",
        "Barbacoas": "Pacífico nariñense",
        "Roberto Payán": "Pacífico nariñense",
        "Argelia": "Sur del Cauca",
        "El Tambo": "Sur del Cauca",
    }
    table = doc.metadata["tables"][0]
    assert table["header_row"] == 2 and "Afectación" in table["preamble"][0]
    # the header merged over A2:B2 names ONE field: no duplicated unnamed column
    assert table["columns"] == ["Región", "municipio", "casos"]


def test_18v_hidden_sheet_kept_and_flagged():
    doc = extract_bytes(V.xlsx_merged_2d(), "afectacion.xlsx")
    aux = [t for t in doc.metadata["tables"] if t["sheet"] == "Aux"]
    assert aux and aux[0]["hidden"] == "hidden"
    assert any("'Aux' is hidden" in w for w in doc.warnings)
    assert [r for r in doc.records if r.get("_sheet") == "Aux"] == [
        {"_sheet": "Aux", "clave": "secreto", "valor": "no publicar"}
    ]


def test_18v_date_serials_and_uncached_formulas():
    doc = extract_bytes(V.xlsx_dates_formulas(), "eventos.xlsx")
    _storable(doc)
    assert doc.records == [
        {"fecha": "2025-03-14", "municipio": "Tumaco", "heridos": 3, "muertos": 1, "total": 4},
        {"fecha": "2025-04-02", "municipio": "Tibú", "heridos": 5, "muertos": 0, "total": 5},
    ]
    assert "fecha: 2025-03-14" in doc.pages[0].text and "45730" not in doc.text


# --- 20 / 22 JSON: nested non-finite literals, JSON Lines, BOM, NUL in keys ------------------------------------


def test_20v_nonfinite_in_nested_arrays():
    doc = extract_bytes(V.json_nonfinite_nested(), "serie.json")
    _storable(doc)
    assert [r["municipio"] for r in doc.records] == ["Tumaco", "Tibú"]
    assert V.is_finite_tree(doc.records) and V.is_finite_tree(doc.metadata)
    assert doc.records[0]["serie"] == [1.5, None, 3]
    assert doc.records[0]["stats.max"] is None and doc.records[0]["stats.min"] is None
    assert not any(re.search(r"\b(nan|inf|infinity)\b", p.text, re.I) for p in doc.pages)
    assert any("non-finite" in w for w in doc.warnings)


def test_20v_json_lines_with_bom_nan_and_nul():
    doc = extract_bytes(V.jsonl_records(), "eventos.jsonl")
    _storable(doc)
    assert doc.records == [
        {"municipio": "Tumaco", "eventos": 12, "tasa": None},
        {"municipio": "Tibú", "eventos": 7, "tasa": 3.5},
        {"municipio": "Arauca", "eventos": 0, "tasa": None},
    ]


def test_22v_bom_and_nul_in_keys():
    doc = extract_bytes(V.json_bom_nul_keys(), "radicados.json")
    _storable(doc)
    assert doc.records == [
        {"municipio": "Tumaco", "radicado": "2025-0901"},
        {"municipio": "Tibú", "radicado": "2025-0902"},
    ]
    assert "\\u0000" not in json.dumps(doc.metadata) and "\x00" not in json.dumps(doc.metadata)


def test_22v_raw_nul_bytes_in_csv_are_text_not_binary():
    doc = extract_bytes(V.csv_nul_padded(), "radicados.csv")
    _storable(doc)
    assert doc.format == "csv" and doc.status == "ok"
    assert doc.records == [
        {"municipio": "Tumaco", "radicado": "2025-0457", "eventos": 12},
        {"municipio": "Tibú", "radicado": "2025-0458", "eventos": 7},
    ]
    assert any("NUL byte(s) stripped" in w for w in doc.warnings)


def test_20v_records_below_wrapper_objects():
    doc = extract_bytes(V.json_records_deep(), "serie.json")
    _storable(doc)
    assert [r["municipio"] for r in doc.records] == ["Tumaco", "Tibú", "Arauca"]
    assert doc.records[0]["max"] is None and doc.records[2]["max"] is None and doc.records[1]["max"] == 4
    assert doc.metadata["top_level"] == {"meta.fuente": "SIEDCO"}
    assert any("below the top level: datos.registros" in w for w in doc.warnings)
