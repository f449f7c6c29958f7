"""Document reading endpoints: outline, the evidence window (~80 passages around a chunk), one chunk.

All three read through the caller's scoped view (``RetrievalService.for_scope``): a chunk or document
of a collection the credential may not read answers 404 exactly as one that does not exist."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query

from api.deps import ScopedRetrievalDep, ServiceDep
from api.schemas import ErrorResponse, OutlineResponse, Passage, WindowResponse
from api.security import Read

log = logging.getLogger("radar.api.documents")
router = APIRouter(tags=["documents"], dependencies=[Read])  # scope: read
_NOT_FOUND = {404: {"model": ErrorResponse}, 409: {"model": ErrorResponse}}


@router.get("/documents/{doc_id}/outline", response_model=OutlineResponse, responses=_NOT_FOUND)
def outline(
    retrieval: ScopedRetrievalDep,
    doc_id: Annotated[str, Path(max_length=64)],
    max_entries: Annotated[int, Query(ge=1, le=200)] = 30,
) -> OutlineResponse:
    out = retrieval.outline(doc_id, max_entries)
    if out is None:
        raise HTTPException(404, detail={"code": "unknown_document", "message": f"no hay documento {doc_id[:64]}"})
    return OutlineResponse(**out)


@router.get("/documents/{doc_id}/window", response_model=WindowResponse, responses=_NOT_FOUND)
def window(
    retrieval: ScopedRetrievalDep,
    service: ServiceDep,
    doc_id: Annotated[str, Path(max_length=64)],
    chunk_id: Annotated[str, Query(max_length=80, description="Pasaje citado, centro de la ventana")],
    size: Annotated[int, Query(ge=1, le=200)] = 80,
) -> WindowResponse:
    """``size`` consecutive passages of the document around ``chunk_id`` (evidence panel), with the
    materialized entity/place mentions of those passages when the precomputes exist."""
    out = retrieval.window(chunk_id, size)
    if out is None or out["doc_id"] != doc_id.lower():
        raise HTTPException(404, detail={"code": "unknown_chunk", "message": "el pasaje no existe en ese documento"})
    mentions = {}
    reader = service.aggregates()
    if reader is not None:
        try:
            mentions = reader.mentions_for_chunks([p["chunk_id"] for p in out["passages"]])
        except Exception:
            log.warning("mentions unavailable", exc_info=True)
    return WindowResponse(**out, mentions=mentions)


@router.get("/chunks/{chunk_id}", response_model=Passage, responses=_NOT_FOUND)
def chunk(retrieval: ScopedRetrievalDep, chunk_id: Annotated[str, Path(max_length=80)]) -> Passage:
    rec = retrieval.chunk(chunk_id)
    if rec is None:
        raise HTTPException(404, detail={"code": "unknown_chunk", "message": "no existe ese pasaje"})
    return Passage(**rec)
