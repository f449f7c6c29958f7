"""GET /publications: publications by date range, source collection and phenomenon, newest first.

The listing is ``RetrievalService.publications`` (``radar_pipeline.retrieval.publications``), the same
the agent's ``list_publications`` tool calls, so the dashboard and the chat list the same documents
with the same dates. Dates come from the ``publication_dates`` precompute when it is materialized,
otherwise from the source paths (``date_source`` says which).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query

from api.deps import ScopedRetrievalDep, ServiceDep
from api.schemas import ErrorResponse, PublicationsResponse
from api.security import Read
from radar_pipeline.retrieval.publications import DATE_RE, PublicationQuery
from radar_pipeline.vocabulary import Phenomenon

router = APIRouter(tags=["documents"], dependencies=[Read])  # scope: read

_DATE_HELP = "AAAA, AAAA-MM o AAAA-MM-DD (inclusive)"


@router.get(
    "/publications",
    response_model=PublicationsResponse,
    responses={400: {"model": ErrorResponse}, 409: {"model": ErrorResponse}},
)
def publications(
    retrieval: ScopedRetrievalDep,
    service: ServiceDep,
    desde: Annotated[str | None, Query(pattern=DATE_RE, description=f"Desde: {_DATE_HELP}")] = None,
    hasta: Annotated[str | None, Query(pattern=DATE_RE, description=f"Hasta: {_DATE_HELP}")] = None,
    coleccion: Annotated[
        str | None, Query(min_length=1, max_length=80, description="Colección de origen (p. ej. CSET)")
    ] = None,
    fenomeno: Annotated[Phenomenon | None, Query(description="Fenómeno")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> PublicationsResponse:
    """Publications (one per document) matching the filters, newest first, with the total count; only
    documents of the caller's collections are listed or counted."""
    try:
        out = retrieval.publications(PublicationQuery(desde, hasta, coleccion, fenomeno, limit), service.aggregates())
    except ValueError as exc:
        raise HTTPException(400, detail={"code": "invalid_range", "message": str(exc)}) from exc
    return PublicationsResponse(**out)
