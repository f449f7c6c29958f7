"""Document reading endpoints: outline, the evidence window (~80 passages around a chunk), one chunk.

All three read through the caller's scoped view (``RetrievalService.for_scope``): a chunk or document
of a collection the credential may not read answers 404 exactly as one that does not exist. A chunk
that is no longer current (its source changed, was removed or retracted) is still served from the
history tables (``radar_pipeline.history``), marked with ``estado`` and what replaced it, so an old
citation always resolves."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query

from api.deps import ScopedRetrievalDep, ServiceDep
from api.schemas import ErrorResponse, OutlineResponse, Passage, WindowResponse
from api.security import Read
from radar_pipeline import history

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
    if out is None:
        out = _closed(service, retrieval, lambda engine: history.superseded_window(engine, chunk_id, size))
        if out is not None:
            out.pop("collection", None)
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
def chunk(retrieval: ScopedRetrievalDep, service: ServiceDep, chunk_id: Annotated[str, Path(max_length=80)]) -> Passage:
    """One passage; a closed one (superseded or retracted) with its ``estado`` and replacement."""
    rec = retrieval.chunk(chunk_id)
    if rec is None:
        old = _closed(service, retrieval, lambda engine: history.resolve_chunk(engine, chunk_id))
        if old is not None and old["estado"] != "vigente":
            rec = {
                "chunk_id": old["chunk_id"],
                "doc_id": old["doc_id"],
                "title": old["title"],
                "source_path": old["source_path"] or "",
                "page": old["page_start"],
                "page_end": old["page_end"],
                "phenomenon": old["phenomenon"],
                "language": old["language"],
                "text": old["text"],
                "politica": retrieval.scope.policy(old["collection"]),
                **{k: old[k] for k in ("estado", "superseded_at", "supersede_reason", "superseded_by", "replaced_by")},
            }
    if rec is None:
        raise HTTPException(404, detail={"code": "unknown_chunk", "message": "no existe ese pasaje"})
    return Passage(**rec)


def _closed(service, retrieval, lookup) -> dict | None:
    """``lookup(engine)`` over the history tables when the database is up and the caller's scope may
    read the row's collection; None otherwise (the caller answers 404, as for an unknown id)."""
    engine = service.engine()
    if engine is None:
        return None
    try:
        out = lookup(engine)
    except Exception:  # history tables missing (an install not yet upgraded): an unknown id
        log.warning("history lookup failed", exc_info=True)
        return None
    if out is None or not retrieval.scope.allows(out.get("collection")):
        return None
    return out
