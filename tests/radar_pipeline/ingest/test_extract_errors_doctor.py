"""extract() never raises for bad input; doctor_report is JSON-serialisable."""

from __future__ import annotations

import json

import pytest

from radar_pipeline.ingest import EXTRACTOR_VERSION, ExtractedDocument, OcrSettings, PageText, extract
from radar_pipeline.ingest.doctor import doctor_report


def test_contract_exports():
    assert isinstance(EXTRACTOR_VERSION, str) and EXTRACTOR_VERSION
    assert OcrSettings().languages == "spa+eng+por" and OcrSettings().dpi == 300
    p = PageText(page_no=1, text="x", source="plain")
    assert p.reason is None and p.ocr_rotation is None and p.status == "ok"
    d = ExtractedDocument(format="txt", status="ok", reason=None, pages=[p])
    assert d.metadata == {} and d.warnings == [] and d.n_pages_total == 0 and not d.is_tabular


def test_empty_file(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_bytes(b"")
    doc = extract(p)
    assert doc.status == "empty" and doc.reason and doc.pages == []


def test_unknown_binary(tmp_path):
    p = tmp_path / "blob.bin"
    p.write_bytes(bytes(range(256)) * 20)
    doc = extract(p)
    assert doc.status == "unsupported" and doc.reason


def test_missing_path():
    doc = extract("/nonexistent/dir/file.pdf")
    assert doc.status == "corrupt" and doc.reason.startswith("FileNotFoundError")


def test_corrupt_pdf(tmp_path):
    p = tmp_path / "bad.pdf"
    p.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 50)
    doc = extract(p)
    assert doc.status in {"corrupt", "damaged", "empty"} and doc.reason


def test_corrupt_xlsx(tmp_path):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("[Content_Types].xml", "<broken")
        zf.writestr("xl/workbook.xml", "<broken")
    p = tmp_path / "bad.xlsx"
    p.write_bytes(buf.getvalue())
    doc = extract(p)
    assert doc.format == "xlsx" and doc.status == "corrupt"
    assert ":" in doc.reason  # "ExceptionClass: message"


def test_reader_exception_becomes_corrupt(tmp_path, monkeypatch):
    import radar_pipeline.ingest.tabular as tab

    def boom(_data):
        raise RuntimeError("reader exploded")

    monkeypatch.setattr(tab, "read_csv", boom)
    p = tmp_path / "x.csv"
    p.write_text("a;b\n1;2\n")
    doc = extract(p)
    assert doc.status == "corrupt" and doc.reason == "RuntimeError: reader exploded"


def test_txt_plain_page(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes("El informe de la Defensoría sobre el desplazamiento en el Catatumbo y la región.\n".encode("cp1252"))
    doc = extract(p)
    assert doc.format == "txt" and doc.encoding == "cp1252" and doc.language == "es"
    assert [(pg.page_no, pg.source) for pg in doc.pages] == [(1, "plain")]


@pytest.mark.parametrize(
    "name",
    [
        "05_user-password.pdf",
        "06_truncated-download.pdf",
        "15_preamble-ragged-quoted-newline.csv",
        "22_nul-escapes.json",
    ],
)
def test_doctor_report(cases_dir, name):
    rep = doctor_report(cases_dir / name)
    json.dumps(rep, allow_nan=False)
    for key in (
        "detected_format",
        "format",
        "encoding",
        "language",
        "status",
        "reason",
        "pages",
        "warnings",
        "record_count",
        "n_pages_total",
        "sources",
        "extractor_version",
    ):
        assert key in rep
    if name.startswith("05"):
        assert rep["status"] == "encrypted" and rep["reason"] == "user password required"
    if name.startswith("06"):
        assert rep["status"] == "damaged"
        assert [p["status"] for p in rep["pages"]] == ["ok", "partial", "empty"]
    if name.startswith("15"):
        assert rep["record_count"] == 3 and rep["encoding"] == "utf-8" and rep["warnings"]
    if name.startswith("22"):
        assert rep["record_count"] == 2 and "\x00" not in json.dumps(rep)


def test_doctor_report_missing_file():
    rep = doctor_report("/nonexistent/x.pdf")
    json.dumps(rep)
    assert rep["status"] == "corrupt"
