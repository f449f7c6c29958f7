"""Aggregates from the precomputes (shared by the dashboard and the agent's visualizer).

A table not materialized yet answers ``materialized: false`` with a message (HTTP 200), never 500.
The figures are counted over the collections the credential may read (a restricted key counts only
its collections, inside the query: ``PrecomputeReader.scoped``; an unrestricted one all of them).
"""

from __future__ import annotations

import logging
from typing import Annotated, Literal

import sqlalchemy as sa
from fastapi import APIRouter, HTTPException, Path, Query

from api.deps import AggregatesDep, ServiceDep
from api.schemas import AggregateListItem, AggregateResponse, ErrorResponse
from api.security import Read, ReadScope
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.reader import AGGREGATES
from radar_pipeline.vocabulary import Phenomenon

log = logging.getLogger("radar.api.aggregates")
router = APIRouter(tags=["aggregates"], dependencies=[Read])  # scope: read
AggregateName = Literal[tuple(AGGREGATES)]  # type: ignore[valid-type]


@router.get("/aggregates", response_model=list[AggregateListItem])
def list_aggregates(service: ServiceDep) -> list[AggregateListItem]:
    """Every aggregate name with whether it is materialized (``null`` when the database is unavailable)."""
    status = {}
    reader = service.aggregates()
    if reader is not None:
        try:
            status = reader.status()
        except sa.exc.SQLAlchemyError:
            log.warning("aggregate status unavailable", exc_info=True)
    return [
        AggregateListItem(aggregate=n, table=s.table_name, title=s.title, materialized=status.get(n))
        for n, s in AGGREGATES.items()
    ]


@router.get(
    "/aggregates/{name}",
    response_model=AggregateResponse,
    responses={409: {"model": ErrorResponse}, 403: {"model": ErrorResponse}},
)
def read_aggregate(
    reader: AggregatesDep,
    scope: ReadScope,
    name: Annotated[AggregateName, Path()],
    phenomenon: Annotated[Phenomenon | None, Query()] = None,
    year_from: Annotated[int | None, Query(ge=1900, le=2100)] = None,
    year_to: Annotated[int | None, Query(ge=1900, le=2100)] = None,
    entity: Annotated[str | None, Query(min_length=1, max_length=120, description="entity_id del diccionario")] = None,
    place: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=4000,
            description="nombre de lugar/departamento, place_id (department:18), subregión (subregion:catatumbo) "
            "o municipios separados por comas (municipality:54810,municipality:54001)",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> AggregateResponse:
    try:
        out = reader.read(name, Filters(phenomenon, year_from, year_to, entity, place), limit=limit, scope=scope)
    except sa.exc.SQLAlchemyError as exc:
        log.warning("aggregate %s failed: %s", name, exc)
        raise HTTPException(
            409, detail={"code": "aggregate_query_failed", "message": f"no pude leer '{name}' con esos filtros"}
        ) from exc
    return AggregateResponse(**out)
