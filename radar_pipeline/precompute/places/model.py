"""Gazetteer entries and the place names found in a passage."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Place", "PlaceHit"]


@dataclass(frozen=True)
class Place:
    """A gazetteer entry. ``place_id`` = ``<level>:<code>``; ``country_code`` is ISO alpha-3."""

    place_id: str
    level: str
    code: str
    name: str
    country_code: str
    department_code: str | None = None
    department_name: str | None = None
    iso2: str | None = None
    aliases: tuple[tuple[str, str], ...] = ()
    context_required: bool = False
    has_shape: bool = False
    shape_source: str | None = None

    @property
    def is_colombian_subdivision(self) -> bool:
        return self.level in ("department", "municipality")


@dataclass(frozen=True)
class PlaceHit:
    """A place name in a passage. ``place`` is None when unresolved; ``candidates`` are place_ids."""

    place: Place | None
    start: int
    end: int
    matched: str
    resolution: str
    candidates: tuple[str, ...]
