"""The judging page (``/tablero/juicio``) and its three endpoints: blind relevance grading by keyboard.

A reviewer evaluating Radar on their own questions grades the passages no judgment covers yet
(batches written by ``radar judge export``). The page shows one item at a time — the question and
the passage, nothing else: no system, rank, score or query id — in the batch's shuffled order; keys
0/1/2 grade (rubric of ``<shared>/eval/codefest_dev/README.md``) and move on, → / Intro next,
← back. Grades go to the same versioned store ``radar judge import`` writes
(``radar_pipeline.stores.qrels``): one session of the page is one round of its annotator, and a
grade changed by going back replaces that round's grade. The ``qrels`` asset then merges them and
reports agreement (Cohen's kappa) like any imported round.

Endpoints (scope ``review``; a collection-restricted credential gets 403 ``judging_not_scoped``:
batches hold passages of every collection):

* ``GET /tablero/api/juicio/lotes`` — the exported batches;
* ``POST /tablero/api/juicio/sesiones`` ``{anotador, lote, ronda?}`` — starts a session: a new round
  (or resumes ``ronda``) and returns the batch's items with the grades of that round;
* ``PUT /tablero/api/juicio/items/{item_id}`` ``{anotador, ronda, nota}`` — stores one grade.
Errors are ``{"error": {code, message}}`` in Spanish; no database answers 409.
"""

from __future__ import annotations

import logging
from typing import Annotated

import sqlalchemy as sa
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from api.security import require
from radar_pipeline.access import Principal
from radar_pipeline.stores import qrels

log = logging.getLogger("radar.api.judging")
router = APIRouter(include_in_schema=False)

_review = require("review")


def _unrestricted_reviewer(principal: Annotated[Principal, Depends(_review)]) -> Principal:
    if principal.collections is not None:
        raise HTTPException(
            403,
            detail={
                "code": "judging_not_scoped",
                "message": "los lotes de juicio contienen pasajes de todas las colecciones; esta credencial "
                "está restringida a algunas",
            },
        )
    return principal


Reviewer = Depends(_unrestricted_reviewer)
Annotator = Annotated[str, Field(min_length=1, max_length=80, pattern=r"\S")]


class SessionRequest(BaseModel):
    """Start (or resume) a judging session."""

    model_config = ConfigDict(extra="forbid")
    anotador: Annotator
    lote: str = Field(min_length=1, max_length=64)
    ronda: int | None = Field(default=None, ge=1, description="reanudar esta ronda; por omisión, una nueva")


class GradeRequest(BaseModel):
    """One grade: 0 no relevante, 1 parcial, 2 relevante."""

    model_config = ConfigDict(extra="forbid")
    anotador: Annotator
    ronda: int = Field(ge=1)
    nota: int = Field(ge=0, le=2)


def _engine(request: Request) -> sa.Engine:
    engine = request.app.state.service.engine()
    if engine is None:
        raise HTTPException(
            409,
            detail={"code": "database_unavailable", "message": "PostgreSQL no está disponible para guardar juicios"},
        )
    return engine


def _db_error(exc: sa.exc.SQLAlchemyError) -> HTTPException:
    log.warning("judging query failed: %s", exc)
    return HTTPException(409, detail={"code": "query_failed", "message": "no pude leer o guardar los juicios"})


@router.get("/tablero/juicio")
def page() -> Response:
    """The judging page (static, no corpus data: it reads the endpoints below)."""
    from api.dashboard.router import STATIC

    return FileResponse(
        STATIC / "juicio.html", media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-cache"}
    )


@router.get("/tablero/api/juicio/lotes", dependencies=[Reviewer])
def batches(request: Request) -> dict:
    engine = _engine(request)
    try:
        found = qrels.list_batches(engine)
    except sa.exc.SQLAlchemyError as exc:
        raise _db_error(exc) from exc
    return {
        "lotes": [
            {"lote": b.batch_id, "items": b.n_items, "preguntas": b.n_questions, "creado": b.created_at.isoformat()}
            for b in found
        ]
    }


@router.post("/tablero/api/juicio/sesiones", dependencies=[Reviewer])
def start_session(request: Request, body: SessionRequest) -> dict:
    engine = _engine(request)
    annotator = body.anotador.strip()
    try:
        if body.ronda is None:
            qrels.ensure_judging_schema(engine)
            with engine.connect() as conn:
                ronda = qrels.next_round(conn, annotator)
        else:
            ronda = body.ronda
        items = qrels.batch_items(engine, body.lote, annotator, ronda)
    except sa.exc.SQLAlchemyError as exc:
        raise _db_error(exc) from exc
    if not items:
        raise HTTPException(
            404, detail={"code": "batch_not_found", "message": f"no existe el lote '{body.lote}' o está vacío"}
        )
    return {
        "anotador": annotator,
        "lote": body.lote,
        "ronda": ronda,
        "items": [{"item_id": i.item_id, "pregunta": i.question, "texto": i.text, "nota": i.grade} for i in items],
    }


@router.put("/tablero/api/juicio/items/{item_id}", dependencies=[Reviewer])
def grade(
    request: Request,
    body: GradeRequest,
    item_id: Annotated[str, PathParam(min_length=1, max_length=64)],
) -> dict:
    engine = _engine(request)
    try:
        qrels.record_grade(engine, item_id, body.anotador, body.ronda, body.nota)
    except qrels.UnknownItem:
        raise HTTPException(
            404, detail={"code": "item_not_found", "message": f"el ítem '{item_id}' no pertenece a ningún lote"}
        ) from None
    except ValueError as exc:
        raise HTTPException(422, detail={"code": "invalid_grade", "message": f"juicio no válido: {exc}"}) from exc
    except sa.exc.SQLAlchemyError as exc:
        raise _db_error(exc) from exc
    return {"item_id": item_id, "anotador": body.anotador.strip(), "ronda": body.ronda, "nota": body.nota}
