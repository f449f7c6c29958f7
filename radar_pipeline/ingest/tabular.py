"""Tabular readers: CSV/TSV, XLSX (openpyxl), XLS (xlrd) and HTML tables (often disguised as .xls).

All of them reduce a sheet to a grid of cells plus its merged ranges, then share one path
(:func:`grid_to_records`):

- **Header detection**: the header is the first row (within the first 50) that is about as wide as
  the table's typical data row and mostly non-numeric text. Rows above it (report titles, "Fuente:"
  lines, a merged title row) become ``metadata['preamble']``, never a header or a record.
- **Merged cells** (XLSX/XLS merges, HTML colspan/rowspan) are detected on the *unfilled* grid
  (so a merged title row counts as one cell), then filled down/over for the data rows.
- **Ragged rows**: trailing empty cells beyond the header are ignored; extra non-empty cells get
  ``extra_N`` columns; missing cells are ``None``; each case is recorded as a warning.
- **Numbers** are typed with locale awareness per column (``1.250`` → 1250 when the dot is a
  thousands separator, ``45,7`` → 45.7), decided from unambiguous evidence in the column, then
  in the file, then the delimiter (``;`` implies decimal comma), then the file's language
  (es/pt → decimal comma). Codes with leading zeros, dates and long digit strings stay strings.
  The record *text* keeps the original strings.

CSV specifics: encoding sniffed by ``detect.decode_text`` (cp1252 preferred over latin-1),
delimiter by ``detect.sniff_delimiter``, quoted newlines handled by the ``csv`` module.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import re
from collections import Counter
from typing import Any

from .detect import decode_text, sniff_delimiter
from .document import ExtractedDocument, PageText
from .language import detect_language
from .normalize import clean_value, json_safe

__all__ = [
    "read_csv",
    "read_xlsx",
    "read_xls",
    "read_html_tables",
    "grid_to_records",
    "parse_number",
    "record_text",
    "build_tabular_document",
]

csv.field_size_limit(2**31 - 1)

_HEADER_SEARCH_ROWS = 50
_NUM_TOKEN_RE = re.compile(r"^[-+]?[\d.,]+$")
_DATE_LIKE_RE = re.compile(r"^\d{1,4}[-/]\d{1,2}[-/]\d{1,4}")


# --- numbers ---------------------------------------------------------------------------------


def _classify(s: str) -> str | None:
    """Locale evidence from one numeric string: 'comma_decimal', 'dot_decimal', 'ambiguous_dot',
    'ambiguous_comma', 'plain' (digits only) or None (not a number)."""
    t = s.strip().replace(" ", "").replace("\u00a0", "")
    if not t or not _NUM_TOKEN_RE.match(t):
        return None
    body = t.lstrip("+-")
    if not body or not body[0].isdigit() or not body[-1].isdigit():
        return None
    has_dot, has_comma = "." in body, "," in body
    if not has_dot and not has_comma:
        return "plain"
    if has_dot and has_comma:
        last_dot, last_comma = body.rfind("."), body.rfind(",")
        if last_comma > last_dot:  # 1.500,25
            return "comma_decimal" if re.fullmatch(r"\d{1,3}(\.\d{3})*,\d+", body) else None
        return "dot_decimal" if re.fullmatch(r"\d{1,3}(,\d{3})*\.\d+", body) else None
    if has_dot:
        if re.fullmatch(r"\d{1,3}(\.\d{3}){2,}", body):
            return "comma_decimal"  # 1.250.000: dots are thousands
        if re.fullmatch(r"\d{1,3}\.\d{3}", body):
            return "ambiguous_dot"  # 1.250
        if re.fullmatch(r"\d+\.\d+", body):
            return "dot_decimal"
        return None
    if re.fullmatch(r"\d{1,3}(,\d{3}){2,}", body):
        return "dot_decimal"  # 1,250,000: commas are thousands
    if re.fullmatch(r"\d{1,3},\d{3}", body):
        return "ambiguous_comma"  # 1,250
    if re.fullmatch(r"\d+,\d+", body):
        return "comma_decimal"
    return None


def parse_number(s: str, decimal_comma: bool) -> int | float | None:
    """Parse a numeric string under a locale; None when it is not a plain number.

    ``decimal_comma=True``: '.' groups thousands, ',' is the decimal mark ('1.250' → 1250,
    '45,7' → 45.7). False: ',' groups thousands, '.' is decimal ('1,250' → 1250, '1.25' → 1.25).
    Strings with leading zeros ('05001'), more than 15 digits, or not finite stay None.
    """
    t = s.strip().replace(" ", "").replace("\u00a0", "")
    kind = _classify(t)
    if kind is None:
        return None
    body = t.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1].isdigit():
        return None  # identifier with leading zero (DANE code, zip)
    if sum(ch.isdigit() for ch in body) > 15:
        return None
    if decimal_comma:
        norm = t.replace(".", "").replace(",", ".")
    else:
        norm = t.replace(",", "")
    try:
        if "." in norm:
            v = float(norm)
            return v if math.isfinite(v) else None
        return int(norm)
    except ValueError:
        return None


def _locale_votes(values: list[str]) -> Counter:
    """Counts of :func:`_classify` kinds over a list of strings."""
    return Counter(_classify(v) for v in values)


def _decide_comma(col: Counter, file: Counter, default: bool) -> bool:
    """Whether a column uses the decimal comma.

    Order: unambiguous evidence in the column ('45,7', '1.500,25' vs '45.7', '1,500.25'), then in
    the whole file, then the column's own shape (ambiguous '1.204' beside plain integers such as
    '856' means a thousands dot; '1,204' beside integers a thousands comma), then ``default``
    (delimiter ';' or a Spanish/Portuguese file → decimal comma).
    """
    if col["comma_decimal"] != col["dot_decimal"]:
        return col["comma_decimal"] > col["dot_decimal"]
    if file["comma_decimal"] != file["dot_decimal"]:
        return file["comma_decimal"] > file["dot_decimal"]
    if col["ambiguous_dot"] and col["plain"] and not col["ambiguous_comma"]:
        return True
    if col["ambiguous_comma"] and col["plain"] and not col["ambiguous_dot"]:
        return False
    return default


# --- cells -----------------------------------------------------------------------------------


def _cell_str(v: Any) -> str:
    """Display string of a cell value (Excel floats that are integers lose the '.0')."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if not math.isfinite(v):
            return ""
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    if isinstance(v, _dt.datetime):
        return v.date().isoformat() if v.time() == _dt.time(0) else v.isoformat(sep=" ")
    if isinstance(v, (_dt.date, _dt.time)):
        return v.isoformat()
    return clean_value(str(v))


def _is_numeric_cell(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    if isinstance(v, str):
        s = v.strip()
        return bool(s) and (_classify(s) is not None or bool(_DATE_LIKE_RE.match(s)))
    return isinstance(v, (_dt.date, _dt.datetime))


def _empty(v: Any) -> bool:
    """A cell without content (None, blank string, NaN)."""
    if v is None:
        return True
    if isinstance(v, str):
        return not v.strip() or (len(v) < 4 and not clean_value(v))
    if isinstance(v, float):
        return not math.isfinite(v)
    return False


def _nonempty(row: list[Any]) -> int:
    return sum(1 for v in row if not _empty(v))


def _trim(row: list[Any]) -> list[Any]:
    end = len(row)
    while end and _empty(row[end - 1]):
        end -= 1
    return row[:end]


# --- header / records ------------------------------------------------------------------------


def _find_header(rows: list[list[Any]]) -> tuple[int | None, int]:
    """Index of the header row (None when the table has no header row) and the table width."""
    widths = [len(_trim(r)) for r in rows]
    counts = [_nonempty(r) for r in rows]
    multi = [w for w, c in zip(widths, counts, strict=False) if c >= 2]
    if not multi:
        # Single-column table: first non-empty text row is the header if followed by rows.
        for i, r in enumerate(rows[:_HEADER_SEARCH_ROWS]):
            if counts[i] == 1 and not _is_numeric_cell(_trim(r)[-1]):
                return (i if i + 1 < len(rows) else None), 1
        return None, 1
    freq = Counter(multi)
    width = max(freq.items(), key=lambda kv: (kv[1], kv[0]))[0]
    for i, r in enumerate(rows[:_HEADER_SEARCH_ROWS]):
        if counts[i] < 2:
            continue
        if counts[i] < max(2, math.ceil(0.6 * width)) and widths[i] < width:
            continue
        cells = [v for v in r if not _empty(v)]
        text_cells = sum(1 for v in cells if not _is_numeric_cell(v))
        if text_cells / len(cells) >= 0.6:
            return i, max(width, widths[i])
        return None, width  # first wide row is data: no header row
    return None, width


def _unique_names(names: list[str]) -> list[str]:
    out: list[str] = []
    seen: Counter = Counter()
    for i, n in enumerate(names):
        base = " ".join(n.split()) or f"col_{i + 1}"  # header cells may hold line breaks
        seen[base] += 1
        out.append(base if seen[base] == 1 else f"{base}_{seen[base]}")
    return out


def _header_and_columns(
    rows: list[list[Any]], nums: list[int], where: str, warnings: list[str]
) -> tuple[list[str], int | None, dict]:
    """Columns from the header row (``col_N`` for missing names/no header), the header's index in
    ``rows`` (None: no header) and meta (``header_row``: its source number; ``preamble``: the
    rows above it, each joined ``a | b``)."""
    header_i, width = _find_header(rows)
    meta: dict = {}
    if header_i is None:
        columns = [f"col_{j + 1}" for j in range(width)]
        preamble: list[str] = []
        warnings.append(f"{where}no header row found; columns named col_1..col_{width}")
    else:
        columns = _unique_names([_cell_str(v) for v in _trim(rows[header_i])])
        if len(columns) < width:
            columns += [f"col_{j + 1}" for j in range(len(columns), width)]
        preamble = [" | ".join(dict.fromkeys(_cell_str(v) for v in r if _cell_str(v))) for r in rows[:header_i]]
        meta["header_row"] = nums[header_i]
    if preamble:
        meta["preamble"] = preamble
        warnings.append(f"{where}{len(preamble)} preamble line(s) before the header kept as metadata")
    return columns, header_i, meta


def _fill_merges(
    grid: list[list[Any]],
    merges: list[tuple[int, int, int, int]],
    rows: list[list[Any]],
    row_numbers: list[int],
    index_of: dict[int, int],
    header_grid_row: int,
) -> int:
    """Fill merged ranges below the header in ``rows`` (vertical: down; horizontal: over) with the
    merge's top-left grid value, only into empty cells; returns the number of cells filled."""
    filled = 0
    grid_width = max((len(r) for r in grid), default=0)
    for r0, c0, r1, c1 in merges:
        c1 = min(c1, grid_width - 1)  # merges often run to column XFD; nothing lies beyond the data
        r1 = min(r1, len(grid) - 1)
        if r1 <= header_grid_row or c1 < c0:
            continue
        if r0 not in range(len(grid)) or c0 >= len(grid[r0]):
            continue
        value = grid[r0][c0]
        for gr in range(max(r0, header_grid_row + 1), r1 + 1):
            if gr >= len(row_numbers):
                continue
            i = index_of.get(row_numbers[gr])
            if i is None:
                continue
            row = rows[i]
            if len(row) <= c1:
                row.extend([None] * (c1 + 1 - len(row)))
            for c in range(c0, c1 + 1):
                if _empty(row[c]):
                    row[c] = value
                    filled += 1
    return filled


def _add_extra_columns(columns: list[str], n_extra: int) -> None:
    """Append ``n_extra`` unused ``extra_K`` names to ``columns``."""
    taken = set(columns)
    k = 1
    for _ in range(n_extra):
        while f"extra_{k}" in taken:
            k += 1
        columns.append(f"extra_{k}")
        taken.add(f"extra_{k}")


def _fit_row(
    row: list[Any], line: int, columns: list[str], has_header: bool, where: str, warnings: list[str]
) -> list[Any]:
    """One data row fitted to ``columns``: extra empty cells dropped, extra values given new
    ``extra_K`` columns (appended to ``columns``), missing cells None; each case warned."""
    ncol = len(columns)
    if len(row) > ncol:
        extra = row[ncol:]
        if all(_empty(v) for v in extra):
            warnings.append(f"{where}row {line}: {len(extra)} extra empty field(s) ignored")
            row = row[:ncol]
        else:
            tr = _trim(row)
            n_extra = len(tr) - ncol
            _add_extra_columns(columns, n_extra)
            ncol = len(columns)
            warnings.append(f"{where}row {line}: {n_extra} field(s) beyond the header kept as extra columns")
            row = tr
    if len(row) < ncol:
        missing = ncol - len(row)
        if has_header or len(row) > 0:
            warnings.append(f"{where}row {line}: {missing} missing field(s) set to null")
        row = list(row) + [None] * missing
    return row


def grid_to_records(
    grid: list[list[Any]],
    merges: list[tuple[int, int, int, int]] | None = None,
    *,
    row_numbers: list[int] | None = None,
    sheet: str | None = None,
) -> tuple[list[str], list[list[Any]], dict, list[str]]:
    """Find the header in a grid and return ``(columns, rows, meta, warnings)``.

    Args:
        grid: rows of raw cell values (str/int/float/date/None); merged ranges hold their value
            only in the top-left cell.
        merges: inclusive (row0, col0, row1, col1) 0-based merged ranges; filled after the header
            is found (vertical merges down, horizontal merges over).
        row_numbers: 1-based source line/row number of each grid row (for warnings).
        sheet: sheet name used in warnings.
    Returns:
        columns (unique names), data rows (raw values, padded/trimmed to the columns; missing
        cells None), meta ({'preamble': [...], 'header_row': n}) and warnings.
    """
    warnings: list[str] = []
    where = f"sheet {sheet!r} " if sheet else ""
    row_numbers = row_numbers or list(range(1, len(grid) + 1))
    # Drop fully empty rows but keep their numbering.
    kept = [(n, r) for n, r in zip(row_numbers, grid, strict=False) if _nonempty(r)]
    if not kept:
        return [], [], {}, warnings
    nums = [n for n, _ in kept]
    rows = [list(r) for _, r in kept]
    columns, header_i, meta = _header_and_columns(rows, nums, where, warnings)

    grid_index = {n: gi for gi, n in enumerate(row_numbers)}
    header_grid_row = grid_index[nums[header_i]] if header_i is not None else -1
    index_of = {n: i for i, n in enumerate(nums)}
    filled = _fill_merges(grid, merges or [], rows, row_numbers, index_of, header_grid_row)
    if filled:
        warnings.append(f"{where}{filled} merged cell(s) filled from their merge's top-left value")

    data_start = 0 if header_i is None else header_i + 1
    data = [
        _fit_row(rows[i], nums[i], columns, header_i is not None, where, warnings) for i in range(data_start, len(rows))
    ]
    # Rows appended before new extra columns appeared: pad.
    for row in data:
        if len(row) < len(columns):
            row.extend([None] * (len(columns) - len(row)))
    dropped = _drop_header_span_copies(columns, data, merges or [], header_grid_row)
    if dropped:
        warnings.append(f"{where}{dropped} column(s) under a header merged across columns folded into its first column")
    return columns, data, meta, warnings


def _drop_header_span_copies(
    columns: list[str], data: list[list[Any]], merges: list[tuple[int, int, int, int]], header_grid_row: int
) -> int:
    """Fold the columns covered by a header cell merged across columns (``Región`` over A2:B2).

    Such a header names ONE field laid out over several grid columns; the unnamed columns it covers
    (``col_N``) are dropped when every data row holds nothing there or a copy of the first column
    (what filling a body merge A3:B5 over produces). Columns with other values are kept.
    Mutates ``columns`` and ``data``; returns the number of columns dropped.
    """
    if header_grid_row < 0:
        return 0
    drop: set[int] = set()
    for r0, c0, r1, c1 in merges:
        if not (r0 <= header_grid_row <= r1) or c1 <= c0 or c0 >= len(columns):
            continue
        for c in range(c0 + 1, min(c1, len(columns) - 1) + 1):
            if columns[c] != f"col_{c + 1}":
                continue  # the covered cell has its own name: a real column
            if all(_empty(row[c]) or row[c] == row[c0] for row in data):
                drop.add(c)
    if not drop:
        return 0
    keep = [j for j in range(len(columns)) if j not in drop]
    columns[:] = [columns[j] for j in keep]
    for row in data:
        row[:] = [row[j] for j in keep]
    return len(drop)


def _type_rows(columns: list[str], rows: list[list[Any]], *, decimal_comma_default: bool) -> list[dict]:
    """Typed records: numeric strings parsed with per-column locale, others cleaned strings."""
    ncol = len(columns)
    col_strings: list[list[str]] = [[] for _ in range(ncol)]
    for row in rows:
        for j in range(ncol):
            v = row[j]
            if isinstance(v, str) and v.strip():
                col_strings[j].append(v)
    col_votes = [_locale_votes(col) for col in col_strings]
    file_votes: Counter = Counter()
    for v in col_votes:
        file_votes.update(v)
    col_comma = [_decide_comma(v, file_votes, decimal_comma_default) for v in col_votes]
    records: list[dict] = []
    for row in rows:
        rec: dict = {}
        for j, name in enumerate(columns):
            v = row[j] if j < len(row) else None
            if v is None:
                rec[name] = None
            elif isinstance(v, str):
                s = clean_value(v)
                if s == "":
                    rec[name] = None
                else:
                    num = parse_number(s, col_comma[j])
                    rec[name] = num if num is not None else s
            elif isinstance(v, float) and not math.isfinite(v):
                rec[name] = None
            elif isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
                rec[name] = int(v)
            elif isinstance(v, (int, float, bool)):
                rec[name] = v
            else:
                rec[name] = _cell_str(v) or None
        records.append(rec)  # JSON-safe by construction; extract() runs json_safe once more
    return records


def record_text(columns: list[str], row: list[Any], *, prefix: list[str] | None = None) -> str:
    """Readable text of one record: ``"field: value"`` lines, empty fields skipped, values as
    written in the source (``"eventos: 1.250"``)."""
    lines = list(prefix or [])
    for name, v in zip(columns, row, strict=False):
        s = _cell_str(v)
        if s:
            lines.append(f"{name}: {s}")
    return "\n".join(lines)


def build_tabular_document(
    fmt: str,
    tables: list[tuple[str | None, list[str], list[list[Any]], dict]],
    *,
    warnings: list[str],
    encoding: str | None = None,
    metadata: dict | None = None,
    decimal_comma_hint: bool | None = None,
) -> ExtractedDocument:
    """Assemble an ExtractedDocument from (sheet, columns, rows, meta) tables: one PageText per
    record (source 'record'), typed records, language over the record texts. Records of a
    multi-table file carry a ``_sheet`` field and a ``sheet:`` first text line."""
    multi = sum(1 for t in tables if t[2]) > 1
    texts: list[tuple[str | None, list[str], list[Any]]] = []
    for sheet, columns, rows, _meta in tables:
        for row in rows:
            texts.append((sheet, columns, row))
    sample = "\n".join(record_text(c, r) for _, c, r in texts[:2000])
    language = detect_language(sample)
    if decimal_comma_hint is None:
        decimal_comma_hint = language in {"es", "pt"}
    pages: list[PageText] = []
    records: list[dict] = []
    for sheet, columns, rows, _meta in tables:
        typed = _type_rows(columns, rows, decimal_comma_default=decimal_comma_hint)
        for row, rec in zip(rows, typed, strict=False):
            prefix = [f"sheet: {sheet}"] if (multi and sheet) else None
            text = record_text(columns, row, prefix=prefix)
            if multi and sheet:
                rec = {"_sheet": sheet, **rec}
            records.append(rec)
            pages.append(PageText(page_no=len(pages) + 1, text=text, source="record", status="ok" if text else "empty"))
    md = dict(metadata or {})
    first_pre = next((m.get("preamble") for _, _, _, m in tables if m.get("preamble")), None)
    if first_pre:
        md.setdefault("title", first_pre[0])
    md["tables"] = [
        {"sheet": sheet, "columns": columns, "n_records": len(rows), **meta} for sheet, columns, rows, meta in tables
    ]
    if not records:
        status, reason = "empty", "no data rows"
    else:
        status, reason = "ok", None
    return ExtractedDocument(
        format=fmt,
        status=status,
        reason=reason,
        pages=pages,
        encoding=encoding,
        language=language,
        is_tabular=True,
        records=records,
        metadata=json_safe(md),
        warnings=warnings,
        n_pages_total=len(pages),
    )


# --- readers ---------------------------------------------------------------------------------


def read_csv(data: bytes) -> ExtractedDocument:
    """Read CSV/TSV bytes: sniff encoding and delimiter, find the header after any preamble,
    tolerate quoted newlines and ragged rows, type numbers by locale.

    Returns:
        ExtractedDocument(format='csv', is_tabular=True); warnings list every tolerated problem.
    """
    text, encoding = decode_text(data)
    text = text.lstrip("\ufeff")
    warnings: list[str] = []
    n_nul = text.count("\x00")
    if n_nul:  # NUL padding (fixed-width exports): Postgres text cannot hold it
        text = text.replace("\x00", "")
        warnings.append(f"{n_nul} NUL byte(s) stripped")
    delim, consistency = sniff_delimiter(text)
    if delim is None:
        delim = ","
        warnings.append("no consistent delimiter found; read as one column")
    grid: list[list[str]] = []
    line_numbers: list[int] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    try:
        for row in reader:
            grid.append(row)
            # reader.line_num is the physical line where this record ended; we want its start.
            line_numbers.append(reader.line_num)
    except csv.Error as exc:
        warnings.append(f"csv parse stopped at line {reader.line_num}: {exc}")
    # Convert end line numbers to start line numbers.
    starts: list[int] = []
    prev_end = 0
    for end in line_numbers:
        starts.append(prev_end + 1)
        prev_end = end
    columns, rows, meta, w = grid_to_records(grid, row_numbers=starts)
    warnings.extend(w)
    comma_hint = True if delim == ";" else None
    meta = {"delimiter": delim, "delimiter_consistency": round(consistency, 3), **meta}
    return build_tabular_document(
        "csv",
        [(None, columns, rows, meta)],
        warnings=warnings,
        encoding=encoding,
        decimal_comma_hint=comma_hint,
    )


def _sheet_grid(ws, extra: dict[tuple[int, int], Any] | None = None) -> list[list[Any]]:
    """Values of an openpyxl worksheet as a grid bounded by the cells that hold a value.

    Sheets often declare formatted-but-empty cells up to column XFD; iterating ``iter_rows`` over
    that extent creates millions of cells, so the bounds come from the stored cells instead.
    ``extra`` ({(row, col): value}, 1-based) fills cells the sheet has no value for (formula cells
    without a cached value, see :func:`_uncached_formula_values`).
    """
    cells = getattr(ws, "_cells", None)
    if cells is None:
        return [_trim(list(r)) for r in ws.iter_rows(values_only=True)]
    filled = [(r, c, cell.value) for (r, c), cell in cells.items() if cell.value is not None]
    filled += [(r, c, v) for (r, c), v in (extra or {}).items() if v is not None]
    if not filled:
        return []
    max_r = max(r for r, _, _ in filled)
    max_c = max(c for _, c, _ in filled)
    grid: list[list[Any]] = [[None] * max_c for _ in range(max_r)]
    for r, c, v in filled:
        grid[r - 1][c - 1] = v
    return grid


# A formula element (<f>…</f>, <f t="shared" si="0"/>, prefixed <x:f>) that closes its cell with no
# cached value after it (no <v>, or an empty one).
_UNCACHED_FORMULA_RE = re.compile(
    rb"<(?:\w+:)?f(?:\s[^>]*)?(?:/>|>[^<]*</(?:\w+:)?f>)\s*(?:<(?:\w+:)?v\s*/>|<(?:\w+:)?v>\s*</(?:\w+:)?v>)?\s*</(?:\w+:)?c>"
)


def _has_uncached_formulas(data: bytes) -> bool:
    """True when a worksheet part of the XLSX (a zip) holds a formula without a cached value
    (streamed, so the formula workbook is loaded only for such files)."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for name in z.namelist():
                if name.startswith("xl/worksheets/") and name.endswith(".xml"):
                    with z.open(name) as fh:
                        tail = b""
                        while chunk := fh.read(1 << 20):
                            if _UNCACHED_FORMULA_RE.search(tail + chunk):
                                return True
                            tail = chunk[-4096:]
    except (zipfile.BadZipFile, OSError, KeyError):
        return False
    return False


def _formula_text(cell) -> str | None:
    """The formula of an openpyxl cell read with ``data_only=False`` (``'=SUM(B2:B9)'``), else None."""
    v = cell.value
    if cell.data_type != "f" or v is None:
        return None
    text = getattr(v, "text", v)  # ArrayFormula / DataTableFormula objects
    if not isinstance(text, str) or not text:
        return None
    return text if text.startswith("=") else "=" + text


def _excel_number(v: Any) -> Any:
    """An evaluated value as Excel would show it: floats to 15 significant digits."""
    if isinstance(v, float) and math.isfinite(v):
        return float(f"{v:.15g}")
    return v


def _uncached_formula_values(data: bytes, wb) -> tuple[dict[str, dict[tuple[int, int], Any]], dict]:
    """Values for formula cells that ``data_only=True`` reads as None (no cached value).

    Returns ``({sheet: {(row, col): value}}, report)``: the value is the evaluated result
    (:mod:`.xlsx_formulas`, simple arithmetic and aggregates) or, when not evaluable, the formula
    text itself (``'=VLOOKUP(A2,...)'``), never None. ``report`` = ``{'evaluated': n,
    'kept_as_text': n, 'cells': [...up to 20 'Sheet!B10 =SUM(B2:B9) -> 45' lines]}`` or ``{}``.
    """
    if not _has_uncached_formulas(data):
        return {}, {}
    import warnings as _warnings

    import openpyxl

    from .xlsx_formulas import FormulaFiller, Unsupported

    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        fwb = openpyxl.load_workbook(io.BytesIO(data), data_only=False, read_only=False)
    try:
        cached = {ws.title: {k: c.value for k, c in getattr(ws, "_cells", {}).items()} for ws in wb.worksheets}
        formulas: dict[str, dict[tuple[int, int], str]] = {}
        for ws in fwb.worksheets:
            sheet_f = {}
            for k, c in getattr(ws, "_cells", {}).items():
                text = _formula_text(c)
                if text is not None:
                    sheet_f[k] = text
            formulas[ws.title] = sheet_f
    finally:
        fwb.close()
    filler = FormulaFiller(cached, formulas)
    out: dict[str, dict[tuple[int, int], Any]] = {}
    report: dict = {"evaluated": 0, "kept_as_text": 0, "cells": []}
    for sheet, cells in formulas.items():
        for (r, c), text in sorted(cells.items()):
            if cached.get(sheet, {}).get((r, c)) is not None:
                continue
            try:
                value = _excel_number(filler.value(sheet, r, c))
                report["evaluated"] += 1
                note = f"-> {value!r}"
            except Unsupported as exc:
                value = text
                report["kept_as_text"] += 1
                note = f"kept as text ({exc})"
            out.setdefault(sheet, {})[(r, c)] = value
            if len(report["cells"]) < 20:
                report["cells"].append(f"{sheet}!{_column_letters(c)}{r} {text[:80]} {note}"[:200])
    if not out:
        return {}, {}
    return out, report


def _column_letters(col: int) -> str:
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def read_xlsx(data: bytes) -> ExtractedDocument:
    """Read every worksheet of an XLSX with openpyxl (cached formula values).

    Formula cells saved without a cached value (files written by libraries, never opened in
    Excel) are evaluated when simple or kept as their formula text, never left empty; the document
    then carries a ``formula_uncached`` warning and ``metadata['formula_uncached']`` (counts and the
    first cells). Merged ranges are filled down/over for data rows; a merged title row above the
    header is kept in ``metadata['tables'][i]['preamble']``. Empty sheets are skipped.
    """
    import warnings as _warnings

    import openpyxl

    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")  # "Data Validation extension is not supported", etc.
        wb = openpyxl.load_workbook(io.BytesIO(data), data_only=True, read_only=False)
    tables = []
    warnings: list[str] = []
    metadata: dict = {}
    try:
        extra, report = _uncached_formula_values(data, wb)
        if report:
            metadata["formula_uncached"] = report
            warnings.append(
                f"formula_uncached: {report['evaluated'] + report['kept_as_text']} formula cell(s) without a "
                f"cached value; {report['evaluated']} evaluated, {report['kept_as_text']} kept as formula text"
            )
        for ws in wb.worksheets:
            grid = _sheet_grid(ws, extra.get(ws.title))
            if not grid:
                continue
            merges = [(m.min_row - 1, m.min_col - 1, m.max_row - 1, m.max_col - 1) for m in ws.merged_cells.ranges]
            columns, rows, meta, w = grid_to_records(grid, merges, sheet=ws.title)
            warnings.extend(w)
            if ws.sheet_state != "visible":
                # Kept (nothing is lost) but flagged: hidden sheets often hold lookup lists or
                # data the author did not mean to publish.
                meta["hidden"] = ws.sheet_state
                warnings.append(f"sheet {ws.title!r} is {ws.sheet_state}; its rows are kept and flagged")
            if columns or rows:
                tables.append((ws.title, columns, rows, meta))
    finally:
        try:
            wb.close()
        except Exception:  # noqa: BLE001 - closing a half-read workbook must not mask its result
            pass
    return build_tabular_document("xlsx", tables, warnings=warnings, metadata=metadata)


def read_xls(data: bytes) -> ExtractedDocument:
    """Read a legacy BIFF .xls with xlrd (merged ranges when formatting info is readable)."""
    import xlrd

    warnings: list[str] = []
    try:
        book = xlrd.open_workbook(file_contents=data, formatting_info=True, on_demand=False)
    except Exception:  # noqa: BLE001 - formatting info unsupported for some files
        book = xlrd.open_workbook(file_contents=data, on_demand=False)
        warnings.append("xls formatting info unreadable; merged cells not filled")
    tables = []
    for sh in book.sheets():
        grid: list[list[Any]] = []
        for r in range(sh.nrows):
            row = []
            for c in range(sh.ncols):
                cell = sh.cell(r, c)
                v: Any = cell.value
                if cell.ctype == xlrd.XL_CELL_DATE:
                    try:
                        v = xlrd.xldate_as_datetime(v, book.datemode)
                    except Exception:  # noqa: BLE001 - a bad date serial keeps its raw value
                        pass
                elif cell.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                    v = None
                elif cell.ctype == xlrd.XL_CELL_ERROR:
                    v = None
                elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
                    v = bool(v)
                row.append(v)
            grid.append(row)
        merges = [(r0, c0, r1 - 1, c1 - 1) for r0, r1, c0, c1 in getattr(sh, "merged_cells", []) or []]
        columns, rows, meta, w = grid_to_records(grid, merges, sheet=sh.name)
        warnings.extend(w)
        if columns or rows:
            tables.append((sh.name, columns, rows, meta))
    return build_tabular_document("xls", tables, warnings=warnings)


def _html_table_grid(table) -> tuple[list[list[Any]], list[tuple[int, int, int, int]]]:
    """Expand an lxml <table> into a grid (span-covered cells None) and its span ranges."""
    grid: list[list[Any]] = []
    merges: list[tuple[int, int, int, int]] = []
    pending: dict[tuple[int, int], bool] = {}  # cells covered by rowspans from above
    rows = [tr for tr in table.iter("tr") if _closest_table(tr) is table]
    for r, tr in enumerate(rows):
        row: list[Any] = []
        c = 0
        for cell in tr:
            if not isinstance(cell.tag, str) or cell.tag.lower() not in {"td", "th"}:
                continue
            while pending.pop((r, c), False):
                row.append(None)
                c += 1
            text = clean_value(cell.text_content())
            try:
                colspan = max(1, min(int(cell.get("colspan", "1") or 1), 1000))
            except ValueError:
                colspan = 1
            try:
                rowspan = max(1, min(int(cell.get("rowspan", "1") or 1), 10000))
            except ValueError:
                rowspan = 1
            row.append(text or None)
            row.extend([None] * (colspan - 1))
            if colspan > 1 or rowspan > 1:
                merges.append((r, c, r + rowspan - 1, c + colspan - 1))
            for rr in range(r + 1, r + rowspan):
                for cc in range(c, c + colspan):
                    pending[(rr, cc)] = True
            c += colspan
        while pending.pop((r, c), False):
            row.append(None)
            c += 1
        grid.append(row)
    return grid, merges


def _closest_table(el):
    p = el.getparent()
    while p is not None and (not isinstance(p.tag, str) or p.tag.lower() != "table"):
        p = p.getparent()
    return p


def read_html_tables(data: bytes, *, fmt: str = "html_table") -> ExtractedDocument:
    """Read the tables of an HTML document (government "Excel exports" are often HTML).

    Each <table> with at least two rows is a table; colspan/rowspan are merges (a title row
    spanning the table is preamble, not the header). Returns an ExtractedDocument with format
    ``fmt``; when the HTML holds no usable table, status 'empty'.
    """
    import lxml.html

    text, encoding = decode_text(data)
    m = re.search(r"<meta[^>]+charset=[\"']?([\w-]+)", text[:4096], re.I)
    if m and encoding not in {"utf-8", "utf-8-sig"}:
        try:
            text, encoding = data.decode(m.group(1)), m.group(1).lower()
        except (LookupError, UnicodeDecodeError):
            pass
    root = lxml.html.document_fromstring(text)
    tables = []
    warnings: list[str] = []
    for k, table in enumerate(root.iter("table")):
        grid, merges = _html_table_grid(table)
        if sum(1 for r in grid if _nonempty(r)) < 2:
            continue
        name = f"table {k + 1}"
        columns, rows, meta, w = grid_to_records(grid, merges, sheet=name)
        warnings.extend(w)
        if rows:
            tables.append((name, columns, rows, meta))
    return build_tabular_document(fmt, tables, warnings=warnings, encoding=encoding)
