"""Ombudsman early warnings (Colombia's Defensoría del Pueblo, Sistema de Alertas Tempranas).

Which documents: those of an alert collection (a source path or Codefest folder naming
"alerta"). Two roles:

- **alert**: the alert's own document — its file name carries the code (``ALERTAS_001-17-91689``
  → ``001-17``, the Ombudsman's "number-year" numbering);
- **follow_up**: any other document of the collection (follow-up reports, "Seguimiento Alerta
  Temprana N° 63-18 ..."): its *subject* alerts are the codes named in its first passage that names
  any code; other codes mentioned in passing are not attached.

One row per alert code, with:

- ``alert_type``: ``imminent`` / ``structural`` only when the source says so (the alert's own text:
  "Alerta Temprana de Inminencia", "ATI", "escenario de riesgo de inminencia"…; or a follow-up
  naming the code with its type: "Alerta Temprana de Inminencia No. 010-18"); ``unspecified`` when no
  passage says; ``conflicting`` when passages disagree. Types are never added together.
- ``armed_groups`` / ``places``: mentions (from ``entity_mentions`` / ``place_mentions``) in the
  alert's own document, and in a follow-up's subject passage only within ``FOLLOW_UP_WINDOW``
  characters after the code reference (not the letter's dateline, "Bogotá D.C., 24 de mayo");
- ``date``: the own document's publication date (``publication_dates``, file-name rules), never
  a date written in the text; ``code_year`` is the year the code itself encodes;
- ``evidence``: ``{doc_id, chunk_id, role, key}`` for each passage used (role ``code``, ``type``,
  ``place``, ``armed_group``; ``document`` = first passage of an own document, whose code is metadata).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from radar_pipeline.precompute.dates import codefest_id
from radar_pipeline.textfold import fold_spans

__all__ = [
    "TYPES",
    "AlertDoc",
    "build_early_warnings",
    "classify_alert_document",
    "find_code_references",
    "find_type_statements",
    "names_place",
    "normalize_code",
]

TYPES = ("imminent", "structural", "unspecified", "conflicting")
# characters after a follow-up's code reference whose place and group mentions belong to the alert:
# "Seguimiento Alerta Temprana N° 063-18 para el municipio de Algeciras - departamento del Huila"
# spans ≈ 90; 250 covers a list of municipalities without reaching the letter's body.
FOLLOW_UP_WINDOW = 250
_NAME_CODE = re.compile(r"(?<!\d)(\d{2,3})-(\d{2})(?!\d)")
_COLLECTION = re.compile(r"alerta", re.IGNORECASE)
_TYPE_WORDS = r"(?:\s+de\s+(?P<imm>inminencia)|\s+(?P<str>estructural(?:es)?))?"
_NUM = r"(?:\s*\(at[ie]\))?\s*(?:n\s*[°º.o*\"'`]*\s*|no\.?\s*|nro\.?\s*|numero\s*|#\s*)?"
# folded text: "alerta temprana de inminencia no. 030-18", "alertas tempranas 004-22"
_REF_LONG = re.compile(r"\balertas?\s+tempranas?" + _TYPE_WORDS + _NUM + r"(?P<n>\d{2,3})\s*-\s*(?P<y>\d{2})(?!\d)")
# "alerta temprana de inminencia no. 033 del 09 de abril de 2018", "... 030 de 2018"
_REF_YEAR = re.compile(
    r"\balertas?\s+tempranas?"
    + _TYPE_WORDS
    + _NUM
    + r"(?P<n>\d{2,3})\s+del?\s+(?:\d{1,2}\s+de\s+[a-z]+\s+del?\s+)?(?P<year>(?:19|20)\d{2})(?!\d)"
)
# original text, case-sensitive: "AT 037-18", "AT.006-19", "ATI No. 030-18", "AT de Inminencia N° 24-18"
_REF_AT = re.compile(
    r"\b(?P<at>AT[IE]?)\b\.?\s*(?:(?:de|DE)\s+(?P<imm>[Ii]nminencia|INMINENCIA)\s*)?"
    r"(?:N\s*[°º.o*\"'`]*\s*|No\.?\s*|Nro\.?\s*|#\s*)?(?P<n>\d{2,3})\s*[-–]\s*(?P<y>\d{2})(?!\d)"
)
_IMMINENT = [
    re.compile(p)
    for p in (
        r"\balertas?\s+tempranas?\s+de\s+inminencia\b",
        r"\b(?:escenario|situacion|riesgo|caracter|naturaleza)\s+de\s+(?:riesgo\s+de\s+)?inminencia\b",
        r"\balertas?\s+de\s+inminencia\b",
    )
]
_STRUCTURAL = [
    re.compile(p)
    for p in (
        r"\balertas?\s+tempranas?\s+estructural(?:es)?\b",
        r"\balertas?\s+estructural(?:es)?\b",
        r"\b(?:escenario|caracter|naturaleza)\s+(?:de\s+riesgo\s+)?estructural\b",
    )
]
_ACRONYM = re.compile(r"\b(ATI|ATE)\b")


def names_place(alert: Mapping[str, Any], place_id: str) -> bool:
    """Whether an ``early_warnings`` row names ``place_id`` (``municipality:52835``) among its
    places: the one definition of "the alerts of a municipality", used by ``/aggregates`` and the
    dashboard alike."""
    return any(p.get("place_id") == place_id for p in alert.get("places") or [])


def normalize_code(number: str | int, year2: str | int) -> str:
    """``('63', '18')`` → ``'063-18'``."""
    return f"{int(number):03d}-{int(year2):02d}"


@dataclass(frozen=True)
class AlertDoc:
    """A document of an alert collection: role ``alert`` (with its ``code``) or ``follow_up``."""

    doc_id: str
    role: str
    code: str | None


def classify_alert_document(
    doc_id: str, paths: Sequence[str], inventory: Mapping[str, Mapping[str, str]]
) -> AlertDoc | None:
    """``AlertDoc`` for a document of an alert collection, None for any other document.

    Reads the Codefest inventory name/folder when the path is a Codefest file, else the paths.
    """
    for path in paths:
        cid = codefest_id(path)
        if cid and cid in inventory:
            row = inventory[cid]
            scope = f"{row.get('carpeta', '')}/{row.get('nombre_estandarizado', '')}"
            name = PurePosixPath(row.get("nombre_estandarizado") or "").stem
        else:
            scope, name = path, PurePosixPath(path).stem
        if not _COLLECTION.search(scope):
            continue
        m = _NAME_CODE.search(name)
        if m:
            return AlertDoc(doc_id, "alert", normalize_code(m.group(1), m.group(2)))
        return AlertDoc(doc_id, "follow_up", None)
    return None


def find_code_references(text: str, folded: str | None = None) -> list[tuple[str, str | None, int, int]]:
    """Alert codes named in a passage: ``[(code, type|None, start, end)]`` (type only when the same
    phrase says it, e.g. "Alerta Temprana de Inminencia No. 010-18")."""
    folded = fold_spans(text) if folded is None else folded
    out = []
    for m in _REF_LONG.finditer(folded):
        typ = "imminent" if m.group("imm") else ("structural" if m.group("str") else None)
        out.append((normalize_code(m.group("n"), m.group("y")), typ, m.start(), m.end()))
    for m in _REF_YEAR.finditer(folded):
        typ = "imminent" if m.group("imm") else ("structural" if m.group("str") else None)
        out.append((normalize_code(m.group("n"), m.group("year")[2:]), typ, m.start(), m.end()))
    for m in _REF_AT.finditer(text):
        at = m.group("at")
        typ = "imminent" if (at == "ATI" or m.group("imm")) else ("structural" if at == "ATE" else None)
        out.append((normalize_code(m.group("n"), m.group("y")), typ, m.start(), m.end()))
    out.sort(key=lambda r: r[2])
    dedup: list[tuple[str, str | None, int, int]] = []
    for r in out:
        if dedup and r[2] < dedup[-1][3]:  # overlapping readings of one phrase: keep the typed one
            if dedup[-1][1] is None and r[1] is not None:
                dedup[-1] = r
            continue
        dedup.append(r)
    return dedup


def find_type_statements(text: str, folded: str | None = None) -> list[tuple[str, int, int]]:
    """Passages saying an alert is imminent or structural: ``[(type, start, end)]``."""
    folded = fold_spans(text) if folded is None else folded
    out = []
    for rx in _IMMINENT:
        out += [("imminent", m.start(), m.end()) for m in rx.finditer(folded)]
    for rx in _STRUCTURAL:
        out += [("structural", m.start(), m.end()) for m in rx.finditer(folded)]
    for m in _ACRONYM.finditer(text):
        out.append(("imminent" if m.group(1) == "ATI" else "structural", m.start(), m.end()))
    return sorted(out, key=lambda r: r[1])


@dataclass
class _Alert:
    code: str
    docs: dict[str, str] = field(default_factory=dict)
    types: set[str] = field(default_factory=set)
    chunks: dict[str, str] = field(default_factory=dict)  # chunk_id → doc_id whose mentions count
    # chunk_id → character windows whose mentions count (None: the whole passage)
    windows: dict[str, list[tuple[int, int]] | None] = field(default_factory=dict)
    evidence: list[dict[str, Any]] = field(default_factory=list)


def _type_evidence(a: _Alert, doc_id: str, chunk_id: str, typ: str) -> None:
    """Record that passage ``chunk_id`` says the alert is of type ``typ``."""
    a.types.add(typ)
    a.evidence.append({"doc_id": doc_id, "chunk_id": chunk_id, "role": "type", "key": typ})


def _collect_own_document(ad: AlertDoc, chunks: Sequence[tuple[str, str]], alerts: dict[str, _Alert]) -> None:
    """An alert's own document: every passage's mentions count; types from its type statements
    and from references to its own code that carry a type."""
    a = alerts.setdefault(ad.code, _Alert(ad.code))
    a.docs[ad.doc_id] = "alert"
    if chunks:
        a.evidence.append({"doc_id": ad.doc_id, "chunk_id": chunks[0][0], "role": "document", "key": ad.code})
    for cid, text in chunks:
        a.chunks[cid] = ad.doc_id
        a.windows[cid] = None
        folded = fold_spans(text)
        for typ, _s, _e in find_type_statements(text, folded):
            _type_evidence(a, ad.doc_id, cid, typ)
        for code, typ, _s, _e in find_code_references(text, folded):
            if code == ad.code and typ:
                _type_evidence(a, ad.doc_id, cid, typ)


def _follow_up_subject(
    chunks: Sequence[tuple[str, str]],
) -> tuple[list[str], str | None, list[tuple[str, list[tuple[str, str | None, int, int]]]]]:
    """A follow-up's code references per passage and its subject: ``(subject codes in order of first
    mention, the first passage naming any code or None, [(chunk_id, references)])``."""
    subject: list[str] = []
    subject_chunk = None
    refs_by_chunk = []
    for cid, text in chunks:
        refs = find_code_references(text)
        refs_by_chunk.append((cid, refs))
        if refs and subject_chunk is None:
            subject_chunk = cid
            subject = list(dict.fromkeys(r[0] for r in refs))
    return subject, subject_chunk, refs_by_chunk


def _collect_follow_up(
    ad: AlertDoc, chunks: Sequence[tuple[str, str]], alerts: dict[str, _Alert], stats: dict[str, int]
) -> None:
    """A follow-up document: attach it to its subject codes; in the subject passage only the
    ``FOLLOW_UP_WINDOW`` characters after each reference count for mentions."""
    subject, subject_chunk, refs_by_chunk = _follow_up_subject(chunks)
    if not subject:
        stats["follow_ups_without_code"] += 1
        return
    for cid, refs in refs_by_chunk:
        for code, typ, s, e in refs:
            if code not in subject:
                stats["codes_mentioned_in_passing"] += 1
                continue
            a = alerts.setdefault(code, _Alert(code))
            a.docs.setdefault(ad.doc_id, "follow_up")
            a.evidence.append({"doc_id": ad.doc_id, "chunk_id": cid, "role": "code", "key": code})
            if cid == subject_chunk:
                # only what the reference itself says ("... N° 63-18 para el municipio de Algeciras -
                # departamento del Huila"), not the letter's dateline or letterhead around it
                a.chunks[cid] = ad.doc_id
                a.windows.setdefault(cid, [])
                if a.windows[cid] is not None:
                    a.windows[cid].append((s, e + FOLLOW_UP_WINDOW))
            if typ:
                _type_evidence(a, ad.doc_id, cid, typ)


def _mentions_by_chunk(
    mentions: Iterable[Mapping[str, Any]], keep: Callable[[Mapping[str, Any]], Any]
) -> dict[str, list[Mapping[str, Any]]]:
    """chunk_id → the mention rows for which ``keep(row)`` holds, in input order."""
    by_chunk: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for m in mentions:
        if keep(m):
            by_chunk[m["chunk_id"]].append(m)
    return by_chunk


def _inside(m: Mapping[str, Any], win: list[tuple[int, int]] | None) -> bool:
    """Whether a mention falls in a passage's counted windows (None: the whole passage)."""
    return win is None or "char_start" not in m or any(lo <= m["char_start"] < hi for lo, hi in win)


def _alert_mentions(
    a: _Alert,
    places_by_chunk: Mapping[str, list[Mapping[str, Any]]],
    groups_by_chunk: Mapping[str, list[Mapping[str, Any]]],
    place_names: Mapping[str, str],
) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """The alert's places (place_id → row) and armed-group ids from its counted passages/windows,
    recording a ``place``/``armed_group`` evidence item for each mention used."""
    places: dict[str, dict[str, Any]] = {}
    groups: set[str] = set()
    for cid, doc_id in a.chunks.items():
        win = a.windows.get(cid)
        for m in places_by_chunk.get(cid, ()):
            if not _inside(m, win):
                continue
            places.setdefault(
                m["place_id"],
                {
                    "place_id": m["place_id"],
                    "level": m["level"],
                    "code": m["code"],
                    "name": place_names.get(m["place_id"], m["code"]),
                    "department_code": m.get("department_code"),
                },
            )
            a.evidence.append({"doc_id": doc_id, "chunk_id": cid, "role": "place", "key": m["place_id"]})
        for m in groups_by_chunk.get(cid, ()):
            if not _inside(m, win):
                continue
            groups.add(m["entity_id"])
            a.evidence.append({"doc_id": doc_id, "chunk_id": cid, "role": "armed_group", "key": m["entity_id"]})
    return places, groups


def _alert_type(types: set[str]) -> str:
    """``unspecified`` (no statement), the one stated type, or ``conflicting``."""
    return "unspecified" if not types else (next(iter(types)) if len(types) == 1 else "conflicting")


def _unique_evidence(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evidence items without repeats of (doc_id, chunk_id, role, key), first occurrence kept."""
    seen = set()
    out = []
    for ev in evidence:
        k = (ev["doc_id"], ev["chunk_id"], ev["role"], ev["key"])
        if k not in seen:
            seen.add(k)
            out.append(ev)
    return out


def _alert_row(
    a: _Alert, places: dict[str, dict[str, Any]], groups: set[str], dates: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The ``early_warnings`` row of one alert; its date is its own document's publication date."""
    own = [d for d, role in a.docs.items() if role == "alert"]
    date_row = next((dates[d] for d in own if d in dates and dates[d].get("date")), None)
    n, yy = a.code.split("-")
    return {
        "alert_code": a.code,
        "alert_number": int(n),
        "code_year": 2000 + int(yy),
        "date": date_row["date"] if date_row else None,
        "date_rule": date_row["rule"] if date_row else None,
        "alert_type": _alert_type(a.types),
        "armed_groups": sorted(groups),
        "places": sorted(places.values(), key=lambda p: p["place_id"]),
        "department_codes": sorted(
            {
                p["department_code"]
                for p in places.values()
                if p["level"] in ("department", "municipality") and p["department_code"]
            }
        ),
        "documents": [{"doc_id": d, "role": r} for d, r in sorted(a.docs.items())],
        "evidence": _unique_evidence(a.evidence),
    }


def build_early_warnings(
    alert_docs: Iterable[AlertDoc],
    chunks_by_doc: Mapping[str, Sequence[tuple[str, str]]],
    place_mentions: Iterable[Mapping[str, Any]],
    entity_mentions: Iterable[Mapping[str, Any]],
    dates: Mapping[str, Mapping[str, Any]],
    place_names: Mapping[str, str],
    armed_group_ids: set[str],
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """``early_warnings`` rows and stats.

    ``chunks_by_doc``: doc_id → ``[(chunk_id, text)]`` in order (the alert collection only).
    ``place_mentions`` / ``entity_mentions``: current mention rows (dicts with ``chunk_id``,
    ``place_id``/``entity_id``, ``level``, ``code``, ``department_code``). ``dates``: doc_id →
    ``publication_dates`` row. ``place_names``: place_id → display name. ``armed_group_ids``: the
    dictionary's armed-group entity ids.
    """
    alerts: dict[str, _Alert] = {}
    stats = {
        "alert_documents": 0,
        "follow_up_documents": 0,
        "follow_ups_without_code": 0,
        "codes_mentioned_in_passing": 0,
    }
    for ad in alert_docs:
        chunks = list(chunks_by_doc.get(ad.doc_id, ()))
        if ad.role == "alert" and ad.code:
            stats["alert_documents"] += 1
            _collect_own_document(ad, chunks, alerts)
        else:
            stats["follow_up_documents"] += 1
            _collect_follow_up(ad, chunks, alerts, stats)

    places_by_chunk = _mentions_by_chunk(place_mentions, lambda m: m.get("place_id"))
    groups_by_chunk = _mentions_by_chunk(entity_mentions, lambda m: m["entity_id"] in armed_group_ids)
    rows = []
    for code in sorted(alerts):
        places, groups = _alert_mentions(alerts[code], places_by_chunk, groups_by_chunk, place_names)
        rows.append(_alert_row(alerts[code], places, groups, dates))
    stats["alerts"] = len(rows)
    for t in TYPES:
        stats[f"alerts_{t}"] = sum(1 for r in rows if r["alert_type"] == t)
    return rows, stats
