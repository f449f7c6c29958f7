"""The dashboard's reference data: entity and place names with their document counts, documents
per phenomenon, the dated share of the corpus and the materialization status of every view.
Every count is over the collections the caller may read; the dictionary and the gazetteer are
reference data, the same for every caller."""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from api.dashboard.data.views import GROUP_ENTITY, TABLES, VIEWS
from radar_pipeline import db
from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.reader import NotMaterialized, PrecomputeReader, current


def _or(default, read: Callable[[], object]):
    try:
        return read()
    except NotMaterialized:
        return default


def status(reader: PrecomputeReader) -> dict[str, bool]:
    """``{view: materialized?}`` for every dashboard view."""
    return {v: reader.materialized(TABLES[v]) for v in VIEWS}


def meta(reader: PrecomputeReader, scope: AccessScope | None = None) -> dict:
    """``{entities, places, documents, dates, status, groups}`` over the collections ``scope`` may
    read (None: all); a table not materialized yet
    contributes nothing (empty lists, ``dates: None``) instead of failing.

    ``places``: every country and Colombian department of the gazetteer, and the municipalities
    the page can select — those some document names or the armed-presence records list (the rest
    of the ~1,100 are named on demand by ``places.resolve``) — each ``{place_id, level, code, iso2,
    name, department_name, n_documents}`` (documents naming it, any phenomenon)."""
    ed, pg, pd, em, ap, pr, d = (
        T.entity_dictionary,
        T.place_gazetteer,
        reader.scoped(T.publication_dates, scope),
        reader.scoped(T.entity_mentions, scope),
        reader.scoped(T.agg_documents_per_place, scope),
        reader.scoped(T.armed_presence, scope),
        db.documents,
    )
    ents = _or(
        [],
        lambda: reader.rows(
            sa.select(ed.c.entity_id, ed.c.name, ed.c.category, ed.c.phenomenon, ed.c.aliases)
            .where(current(ed))
            .order_by(ed.c.entity_id),
            ed,
        ),
    )
    places = _or(
        [],
        lambda: reader.rows(
            sa.select(pg.c.place_id, pg.c.level, pg.c.code, pg.c.iso2, pg.c.name, pg.c.department_name)
            .where(current(pg))
            .order_by(pg.c.place_id),
            pg,
        ),
    )
    presence = _or(
        set(),
        lambda: {
            f"municipality:{r['divipola_code']}"
            for r in reader.rows(
                sa.select(pr.c.divipola_code).distinct().where(current(pr), pr.c.divipola_code.is_not(None)), pr
            )
        },
    )
    docs = reader.rows(
        sa.select(d.c.phenomenon, sa.func.count().label("n"))
        .where(reader.in_scope(d.c.collection, scope))
        .group_by(d.c.phenomenon)
    )
    dated = _or(
        None,
        lambda: reader.rows(
            sa.select(
                sa.func.count().filter(pd.c.date.is_not(None)).label("dated"),
                sa.func.count().label("n"),
                sa.func.min(pd.c.year).label("year_min"),
                sa.func.max(pd.c.year).label("year_max"),
            ).where(current(pd)),
            pd,
        )[0],
    )
    ent_docs = _or(
        {},
        lambda: {
            r["entity_id"]: r["n"]
            for r in reader.rows(
                sa.select(em.c.entity_id, sa.func.count(sa.distinct(em.c.doc_id)).label("n"))
                .where(current(em))
                .group_by(em.c.entity_id),
                em,
            )
        },
    )
    place_docs = _or(
        {},
        lambda: {
            r["place_id"]: r["n_documents"]
            for r in reader.rows(
                sa.select(ap.c.place_id, ap.c.n_documents).where(current(ap), ap.c.phenomenon == "all"),
                ap,
            )
        },
    )
    return {
        "entities": [
            {
                "id": e["entity_id"],
                "name": e["name"],
                "category": e["category"],
                "phenomenon": e["phenomenon"],
                "n_documents": ent_docs.get(e["entity_id"], 0),
            }
            for e in ents
        ],
        "places": [
            {**p, "n_documents": place_docs.get(p["place_id"], 0)}
            for p in places
            if p["level"] != "municipality" or p["place_id"] in place_docs or p["place_id"] in presence
        ],
        "documents": {r["phenomenon"] or "sin_fenomeno": r["n"] for r in docs},
        "dates": dated,
        "status": status(reader),
        "groups": GROUP_ENTITY,
    }
