"""``doctor_report(path)``: what ingestion makes of one file, as a JSON-serialisable dict.

Meant for the ``radar doctor PATH`` command: detected format and encoding, language, status and
reason, per-page text source (text layer / OCR and why, rotation), warnings, record count.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from . import EXTRACTOR_VERSION, OcrSettings, extract
from .detect import detect_format
from .normalize import json_safe

__all__ = ["doctor_report"]

_MAX_PAGES_LISTED = 500


def doctor_report(
    path: Path | str,
    *,
    ocr: OcrSettings | None = None,
    max_pages: int | None = None,
    pages: Sequence[int] | None = None,
    sample_chars: int = 300,
) -> dict:
    """Run ``extract`` on ``path`` and describe the result.

    Args:
        path: the file.
        ocr / max_pages / pages: passed to ``extract``.
        sample_chars: length of the text sample included.
    Returns:
        A dict (``json.dumps(..., allow_nan=False)`` works) with keys: path, size_bytes, sha256,
        extractor_version, detected_format, format, status, reason, encoding, language,
        is_tabular, n_pages_total, n_pages_extracted, record_count, columns (tabular),
        sources (count per page source), pages (per-page: page_no, source, status, reason,
        ocr_rotation, n_chars; records are summarised, not listed), ocr (per-page OCR
        confidence/rotation), warnings, metadata, text_sample, elapsed_s. Never raises for a bad
        file; an unreadable path gives status 'corrupt'.
    """
    p = Path(path)
    report: dict = {"path": str(p), "extractor_version": EXTRACTOR_VERSION}
    try:
        data = p.read_bytes()
        report["size_bytes"] = len(data)
        report["sha256"] = hashlib.sha256(data).hexdigest()
        report["detected_format"] = detect_format(data, p.name)
    except Exception as exc:  # noqa: BLE001 - the doctor reports any read failure instead of raising
        report.update(size_bytes=None, sha256=None, detected_format=None)
        report["error"] = f"{type(exc).__name__}: {exc}"
    t0 = time.perf_counter()
    doc = extract(p, ocr=ocr, max_pages=max_pages, pages=pages)
    elapsed = time.perf_counter() - t0
    report.update(
        format=doc.format,
        status=doc.status,
        reason=doc.reason,
        encoding=doc.encoding,
        language=doc.language,
        is_tabular=doc.is_tabular,
        n_pages_total=doc.n_pages_total,
        n_pages_extracted=len(doc.pages),
        record_count=len(doc.records) if doc.records is not None else None,
        sources=dict(Counter(pg.source for pg in doc.pages)),
        page_status=dict(Counter(pg.status for pg in doc.pages)),
        warnings=doc.warnings[:200],
        n_warnings=len(doc.warnings),
        elapsed_s=round(elapsed, 3),
    )
    if doc.is_tabular:
        tables = (doc.metadata or {}).get("tables") or []
        report["columns"] = (
            [t.get("columns") for t in tables]
            if tables
            else (sorted({k for r in (doc.records or [])[:200] for k in r}) if doc.records else None)
        )
        odd = [pg for pg in doc.pages if pg.status != "ok" or pg.source != "record"]
        report["pages"] = [_page(pg) for pg in odd[:_MAX_PAGES_LISTED]]
    else:
        report["pages"] = [_page(pg) for pg in doc.pages[:_MAX_PAGES_LISTED]]
    report["ocr"] = (doc.metadata or {}).get("ocr", [])
    report["metadata"] = {k: v for k, v in (doc.metadata or {}).items() if k != "ocr"}
    report["text_sample"] = doc.text[:sample_chars]
    return json_safe(report)


def _page(pg) -> dict:
    return {
        "page_no": pg.page_no,
        "source": pg.source,
        "status": pg.status,
        "reason": pg.reason,
        "ocr_rotation": pg.ocr_rotation,
        "n_chars": len(pg.text),
    }
