"""Dependencies (``Annotated[..., Depends(...)]``): the process-wide ``AgentService`` and its pieces.

``create_app`` stores one ``AgentService`` in ``app.state.service``; routes receive it (or the
corpus / aggregate reader) through these aliases, so tests can build an app around their own
service (a small index, a test database, a fake model endpoint).
"""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request

from radar_pipeline.agent.aggregates import AggregateReader
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.agent.tools import Corpus, IndexUnavailable


def get_service(request: Request) -> AgentService:
    return request.app.state.service


def get_settings(request: Request) -> ServiceSettings:
    return request.app.state.service.settings


def get_corpus(service: Annotated[AgentService, Depends(get_service)]) -> Corpus:
    """The loaded corpus, or a structured 409 ``index_not_materialized`` (never a 5xx)."""
    try:
        return service.corpus()
    except IndexUnavailable as exc:
        raise HTTPException(status_code=409, detail={"code": "index_not_materialized", "message": str(exc)[:300]}) from exc


def get_aggregates(service: Annotated[AgentService, Depends(get_service)]) -> AggregateReader:
    reader = service.aggregates()
    if reader is None:
        raise HTTPException(status_code=409, detail={"code": "database_unavailable",
                                                     "message": "PostgreSQL no está disponible para leer los precómputos"})
    return reader


ServiceDep = Annotated[AgentService, Depends(get_service)]
SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]
CorpusDep = Annotated[Corpus, Depends(get_corpus)]
AggregatesDep = Annotated[AggregateReader, Depends(get_aggregates)]
