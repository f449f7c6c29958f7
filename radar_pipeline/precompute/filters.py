"""The one filter type over the precomputes: phenomenon, year range, entity, place.

``Filters`` is what the precompute reader, the dashboard and the agent's visualizer pass around.
Its field names are the language of the library and of the ``/aggregates`` query parameters
(``phenomenon``, ``year_from``, ``year_to``, ``entity``, ``place``). The dashboard's query
parameters and the chat's ``visualizacion.filtros`` speak Spanish (``fenomeno``, ``desde``,
``hasta``, ``entidad``, ``lugar``); ``SPANISH`` is the single mapping between the two, used by
``from_spanish`` / ``spanish`` at those edges only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

SPANISH = {"phenomenon": "fenomeno", "year_from": "desde", "year_to": "hasta", "entity": "entidad", "place": "lugar"}


@dataclasses.dataclass(frozen=True)
class Filters:
    """Filters of a precompute read; ``None`` = not filtered.

    ``phenomenon``: one of ``vocabulary.PHENOMENA``; ``year_from`` / ``year_to``: inclusive years;
    ``entity``: an entity (an ``entity_id`` of the dictionary on the dashboard, any entity column
    value on ``/aggregates``); ``place``: a place (a gazetteer ``place_id`` on the dashboard, a
    place name on ``/aggregates``).
    """

    phenomenon: str | None = None
    year_from: int | None = None
    year_to: int | None = None
    entity: str | None = None
    place: str | None = None

    @property
    def period(self) -> bool:
        """True when a year bound is set."""
        return self.year_from is not None or self.year_to is not None

    def year_ok(self, year: int | None) -> bool:
        """Whether ``year`` lies in the range (an unknown year never does)."""
        if year is None:
            return False
        return (self.year_from is None or year >= self.year_from) and (self.year_to is None or year <= self.year_to)

    def requested(self) -> dict[str, Any]:
        """The set filters under their library names (``{"phenomenon": ..., "year_from": ...}``)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    def spanish(self) -> dict[str, Any]:
        """The set filters under their Spanish names (dashboard parameters, chat ``filtros``)."""
        return {SPANISH[k]: v for k, v in self.requested().items()}

    @classmethod
    def from_spanish(cls, values: dict[str, Any]) -> Filters:
        """Filters from a dict keyed by Spanish names (unknown keys are ignored)."""
        return cls(**{k: values.get(es) for k, es in SPANISH.items()})
