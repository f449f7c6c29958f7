"""Subregions as sets of municipalities: ``data/subregions.yaml`` (the 16 PDET subregions of
Decreto Ley 893 de 2017 and their 170 DIVIPOLA municipalities).

A subregion is a place filter value of its own, ``subregion:<id>`` (``subregion:catatumbo``), that
every reader of the precomputes expands to its municipalities (:func:`place_members`); a list of
municipality ids (``municipality:54810,municipality:54001``) is read the same way. It is no
gazetteer entry: passages are never matched against subregion names (the place mentions stay
departments and municipalities), only questions and filters are.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from radar_pipeline.textfold import fold_phrase

__all__ = [
    "SUBREGIONS_PATH",
    "Subregion",
    "load_subregions",
    "subregions",
    "place_members",
    "is_place_set",
    "municipalities_of",
    "PLACE_SET",
]

SUBREGIONS_PATH = Path(__file__).parent.parent / "data" / "subregions.yaml"
_MUNI = re.compile(r"^municipality:\d{5}$")
# a place filter that stands for several municipalities: a subregion id, or municipality ids joined by ","
PLACE_SET = re.compile(r"^(?:subregion:[a-z_]{2,60}|municipality:\d{5}(?:,municipality:\d{5}){1,199})$")


@dataclass(frozen=True)
class Subregion:
    """One subregion: ``place_id`` ``subregion:<id>``, ``label`` (its official name), ``names``
    (folded, how a question names it), ``municipalities`` (``municipality:<DIVIPOLA>`` ids, in the
    file's order), ``source`` (the document that defines it)."""

    place_id: str
    label: str
    names: tuple[str, ...]
    municipalities: tuple[str, ...]
    source: str

    @property
    def level(self) -> str:
        """``"subregion"`` (a place filter's level, as ``Place.level``)."""
        return "subregion"

    @property
    def department_codes(self) -> frozenset[str]:
        """The DIVIPOLA department codes (2 digits) its municipalities lie in."""
        return frozenset(m.split(":")[1][:2] for m in self.municipalities)


def load_subregions(path: str | Path | None = None) -> dict[str, Subregion]:
    """``place_id → Subregion`` from ``subregions.yaml`` (default: the bundled file). Raises
    ``ValueError`` on a file without version, a subregion without municipalities or a code that is
    not five digits (whether each code exists in DIVIPOLA is the tests' check: this module does not
    read the gazetteer)."""
    data = yaml.safe_load(Path(path or SUBREGIONS_PATH).read_text(encoding="utf-8")) or {}
    if not data.get("version"):
        raise ValueError("subregions.yaml has no version")
    out: dict[str, Subregion] = {}
    for sid, v in (data.get("subregions") or {}).items():
        codes = [str(c) for c in v.get("municipalities") or []]
        if not codes or any(not re.fullmatch(r"\d{5}", c) for c in codes):
            raise ValueError(f"subregions.yaml: {sid} needs five-digit DIVIPOLA municipality codes")
        out[f"subregion:{sid}"] = Subregion(
            f"subregion:{sid}",
            str(v["label"]),
            tuple(dict.fromkeys(fold_phrase(n) for n in v.get("names") or [])),
            tuple(f"municipality:{c}" for c in codes),
            str(v.get("source") or ""),
        )
    return out


@functools.lru_cache(maxsize=1)
def subregions() -> dict[str, Subregion]:
    """The bundled subregions (loaded once; immutable)."""
    return load_subregions()


def is_place_set(place: str | None) -> bool:
    """Whether a place filter value stands for several municipalities (``PLACE_SET``)."""
    return bool(place and PLACE_SET.match(place))


def place_members(place: str) -> tuple[str, ...]:
    """The municipality ids a place-set filter value stands for: a subregion's municipalities, or
    the listed ids. Raises ``KeyError`` for an unknown subregion and ``ValueError`` for a value that
    is not a place set."""
    if not is_place_set(place):
        raise ValueError(f"not a subregion or a list of municipality ids: {place!r}")
    if place.startswith("subregion:"):
        return subregions()[place].municipalities
    ids = tuple(dict.fromkeys(place.split(",")))
    if not all(_MUNI.match(i) for i in ids):
        raise ValueError(f"not a list of municipality ids: {place!r}")
    return ids


def municipalities_of(place: str | None) -> tuple[str, ...] | None:
    """The municipality ids a place filter narrows to municipality by municipality: the members of a
    place set, the municipality itself, or None (no place, a department or a country, an unknown
    subregion)."""
    if place and place.startswith("municipality:") and "," not in place:
        return (place,)
    if is_place_set(place):
        try:
            return place_members(place)
        except (KeyError, ValueError):
            return None
    return None
