"""Traces, keys and the audit log over HTTP.

``GET /traces/{run_id}`` (scope ``chat`` or ``admin``): the stored trace of one /chat run, only to the key that
asked it (proved by the audit log) or to an unrestricted ``admin`` key; anyone else gets 404, as for a
run that does not exist, and the anonymous caller of the open loopback mode 403
``open_mode_requires_key`` (it cannot prove it asked: ``api.security``, "Open mode") (a run read only the asking key's collections, so its own trace never shows
another collection's passages). ``/keys`` and ``/audit`` need ``admin``. Keys are usually managed with ``radar keys``;
``POST /keys`` returns the token once, like the command.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, ConfigDict, Field

from api.deps import ServiceDep
from api.schemas import ErrorResponse
from api.security import OPEN_MODE_MESSAGE, AccessControl, AdminPrincipal, ChatOrAdminPrincipal
from radar_pipeline.access import AccessError

router = APIRouter(tags=["access"])
_ERRORS = {403: {"model": ErrorResponse}, 404: {"model": ErrorResponse}, 409: {"model": ErrorResponse}}


def _no_db() -> HTTPException:
    return HTTPException(
        409, detail={"code": "database_unavailable", "message": "PostgreSQL no está disponible para esta consulta"}
    )


@router.get("/traces/{run_id}", responses=_ERRORS, summary="La traza de una ejecución de /chat")
def trace(
    principal: ChatOrAdminPrincipal,
    service: ServiceDep,
    request: Request,
    run_id: Annotated[str, Path(min_length=8, max_length=64, pattern=r"^[0-9a-f]+$")],
) -> dict[str, Any]:
    """``{"run": {...}, "steps": [...]}``: visible to the key that asked the question, or to ``admin``."""
    access: AccessControl = request.app.state.access
    if principal.auth == "open":  # no identity: every local caller would read every other's runs
        raise HTTPException(403, detail={"code": "open_mode_requires_key", "message": OPEN_MODE_MESSAGE})
    store, audit = service.store(), access.audit()
    if store is None or audit is None:
        raise _no_db()
    missing = HTTPException(404, detail={"code": "unknown_run", "message": "no hay traza visible con ese run_id"})
    # an admin restricted to some collections sees only its own runs, like any other key
    admin = principal.allows("admin") and principal.collections is None
    if not (admin or audit.owns_run(principal.key_id, run_id)):
        raise missing
    data = store.load(run_id)
    if data is None:
        raise missing
    return jsonable_encoder(data)


class KeyOut(BaseModel):
    """A stored key as listed (never its token)."""

    model_config = ConfigDict(extra="forbid")
    key_id: str
    name: str
    scopes: list[str]
    collections: list[str] | None = Field(description="Colecciones permitidas; null = todas")
    purpose: str | None = Field(None, description="Propósito (política de propósitos); null = ninguno")
    created_at: dt.datetime
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None
    last_used_at: dt.datetime | None
    active: bool


class KeyCreate(BaseModel):
    """A key to create."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=80)
    scopes: list[str] = Field(min_length=1, max_length=4, description="read, chat, review, admin")
    collections: list[str] | None = Field(None, max_length=50, description="null = todas las colecciones")
    expires_days: int | None = Field(None, ge=1, le=3650)
    purpose: str | None = Field(
        None, max_length=40, pattern=r"^[a-z0-9_-]+$", description="un propósito de la política; null = ninguno"
    )


class KeyCreated(KeyOut):
    token: str = Field(description="La clave completa; se muestra solo esta vez")


def _keys(request: Request):
    keys = request.app.state.access.keys()
    if keys is None:
        raise _no_db()
    return keys


def _out(info) -> dict:
    return {**info.__dict__, "active": info.active}


@router.get("/keys", response_model=list[KeyOut], responses=_ERRORS, summary="Claves de API (sin el secreto)")
def list_keys(_: AdminPrincipal, request: Request) -> list[KeyOut]:
    return [KeyOut(**_out(k)) for k in _keys(request).list()]


@router.post("/keys", response_model=KeyCreated, status_code=201, responses={**_ERRORS, 400: {"model": ErrorResponse}})
def create_key(_: AdminPrincipal, request: Request, body: KeyCreate) -> KeyCreated:
    """Create a key; the token is in this response only."""
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(days=body.expires_days) if body.expires_days else None
    try:
        token, info = _keys(request).create(body.name, body.scopes, body.collections, expires, purpose=body.purpose)
    except AccessError as exc:
        raise HTTPException(400, detail={"code": "invalid_key", "message": str(exc)}) from exc
    return KeyCreated(**_out(info), token=token)


@router.delete("/keys/{key_id}", responses=_ERRORS, summary="Revoca una clave")
def revoke_key(
    _: AdminPrincipal, request: Request, key_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")]
) -> dict[str, Any]:
    if not _keys(request).revoke(key_id):
        raise HTTPException(404, detail={"code": "unknown_key", "message": "no existe esa clave"})
    return {"key_id": key_id, "revoked": True}


@router.get("/audit", responses=_ERRORS, summary="Registro de auditoría (más reciente primero)")
def audit_log(
    _: AdminPrincipal,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    key_id: Annotated[str | None, Query(max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")] = None,
) -> list[dict[str, Any]]:
    audit = request.app.state.access.audit()
    if audit is None:
        raise _no_db()
    return jsonable_encoder(audit.recent(limit, key_id))
