"""Armed-group presence per municipality from Amazon Underworld records found in the corpus text.

The records arrive as text (a CSV/JSON record rendered as ``field: value`` lines by ingestion, or
the Codefest extraction of the map tiles: ``capa: au_compilado_R02, fid: 858, b_ADM2_PCODE:
CO18256, ..., au_eln: FALSO, ..., au_no_info: FALSO``, records separated by blank lines). Two
field layouts exist and both are read:

- ``au_<group>`` flags with ``VERDADERO``/``VERDADEIRO``/``FALSO`` (also TRUE/FALSE, SI/NO, 1/0),
  plus ``au_no_info``;
- ``grupo_<Group>`` flags with ``SI``/``NO`` plus ``au_no_info``.

Three states per municipality and group — never two:
``present`` (the flag says so), ``absent`` (the flag says no *and* the record does not say "no
information"), ``no_info`` (``au_no_info`` is true, or the flag is missing/unreadable). A record
with no presence field at all (boundary-only layers) is not a presence record.

Deduplication is by municipality id (``b_ADM2_PCODE``; ``country:au_ID_concatenated`` when
missing): a group is ``present`` if any record declares it, else ``absent`` if any record denies
it, else ``no_info``; the per-state record counts stay in the row so disagreements are visible.
Presence is declared presence, not intensity: no score is derived.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "PresenceRecord",
    "parse_records",
    "parse_flag",
    "group_key_for",
    "GROUPS",
    "ShapeIndex",
    "build_shape_index",
    "aggregate_presence",
    "record_core",
    "STATES",
    "Located",
]

STATES = ("present", "absent", "no_info")
# group key → entity id of the dictionary (None: "others", no single entity)
GROUPS: dict[str, str | None] = {
    "cdf": "comandos_de_la_frontera",
    "emc": "emc",
    "embf": "embf",
    "seg_marq": "segunda_marquetalia",
    "eln": "eln",
    "lobos": "los_lobos",
    "choneros": "los_choneros",
    "cv": "comando_vermelho",
    "pcc": "pcc",
    "others": None,
}
_GROUP_ALIASES = {
    "cdf": "cdf",
    "c_d_f": "cdf",
    "cdf_agc": "cdf",
    "emc": "emc",
    "embf": "embf",
    "seg_marq": "seg_marq",
    "seg_marquetalia": "seg_marq",
    "segunda_marquetalia": "seg_marq",
    "eln": "eln",
    "lobos": "lobos",
    "los_lobos": "lobos",
    "choneros": "choneros",
    "los_choneros": "choneros",
    "cv": "cv",
    "pcc": "pcc",
    "others": "others",
    "otros": "others",
}
_TRUE = {"verdadero", "verdadeiro", "true", "si", "sí", "sim", "yes", "1", "t", "y", "s"}
_FALSE = {"falso", "false", "no", "não", "nao", "0", "f", "n"}
_COUNTRY = {
    "colombia": "COL",
    "brasil": "BRA",
    "brazil": "BRA",
    "peru": "PER",
    "perú": "PER",
    "ecuador": "ECU",
    "venezuela": "VEN",
    "bolivia": "BOL",
    "guyana": "GUY",
    "suriname": "SUR",
}
_PCODE_COUNTRY = {
    "CO": "COL",
    "BR": "BRA",
    "PE": "PER",
    "EC": "ECU",
    "VE": "VEN",
    "BO": "BOL",
    "GY": "GUY",
    "SR": "SUR",
}
# a field starts a record line or follows ", " and has one of the Amazon Underworld prefixes
_FIELD = re.compile(
    r"(?:(?<=^)|(?<=\n)|(?<=, ))((?:capa|fid|tile_\w+|b_[A-Za-z0-9_]+|au_[A-Za-z0-9_. ]+?|grupo_\w+|"
    r"grupos_\w+|total_grupos_presentes)):[ \t]?"
)
_BLOCK_SPLIT = re.compile(r"\n[ \t]*\n")


def parse_flag(value: str | None) -> bool | None:
    """VERDADERO/VERDADEIRO/TRUE/SI/1 → True, FALSO/FALSE/NO/0 → False, anything else → None."""
    if value is None:
        return None
    v = value.strip().strip('"').strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    return None


def group_key_for(field_name: str) -> str | None:
    """``au_eln`` / ``grupo_ELN`` → ``eln``; ``au_c_d_f`` / ``grupo_CDF_AGC`` → ``cdf``; else None."""
    f = field_name.strip().lower()
    for prefix in ("au_", "grupo_"):
        if f.startswith(prefix):
            return _GROUP_ALIASES.get(f[len(prefix) :])
    return None


@dataclass
class PresenceRecord:
    """One parsed record: its fields, where it sits in the page text, and the group flags."""

    fields: dict[str, str]
    start: int
    end: int
    text: str
    page_no: int = 1
    flags: dict[str, bool | None] = field(default_factory=dict)
    no_info: bool | None = None
    field_spans: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def municipality_id(self) -> str | None:
        code = (self.fields.get("b_ADM2_PCODE") or "").strip()
        if code:
            return code
        cid = (self.fields.get("au_ID_concatenated") or self.fields.get("b_ID_concatenated") or "").strip()
        return f"{self.country or 'UNK'}:{cid}" if cid else None

    @property
    def country(self) -> str | None:
        c = (self.fields.get("au_country") or "").strip().lower()
        if c in _COUNTRY:
            return _COUNTRY[c]
        code = (self.fields.get("b_ADM2_PCODE") or self.fields.get("b_ADM1_PCODE") or "").strip()
        return _PCODE_COUNTRY.get(code[:2].upper()) if code else None

    @property
    def level1(self) -> str | None:
        for k in ("au_level1", "b_ADM1_ES", "b_ADM1_PT", "b_adm1_geral"):
            if self.fields.get(k, "").strip():
                return self.fields[k].strip()
        return None

    @property
    def level2(self) -> str | None:
        for k in ("au_level2", "b_ADM2_ES", "b_ADM2_PT", "b_adm2_geral"):
            if self.fields.get(k, "").strip():
                return self.fields[k].strip()
        return None

    def state(self, group: str) -> str:
        """``present`` / ``absent`` / ``no_info`` for one group key."""
        flag = self.flags.get(group)
        if flag is True:
            return "present"
        if flag is False and self.no_info is not True:
            return "absent"
        return "no_info"


def record_core(rec: PresenceRecord, group: str) -> str:
    """The slice of the record text that proves the state of ``group``: from the municipality code
    field through the group flag (or ``au_no_info``), whitespace-normalized. Used as the quote
    that the cited passage must contain."""
    start_keys = [k for k in ("b_ADM2_PCODE", "au_ID_concatenated", "b_ID_concatenated") if k in rec.field_spans]
    start = min((rec.field_spans[k][0] for k in start_keys), default=0)
    ends = []
    for k, (_s, e) in rec.field_spans.items():
        if group_key_for(k) == group or (rec.state(group) == "no_info" and k.lower() == "au_no_info"):
            ends.append(e)
    end = max(ends) if ends else max((e for s, e in rec.field_spans.values() if s >= start), default=len(rec.text))
    lo, hi = min(start, end), max(start, end)
    return " ".join(rec.text[lo:hi].split())


def parse_records(text: str, page_no: int = 1) -> list[PresenceRecord]:
    """Presence records in one page text (blocks separated by blank lines).

    Blocks without any presence field (no ``au_no_info`` and no group flag) are skipped. Field
    spans are relative to the block (``PresenceRecord.text``); ``start``/``end`` locate the block
    in ``text``.
    """
    out: list[PresenceRecord] = []
    pos = 0
    blocks: list[tuple[int, str]] = []
    for m in _BLOCK_SPLIT.finditer(text):
        blocks.append((pos, text[pos : m.start()]))
        pos = m.end()
    blocks.append((pos, text[pos:]))
    for offset, block in blocks:
        if "au_" not in block and "grupo_" not in block:
            continue
        matches = list(_FIELD.finditer(block))
        if not matches:
            continue
        fields: dict[str, str] = {}
        spans: dict[str, tuple[int, int]] = {}
        for i, m in enumerate(matches):
            key = m.group(1).strip()
            vend = matches[i + 1].start() if i + 1 < len(matches) else len(block)
            value = block[m.end() : vend]
            if value.endswith(", "):
                value = value[:-2]
            value = value.rstrip().rstrip(",")
            fields.setdefault(key, value)
            spans.setdefault(key, (m.start(), m.end() + len(value)))
        flags = {}
        for k, v in fields.items():
            g = group_key_for(k)
            if g:
                flags[g] = parse_flag(v)
        no_info = parse_flag(fields.get("au_no_info")) if "au_no_info" in fields else None
        if not flags and "au_no_info" not in fields:
            continue
        out.append(PresenceRecord(fields, offset, offset + len(block), block, page_no, flags, no_info, spans))
    return out


# ---------------------------------------------------------------------- shapes
def _norm_name(name: str) -> str:
    base = unicodedata.normalize("NFD", name.lower())
    base = "".join(c for c in base if unicodedata.category(c) != "Mn")
    return re.sub(r"[^a-z0-9]+", " ", base).strip()


@dataclass
class ShapeIndex:
    """Municipal boundaries available in ``../shared/geo``: Colombia (MGN 2018, DIVIPOLA code) and
    Peru (provinces, ``IDPROV``). ``by_code`` maps (country, code) → shape key; ``by_name`` maps
    (country, normalized department name, normalized municipality name) → shape key."""

    by_code: dict[tuple[str, str], str]
    by_name: dict[tuple[str, str, str], str]
    dept_names: dict[tuple[str, str], str]

    def match(
        self, country: str | None, pcode: str | None, level1: str | None, level2: str | None
    ) -> tuple[str, str | None]:
        """``(shape_match, shape_key)``: ``code`` first, then ``name`` within the department, else ``none``."""
        if country and pcode:
            code = pcode[2:] if pcode[:2].isalpha() else pcode
            key = self.by_code.get((country, code))
            if key:
                return "code", key
        if country and level1 and level2:
            dept = _norm_name(level1)
            if country == "COL" and pcode and pcode[:2].isalpha() and len(pcode) >= 4:
                dept = self.dept_names.get((country, pcode[2:4]), dept)
            key = self.by_name.get((country, dept, _norm_name(level2)))
            if key:
                return "name", key
        return "none", None


def build_shape_index(geo_dir: str | Path) -> ShapeIndex:
    """Index ``co_2018_MGN_MPIO_POLITICO.geojson`` and ``peru_provincial_simple.geojson`` (when present)."""
    geo = Path(geo_dir)
    by_code: dict[tuple[str, str], str] = {}
    by_name: dict[tuple[str, str, str], str] = {}
    dept_names: dict[tuple[str, str], str] = {}
    co = geo / "co_2018_MGN_MPIO_POLITICO.geojson"
    if co.is_file():
        for f in json.loads(co.read_text(encoding="utf-8"))["features"]:
            p = f["properties"]
            key = f"co_2018_MGN_MPIO_POLITICO:{p['MPIO_CCNCT']}"
            by_code[("COL", p["MPIO_CCNCT"])] = key
            by_name[("COL", _norm_name(p["DPTO_CNMBR"]), _norm_name(p["MPIO_CNMBR"]))] = key
            dept_names[("COL", p["DPTO_CCDGO"])] = _norm_name(p["DPTO_CNMBR"])
    pe = geo / "peru_provincial_simple.geojson"
    if pe.is_file():
        for f in json.loads(pe.read_text(encoding="utf-8"))["features"]:
            p = f["properties"]
            key = f"peru_provincial_simple:{p['FIRST_IDPR']}"
            by_code[("PER", p["FIRST_IDPR"])] = key
            by_name[("PER", _norm_name(p["FIRST_NOMB"]), _norm_name(p["NOMBPROV"]))] = key
    return ShapeIndex(by_code, by_name, dept_names)


# ---------------------------------------------------------------------- aggregation
@dataclass
class Located:
    """A record with where it was read: the document, and the chunk that quotes it (or why none)."""

    doc_id: str
    record: PresenceRecord
    chunk_for: Mapping[str, str | None]  # group → chunk_id
    reason: str | None = None


def aggregate_presence(
    located: Iterable[Located], shapes: ShapeIndex, groups: Sequence[str] = tuple(GROUPS)
) -> list[dict[str, Any]]:
    """``armed_presence`` rows: one per (municipality, group), deduplicated by municipality id.

    Evidence items are ``{"doc_id", "chunk_id", "quote"}`` (``chunk_id`` None plus ``reason`` when
    the record could not be quoted from a passage, e.g. beyond the tabular chunk cap).
    """
    by_muni: dict[str, list[Located]] = defaultdict(list)
    for loc in located:
        mid = loc.record.municipality_id
        if mid:
            by_muni[mid].append(loc)
    rows = []
    for mid in sorted(by_muni):
        locs = by_muni[mid]
        rec0 = locs[0].record
        country = next((loc.record.country for loc in locs if loc.record.country), None)
        level1 = next((loc.record.level1 for loc in locs if loc.record.level1), None)
        level2 = next((loc.record.level2 for loc in locs if loc.record.level2), None)
        pcode = (rec0.fields.get("b_ADM2_PCODE") or "").strip() or None
        divipola = pcode[2:] if pcode and pcode.upper().startswith("CO") else None
        shape_match, shape_key = shapes.match(country, pcode, level1, level2)
        for g in groups:
            states = [loc.record.state(g) for loc in locs]
            n = {s: states.count(s) for s in STATES}
            state = "present" if n["present"] else ("absent" if n["absent"] else "no_info")
            evidence = []
            seen = set()
            for loc in locs:
                if loc.record.state(g) != state:
                    continue
                item = {"doc_id": loc.doc_id, "chunk_id": loc.chunk_for.get(g), "quote": record_core(loc.record, g)}
                if item["chunk_id"] is None:
                    item["reason"] = loc.reason or "record_not_in_a_single_passage"
                k = (item["doc_id"], item["chunk_id"], item["quote"])
                if k not in seen:
                    seen.add(k)
                    evidence.append(item)
            rows.append(
                {
                    "municipality_id": mid,
                    "country": country,
                    "level1": level1,
                    "level2": level2,
                    "divipola_code": divipola,
                    "group_key": g,
                    "entity_id": GROUPS.get(g),
                    "state": state,
                    "n_records": len(locs),
                    "n_present": n["present"],
                    "n_absent": n["absent"],
                    "n_no_info": n["no_info"],
                    "shape_match": shape_match,
                    "shape_key": shape_key,
                    "evidence": evidence,
                }
            )
    return rows
