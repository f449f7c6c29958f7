"""JSON and GeoJSON readers.

- Parsing is lenient: ``NaN``/``Infinity``/``-Infinity`` literals become ``null`` (noted in the
  warnings), JSON Lines is accepted, a BOM is ignored; out-of-range numbers (``1e999``) become
  ``null``; NUL and other control characters are stripped from every string and key.
- **GeoJSON** (``FeatureCollection``/``Feature``): one record per feature from its
  ``properties``; the geometry is dropped from the text (the record keeps ``_geometry_type`` and
  a representative ``_lon``/``_lat``, the mean of its coordinates).
- **Records**: a top-level list of objects, or the list-of-objects values of a top-level object
  (each list a section, records tagged ``_section`` when there are several), or an object whose
  values are all objects ("dict of records", the key kept as ``key``). Nested values are
  flattened with dotted keys (``Frameworks.Severity``); lists of scalars are kept as lists and
  rendered ``a; b; c``. Top-level scalars/lists beside the record lists go to one extra 'plain'
  page after the records (counted in ``n_pages_total``; ``records`` holds only the records).
- Anything else (one object, a list of scalars) → one 'plain' page of ``key: value`` lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .detect import decode_text, parse_json_lenient
from .document import ExtractedDocument, PageText
from .language import detect_language
from .normalize import clean_value, json_safe, normalize_text

__all__ = ["read_json", "flatten", "render_flat"]

_MAX_FLAT_KEYS = 5000
_MAX_COORDS = 100_000


def flatten(obj: Any, prefix: str = "", out: dict | None = None) -> dict:
    """Flatten nested dicts/lists to ``{dotted.key: value}``.

    Dicts recurse with ``prefix.key``; lists of scalars stay lists; lists containing objects
    recurse with ``prefix.<index>``. At most 5,000 keys per object (the rest is dropped).
    """
    if out is None:
        out = {}
    if len(out) >= _MAX_FLAT_KEYS:
        return out
    if isinstance(obj, dict):
        if not obj and prefix:
            out[prefix] = None
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj):
            out[prefix or "value"] = obj
        else:
            for i, v in enumerate(obj):
                flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out[prefix or "value"] = obj
    return out


def _scalar_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if not math.isfinite(v):
            return ""
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    if isinstance(v, list):
        return "; ".join(s for s in (_scalar_text(x) for x in v) if s)
    return normalize_text(str(v))  # one value: joining line-break hyphens is safe here


def render_flat(flat: dict, *, skip_private: bool = True) -> str:
    """``key: value`` lines for a flattened record; empty values (and ``_``-keys added by this
    reader, when ``skip_private``) skipped."""
    lines = []
    for k, v in flat.items():
        if skip_private and k in {"_geometry_type", "_lon", "_lat", "_section"}:
            continue
        s = _scalar_text(v)
        if s:
            lines.append(f"{clean_value(str(k))}: {s}")
    return "\n".join(lines)


def _coords_mean(geom: Any) -> tuple[float | None, float | None]:
    xs = ys = 0.0
    n = 0
    stack = [geom.get("coordinates") if isinstance(geom, dict) else None]
    if isinstance(geom, dict) and geom.get("type") == "GeometryCollection":
        stack = [g.get("coordinates") for g in geom.get("geometries") or [] if isinstance(g, dict)]
    while stack and n < _MAX_COORDS:
        c = stack.pop()
        if isinstance(c, list):
            if len(c) >= 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in c[:2]):
                if math.isfinite(c[0]) and math.isfinite(c[1]):
                    xs += c[0]
                    ys += c[1]
                    n += 1
            else:
                stack.extend(c)
    if not n:
        return None, None
    return round(xs / n, 6), round(ys / n, 6)


def _is_record_list(v: Any) -> bool:
    return isinstance(v, list) and len(v) > 0 and sum(isinstance(x, dict) for x in v) >= 0.8 * len(v)


_MAX_RECORD_DEPTH = 3


def _nested_record_lists(value: dict, prefix: str = "", depth: int = 1) -> list[tuple[str, list]]:
    """Record lists inside wrapper objects, up to ``_MAX_RECORD_DEPTH`` levels down, as
    ``(dotted path, list)`` (``"datos.registros"``); the top level itself is not searched here."""
    found: list[tuple[str, list]] = []
    if depth > _MAX_RECORD_DEPTH:
        return found
    for k, v in value.items():
        if not isinstance(v, dict):
            continue
        path = f"{prefix}{k}"
        for kk, vv in v.items():
            if _is_record_list(vv):
                found.append((f"{path}.{kk}", vv))
        found.extend(_nested_record_lists(v, path + ".", depth + 1))
    return found


@dataclass
class _Sections:
    """How a JSON value splits into records: ``(name, items)`` sections, the top-level fields beside
    them (``remainder``), whether items are already flat records, the format and metadata so far."""

    fmt: str
    sections: list[tuple[str | None, list[Any]]]
    flat_records: bool
    remainder: dict | None = None
    metadata: dict = field(default_factory=dict)


def _invalid_json_document(text: str, encoding: str | None, exc: ValueError) -> ExtractedDocument:
    """Unparseable JSON: its text as one 'plain' page (status 'partial'), or 'corrupt' when empty."""
    plain = normalize_text(text)
    return ExtractedDocument(
        format="json",
        status="partial" if plain else "corrupt",
        reason=f"invalid JSON ({exc}); kept as plain text",
        pages=[PageText(1, plain, "plain", "invalid json -> plain text")] if plain else [],
        encoding=encoding,
        language=detect_language(plain),
        n_pages_total=1 if plain else 0,
    )


def _geojson_sections(value: dict) -> _Sections:
    """A FeatureCollection/Feature: one flat record per feature (properties, ``id``, geometry type
    and mean coordinate); the other top-level members go to ``metadata['geojson']``."""
    feats = value.get("features") if value.get("type") == "FeatureCollection" else [value]
    feats = [f for f in (feats or []) if isinstance(f, dict)]
    recs = []
    for f in feats:
        props = f.get("properties") if isinstance(f.get("properties"), dict) else {}
        geom = f.get("geometry") if isinstance(f.get("geometry"), dict) else None
        rec = flatten(props)
        if "id" in f and "id" not in rec:
            rec["id"] = f["id"]
        if geom:
            lon, lat = _coords_mean(geom)
            rec["_geometry_type"] = geom.get("type")
            rec["_lon"], rec["_lat"] = lon, lat
        recs.append(rec)
    metadata = {"geojson": {k: v for k, v in value.items() if k not in {"features", "geometry", "properties"}}}
    return _Sections("geojson", [(None, recs)], True, metadata=metadata)


def _find_sections(value: Any, warnings: list[str]) -> _Sections | None:
    """The records of a parsed JSON value (see module docstring), or None when it holds none."""
    if isinstance(value, dict) and value.get("type") in {"FeatureCollection", "Feature"}:
        return _geojson_sections(value)
    if isinstance(value, list) and _is_record_list(value):
        return _Sections("json", [(None, value)], False)
    if isinstance(value, dict) and any(_is_record_list(v) for v in value.values()):
        sections = [(str(k), v) for k, v in value.items() if _is_record_list(v)]
        remainder = {k: v for k, v in value.items() if not _is_record_list(v)}
        return _Sections("json", sections, False, remainder=remainder)
    nested = _nested_record_lists(value) if isinstance(value, dict) else []
    if nested:
        # {"meta": {...}, "datos": {"registros": [...]}}: the record lists sit below wrapper objects.
        paths = [p for p, _ in nested]
        flat = flatten(value)
        remainder = {k: v for k, v in flat.items() if not any(k == p or k.startswith(p + ".") for p in paths)}
        warnings.append("records found below the top level: " + ", ".join(paths[:5]))
        return _Sections("json", nested, False, remainder=remainder)
    if (
        isinstance(value, dict)
        and len(value) >= 2
        and sum(isinstance(v, dict) for v in value.values()) >= 0.8 * len(value)
    ):
        recs = []
        for k, v in value.items():
            rec = {"key": k}
            rec.update(flatten(v) if isinstance(v, dict) else {"value": v})
            recs.append(rec)
        warnings.append("object of objects read as records (keys in field 'key')")
        return _Sections("json", [(None, recs)], True)
    return None


def _plain_document(value: Any, encoding: str | None, warnings: list[str]) -> ExtractedDocument:
    """A value without records: one 'plain' page of ``key: value`` lines (title kept in metadata)."""
    flat = flatten(value) if isinstance(value, (dict, list)) else {"value": value}
    plain = render_flat(flat, skip_private=False)
    status = "ok" if plain else "empty"
    metadata: dict = {}
    if isinstance(value, dict) and isinstance(value.get("title"), str) and value["title"].strip():
        metadata["title"] = clean_value(value["title"])
    return ExtractedDocument(
        format="json",
        status=status,
        reason=None if plain else "no text values",
        pages=[PageText(1, plain, "plain", status="ok" if plain else "empty")],
        encoding=encoding,
        language=detect_language(plain),
        metadata=json_safe(metadata),
        warnings=warnings,
        n_pages_total=1,
    )


def _record_pages(found: _Sections) -> tuple[list[PageText], list[dict]]:
    """One 'record' page and one JSON-safe record per item (tagged ``_section`` when several)."""
    pages: list[PageText] = []
    records: list[dict] = []
    multi = len(found.sections) > 1
    for name, items in found.sections:
        for item in items:
            rec = item if found.flat_records else (flatten(item) if isinstance(item, dict) else {"value": item})
            if multi and name:
                rec = {"_section": name, **rec}
            body = render_flat(rec)
            text = (f"section: {name}\n" if multi and name else "") + body  # values already clean
            records.append(json_safe(rec))
            pages.append(PageText(len(pages) + 1, text, "record", status="ok" if body else "empty"))
    return pages, records


def _add_remainder(remainder: dict, pages: list[PageText], metadata: dict) -> None:
    """Top-level fields beside the records: one extra 'plain' page, their scalars (and title) in metadata."""
    rest = render_flat(flatten(remainder), skip_private=False)
    if rest:
        pages.append(PageText(len(pages) + 1, rest, "plain", reason="top-level fields beside the records"))
    metadata["top_level"] = {k: v for k, v in remainder.items() if not isinstance(v, (dict, list))}
    if isinstance(remainder.get("title"), str) and remainder["title"].strip():
        metadata["title"] = clean_value(remainder["title"])


def _records_document(found: _Sections, encoding: str | None, warnings: list[str]) -> ExtractedDocument:
    """The tabular document of the records found (plus the remainder page)."""
    pages, records = _record_pages(found)
    metadata = found.metadata
    if found.remainder:
        _add_remainder(found.remainder, pages, metadata)
    if found.sections and [s for s, _ in found.sections if s]:
        metadata["sections"] = {s or "": len(items) for s, items in found.sections}
    sample = "\n".join(p.text for p in pages[:2000])
    language = detect_language(sample)
    status = "ok" if any(p.text for p in pages) else "empty"
    return ExtractedDocument(
        format=found.fmt,
        status=status,
        reason=None if status == "ok" else "no records with values",
        pages=pages,
        encoding=encoding,
        language=language,
        is_tabular=True,
        records=records,
        metadata=json_safe(metadata),
        warnings=warnings,
        n_pages_total=len(pages),
    )


def read_json(data: bytes) -> ExtractedDocument:
    """Read JSON/GeoJSON bytes into records or one plain page (see module docstring).

    Returns:
        ExtractedDocument with format 'geojson' or 'json'; ``is_tabular`` when records were found.
        Invalid JSON gives status 'partial' with the raw text as one 'plain' page.
    """
    text, encoding = decode_text(data)
    try:
        value, notes = parse_json_lenient(text)
    except ValueError as exc:
        return _invalid_json_document(text, encoding, exc)
    warnings: list[str] = list(notes)
    nul = text.count("\\u0000")
    if nul:
        warnings.append(f"{nul} NUL escape(s) stripped")
    value = json_safe(value)  # NUL/control chars out of strings and keys, non-finite -> None
    found = _find_sections(value, warnings)
    if found is None:
        return _plain_document(value, encoding, warnings)
    return _records_document(found, encoding, warnings)
