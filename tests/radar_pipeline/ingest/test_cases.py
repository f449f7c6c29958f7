"""One test per case of ../shared/cases/ingestion/CASES.md, asserting its check on the real file."""

from __future__ import annotations

import json
import re
import time

import pytest

from radar_pipeline.ingest import extract
from radar_pipeline.sentences import split_sentences

from .support_ingest import needs_tesseract

LIGATURES = re.compile("[\ufb00-\ufb06]")
C1 = re.compile("[\u0080-\u009f]")

ALL_CASES = [
    "01_ligatures.pdf",
    "03_cid-garbage-textlayer.pdf",
    "05_user-password.pdf",
    "06_truncated-download.pdf",
    "07_mixed-native-header-scanned-body.pdf",
    "08_rotated-scan.pdf",
    "11_sbd-numeric-backtracking.pdf",
    "12_spanish-abbreviations.json",
    "13_cp1252-semicolon-decimal-comma.csv",
    "15_preamble-ragged-quoted-newline.csv",
    "16_html-disguised.xls",
    "18_merged-cells.xlsx",
    "20_nan-infinity.json",
    "22_nul-escapes.json",
]
OCR_CASES = {"03_cid-garbage-textlayer.pdf", "07_mixed-native-header-scanned-body.pdf", "08_rotated-scan.pdf"}


def _ocr_forbidden(monkeypatch):
    """Make any OCR call fail the test."""
    import radar_pipeline.ingest.pdf as pdf_mod

    def boom(*_a, **_k):
        raise AssertionError("OCR must not be attempted here")

    monkeypatch.setattr(pdf_mod, "ocr_page", boom)


# --- general rule: nothing unstorable reaches the stores ------------------------------------------


@pytest.mark.parametrize(  # the cases that run OCR are slow, as every OCR test (conftest.py)
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in OCR_CASES else n for n in ALL_CASES]
)
def test_general_rule_no_nul_ligature_c1_nan(name, extracted):
    if name in OCR_CASES:
        from .support_ingest import tesseract_ready

        if not tesseract_ready():
            pytest.skip("tesseract not installed")
    doc = extracted(name)
    json.dumps(doc.metadata, allow_nan=False)
    json.dumps(doc.records, allow_nan=False)
    for p in doc.pages:
        assert "\x00" not in p.text
        assert not LIGATURES.search(p.text)
        assert not C1.search(p.text)
        assert "\ufffd" not in p.text
    if doc.status == "ok":
        assert doc.text.strip(), "an ok document must have text"
        assert all(p.status == "ok" or p.reason for p in doc.pages)
    else:
        assert doc.reason


# --- 01 ligatures ------------------------------------------------------------------------------------


def test_01_ligatures_expanded(extracted):
    doc = extracted("01_ligatures.pdf")
    assert doc.status == "ok"
    text = doc.text
    for word in [
        "conflictividad",
        "oficina",
        "identificó",
        "flujos",
        "financiación",
        "eficiente",
        "afluencia",
        "office",
        "different",
        "figures",
        "first",
    ]:
        assert word in text
    for chunk in split_sentences(text, doc.language):
        assert not any(0xFB00 <= ord(c) <= 0xFB06 for c in chunk)


# --- 03 glyph ids as text ------------------------------------------------------------------------------


@needs_tesseract
def test_03_garbled_text_layer_is_ocrd(extracted):
    doc = extracted("03_cid-garbage-textlayer.pdf")
    text = doc.text
    assert "Catatumbo" in text and "\x03" not in text
    for word in ["Defensoría", "desplazamiento", "movilidad"]:
        assert word in text
    assert ",QIRUPH" not in text
    page = doc.pages[0]
    assert page.source == "ocr"
    assert page.reason and page.reason.startswith("garbled_text_layer") and "ocr" in page.reason
    assert doc.status == "ok"


# --- 05 user password ----------------------------------------------------------------------------------


def test_05_encrypted_recorded_without_ocr_and_run_goes_on(cases_dir, monkeypatch):
    _ocr_forbidden(monkeypatch)
    docs = [extract(cases_dir / n) for n in ["05_user-password.pdf", "01_ligatures.pdf"]]
    enc, ok = docs
    assert enc.status == "encrypted"
    assert enc.reason == "user password required"
    assert enc.pages == [] and enc.n_pages_total == 1
    assert ok.status == "ok" and "financiación" in ok.text


# --- 06 truncated download -----------------------------------------------------------------------------


def test_06_truncated_download_is_damaged(cases_dir, monkeypatch):
    _ocr_forbidden(monkeypatch)  # page 3 is blank: it must not be OCR'd as a "scan"
    doc = extract(cases_dir / "06_truncated-download.pdf")
    assert doc.status in {"damaged", "partial"}
    assert re.search(r"repair|truncat", doc.reason)
    assert "Pagina 1, linea 25" in doc.text
    p1, p2, p3 = doc.pages
    assert p1.status == "ok"
    assert p2.status == "partial" and "truncated" in p2.reason
    assert p3.status == "empty" and "ocr" not in p3.source and "scan" not in (p3.reason or "")
    assert doc.n_pages_total == 3


# --- 07 native header + scanned body --------------------------------------------------------------------


@needs_tesseract
def test_07_image_dominant_page_is_ocrd_keeping_header_once(extracted):
    doc = extracted("07_mixed-native-header-scanned-body.pdf")
    text = doc.text
    assert "La Macarena" in text and "MINISTERIO DE DEFENSA" in text
    assert "ataque con drones" in text and "vigilancia perimetral" in text
    assert text.count("MINISTERIO DE DEFENSA") == 1
    assert text.count("Radicado 2025-000457") == 1
    page = doc.pages[0]
    assert page.source == "text_layer+ocr"
    assert page.reason == "image_dominant_page -> ocr"


# --- 08 sideways scan -------------------------------------------------------------------------------------


@needs_tesseract
def test_08_rotated_scan_orientation_detected(extracted):
    doc = extracted("08_rotated-scan.pdf")
    text = doc.text
    assert "ataque con drones" in text
    assert "OFICIO 0457" in text and "La Macarena" in text
    page = doc.pages[0]
    assert page.source == "ocr" and page.reason == "no_text_layer -> ocr"
    assert page.ocr_rotation in (90, 270)


# --- 11 pysbd catastrophic backtracking ----------------------------------------------------------------


def test_11_segmentation_of_backtracking_page_is_fast_and_lossless(extracted):
    doc = extracted("11_sbd-numeric-backtracking.pdf")
    text = doc.text
    assert "412] y 14 sin dato" in text
    for lang in ("es", "en", None):
        t0 = time.thread_time()  # CPU time of this thread: other processes' load does not count
        sents = split_sentences(text, lang)
        assert time.thread_time() - t0 < 2.0
        assert "".join(sents) == text
        assert any("412] y 14 sin dato" in s for s in sents)


def test_11_worse_pattern_still_fast():
    nums = " ".join(str(100 + 7 * i) for i in range(40))
    text = f"Víctimas por municipio.[{nums}] y 14 sin dato. Total..[{nums}, 12 - 13] x. Fin."
    t0 = time.thread_time()  # CPU time of this thread: other processes' load does not count
    sents = split_sentences(text, "es")
    assert time.thread_time() - t0 < 2.0
    assert "".join(sents) == text


# --- 12 Spanish / Portuguese abbreviations --------------------------------------------------------------

ABBREVS = [
    "Sr.",
    "Dra.",
    "art.",
    "núm.",
    "Res.",
    "FF.",
    "aprox.",
    "vda.",
    "mpio.",
    "Gral.",
    "Cap.",
    "Tte.",
    "inc.",
    "Gen.",
    "Cel.",
]


def test_12_abbreviations_do_not_end_sentences(cases_dir):
    recs = json.loads((cases_dir / "12_spanish-abbreviations.json").read_text(encoding="utf-8"))
    lengths = []
    for rec in recs:
        text = rec["resumen"]
        sents = split_sentences(text, rec["idioma"])
        assert "".join(sents) == text
        lengths.append(len(sents))
        for s in sents[:-1]:
            assert not any(s.rstrip().endswith(a) for a in ABBREVS), s
    assert lengths == [3, 3]


def test_12_record_text_keeps_resumen(extracted):
    doc = extracted("12_spanish-abbreviations.json")
    assert doc.is_tabular and len(doc.records) == 2
    assert "Sr. Gómez" in doc.pages[0].text


# --- 13 Windows-1252, ';', decimal comma ---------------------------------------------------------------


def test_13_cp1252_semicolon_decimal_comma(extracted):
    doc = extracted("13_cp1252-semicolon-decimal-comma.csv")
    assert doc.encoding == "cp1252"
    recs = doc.records
    assert len(recs) == 3 and all(len(r) == 7 for r in recs)
    r0 = recs[0]
    assert r0["departamento"] == "Nariño"
    assert recs[1]["municipio"] == "Tibú"
    assert r0["periodo"] == "2019\u20132020"
    assert r0["observacion"] == "Incluye \u201chostigamientos\u201d"
    assert r0["eventos"] == 1250 and r0["tasa_x_100k"] == 45.7
    assert all(v != 1.25 for r in recs for v in r.values())
    for p in doc.pages:
        assert not C1.search(p.text) and "\ufffd" not in p.text
        assert "1.25\n" not in p.text + "\n"
    assert "eventos: 1.250" in doc.pages[0].text


# --- 15 preamble, quoted newline, ragged rows -----------------------------------------------------------


def test_15_preamble_quoted_newline_ragged(extracted):
    doc = extracted("15_preamble-ragged-quoted-newline.csv")
    recs = doc.records
    assert len(recs) == 3
    assert "dos uniformados heridos" in recs[0]["descripcion"]
    assert recs[0]["descripcion"] == "Hostigamiento a la estación de policía;\ndos uniformados heridos"
    assert recs[0]["victimas"] == 2
    assert recs[1]["descripcion"] == "Paro armado" and recs[1]["victimas"] == 0
    assert recs[2]["descripcion"] == "Desplazamiento masivo" and recs[2]["victimas"] is None
    table = doc.metadata["tables"][0]
    assert table["header_row"] == 4
    assert table["columns"] == ["id", "municipio", "fecha", "descripcion", "victimas"]
    assert any("Reporte de eventos" in line for line in table["preamble"])
    assert not any("Reporte" in p.text or "Fuente" in p.text for p in doc.pages)
    assert any("extra empty" in w for w in doc.warnings)
    assert any("missing" in w for w in doc.warnings)


# --- 16 HTML disguised as .xls ---------------------------------------------------------------------------


def test_16_html_disguised_as_xls(extracted):
    doc = extracted("16_html-disguised.xls")
    assert doc.format == "html_table" and doc.status == "ok"
    recs = doc.records
    assert len(recs) == 3
    assert {r["Municipio"] for r in recs} == {"Ituango", "Bojayá", "Calamar"}
    assert recs[0] == {
        "Departamento": "Antioquia",
        "Municipio": "Ituango",
        "Hecho": "Desplazamiento forzado",
        "Personas": 1204,
    }
    assert "Consulta de hechos" not in " ".join(doc.metadata["tables"][0]["columns"])
    assert "Personas: 1.204" in doc.pages[0].text


# --- 18 merged cells -------------------------------------------------------------------------------------


def test_18_merged_cells_filled_and_title_not_header(extracted):
    doc = extracted("18_merged-cells.xlsx")
    recs = doc.records
    assert len(recs) == 5
    dep = {r["municipio"]: r["departamento"] for r in recs}
    assert dep["Barbacoas"] == "Nariño"
    assert dep == {
        "Tumaco": "Nariño",
        "Barbacoas": "Nariño",
        "Roberto Payán": "Nariño",
        "Argelia": "Cauca",
        "El Tambo": "Cauca",
    }
    table = doc.metadata["tables"][0]
    assert table["header_row"] == 2
    assert table["preamble"] and "Presencia" in table["preamble"][0]


# --- 20 NaN / Infinity -------------------------------------------------------------------------------------


def test_20_nan_infinity_become_null(extracted):
    doc = extracted("20_nan-infinity.json")
    recs = doc.records
    assert [r["municipio"] for r in recs] == ["Tumaco", "Tibú", "Arauca"]
    for rec in recs:
        json.dumps(rec, allow_nan=False)
    json.dumps(doc.metadata, allow_nan=False)
    assert recs[0]["variacion"] is None and recs[1]["tasa_homicidios"] is None and recs[2]["variacion"] is None
    assert recs[0]["tasa_homicidios"] == 45.7
    assert not any(re.search(r"\b(nan|inf|infinity)\b", p.text, re.I) for p in doc.pages)
    assert any("non-finite" in w for w in doc.warnings)


# --- 22 NUL escapes ----------------------------------------------------------------------------------------


def test_22_nul_stripped(extracted):
    doc = extracted("22_nul-escapes.json")
    recs = doc.records
    assert len(recs) == 2
    assert [r["municipio"] for r in recs] == ["Tumaco", "Tibú"]
    assert [r["radicado"] for r in recs] == ["2025-0457", "2025-0458"]
    assert "\x00" not in json.dumps(recs) and "\\u0000" not in json.dumps(recs)
    assert all("\x00" not in p.text for p in doc.pages)
