"""The claim rules: pure functions from precompute rows (and passage texts) to ``Claim`` objects.

Every rule cites the passage it read and a span that occurs in that passage's text
(``text[span_start:span_end] == span``); a claim whose evidence cannot be quoted is not made.

- ``presence_claims``: "<group> is present in <municipality>", one claim per (group,
  municipality, valid period) with at least one record declaring presence; each Amazon
  Underworld record is evidence: ``present`` supports, ``absent`` contradicts, ``no_info`` neither.
  Groups only denied somewhere make no claim (an absence is not asserted as a claim of its own).
- ``alert_claims``: from ``early_warnings``: "alert NNN-YY warns about <place>" (its date, its risk
  type as a qualifier), "alert NNN-YY is of risk type <imminent|structural>" (passages stating the
  other type contradict it) and "alert NNN-YY names <armed group>".
- ``phenomenon_claims``: "documents of <phenomenon> published in <year> name <entity>", one
  claim per (entity, phenomenon, year), the first mention of each document as evidence (at most
  ``MAX_DOCS_PER_CLAIM`` documents, highest authority and most recent first).

Valid time comes from the sources' own dates: a document's publication date (``publication_dates``,
file-name and inventory rules, never the text) bounds what it asserts to its publication period;
an alert holds from its date on. No date → valid time NULL (``valid_basis`` says ``undated``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from radar_pipeline.claims.model import Claim, Evidence
from radar_pipeline.claims.policy import authority_of
from radar_pipeline.precompute.alerts import find_code_references, find_type_statements
from radar_pipeline.precompute.presence import GROUPS, PresenceRecord, record_core

__all__ = [
    "DocInfo",
    "LocatedRecord",
    "period_of",
    "find_flexible",
    "window",
    "presence_claims",
    "alert_claims",
    "phenomenon_claims",
    "MAX_DOCS_PER_CLAIM",
    "RULES_VERSION",
]

RULES_VERSION = "claim-rules-1"
MAX_DOCS_PER_CLAIM = 20
WINDOW = 160  # characters each side of a mention the quoted span may extend to (to a sentence edge)
RISK_ES = {"imminent": "de inminencia", "structural": "estructural", "unspecified": "sin tipo declarado"}
RISK_ES["conflicting"] = "con tipo en disputa"
PHEN_ES = {
    "territorial": "dinámicas territoriales",
    "space_security": "seguridad espacial",
    "ai_military": "IA militar",
}


@dataclass(frozen=True)
class DocInfo:
    """What the rules need about a document: publication date (``YYYY[-MM[-DD]]`` or None), its
    collection (authority) and language."""

    doc_id: str
    date: str | None = None
    collection: str | None = None
    language: str | None = None


def period_of(date: str | None) -> tuple[dt.date | None, dt.date | None]:
    """The period a publication date covers: ``2023`` → 2023-01-01..2023-12-31, ``2023-05`` → the
    month, ``2023-05-04`` → the day; None/unparseable → (None, None)."""
    if not date:
        return None, None
    try:
        parts = [int(p) for p in date.split("-")]
        if len(parts) == 1:
            return dt.date(parts[0], 1, 1), dt.date(parts[0], 12, 31)
        if len(parts) == 2:
            y, m = parts
            nxt = dt.date(y + (m == 12), m % 12 + 1, 1)
            return dt.date(y, m, 1), nxt - dt.timedelta(days=1)
        d = dt.date(*parts[:3])
        return d, d
    except ValueError:
        return None, None


def find_flexible(text: str, quote: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``quote`` in ``text`` where any whitespace run matches any other
    (the presence quotes are whitespace-normalized); None when absent."""
    if not quote.strip():
        return None
    i = text.find(quote)
    if i >= 0:
        return i, i + len(quote)
    rx = r"\s+".join(re.escape(t) for t in quote.split())
    m = re.search(rx, text)
    return (m.start(), m.end()) if m else None


_EDGE = re.compile(r"(?<=[.!?;])\s+|\n")


def window(text: str, start: int, end: int, radius: int = WINDOW) -> tuple[int, int]:
    """A readable span around ``[start, end)``: up to ``radius`` characters each side, cut at the
    nearest sentence edge or line break, whitespace trimmed. Always contains ``[start, end)``."""
    lo = max(0, start - radius)
    edges = [m.end() for m in _EDGE.finditer(text, lo, start)]
    lo = edges[-1] if edges else lo
    hi = min(len(text), end + radius)
    m = _EDGE.search(text, end, hi)
    hi = m.start() if m else hi
    if not edges and lo > 0 and not text[lo - 1].isspace():  # cut inside a word: start at the next one
        nxt = re.compile(r"\s").search(text, lo, start)
        lo = nxt.end() if nxt else lo
    if not m and hi < len(text) and not text[hi].isspace():  # likewise at the end
        prev = text.rfind(" ", end, hi)
        hi = prev if prev > end else hi
    while lo < start and text[lo].isspace():
        lo += 1
    while hi > end and text[hi - 1].isspace():
        hi -= 1
    return lo, hi


def _evidence(
    doc: DocInfo, chunk_id: str, text: str, span: tuple[int, int], stance: str, rule: str, language: str | None
) -> Evidence:
    s, e = span
    return Evidence(
        doc_id=doc.doc_id,
        chunk_id=chunk_id,
        stance=stance,
        span=text[s:e],
        span_start=s,
        span_end=e,
        rule=rule,
        authority=authority_of(doc.collection),
        source_date=doc.date,
        language=language or doc.language,
        collection=doc.collection,
    )


def _dedup(evidence: Iterable[Evidence]) -> list[Evidence]:
    seen, out = set(), []
    for ev in evidence:
        if ev.key() not in seen:
            seen.add(ev.key())
            out.append(ev)
    return out


# ---------------------------------------------------------------------- presence
@dataclass(frozen=True)
class LocatedRecord:
    """A presence record and the passage that quotes it (``chunk_id`` None: not quotable)."""

    doc_id: str
    record: PresenceRecord
    chunk_for: Mapping[str, str | None]


def place_of_record(rec: PresenceRecord) -> str | None:
    """Canonical place id of a record: ``municipality:<DIVIPOLA>`` for Colombian P-codes
    (``CO18256`` → ``municipality:18256``), ``adm2:<P-code>`` elsewhere, ``adm2:<ISO>:<id>`` without one."""
    pcode = (rec.fields.get("b_ADM2_PCODE") or "").strip()
    if pcode.upper().startswith("CO") and pcode[2:].isdigit():
        return f"municipality:{pcode[2:]}"
    if pcode:
        return f"adm2:{pcode}"
    mid = rec.municipality_id
    return f"adm2:{mid}" if mid else None


def presence_claims(
    located: Iterable[LocatedRecord],
    docs: Mapping[str, DocInfo],
    chunk_text: Mapping[str, tuple[str, str | None]],
    group_names: Mapping[str, str],
) -> tuple[list[Claim], dict[str, int]]:
    """Presence claims (module docstring). ``chunk_text``: chunk_id → (text, language);
    ``group_names``: subject id → display name. Returns (claims, stats)."""
    stats: dict[str, int] = defaultdict(int)
    by_key: dict[tuple, dict[str, Any]] = {}
    for loc in located:
        place = place_of_record(loc.record)
        doc = docs.get(loc.doc_id, DocInfo(loc.doc_id))
        vf, vt = period_of(doc.date)
        for g, entity in GROUPS.items():
            state = loc.record.state(g)
            if state == "no_info":
                continue
            cid = loc.chunk_for.get(g)
            if place is None or cid is None or cid not in chunk_text:
                stats["records_unquotable"] += 1
                continue
            text, lang = chunk_text[cid]
            span = find_flexible(text, record_core(loc.record, g))
            if span is None:
                stats["span_not_found"] += 1
                continue
            subject = f"entity:{entity}" if entity else f"group:{g}"
            slot = by_key.setdefault(
                (subject, place, vf, vt),
                {"evidence": [], "rec": loc.record, "group": g},
            )
            stance = "supports" if state == "present" else "contradicts"
            slot["evidence"].append(_evidence(doc, cid, text, span, stance, f"armed_presence:{state}", lang))
    claims = []
    for (subject, place, vf, vt), slot in sorted(by_key.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2]))):
        ev = _dedup(slot["evidence"])
        if not any(e.stance == "supports" for e in ev):
            stats["denied_only"] += 1
            continue
        rec: PresenceRecord = slot["rec"]
        name = group_names.get(subject, slot["group"])
        where = ", ".join(x for x in (rec.level2, rec.level1, rec.country) if x)
        claims.append(
            Claim(
                subject=subject,
                predicate="present_in",
                object=place,
                statement=f"{name} tiene presencia declarada en {where}",
                valid_from=vf,
                valid_to=vt,
                valid_basis="publication_period" if vf else "undated",
                qualifiers={
                    "group_key": slot["group"],
                    "municipality": rec.level2,
                    "level1": rec.level1,
                    "country": rec.country,
                    "municipality_id": rec.municipality_id,
                },
                evidence=ev,
            )
        )
    stats["claims"] = len(claims)
    return claims, dict(stats)


# ---------------------------------------------------------------------- early warnings
def _first_mention_span(rows: Sequence[Mapping[str, Any]], key: str, value: str, text: str) -> tuple[int, int] | None:
    for m in rows:
        if m[key] == value and 0 <= m["char_start"] < m["char_end"] <= len(text):
            return window(text, m["char_start"], m["char_end"])
    return None


def _type_span(text: str, typ: str, code: str) -> tuple[int, int] | None:
    """Where a passage says the alert is of ``typ``: a typed reference to its code, else a type
    statement."""
    for c, t, s, e in find_code_references(text):
        if c == code and t == typ:
            return window(text, s, e)
    for t, s, e in find_type_statements(text):
        if t == typ:
            return window(text, s, e)
    return None


def _alert_when(row: Mapping[str, Any]) -> tuple[dt.date | None, str]:
    start, _ = period_of(row.get("date"))
    if start:
        return start, "alert_publication_date"
    return None, "undated"


def alert_claims(
    rows: Iterable[Mapping[str, Any]],
    docs: Mapping[str, DocInfo],
    chunk_text: Mapping[str, tuple[str, str | None]],
    place_mentions: Mapping[str, Sequence[Mapping[str, Any]]],
    entity_mentions: Mapping[str, Sequence[Mapping[str, Any]]],
    place_names: Mapping[str, str],
    entity_names: Mapping[str, str],
) -> tuple[list[Claim], dict[str, int]]:
    """Claims of the ``early_warnings`` rows (module docstring). ``place_mentions`` /
    ``entity_mentions``: chunk_id → mention rows (``place_id``/``entity_id``, ``char_start``,
    ``char_end``). Returns (claims, stats)."""
    stats: dict[str, int] = defaultdict(int)
    claims: list[Claim] = []
    for row in rows:
        code = row["alert_code"]
        subject = f"alert:{code}"
        vf, basis = _alert_when(row)
        risk = row["alert_type"]
        places: dict[str, list[Evidence]] = defaultdict(list)
        groups: dict[str, list[Evidence]] = defaultdict(list)
        types: dict[str, list[tuple[DocInfo, str, str, tuple[int, int], str | None]]] = defaultdict(list)
        for item in row["evidence"]:
            cid = item.get("chunk_id")
            if not cid or cid not in chunk_text:
                stats["evidence_chunk_missing"] += 1
                continue
            text, lang = chunk_text[cid]
            doc = docs.get(item["doc_id"], DocInfo(item["doc_id"]))
            if item["role"] == "place":
                span = _first_mention_span(place_mentions.get(cid, ()), "place_id", item["key"], text)
                if span:
                    places[item["key"]].append(
                        _evidence(doc, cid, text, span, "supports", "early_warnings:place", lang)
                    )
            elif item["role"] == "armed_group":
                span = _first_mention_span(entity_mentions.get(cid, ()), "entity_id", item["key"], text)
                if span:
                    groups[item["key"]].append(
                        _evidence(doc, cid, text, span, "supports", "early_warnings:armed_group", lang)
                    )
            elif item["role"] == "type":
                span = _type_span(text, item["key"], code)
                if span:
                    types[item["key"]].append((doc, cid, text, span, lang))
        common = {"alert_code": code, "alert_date": row.get("date"), "risk_type": risk}
        for pid, ev in sorted(places.items()):
            pname = place_names.get(pid, pid)
            claims.append(
                Claim(
                    subject,
                    "early_warning_for",
                    pid,
                    f"La Defensoría del Pueblo emitió la alerta temprana {code} ({RISK_ES.get(risk, risk)}) "
                    f"para {pname}" + (f", fechada {row['date']}" if row.get("date") else ""),
                    vf,
                    None,
                    basis,
                    {**common, "place_name": pname},
                    _dedup(ev),
                )
            )
        for eid, ev in sorted(groups.items()):
            claims.append(
                Claim(
                    subject,
                    "alert_names_group",
                    f"entity:{eid}",
                    f"La alerta temprana {code} nombra a {entity_names.get(eid, eid)}",
                    vf,
                    None,
                    basis,
                    dict(common),
                    _dedup(ev),
                )
            )
        for typ in sorted(types):
            ev = [_evidence(d, c, t, s, "supports", "early_warnings:type", lg) for d, c, t, s, lg in types[typ]]
            for other, items in types.items():
                if other != typ:
                    ev += [_evidence(d, c, t, s, "contradicts", "early_warnings:type", lg) for d, c, t, s, lg in items]
            claims.append(
                Claim(
                    subject,
                    "alert_risk_type",
                    f"risk:{typ}",
                    f"La alerta temprana {code} es {RISK_ES.get(typ, typ)}",
                    vf,
                    None,
                    basis,
                    dict(common),
                    _dedup(ev),
                )
            )
    stats["claims"] = len(claims)
    return claims, dict(stats)


# ---------------------------------------------------------------------- entity × phenomenon × period
def phenomenon_claims(
    mentions: Iterable[Mapping[str, Any]],
    docs: Mapping[str, DocInfo],
    chunk_text: Mapping[str, tuple[str, str | None]],
    entity_names: Mapping[str, str],
) -> tuple[list[Claim], dict[str, int]]:
    """ "Documents of <phenomenon> published in <year> name <entity>" (module docstring).

    ``mentions``: ``entity_mentions`` rows (``entity_id``, ``doc_id``, ``chunk_id``,
    ``char_start``, ``char_end``, ``phenomenon``, ``language``) in passage order; ``chunk_text``
    must hold the chunks of the chosen evidence (``select_phenomenon_evidence``)."""
    stats: dict[str, int] = defaultdict(int)
    chosen = select_phenomenon_evidence(mentions, docs)
    claims = []
    for (eid, phen, year), rows in sorted(chosen.items()):
        ev = []
        for m in rows:
            if m["chunk_id"] not in chunk_text:
                stats["evidence_chunk_missing"] += 1
                continue
            text, lang = chunk_text[m["chunk_id"]]
            if not (0 <= m["char_start"] < m["char_end"] <= len(text)):
                stats["mention_out_of_range"] += 1
                continue
            span = window(text, m["char_start"], m["char_end"])
            doc = docs.get(m["doc_id"], DocInfo(m["doc_id"]))
            ev.append(_evidence(doc, m["chunk_id"], text, span, "supports", "entity_mentions", lang))
        if not ev:
            continue
        vf, vt = dt.date(year, 1, 1), dt.date(year, 12, 31)
        name = entity_names.get(eid, eid)
        claims.append(
            Claim(
                f"entity:{eid}",
                "figures_in_phenomenon",
                f"phenomenon:{phen}",
                f"Documentos de {PHEN_ES.get(phen, phen)} publicados en {year} nombran a {name}",
                vf,
                vt,
                "publication_year",
                {"entity_name": name, "year": year, "n_documents_total": rows[0]["_n_docs"]},
                ev,
            )
        )
    stats["claims"] = len(claims)
    return claims, dict(stats)


def select_phenomenon_evidence(
    mentions: Iterable[Mapping[str, Any]], docs: Mapping[str, DocInfo]
) -> dict[tuple[str, str, int], list[dict[str, Any]]]:
    """(entity_id, phenomenon, year) → the first mention of each dated document (at most
    ``MAX_DOCS_PER_CLAIM``: highest authority, most recent, then doc_id); each row gets ``_n_docs``,
    the number of documents before the cap."""
    first: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for m in mentions:
        doc = docs.get(m["doc_id"])
        start, _ = period_of(doc.date if doc else None)
        if start is None or not m.get("phenomenon"):
            continue
        first[(m["entity_id"], m["phenomenon"], start.year)].setdefault(m["doc_id"], dict(m))
    out = {}
    for key, by_doc in first.items():
        ranked = sorted(
            by_doc.values(),
            key=lambda m: (-authority_of(docs[m["doc_id"]].collection), _neg(docs[m["doc_id"]].date), m["doc_id"]),
        )[:MAX_DOCS_PER_CLAIM]
        for m in ranked:
            m["_n_docs"] = len(by_doc)
        out[key] = ranked
    return out


def _neg(date: str | None) -> str:
    """Sort key putting the most recent date first."""
    return "".join(chr(0x10FFFF - ord(c)) for c in (date or ""))
