"""Reviewers' endpoints over the knowledge base's history (scope ``review`` or ``admin``).

``POST /documents/{doc_id}/retract`` withdraws a document (``radar_pipeline.history.retract_document``):
its passages leave the loaded index at once, its rows are closed with reason ``retracted``, who/when/why
go to ``retractions``, and the derived rows (mentions, alerts, presence, aggregates) re-materialize in
the background (``precompute.pipeline.propagate_retraction``); the on-disk index keeps the passages
until ``faiss_index``/``bm25_index`` are re-materialized (``pendiente``). ``GET /retractions`` lists
them; ``GET /impact/{doc_id}`` says what depends on a document (``radar_pipeline.provenance``).
A collection-restricted credential is refused (403 ``review_not_scoped``): these act on the whole corpus.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, HTTPException, Path
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, ConfigDict, Field

from api.deps import ServiceDep
from api.schemas import ErrorResponse
from api.security import ReviewPrincipal
from radar_pipeline import history
from radar_pipeline.access import Principal

log = logging.getLogger("radar.api.history")
router = APIRouter(tags=["history"])
_ERRORS = {403: {"model": ErrorResponse}, 404: {"model": ErrorResponse}, 409: {"model": ErrorResponse}}
_DOC = Annotated[str, Path(min_length=16, max_length=16, pattern=r"^[0-9a-fA-F]{16}$")]


class RetractRequest(BaseModel):
    """Why the document is withdrawn (kept in ``retractions`` and shown to reviewers)."""

    model_config = ConfigDict(extra="forbid")
    motivo: str = Field(min_length=3, max_length=2000, description="Motivo de la retractación")


def _engine(service):
    engine = service.engine()
    if engine is None:
        raise HTTPException(
            409, detail={"code": "database_unavailable", "message": "PostgreSQL no está disponible para esta operación"}
        )
    return engine


def _unrestricted(principal: Principal) -> None:
    if principal.collections is not None:
        raise HTTPException(
            403,
            detail={
                "code": "review_not_scoped",
                "message": "la revisión actúa sobre todo el corpus: esta credencial está restringida a colecciones",
            },
        )


def _propagate(engine, doc_id: str) -> None:
    from radar_pipeline.config import StorageSettings
    from radar_pipeline.precompute.pipeline import PrecomputeConfig, propagate_retraction

    try:
        propagate_retraction(engine, PrecomputeConfig(shared_dir=StorageSettings().shared_dir), [doc_id], log=log.info)
    except Exception:
        log.exception("retraction of %s: derived tables not re-materialized; run `radar retract --resume`", doc_id)


@router.post("/documents/{doc_id}/retract", responses=_ERRORS, summary="Retractar un documento (revisores)")
def retract(
    principal: ReviewPrincipal, service: ServiceDep, doc_id: _DOC, body: RetractRequest, tasks: BackgroundTasks
) -> dict[str, Any]:
    """Close the document's rows (reason ``retracted``), record who/when/why, stop serving it now and
    re-materialize the derived tables in the background. 404 unknown document, 409 already retracted."""
    _unrestricted(principal)
    engine = _engine(service)
    try:
        out = history.retract_document(engine, doc_id, body.motivo, f"{principal.auth}:{principal.name}")
    except history.RetractionError as exc:
        code = 409 if "ya fue" in str(exc) else 404
        raise HTTPException(code, detail={"code": "retraction_refused", "message": str(exc)}) from exc
    withdrawn = service.withdraw([out["doc_id"]])
    tasks.add_task(_propagate, engine, out["doc_id"])
    return {
        **out,
        "retirado_del_indice_cargado": bool(withdrawn),
        "pendiente": ["early_warnings", "armed_presence", "aggregates (en segundo plano)", "faiss_index", "bm25_index"],
    }


@router.get("/retractions", responses=_ERRORS, summary="Documentos retractados")
def retractions(principal: ReviewPrincipal, service: ServiceDep) -> list[dict[str, Any]]:
    """Every retraction, newest first (``doc_id``, ``reason``, ``retracted_by``, ``retracted_at``, ``primary_path``)."""
    _unrestricted(principal)
    return jsonable_encoder(history.list_retractions(_engine(service)))


@router.get("/impact/{doc_id}", responses=_ERRORS, summary="Qué depende de un documento (revisores)")
def impact(principal: ReviewPrincipal, service: ServiceDep, doc_id: _DOC) -> dict[str, Any]:
    """Passages (current and closed), precompute rows and aggregate cells, and past answers that
    depend on the document, with the answers' cited passages that are no longer current
    (``radar_pipeline.provenance.impact``). 404 for an unknown document."""
    from radar_pipeline.provenance import UnknownSource
    from radar_pipeline.provenance import impact as _impact

    _unrestricted(principal)
    engine = _engine(service)
    try:
        return jsonable_encoder(_impact(engine, doc_id.lower()))
    except UnknownSource as exc:
        raise HTTPException(404, detail={"code": "unknown_document", "message": str(exc)}) from exc
