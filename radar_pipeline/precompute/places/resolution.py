"""Place-resolution policy: which candidate a matched place name means (rules 3-8 of the package doc).

Input: the matches of one passage that survived the matcher's filters, each with its candidate
places, the level cue written around it and whether its name needs context (:class:`Pending`).
:func:`resolve` runs four phases over them, each only on what the previous ones left unresolved:

1. local evidence (cue word, a single candidate);
2. a department named nearby, the other Colombian places nearby, the country default;
3. two adjacent names that qualify each other ("Fundación, Magdalena", "Tumaco (Nariño)");
4. all candidates inside one department → that department.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from radar_pipeline.precompute.places.model import Place

__all__ = ["TIGHT_WINDOW", "WINDOW", "Pending", "resolve"]

# How far (characters) a department name may be from an ambiguous name to resolve it. Alerts write
# "municipios de Teorama, Hacarí y San Calixto, en Norte de Santander" (≈50 chars) or "municipio de
# Algeciras - departamento del Huila" (≈25); 150 covers such lists without reaching the next
# paragraph's places.
WINDOW = 150
# Names that are also a country or a department ("Armenia", "Sucre") only take a municipality sense
# from a department written right next to them ("Armenia, Quindío", "Sucre (Sucre)").
TIGHT_WINDOW = 40
# what may separate a name from the department that qualifies it: "Armenia, Quindío",
# "Caldas (Antioquia)", "Algeciras - departamento del Huila"
_QUALIFIER_GAP = re.compile(
    r"^[\s,;:(\-]*(?:(?:en\s+)?(?:el\s+)?(?:departamento|department|dpto\.?)\s+"
    r"(?:de\s+la\s+|del\s+|de\s+|of\s+)?)?$"
)


@dataclass
class Pending:
    """A matched place name being resolved: span, text, candidates, level cue, context flag.

    ``weak``: the matched name needs context (``places.yaml: context_required`` or short);
    ``resolved``/``resolution`` are set by the first phase that decides.
    """

    start: int
    end: int
    matched: str
    cands: list[Place]
    cue: str | None
    weak: bool = False
    resolved: Place | None = None
    resolution: str = "unresolved"


def resolve(
    pend: list[Pending],
    folded: str,
    places: Mapping[str, Place],
    *,
    window: int = WINDOW,
    tight_window: int = TIGHT_WINDOW,
) -> None:
    """Resolve the passage's matches in place (``folded``: the folded passage text, for the gaps
    between names; ``places``: the gazetteer by place_id). Unresolved ones keep ``'unresolved'``."""
    _resolve_local(pend)
    _resolve_from_neighbours(pend, folded, window, tight_window)
    _resolve_adjacent_pairs(pend, folded, places, tight_window)
    _resolve_single_department(pend, places)


def _resolve_local(pend: list[Pending]) -> None:
    """Phase 1, local evidence only: the cue narrows the candidates to its level; one candidate
    left is taken unless its name needs context and nothing (no cue) confirms it."""
    for p in pend:
        cands = p.cands
        if p.cue:
            level = [c for c in cands if c.level == p.cue]
            if level:
                cands = level
        p.cands = cands
        if len(cands) == 1 and (p.cue or not (p.weak and cands[0].is_colombian_subdivision)):
            p.resolved, p.resolution = cands[0], ("cue" if p.cue else "unique")


def _department_distances(
    p: Pending, near: list[tuple[int, bool, Place]], tight: bool, tight_window: int
) -> dict[str, int]:
    """Department code → distance of its nearest mention that may qualify ``p`` (when ``tight``,
    only a qualifier written right after ``p`` within ``tight_window``)."""
    dist: dict[str, int] = {}
    for d, qualifies, pl in near:
        if pl.level != "department" or (tight and (not qualifies or d > tight_window)):
            continue
        dist[pl.code] = min(d, dist.get(pl.code, d))
    return dist


def _resolve_from_neighbours(pend: list[Pending], folded: str, window: int, tight_window: int) -> None:
    """Phase 2: places resolved in phase 1 within ``window`` decide — the nearest department picks
    the municipality, a nearby Colombian place confirms a lone department, else the country."""
    named = [(p.start, p.end, p.resolved) for p in pend if p.resolved is not None]
    for p in pend:
        if p.resolved is not None:
            continue
        depts = [c for c in p.cands if c.level == "department"]
        countries = [c for c in p.cands if c.level == "country"]
        near = [
            (max(p.start - e, s - p.end, 0), s >= p.end and bool(_QUALIFIER_GAP.match(folded[p.end : s])), pl)
            for s, e, pl in named
            if (s, e) != (p.start, p.end) and p.start - e <= window and s - p.end <= window
        ]
        near_colombian = any(pl.country_code == "COL" for _, _, pl in near)
        # a name that is also a country or a department needs its department written right
        # AFTER it ("Armenia, Quindío", "Sucre (Santander)"): in "Antioquia, Caldas" the
        # department before is a list, not a qualifier
        dist = _department_distances(p, near, bool(depts or countries), tight_window)
        scored = sorted(
            (dist[c.department_code], c.place_id, c)
            for c in p.cands
            if c.level == "municipality" and c.department_code in dist
        )
        munis = [c for _, _, c in scored]
        # the nearest department decides; a tie between two candidates' departments decides nothing
        if munis and (len(scored) == 1 or scored[0][0] < scored[1][0]):
            p.resolved, p.resolution = munis[0], "nearby_department"
        elif len(depts) == 1 and len(p.cands) == 1 and near_colombian:
            p.resolved, p.resolution = depts[0], "nearby_context"
        elif len(countries) == 1 and all(c.is_colombian_subdivision for c in p.cands if c.level != "country"):
            p.resolved, p.resolution = countries[0], "country_default"


def _qualifies(p: Pending, q: Pending, folded: str, tight_window: int) -> bool:
    """Whether ``q`` is written right after ``p`` as its qualifier ("Armenia, Quindío")."""
    return q.start - p.end <= tight_window and bool(_QUALIFIER_GAP.match(folded[p.end : q.start]))


def _confirm_department_after(p: Pending, q: Pending | None, folded: str, tight_window: int) -> None:
    """ "Tumaco (Nariño)": a resolved municipality ``p`` resolves the unresolved name ``q`` written
    right after it to its own department, when that is one of ``q``'s candidates."""
    if (
        q is not None
        and q.resolved is None
        and p.resolved.level == "municipality"
        and _qualifies(p, q, folded, tight_window)
    ):
        dept = [c for c in q.cands if c.level == "department" and c.code == p.resolved.department_code]
        if dept:
            q.resolved, q.resolution = dept[0], "nearby_context"


def _pair_with_qualifier(
    p: Pending, following: list[Pending], folded: str, places: Mapping[str, Place], tight_window: int
) -> None:
    """ "Fundación, Magdalena" / "Sucre, Sucre": the unresolved ``p`` takes the municipality whose
    department the next name (its qualifier) can be; that name becomes the department."""
    for q in following:
        if not _qualifies(p, q, folded, tight_window):
            break
        if q.resolved is not None and q.resolved.level != "department":
            continue
        qdepts = {c.code for c in q.cands if c.level == "department"}
        if q.resolved is not None:
            qdepts = {q.resolved.code}
        munis = [c for c in p.cands if c.level == "municipality" and c.department_code in qdepts]
        if len(munis) == 1:
            p.resolved, p.resolution = munis[0], "nearby_department"
            if q.resolved is None:
                q.resolved, q.resolution = places[f"department:{munis[0].department_code}"], "nearby_context"
            break


def _resolve_adjacent_pairs(pend: list[Pending], folded: str, places: Mapping[str, Place], tight_window: int) -> None:
    """Phase 3: two adjacent names, the second qualifying the first, confirm each other."""
    for i, p in enumerate(pend):
        if p.resolved is not None:
            _confirm_department_after(p, pend[i + 1] if i + 1 < len(pend) else None, folded, tight_window)
            continue
        _pair_with_qualifier(p, pend[i + 1 : i + 2], folded, places, tight_window)


def _resolve_single_department(pend: list[Pending], places: Mapping[str, Place]) -> None:
    """Phase 4: all candidates inside one department ("Arauca": department and capital) → that
    department (never for a name that needs context)."""
    for p in pend:
        if p.resolved is not None or p.weak:
            continue
        col = [c for c in p.cands if c.is_colombian_subdivision]
        dcodes = {c.code if c.level == "department" else c.department_code for c in col}
        if len(col) == len(p.cands) and len(p.cands) > 1 and len(dcodes) == 1:
            dept = places.get(f"department:{dcodes.pop()}")
            if dept is not None:
                p.resolved, p.resolution = dept, "department_only"
