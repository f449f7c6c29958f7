"""Resolution of the agent's filter values to the dashboard's ids: a Spanish name of an armed group
or country, a folded department name, or a dashboard id → a dictionary ``entity_id`` / gazetteer
``place_id``. The lookups themselves are the precompute reader's (``find_entity``,
``find_place``, ``has_place``), over the current dictionary and gazetteer tables."""

from __future__ import annotations

import re
from typing import Any

from radar_pipeline.precompute.reader import PLACE_ID, PrecomputeReader
from radar_pipeline.textfold import fold_phrase

ENTITY_ID = re.compile(r"^[a-z0-9_]{1,80}$")
_BOGOTA = ("bogota", "bogota d.c.", "bogota, d.c.")


def resolve(reader: PrecomputeReader, entidad: str | None, lugar: str | None) -> dict:
    """``{"entidad": entity_id | None, "lugar": place_id | None, "entidad_como_lugar": place_id | None}``;
    an entity name that is no dictionary entry may be a country (``entidad_como_lugar``). Unknown
    values (or tables not materialized) → ``None``."""
    out: dict[str, Any] = {"entidad": None, "lugar": None, "entidad_como_lugar": None}
    if entidad and PLACE_ID.match(entidad):  # a country chosen by the agent: "country:CHN"
        out["entidad_como_lugar"] = entidad if reader.has_place(entidad) else None
    elif entidad:
        out["entidad"] = reader.find_entity(entidad)
        if out["entidad"] is None:
            out["entidad_como_lugar"] = reader.find_place(fold_phrase(entidad), ("country",))
    if lugar:
        if PLACE_ID.match(lugar):
            out["lugar"] = lugar if reader.has_place(lugar) else None
        else:
            key = fold_phrase(lugar)
            out["lugar"] = "department:11" if key in _BOGOTA else reader.find_place(key, ("department", "country"))
    return out
