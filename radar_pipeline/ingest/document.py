"""The ingestion contract: what ``extract()`` returns (shared by every reader)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["EXTRACTOR_VERSION", "PageText", "ExtractedDocument"]

# Bump whenever extraction output can change for the same input bytes.
EXTRACTOR_VERSION = "ingest-3"


@dataclass
class PageText:
    """Text of one page (PDF), one record (tabular/JSON) or the whole file (TXT).

    Attributes:
        page_no: 1-based. PDFs: page number. Tabular/JSON: record number. TXT: 1.
        text: already normalized by ``normalize.normalize_text``.
        source: 'text_layer' | 'ocr' | 'text_layer+ocr' | 'record' | 'plain'.
        reason: why this source was used or what went wrong, e.g. 'garbled_text_layer -> ocr'.
        ocr_rotation: degrees (clockwise) applied to the rendered page before OCR, when OCR'd.
        status: 'ok' | 'partial' (text cut/incomplete) | 'empty' (no usable text).
    """

    page_no: int
    text: str
    source: str
    reason: str | None = None
    ocr_rotation: int | None = None
    status: str = "ok"


@dataclass
class ExtractedDocument:
    """Result of extracting one file; never raised, always returned.

    Attributes:
        format: 'pdf','txt','csv','xlsx','xls','html_table','json','geojson','unknown'.
        status: 'ok' | 'partial' (some pages without usable text, e.g. OCR off/failed) |
            'damaged' (file repaired/truncated; what could be read is in ``pages``) |
            'encrypted' | 'corrupt' (reader failed; reason = exception) | 'empty' (no text) |
            'unsupported' (format not ingested).
        reason: human-readable cause for any status other than 'ok'.
        pages: PageText list (records for tabular inputs).
        encoding: text encoding used (text formats), else None.
        language: 'en' | 'es' | 'pt' | None over the whole text.
        is_tabular: pages are records (csv/xlsx/xls/html_table/json records/geojson).
        records: typed records (JSON-safe values) for tabular inputs, else None.
        metadata: JSON-safe dict (``json.dumps(allow_nan=False)`` works; no NUL).
        warnings: problems tolerated while reading.
        n_pages_total: pages in the file (PDF) or records (tabular), even if fewer were extracted.
    """

    format: str
    status: str
    reason: str | None
    pages: list[PageText]
    encoding: str | None = None
    language: str | None = None
    is_tabular: bool = False
    records: list[dict] | None = None
    metadata: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    n_pages_total: int = 0

    @property
    def text(self) -> str:
        """All page texts joined by a blank line."""
        return "\n\n".join(p.text for p in self.pages if p.text)
