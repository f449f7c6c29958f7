"""What the dashboard reads: the current rows of the precompute tables, narrowed by its filters.

Every figure comes from the precompute tables through the one reader the ``/aggregates``
endpoints and the agent use (``radar_pipeline.precompute.reader.PrecomputeReader``), with the one
``Filters`` type, so chat and dashboard show the same numbers. By responsibility:

* ``docsets``  — document sets a filter selects (naming an entity or a place, in a period, of a phenomenon);
* ``views``    — the seven views, narrowed through their evidence when a filter is not a column;
* ``evidence`` — the passages behind rows of a view, narrowed like the view;
* ``places``   — the agent's filter values (Spanish names) to dictionary / gazetteer ids;
* ``meta``     — reference data (names, counts, dated share, materialization status).

Nothing is estimated: a filter that cannot be applied to a view is reported in ``not_applied``.
``DashboardData`` bundles them over one engine for the router.
"""

from __future__ import annotations

import sqlalchemy as sa

from api.dashboard.data import meta as _meta
from api.dashboard.data.docsets import DocSets
from api.dashboard.data.evidence import Evidence
from api.dashboard.data.places import ENTITY_ID, PLACE_ID, resolve
from api.dashboard.data.views import VIEWS, Views
from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.reader import NotMaterialized, PrecomputeReader

__all__ = ["DashboardData", "ENTITY_ID", "Filters", "NotMaterialized", "PLACE_ID", "VIEWS"]


class DashboardData:
    """The dashboard's read-only queries over one engine. Methods raise ``NotMaterialized`` for
    missing tables (``meta`` and ``resolve`` answer without them). ``scope`` is the caller's
    ``AccessScope`` (None: every collection): figures, ids and evidence are of its collections."""

    def __init__(self, engine: sa.Engine, reader: PrecomputeReader | None = None):
        self.engine = engine
        self.reader = reader if reader is not None and reader.engine is engine else PrecomputeReader(engine)
        self.docsets = DocSets(self.reader)
        self.views = Views(self.reader, self.docsets)

    def _views(self, scope: AccessScope | None) -> Views:
        return self.views if scope is None else Views(self.reader, DocSets(self.reader, scope))

    def status(self) -> dict[str, bool]:
        """``{view: materialized?}``."""
        return _meta.status(self.reader)

    def view(self, name: str, f: Filters, scope: AccessScope | None = None, **opts) -> dict:
        """See ``Views.view``."""
        return self._views(scope).view(name, f, **opts)

    def evidence(
        self,
        name: str,
        ids: list[int],
        f: Filters,
        offset: int = 0,
        limit: int = 50,
        scope: AccessScope | None = None,
    ) -> dict:
        """See ``Evidence.evidence``."""
        views = self._views(scope)
        return Evidence(self.reader, views.docsets, views).evidence(name, ids, f, offset, limit)

    def meta(self, scope: AccessScope | None = None) -> dict:
        """See ``meta.meta``."""
        return _meta.meta(self.reader, scope)

    def resolve(self, entidad: str | None, lugar: str | None) -> dict:
        """See ``places.resolve``."""
        return resolve(self.reader, entidad, lugar)
