"""Resolution of the agent's filter values to the dashboard's ids: a Spanish name of an armed group
or country, a folded department or municipality name, or a dashboard id → a dictionary
``entity_id`` / gazetteer ``place_id``, with the names the page shows for the ids. The lookups
themselves are the precompute reader's (``find_entity``, ``find_place``, ``has_place``), over the
current dictionary and gazetteer tables.

An entity filter is an ``entity_id`` or a country (``country:CHN``): the agent's visualizer puts
a country in ``entidad`` when it is an actor of the question, and the dashboard narrows by the
documents naming it (``docsets.DocSets.naming_entity``); a country that is the territory of the map
of places ("¿dónde se nombra a Venezuela?") comes as ``lugar``."""

from __future__ import annotations

import re
from typing import Any

from radar_pipeline.precompute.docsets import COUNTRY_ID, is_country, place_names  # noqa: F401 - re-exported
from radar_pipeline.precompute.places.subregions import is_place_set, municipalities_of
from radar_pipeline.precompute.reader import PLACE_ID, PrecomputeReader
from radar_pipeline.textfold import fold_phrase

ENTITY_ID = re.compile(r"^(?:[a-z0-9_]{1,80}|country:[A-Z]{3})$")
_BOGOTA = ("bogota", "bogota d.c.", "bogota, d.c.")


def resolve(reader: PrecomputeReader, entidad: str | None, lugar: str | None) -> dict:
    """``{"entidad": entity_id | None, "lugar": place_id | None, "entidad_como_lugar": place_id | None,
    "nombres": {place_id: {name, level, department_name}}}``. A country id (``country:CHN``) or an
    entity name that is no dictionary entry but a country's name is returned in
    ``entidad_como_lugar`` (the page uses it as the entity filter); ``lugar`` may be a country,
    department or municipality id, a subregion id (``subregion:catatumbo``) or name (names: departments first, then countries, then
    municipalities — the agent sends ids, names are a fallback). Unknown values (or tables not
    materialized) → ``None``; ``nombres`` names the places returned."""
    out: dict[str, Any] = {"entidad": None, "lugar": None, "entidad_como_lugar": None}
    if entidad and PLACE_ID.match(entidad):  # a country chosen by the agent: "country:CHN"
        out["entidad_como_lugar"] = entidad if entidad.startswith("country:") and reader.has_place(entidad) else None
    elif entidad:
        out["entidad"] = reader.find_entity(entidad)
        if out["entidad"] is None:
            out["entidad_como_lugar"] = reader.find_place(fold_phrase(entidad), ("country",))
    if lugar:
        if is_place_set(lugar):  # a subregion, or municipality ids joined by ","
            members = municipalities_of(lugar)
            out["lugar"] = lugar if members and all(reader.has_place(m) for m in members[:1] + members[-1:]) else None
        elif PLACE_ID.match(lugar):
            out["lugar"] = lugar if reader.has_place(lugar) else None
        else:
            key = fold_phrase(lugar)
            out["lugar"] = (
                "department:11" if key in _BOGOTA else reader.find_place(key, ("department", "country", "municipality"))
            )
    out["nombres"] = place_names(reader, [p for p in (out["lugar"], out["entidad_como_lugar"]) if p])
    return out
