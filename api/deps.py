"""Dependencies (``Annotated[..., Depends(...)]``): the process-wide ``AgentService`` and its pieces.

``create_app`` stores one ``AgentService`` in ``app.state.service``; routes receive it (or the
retrieval service / precompute reader) through these aliases, so tests can build an app around
their own service (a small index, a test database, a fake model endpoint).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request

from api.security import ReadScope
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.precompute.reader import PrecomputeReader
from radar_pipeline.retrieval.service import IndexUnavailable, RetrievalService


def get_service(request: Request) -> AgentService:
    return request.app.state.service


def get_settings(request: Request) -> ServiceSettings:
    return request.app.state.service.settings


def get_retrieval(service: Annotated[AgentService, Depends(get_service)]) -> RetrievalService:
    """The loaded retrieval service, or a structured 409 ``index_not_materialized`` (never a 5xx)."""
    try:
        return service.corpus()
    except IndexUnavailable as exc:
        raise HTTPException(
            status_code=409, detail={"code": "index_not_materialized", "message": str(exc)[:300]}
        ) from exc


def get_aggregates(service: Annotated[AgentService, Depends(get_service)]) -> PrecomputeReader:
    """The precompute reader, or a structured 409 ``database_unavailable``."""
    reader = service.aggregates()
    if reader is None:
        raise HTTPException(
            status_code=409,
            detail={
                "code": "database_unavailable",
                "message": "PostgreSQL no está disponible para leer los precómputos",
            },
        )
    return reader


def get_scoped_retrieval(service: Annotated[AgentService, Depends(get_service)], scope: ReadScope) -> RetrievalService:
    """The retrieval service as the caller's ``AccessScope`` may read it (``RetrievalService.for_scope``):
    rows of other collections are absent from every lookup and search. 409 as ``get_retrieval``."""
    return get_retrieval(service).for_scope(scope)


ServiceDep = Annotated[AgentService, Depends(get_service)]
SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]
RetrievalDep = Annotated[RetrievalService, Depends(get_retrieval)]
ScopedRetrievalDep = Annotated[RetrievalService, Depends(get_scoped_retrieval)]
AggregatesDep = Annotated[PrecomputeReader, Depends(get_aggregates)]
