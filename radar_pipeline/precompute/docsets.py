"""Document sets the views narrow rows by: documents naming an entity or a place, published in
a period, of a phenomenon — each a ``set`` of ``doc_id`` read from the precompute tables, only of
the collections the caller may read. Used by the dashboard (``api/dashboard``) and the agent's
figures (``agent/roles/figures.py``) through ``views.Views``; moved here from ``api/dashboard/data`` so
both read the one definition.

An entity filter is an ``entity_id`` or a country (``country:CHN``, ``is_country``): a country
narrows by the documents naming it."""

from __future__ import annotations

import re
from collections.abc import Iterable

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.places.subregions import is_place_set, municipalities_of, subregions
from radar_pipeline.precompute.reader import PLACE_ID, NotMaterialized, PrecomputeReader, current

COUNTRY_ID = re.compile(r"^country:[A-Z]{3}$")


def is_country(entity: str | None) -> bool:
    """Whether an entity filter value is a country (``country:<ISO3>``) rather than a dictionary id."""
    return bool(entity and COUNTRY_ID.match(entity))


def place_names(reader: PrecomputeReader, place_ids: list[str]) -> dict[str, dict]:
    """``{place_id: {name, level, department_name}}`` for the ids the current gazetteer has (others
    are left out; empty when it is not materialized). A subregion is named from the subregions file
    (``{name, level: "subregion", department_name: None, municipios: [ids]}``), a list of
    municipality ids by its members' names, the same shape."""
    out: dict[str, dict] = {}
    for p in place_ids:
        if p in subregions():
            sub = subregions()[p]
            out[p] = {
                "name": sub.label,
                "level": "subregion",
                "department_name": None,
                "municipios": list(sub.municipalities),
            }
    # a list of municipalities ("municipality:19318,municipality:19809", a region the question
    # defined by its members) is named by its members: "Guapi, Timbiquí y López de Micay"
    lists = {p: municipalities_of(p) or () for p in place_ids if is_place_set(p) and p not in out}
    ids = [p for p in place_ids if p and PLACE_ID.match(p) and not is_place_set(p)]
    ids += [m for members in lists.values() for m in members if m not in ids]
    if not ids:
        return out
    t = T.place_gazetteer
    stmt = sa.select(t.c.place_id, t.c.level, t.c.name, t.c.department_name).where(t.c.place_id.in_(ids), current(t))
    try:
        found = {r.pop("place_id"): r for r in reader.rows(stmt, t)}
    except NotMaterialized:
        return out
    for p, members in lists.items():
        names = [found[m]["name"] for m in members if m in found]
        if names and len(names) == len(members):
            name = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " y " + names[-1]
            out[p] = {"name": name, "level": "subregion", "department_name": None, "municipios": list(members)}
    wanted = set(place_ids)
    return {**out, **{k: v for k, v in found.items() if k in wanted}}


class DocSets:
    """Document sets over one reader, of the collections ``scope`` may read (None: all). Methods
    raise ``NotMaterialized`` for missing tables."""

    def __init__(self, reader: PrecomputeReader, scope: AccessScope | None = None):
        self.reader = reader
        self.scope = scope

    def naming_entity(self, entity_id: str) -> set[str]:
        """Documents with a current mention of ``entity_id``; for a country as the entity
        (``country:CHN``, see ``places.is_country``) the documents naming that country."""
        if is_country(entity_id):
            return self.naming_place(entity_id)
        t = self.reader.scoped(T.entity_mentions, self.scope)
        stmt = sa.select(t.c.doc_id).distinct().where(t.c.entity_id == entity_id, current(t))
        return {r["doc_id"] for r in self.reader.rows(stmt, T.entity_mentions)}

    def naming_place(self, place_id: str) -> set[str]:
        """Documents naming the place or a place inside it: the evidence of its map row (scope ``all``);
        ``place_id`` is a country, department or municipality id, or a place set (a subregion: the
        documents naming any of its municipalities); empty set when nothing names it."""
        t = self.reader.scoped(T.agg_documents_per_place, self.scope)
        ids = list(municipalities_of(place_id) or ()) if is_place_set(place_id) else [place_id]
        stmt = sa.select(t.c.evidence).where(t.c.place_id.in_(ids), t.c.phenomenon == "all", current(t))
        return {e.get("doc_id") for r in self.reader.rows(stmt, T.agg_documents_per_place) for e in r["evidence"]}

    def in_period(self, f: Filters) -> set[str]:
        """Documents whose source-metadata publication year lies in ``f``'s year range."""
        t = self.reader.scoped(T.publication_dates, self.scope)
        conds = [t.c.year.is_not(None), current(t)]
        if f.year_from is not None:
            conds.append(t.c.year >= f.year_from)
        if f.year_to is not None:
            conds.append(t.c.year <= f.year_to)
        stmt = sa.select(t.c.doc_id).distinct().where(*conds)
        return {r["doc_id"] for r in self.reader.rows(stmt, T.publication_dates)}

    def of_phenomenon(self, phenomenon: str) -> set[str]:
        """Documents of the corpus classified under ``phenomenon``."""
        d = db.documents
        stmt = sa.select(d.c.doc_id).where(
            d.c.phenomenon == phenomenon, self.reader.in_scope(d.c.collection, self.scope)
        )
        return {r["doc_id"] for r in self.reader.rows(stmt)}

    def docset(self, f: Filters, use: Iterable[str]) -> tuple[set[str] | None, list[str]]:
        """Intersection of the document sets of the filters named in ``use`` that are set
        (``fenomeno``, ``periodo``, ``entidad``, ``lugar``: the labels the views report in
        ``narrowed_by``) and those labels; ``(None, [])`` when none applies."""
        sets, applied = [], []
        use = set(use)
        if "fenomeno" in use and f.phenomenon:
            sets.append(self.of_phenomenon(f.phenomenon))
            applied.append("fenomeno")
        if "periodo" in use and f.period:
            sets.append(self.in_period(f))
            applied.append("periodo")
        if "entidad" in use and f.entity:
            sets.append(self.naming_entity(f.entity))
            applied.append("entidad")
        if "lugar" in use and f.place:
            sets.append(self.naming_place(f.place))
            applied.append("lugar")
        if not sets:
            return None, []
        out = sets[0]
        for s in sets[1:]:
            out = out & s
        return out, applied


def narrow(evidence: list[dict], docs: set[str] | None) -> list[dict]:
    """The evidence items whose document is in ``docs`` (all of them when ``docs`` is None)."""
    if docs is None:
        return evidence
    return [e for e in evidence if e.get("doc_id") in docs]
