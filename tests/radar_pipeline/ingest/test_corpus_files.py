"""extract() on a few real corpus files (read in place from ../shared/corpus/radar)."""

from __future__ import annotations

import json
import re

import pytest

from radar_pipeline.ingest import extract

from .support_ingest import needs_tesseract

C1 = re.compile("[\u0080-\u009f\ufffd]")


@needs_tesseract
def test_image_only_scan_first_page_is_ocrd(corpus_dir):
    path = corpus_dir / "radar/space_security/scanned/kessler1978_image_only.pdf"
    doc = extract(path, max_pages=1)  # OCR one page only: ~3 s
    assert doc.format == "pdf" and doc.status == "ok"
    assert doc.n_pages_total == 10 and len(doc.pages) == 1
    assert any("1 of 10" in w for w in doc.warnings)
    page = doc.pages[0]
    assert page.source == "ocr" and page.reason == "no_text_layer -> ocr" and page.ocr_rotation == 0
    assert "Collision Frequency of Artificial Satellites" in page.text
    assert "Debris Belt" in page.text
    assert doc.language == "en"
    assert doc.metadata["ocr"][0]["mean_confidence"] > 80


def test_image_only_scan_without_ocr_is_not_ok(corpus_dir):
    from radar_pipeline.ingest import OcrSettings

    doc = extract(
        corpus_dir / "radar/space_security/scanned/Critical_Density_1991_image_only.pdf", ocr=OcrSettings(enabled=False)
    )
    assert doc.status == "empty" and "no_text_layer" in doc.reason
    assert all(p.status == "empty" and p.reason == "no_text_layer (ocr disabled)" for p in doc.pages)


def test_latin1_semicolon_csv(corpus_dir):
    path = corpus_dir / "radar/territorial/data/Comunicados_FARC.csv"
    raw = path.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    doc = extract(path)
    assert doc.format == "csv" and doc.status == "ok" and doc.is_tabular
    assert doc.encoding == "cp1252"
    assert doc.metadata["tables"][0]["delimiter"] == ";"
    assert doc.metadata["tables"][0]["columns"] == ["col_1", "Fecha", "Titulo Comunicado", "Link", "ID", "Autor"]
    assert len(doc.records) == doc.n_pages_total == len(doc.pages) == 422
    assert doc.records[1]["Titulo Comunicado"].startswith("Nuestra única arma será la palabra")
    assert doc.records[0]["ID"] == 422
    assert doc.language == "es"
    assert not any(C1.search(p.text) for p in doc.pages)
    assert doc.pages[0].text.startswith("col_1: 0\nFecha: 2017-06-12\nTitulo Comunicado: De las armas")


def test_xlsx_from_corpus(corpus_dir):
    doc = extract(corpus_dir / "radar/territorial/data/Comunicados_FARC_Secretariado.xlsx")
    assert doc.format == "xlsx" and doc.status == "ok" and doc.is_tabular
    assert len(doc.records) == 299
    rec = doc.records[0]
    assert rec["Fecha"] == "2017-04-06" and rec["ID"] == 402
    assert "Saludo de las FARC" in doc.pages[0].text
    json.dumps(doc.records, allow_nan=False)


def test_xlsx_with_merges_to_column_xfd_is_fast(corpus_dir):
    # merged ranges such as A1:XFD1 must not expand the sheet to 16,384 columns
    import time

    t0 = time.thread_time()  # CPU time of this thread: other processes' load does not count
    doc = extract(corpus_dir / "radar/ai_military/Experimentation_Results_1_UCAV_2_Targets_1AA_1APC_.xlsx")
    assert time.thread_time() - t0 < 10
    assert doc.status == "ok" and doc.records
    cols = doc.metadata["tables"][0]["columns"]
    assert len(cols) < 50 and all("\n" not in c for c in cols)


def test_json_records_from_corpus(corpus_dir):
    doc = extract(corpus_dir / "radar/territorial/data/dataTerritorios.json")
    assert doc.format == "json" and doc.is_tabular and len(doc.records) == 829
    assert doc.records[0] == {
        "ID_RESGUARDO": 10471,
        "resguardo": "Achagua Y Piapoco (El Turpial La Victoria (Umapo))",
        "pueblo": "Achagua Piapoco",
        "DEPARTAMENTO": "META",
    }
    assert doc.pages[0].text.startswith("ID_RESGUARDO: 10471\nresguardo: Achagua")


def test_geojson_from_corpus_keeps_codes_as_strings(corpus_dir):
    doc = extract(corpus_dir / "radar/territorial/data/PuntosNarcotrafico.json")
    assert doc.format == "geojson" and len(doc.records) == 13
    assert doc.records[1]["CMunicipio"] == "05490"  # DIVIPOLA code with leading zero
    assert "coordinates" not in doc.text


def test_html_named_pdf_is_read_as_html(corpus_dir):
    doc = extract(corpus_dir / "radar/ai_military/maslej2024aiindex_ai-index-2024.pdf")
    assert doc.format == "txt" and doc.metadata["detected_format"] == "html"
    assert doc.status == "ok" and "AI Index" in doc.text
    assert any("extension .pdf but content is html" in w for w in doc.warnings)


def test_codefest_txt(corpus_dir):
    paths = sorted((corpus_dir / "codefest/F3").glob("F3-ALERTAS-*.txt"))[:3]
    if not paths:
        pytest.skip("codefest corpus not present")
    for p in paths:
        doc = extract(p)
        assert doc.format == "txt" and doc.status in {"ok", "empty"}
        assert len(doc.pages) == 1 and doc.pages[0].source == "plain"
        assert doc.encoding in {"utf-8", "utf-8-sig", "cp1252"}
