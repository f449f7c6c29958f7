"""Format and encoding detection from the file's bytes (the extension is only a tiebreak).

``detect_format(data, filename)`` returns one of ``'pdf', 'xlsx', 'xls', 'html_table', 'html',
'json', 'geojson', 'csv', 'txt', 'empty', 'unknown'`` (plus ``'docx'``, ``'pptx'``, ``'zip'``,
``'image'``, ``'ole'`` for recognised but unsupported containers). ``decode_text(data)`` sniffs the
text encoding (UTF-8, UTF-8 with BOM, UTF-16 with BOM, cp1252 preferred over latin-1, mixed
UTF-8/cp1252) and returns ``(text, encoding)``.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import zipfile
from pathlib import PurePath

__all__ = ["detect_format", "decode_text", "sniff_delimiter", "parse_json_lenient", "looks_binary"]

_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_IMAGE_MAGICS = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*", b"BM")
CSV_DELIMITERS = (",", ";", "\t", "|")

# Mojibake of UTF-8 read as cp1252 ("Ã±" for "ñ", "â€" for typographic quotes).
_MOJIBAKE_RE = re.compile(
    "[\u00c3\u00c2][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013-\u2122]|\u00e2\u20ac"
)


def _cp1252_fallback(err: UnicodeError) -> tuple[str, int]:
    """codecs error handler: decode the offending bytes as cp1252 (latin-1 where undefined)."""
    if not isinstance(err, UnicodeDecodeError):
        raise err
    bad = err.object[err.start : err.end]
    return bad.decode("cp1252", errors="ignore") or bad.decode("latin-1"), err.end


codecs.register_error("radar_cp1252", _cp1252_fallback)


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode bytes to text, sniffing the encoding.

    Order: BOM (utf-8-sig, utf-16, utf-32); strict UTF-8; UTF-16 without BOM (many NULs at
    alternating positions); cp1252 strict (so 0x96/0x93/0x94 become – “ ”, never C1 controls);
    UTF-8 with some cp1252 bytes ("utf-8+cp1252", when the cp1252 reading shows UTF-8 mojibake);
    charset-normalizer's best guess; finally latin-1 (which cannot fail; C1 characters are later
    mapped through cp1252 by ``normalize``).

    Returns:
        ``(text, encoding_name)``; the text still needs ``normalize.normalize_text``.
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", errors="radar_cp1252"), "utf-8-sig"
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        try:
            return data.decode("utf-32"), "utf-32"
        except UnicodeDecodeError:
            pass
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), "utf-16"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    head = data[:4096]
    if len(head) >= 4:
        even_nul = head[0::2].count(0) / max(1, len(head[0::2]))
        odd_nul = head[1::2].count(0) / max(1, len(head[1::2]))
        if odd_nul > 0.4 and even_nul < 0.05:
            return data.decode("utf-16-le", errors="replace"), "utf-16-le"
        if even_nul > 0.4 and odd_nul < 0.05:
            return data.decode("utf-16-be", errors="replace"), "utf-16-be"
    try:
        text = data.decode("cp1252")
        if _MOJIBAKE_RE.search(text):
            return data.decode("utf-8", errors="radar_cp1252"), "utf-8+cp1252"
        return text, "cp1252"
    except UnicodeDecodeError:
        pass
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(data[:200_000]).best()
        if best is not None and best.encoding:
            enc = best.encoding
            if enc.replace("_", "-").lower() in {"latin-1", "iso8859-1", "iso-8859-1"}:
                enc = "latin-1"
            return data.decode(enc, errors="replace"), enc
    except Exception:  # noqa: BLE001 - charset-normalizer is only a helper
        pass
    return data.decode("latin-1"), "latin-1"


_NUL_PADDING_MAX_SHARE = 0.25


def looks_binary(data: bytes) -> bool:
    """True when the first 8 KiB look like binary data (NULs or many control bytes); text with a
    few NUL padding bytes (<= 25% of the head, no other control bytes) is not binary."""
    head = data[:8192]
    if not head:
        return False
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF8)):
        return False
    nul = head.count(0)
    if nul:
        # UTF-16 text without BOM has NULs at every other byte: not binary.
        even = head[0::2].count(0) / max(1, len(head[0::2]))
        odd = head[1::2].count(0) / max(1, len(head[1::2]))
        if (odd > 0.4 and even < 0.05) or (even > 0.4 and odd < 0.05):
            return False
        # A few NUL bytes padding fields of otherwise clean text (fixed-width exports, C strings
        # written whole): text, whose NULs the readers strip. Binary formats have many NULs or
        # many other control bytes.
        if nul / len(head) <= _NUL_PADDING_MAX_SHARE:
            rest = head.replace(b"\x00", b"")
            ctrl = sum(1 for b in rest if b < 9 or 13 < b < 32)
            return ctrl / max(1, len(rest)) > 0.01
        return True
    ctrl = sum(1 for b in head if b < 9 or 13 < b < 32)
    return ctrl / len(head) > 0.05


def parse_json_lenient(text: str) -> tuple[object, list[str]]:
    """Parse JSON text accepting the non-standard ``NaN``/``Infinity``/``-Infinity`` literals
    (turned into ``None``) and JSON Lines (one value per line → a list).

    Returns:
        ``(value, notes)`` where notes lists what was tolerated.
    Raises:
        ValueError: when the text is neither JSON nor JSON Lines.
    """
    notes: list[str] = []
    seen: dict[str, int] = {}

    def constant(name: str) -> None:  # NaN / Infinity / -Infinity
        seen[name] = seen.get(name, 0) + 1
        return None

    text = text.lstrip("\ufeff").strip()
    try:
        value = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as first_error:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) < 2:
            raise ValueError(f"JSONDecodeError: {first_error}") from None
        try:
            value = [json.loads(ln, parse_constant=constant) for ln in lines]
        except json.JSONDecodeError:
            raise ValueError(f"JSONDecodeError: {first_error}") from None
        notes.append("json lines")
    if seen:
        notes.append("non-finite literals set to null: " + ", ".join(f"{k} x{v}" for k, v in sorted(seen.items())))
    return value, notes


def sniff_delimiter(text: str, max_lines: int = 200) -> tuple[str | None, float]:
    """Guess the CSV delimiter among ``, ; TAB |`` (quote-aware, preamble-tolerant).

    For each candidate the first ``max_lines`` records are parsed with ``csv.reader``; the score is
    the share of records whose field count equals the modal count (only modal counts > 1 count),
    weighted by the number of fields.

    Returns:
        ``(delimiter or None, consistency in [0, 1])``.
    """
    sample_lines = text.splitlines(keepends=True)[:max_lines]
    sample = "".join(sample_lines)
    best: tuple[float, int, str | None, float] = (0.0, 0, None, 0.0)
    for delim in CSV_DELIMITERS:
        if delim not in sample:
            continue
        counts: list[int] = []
        try:
            for row in csv.reader(io.StringIO(sample, newline=""), delimiter=delim):
                while row and not row[-1].strip():
                    row = row[:-1]
                if row:
                    counts.append(len(row))
        except csv.Error:
            continue
        if len(counts) < 1:
            continue
        # Drop the last record (it may be cut by the sample window).
        if len(counts) > 3 and len(sample_lines) >= max_lines:
            counts = counts[:-1]
        freq: dict[int, int] = {}
        for c in counts:
            freq[c] = freq.get(c, 0) + 1
        mode, mode_n = max(freq.items(), key=lambda kv: (kv[1], kv[0]))
        if mode < 2:
            continue
        # Records one field short of the mode are consistent too (a missing last field; trailing
        # empty fields were trimmed above). Wider records are not: prose has varying commas.
        near = sum(n for c, n in freq.items() if c == mode or (c == mode - 1 and c > 1))
        consistency = near / len(counts)
        score = consistency * (1 + min(mode, 20) / 20)
        if (score, mode) > (best[0], best[1]):
            best = (score, mode, delim, consistency)
    return best[2], best[3]


def _key_value_text(text: str, delim: str, max_lines: int = 200) -> bool:
    """True when most fields of the sample look like ``key: value`` (extracted record text)."""
    fields = [
        f
        for r in csv.reader(io.StringIO("".join(text.splitlines(True)[:max_lines]), newline=""), delimiter=delim)
        for f in r
        if f.strip()
    ]
    if not fields:
        return False
    kv = sum(1 for f in fields if re.match(r"\s*[^:]{1,60}: \S", f))
    return kv / len(fields) > 0.6


def _modal_width(text: str, delim: str, max_lines: int = 200) -> int:
    counts = [
        len(r)
        for r in csv.reader(io.StringIO("".join(text.splitlines(True)[:max_lines]), newline=""), delimiter=delim)
        if r
    ]
    return max(set(counts), key=counts.count) if counts else 0


def _sniff_zip(data: bytes) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return "zip"
    has_ct = "[Content_Types].xml" in names
    if has_ct and any(n.startswith("xl/") for n in names):
        return "xlsx"
    if has_ct and any(n.startswith("word/") for n in names):
        return "docx"
    if has_ct and any(n.startswith("ppt/") for n in names):
        return "pptx"
    return "zip"


def detect_format(data: bytes, filename: str | PurePath | None = None) -> str:
    """Detect a file's format from its bytes.

    Magic numbers first (``%PDF`` within the first KiB, ``PK`` zip with ``[Content_Types].xml``
    and ``xl/`` → xlsx, OLE2 ``D0CF11E0`` → xls, images); then text content: ``<html``/``<table``
    → ``html_table`` (``html`` without a table), JSON parsed leniently (a ``FeatureCollection``/
    ``Feature`` → ``geojson``), then a delimiter sniff for CSV/TSV, else ``txt``. The extension
    only breaks ties (``.txt`` needs stronger CSV evidence; ``.csv``/``.tsv`` weaker).

    Args:
        data: the whole file (JSON detection parses it).
        filename: optional name/path, used only as a tiebreak.
    Returns:
        A format string (see module docstring); ``'empty'`` for 0 bytes or whitespace only.
    """
    ext = PurePath(str(filename)).suffix.lower() if filename else ""
    if not data or not data.strip():
        return "empty"
    if b"%PDF-" in data[:1024]:
        return "pdf"
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _sniff_zip(data)
    if data.startswith(_OLE2_MAGIC):
        return "ole" if ext in {".doc", ".ppt", ".msg", ".pub"} else "xls"
    if data.startswith(_IMAGE_MAGICS) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return "image"
    if looks_binary(data):
        return "unknown"
    text, _enc = decode_text(data[:65536] if len(data) > 65536 else data)
    stripped = text.lstrip("\ufeff \t\r\n")
    low = stripped[:4096].lower()
    if low.startswith("<"):
        if "<table" in text[:2_000_000].lower():
            return "html_table"
        if "<html" in low or "<!doctype html" in low or "<body" in low:
            return "html"
    if stripped[:1] in "[{":
        full = text if len(data) <= 65536 else decode_text(data)[0]
        try:
            value, _ = parse_json_lenient(full)
        except ValueError:
            if ext in {".json", ".geojson", ".jsonl", ".ndjson"}:
                return "json"  # broken JSON: the reader reports it and keeps the text
        else:
            if isinstance(value, dict) and value.get("type") in {"FeatureCollection", "Feature"}:
                return "geojson"
            return "json"
    if "<table" in low and "</t" in low:
        return "html_table"
    delim, consistency = sniff_delimiter(text)
    n_lines = sum(1 for ln in text.splitlines()[:200] if ln.strip())
    if delim is not None and _key_value_text(text, delim):
        delim = None  # "year: 2020, count: 4273" lines are record text, not a table
    if delim is not None and n_lines >= 2:
        if ext in {".txt", ".md", ".text"}:
            # A .txt is a table only on strong evidence (extracted text is often "k: v, k: v").
            if consistency >= 0.95 and n_lines >= 5 and _modal_width(text, delim) >= 3:
                return "csv"
        elif consistency >= (0.5 if ext in {".csv", ".tsv", ".tab"} else 0.75):
            return "csv"
    if ext in {".csv", ".tsv"} and delim is not None:
        return "csv"
    return "txt"
