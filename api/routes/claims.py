"""Claims: bitemporal reads of the statements Radar built by rules, with their evidence.

``GET /claims?subject=&predicate=&object=&valid_at=DATE&as_of=DATE`` answers "what did Radar know
on ``as_of`` (transaction time) about what held on ``valid_at`` (valid time)"; ``GET
/claims/{claim_id}/history`` lists every version of one claim. Both read ``radar_pipeline.claims.store``
under the caller's ``AccessScope``: a collection-restricted key sees a claim only through evidence of
its collections, and only that evidence. No database → 409 ``database_unavailable``; claims never
materialized → HTTP 200 with ``materialized: false`` and a message (as ``/aggregates``), never a 5xx.

``GET /review/aliases`` and ``POST /review/aliases/{decision_key}`` (scope ``review``, unrestricted
credentials only) are the review queue of entity resolution: the aliases left unresolved, and a
reviewer's decision recorded with the credential's name and the time.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Annotated, Any, Literal

import sqlalchemy as sa
from fastapi import APIRouter, Depends, HTTPException, Path, Query
from pydantic import Field

from api.deps import ServiceDep
from api.schemas import ErrorResponse, Strict
from api.security import Read, ReadScope, refuse_restricted, require, scope_of
from radar_pipeline.access import Principal
from radar_pipeline.claims.model import PREDICATES, STATUSES
from radar_pipeline.claims.resolution import ReviewError, decide, review_items, undo
from radar_pipeline.claims.store import claim_history, query_claims

log = logging.getLogger("radar.api.claims")
router = APIRouter(tags=["claims"], dependencies=[Read])  # scope: read
Predicate = Literal[tuple(PREDICATES)]  # type: ignore[valid-type]
Status = Literal[STATUSES]  # type: ignore[valid-type]
_ID = r"^[a-z_]+:[A-Za-z0-9_:.\-]{1,120}$"
_ERRORS = {409: {"model": ErrorResponse}, 404: {"model": ErrorResponse}}


class ClaimEvidence(Strict):
    """One passage behind a claim: ``span`` is ``text[span_start:span_end]`` of chunk ``chunk_id``."""

    doc_id: str
    chunk_id: str
    stance: Literal["supports", "contradicts"]
    span: str
    span_start: int
    span_end: int
    rule: str
    source_date: str | None
    authority: int
    language: str | None
    collection: str | None
    retracted: bool


class ClaimOut(Strict):
    """One claim version: identity, words, valid time, transaction time, status and evidence."""

    claim_id: str
    subject: str
    predicate: str
    object: str
    statement: str
    qualifiers: dict[str, Any]
    valid_from: dt.date | None
    valid_to: dt.date | None
    valid_basis: str
    recorded_at: dt.datetime
    superseded_at: dt.datetime | None
    superseded_by: str | None
    status: str
    prevailing_stance: str | None
    policy: str
    n_supporting: int
    n_contradicting: int
    evidence: list[ClaimEvidence]


class ClaimsResponse(Strict):
    as_of: dt.datetime | dt.date | None
    valid_at: dt.date | None
    count: int
    claims: list[ClaimOut]
    materialized: bool = True
    message: str | None = None


_NOT_MATERIALIZED = "las afirmaciones no están materializadas (asset `claims`)"


def _engine(service) -> sa.Engine:
    engine = service.engine()
    if engine is None:
        raise HTTPException(
            409,
            detail={
                "code": "database_unavailable",
                "message": "PostgreSQL no está disponible para leer las afirmaciones",
            },
        )
    return engine


def _out(row: dict[str, Any]) -> ClaimOut:
    ev = [ClaimEvidence(**{k: e[k] for k in ClaimEvidence.model_fields}) for e in row["evidence"]]
    return ClaimOut(**{k: row[k] for k in ClaimOut.model_fields if k != "evidence"}, evidence=ev)


def _read(fn, *args, **kw) -> list[dict[str, Any]] | None:
    """``fn(...)``, or None when the claims tables do not exist yet."""
    try:
        return fn(*args, **kw)
    except sa.exc.ProgrammingError as exc:
        log.warning("claims not materialized: %s", exc)
        return None


@router.get("/claims", response_model=ClaimsResponse, responses=_ERRORS)
def list_claims(
    service: ServiceDep,
    scope: ReadScope,
    subject: Annotated[str | None, Query(pattern=_ID, description="id canónico: entity:eln, alert:045-23")] = None,
    predicate: Annotated[Predicate | None, Query(description="predicado")] = None,
    obj: Annotated[
        str | None,
        Query(alias="object", pattern=_ID, description="id canónico: municipality:52835, phenomenon:territorial"),
    ] = None,
    valid_at: Annotated[dt.date | None, Query(description="tiempo válido: ¿se cumplía en esta fecha?")] = None,
    as_of: Annotated[
        dt.date | None, Query(description="tiempo de transacción: lo que Radar sabía al final de esta fecha")
    ] = None,
    status: Annotated[list[Status] | None, Query(description="estados (por defecto todos menos superseded)")] = None,
    include_superseded: bool = False,
    include_undated: Annotated[
        bool, Query(description="con valid_at: incluir afirmaciones cuya fuente no fecha su validez")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> ClaimsResponse:
    """Claims as Radar knew them at ``as_of`` that held at ``valid_at``, with their supporting and
    contradicting passages (a contested claim shows both sides)."""
    rows = _read(
        query_claims,
        _engine(service),
        subject=subject,
        predicate=predicate,
        obj=obj,
        valid_at=valid_at,
        as_of=as_of,
        status=status,
        include_superseded=include_superseded,
        include_undated=include_undated,
        scope=scope,
        limit=limit,
        offset=offset,
    )
    if rows is None:
        return ClaimsResponse(
            as_of=as_of, valid_at=valid_at, count=0, claims=[], materialized=False, message=_NOT_MATERIALIZED
        )
    return ClaimsResponse(as_of=as_of, valid_at=valid_at, count=len(rows), claims=[_out(r) for r in rows])


@router.get("/claims/{claim_id}/history", response_model=ClaimsResponse, responses=_ERRORS)
def history(
    service: ServiceDep, scope: ReadScope, claim_id: Annotated[str, Path(pattern=r"^[0-9a-f]{20}$")]
) -> ClaimsResponse:
    """Every version of one claim, oldest first (transaction-time audit trail)."""
    rows = _read(claim_history, _engine(service), claim_id, scope) or []
    if not rows:
        raise HTTPException(404, detail={"code": "unknown_claim", "message": f"no hay afirmación {claim_id}"})
    return ClaimsResponse(as_of=None, valid_at=None, count=len(rows), claims=[_out(r) for r in rows])


# ---------------------------------------------------------------------- alias review (scope: review)
ReviewPrincipal = Annotated[Principal, Depends(require("review"))]
review_router = APIRouter(tags=["review"])


class ReviewItem(Strict):
    """An alias entity resolution left unresolved (never merged), waiting for a reviewer."""

    decision_key: str
    kind: str
    alias: str
    candidates: list[str]
    examples: list[dict[str, Any]]
    opened_at: dt.datetime
    closed_at: dt.datetime | None
    closed_by: str | None


class ReviewList(Strict):
    count: int
    items: list[ReviewItem]


class ReviewDecisionIn(Strict):
    decision: Literal["same", "different", "unresolved"]
    target: str | None = Field(default=None, pattern=_ID, description="con 'same': el id candidato elegido")
    note: str = Field(default="", max_length=2000)


class ReviewDecisionOut(Strict):
    decision_key: str
    alias: str
    decision: str
    candidate_a: str | None
    signal: str
    decided_by: str
    decided_at: dt.datetime


def _unrestricted(principal: Principal) -> None:
    # review items cite passages of every collection and decide aliases for the whole corpus
    refuse_restricted(scope_of(principal))


@review_router.get("/review/aliases", response_model=ReviewList, responses=_ERRORS)
def review_list(
    service: ServiceDep,
    principal: ReviewPrincipal,
    decided: Annotated[bool, Query(description="incluir también los ya decididos")] = False,
    kind: Annotated[Literal["place", "entity", "group"] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> ReviewList:
    """The review queue: aliases entity resolution left unresolved, oldest first."""
    _unrestricted(principal)
    items = _read(review_items, _engine(service), open_only=not decided, kind=kind, limit=limit) or []
    return ReviewList(count=len(items), items=[ReviewItem(**i) for i in items])


@review_router.post("/review/aliases/{decision_key}", response_model=ReviewDecisionOut, responses=_ERRORS)
def review_decide(
    service: ServiceDep,
    principal: ReviewPrincipal,
    body: ReviewDecisionIn,
    decision_key: Annotated[str, Path(pattern=r"^[0-9a-f]{16}$")],
) -> ReviewDecisionOut:
    """Record a reviewer's decision (who: the credential's name; when: now); it supersedes the
    automatic decision and closes the review item. 422 ``invalid_review`` when it cannot apply."""
    _unrestricted(principal)
    try:
        row = decide(
            _engine(service), decision_key, body.decision, by=principal.name, target=body.target, note=body.note
        )
    except ReviewError as exc:
        raise HTTPException(422, detail={"code": "invalid_review", "message": str(exc)}) from exc
    except sa.exc.ProgrammingError as exc:
        raise HTTPException(409, detail={"code": "claims_not_materialized", "message": _NOT_MATERIALIZED}) from exc
    return ReviewDecisionOut(**{k: row[k] for k in ReviewDecisionOut.model_fields})


class ReviewUndoOut(Strict):
    decision_key: str
    alias: str
    undone_decision: str
    undone_by: str = Field(description="Quien deshizo la decisión (el nombre de la credencial)")
    restored_decision: str | None = Field(description="La decisión que vuelve a regir; null: queda pendiente")
    restored_signal: str | None


@review_router.delete("/review/aliases/{decision_key}", response_model=ReviewUndoOut, responses=_ERRORS)
def review_undo(
    service: ServiceDep,
    principal: ReviewPrincipal,
    decision_key: Annotated[str, Path(pattern=r"^[0-9a-f]{16}$")],
) -> ReviewUndoOut:
    """Undo the reviewer's decision on ``decision_key`` (who: the credential's name): the decision it
    replaced rules again, the review item reopens, and the mentions, aggregates and claims go back
    to their earlier figures (``review_sensor``). 422 ``invalid_review`` when no reviewer decision rules."""
    _unrestricted(principal)
    try:
        out = undo(_engine(service), decision_key, by=principal.name)
    except ReviewError as exc:
        raise HTTPException(422, detail={"code": "invalid_review", "message": str(exc)}) from exc
    except sa.exc.ProgrammingError as exc:
        raise HTTPException(409, detail={"code": "claims_not_materialized", "message": _NOT_MATERIALIZED}) from exc
    u, r = out["undone"], out["restored"]
    return ReviewUndoOut(
        decision_key=u["decision_key"],
        alias=u["alias"],
        undone_decision=u["decision"],
        undone_by=u["detail"]["undone_by"],
        restored_decision=r["decision"] if r else None,
        restored_signal=r["signal"] if r else None,
    )
