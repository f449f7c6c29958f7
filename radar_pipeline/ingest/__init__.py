"""Ingestion: turn one file of any supported format into normalized page/record texts.

Public API::

    from radar_pipeline.ingest import extract, ExtractedDocument, PageText, EXTRACTOR_VERSION, OcrSettings
    doc = extract("file.pdf", ocr=OcrSettings(), max_pages=None)

``extract`` never raises for bad input: corrupt, encrypted, empty and unknown files come back with
a status and a reason. Formats are detected from the bytes (``detect.py``); every text passes
through ``normalize.normalize_text``; metadata and records are JSON-safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .detect import decode_text, detect_format
from .document import EXTRACTOR_VERSION, ExtractedDocument, PageText
from .language import detect_language
from .normalize import json_safe, normalize_text
from .ocr import OcrSettings

__all__ = ["extract", "extract_bytes", "ExtractedDocument", "PageText", "EXTRACTOR_VERSION", "OcrSettings"]

_UNSUPPORTED = {
    "docx": "unsupported format: docx",
    "pptx": "unsupported format: pptx",
    "zip": "unsupported format: zip archive",
    "ole": "unsupported format: OLE2 document (not a spreadsheet)",
    "image": "unsupported format: image file (not ingested)",
    "unknown": "unsupported format: unrecognised binary",
}


# Formats an extension promises (only used to warn when the bytes say otherwise).
_EXT_FORMAT = {
    "pdf": {"pdf"},
    "xlsx": {"xlsx"},
    "xls": {"xls"},
    "csv": {"csv"},
    "tsv": {"csv"},
    "json": {"json", "geojson"},
    "geojson": {"geojson"},
    "txt": {"txt", "csv"},
}


def _read_text(data: bytes) -> ExtractedDocument:
    text, encoding = decode_text(data)
    clean = normalize_text(text)
    status = "ok" if clean else "empty"
    return ExtractedDocument(
        format="txt",
        status=status,
        reason=None if clean else "no text",
        encoding=encoding,
        pages=[PageText(1, clean, "plain", status="ok" if clean else "empty")],
        n_pages_total=1,
    )


def _read_html_plain(data: bytes) -> ExtractedDocument:
    import lxml.html

    text, encoding = decode_text(data)
    root = lxml.html.document_fromstring(text)
    for bad in root.xpath("//script|//style|//noscript"):
        bad.drop_tree()
    clean = normalize_text(root.text_content())
    status = "ok" if clean else "empty"
    return ExtractedDocument(
        format="txt",
        status=status,
        reason=None if clean else "no text",
        encoding=encoding,
        pages=[PageText(1, clean, "plain", status="ok" if clean else "empty")],
        n_pages_total=1,
        metadata={"detected": "html"},
    )


def _dispatch(
    data: bytes, fmt: str, ocr: OcrSettings, max_pages: int | None, pages: Sequence[int] | None
) -> ExtractedDocument:
    if fmt == "pdf":
        from .pdf import extract_pdf

        return extract_pdf(data, ocr=ocr, max_pages=max_pages, pages=pages)
    if fmt == "csv":
        from .tabular import read_csv

        return read_csv(data)
    if fmt == "xlsx":
        from .tabular import read_xlsx

        return read_xlsx(data)
    if fmt == "xls":
        from .tabular import read_xls

        return read_xls(data)
    if fmt == "html_table":
        from .tabular import read_html_tables

        doc = read_html_tables(data)
        if not doc.records:
            plain = _read_html_plain(data)
            plain.warnings.append("html table(s) without data rows; read as plain text")
            return plain
        return doc
    if fmt == "html":
        return _read_html_plain(data)
    if fmt in {"json", "geojson"}:
        from .jsonish import read_json

        return read_json(data)
    if fmt == "txt":
        return _read_text(data)
    if fmt == "empty":
        return ExtractedDocument(format="unknown", status="empty", reason="empty file", pages=[])
    return ExtractedDocument(
        format="unknown", status="unsupported", reason=_UNSUPPORTED.get(fmt, f"unsupported format: {fmt}"), pages=[]
    )


def _finish(doc: ExtractedDocument, max_pages: int | None) -> ExtractedDocument:
    """Contract guarantees for every reader's output: normalized texts, language, JSON-safe
    metadata/records, tabular page limit."""
    for p in doc.pages:
        # Readers normalize their texts (record texts field by field: normalizing a whole record
        # could join "field: x-" with the next line). Only the NUL guarantee is re-checked here.
        if "\x00" in p.text:
            p.text = p.text.replace("\x00", "")
    if doc.is_tabular and max_pages is not None and len(doc.pages) > max_pages:
        doc.warnings.append(f"kept {max_pages} of {len(doc.pages)} records (max_pages)")
        doc.pages = doc.pages[:max_pages]
        if doc.records is not None:
            doc.records = doc.records[:max_pages]
    if doc.language is None and doc.pages:
        sample = "\n".join(p.text for p in doc.pages[:2000] if p.text)[:200_000]
        doc.language = detect_language(sample)
    doc.metadata = json_safe(doc.metadata or {})
    doc.metadata.setdefault("extractor_version", EXTRACTOR_VERSION)
    if doc.records is not None:
        doc.records = json_safe(doc.records)
    doc.warnings = [normalize_text(w) for w in doc.warnings]
    if doc.reason is not None:
        doc.reason = normalize_text(doc.reason)
    return doc


def extract_bytes(
    data: bytes,
    filename: str | Path | None = None,
    *,
    ocr: OcrSettings | None = None,
    max_pages: int | None = None,
    pages: Sequence[int] | None = None,
) -> ExtractedDocument:
    """Like :func:`extract` for bytes already in memory (``filename`` only breaks format ties)."""
    settings = ocr or OcrSettings()
    fmt = "unknown"
    try:
        fmt = detect_format(data, filename)
        doc = _dispatch(data, fmt, settings, max_pages, pages)
    except Exception as exc:  # noqa: BLE001 - never propagate a reader failure
        fmt_out = fmt if fmt in {"pdf", "csv", "xlsx", "xls", "html_table", "json", "geojson", "txt"} else "unknown"
        doc = ExtractedDocument(
            format=fmt_out, status="corrupt", reason=f"{type(exc).__name__}: {exc}"[:1000], pages=[]
        )
    try:
        doc = _finish(doc, max_pages)
    except Exception as exc:  # noqa: BLE001 - any reader failure becomes the document status, never an exception
        doc = ExtractedDocument(
            format=doc.format, status="corrupt", reason=f"{type(exc).__name__}: {exc}"[:1000], pages=[]
        )
    doc.metadata.setdefault("detected_format", fmt)
    ext = Path(str(filename)).suffix.lower().lstrip(".") if filename else ""
    expected = _EXT_FORMAT.get(ext)
    if expected and fmt not in expected and fmt != "empty":
        doc.warnings.append(f"extension .{ext} but content is {fmt}")
    return doc


def extract(
    path: Path | str,
    *,
    ocr: OcrSettings | None = None,
    max_pages: int | None = None,
    pages: Sequence[int] | None = None,
) -> ExtractedDocument:
    """Extract normalized text (and records, for tabular inputs) from one file.

    Args:
        path: file to read; its format is detected from the bytes (extension = tiebreak).
        ocr: OCR settings (default ``OcrSettings()``: spa+eng+por at 300 dpi; pass
            ``OcrSettings(enabled=False)`` to never OCR).
        max_pages: PDFs: read only the first N pages (of ``pages`` when given); tabular: keep the
            first N records. ``n_pages_total`` still reports the whole file.
        pages: PDFs only: 1-based page numbers to read.
    Returns:
        ExtractedDocument. Never raises for bad input: unreadable path or reader failure →
        status 'corrupt' with ``"ExceptionClass: message"`` as reason; encrypted → 'encrypted';
        0 bytes → 'empty'; unknown binary → 'unsupported'.
    """
    try:
        data = Path(path).read_bytes()
    except Exception as exc:  # noqa: BLE001 - an unreadable file becomes a corrupt document, never an exception
        return ExtractedDocument(
            format="unknown",
            status="corrupt",
            reason=f"{type(exc).__name__}: {exc}",
            pages=[],
            metadata={"extractor_version": EXTRACTOR_VERSION},
        )
    return extract_bytes(data, Path(path).name, ocr=ocr, max_pages=max_pages, pages=pages)
