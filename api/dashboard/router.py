"""The dashboard's HTTP side: the page (``/tablero/``), its static files and four read endpoints.

``/tablero/api/vista/{view}`` — one view's rows with the dashboard's filters (see ``data/``);
``/tablero/api/evidencia`` — the passages behind rows of a view; ``/tablero/api/meta`` — names
of entities and places, materialization status, model mode; ``/tablero/api/resolver`` — the
agent's filter values (Spanish names) to dictionary / gazetteer ids. Everything else the page
uses is the service's own API (``/aggregates``, ``/documents/{id}/window``, ``/chat/stream``).

A missing table answers ``materialized: false`` (HTTP 200) and no database answers 409, like
``/aggregates``; these routes stay out of the OpenAPI document (they serve the page, not clients). The page and its
static files are open (no corpus data); the four data endpoints need the ``read`` scope, and their
figures, row ids and evidence are those of the collections the credential may read (the precompute
rows of those collections folded inside the query: ``PrecomputeReader.scoped``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Literal

import sqlalchemy as sa
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from api.dashboard.data import ENTITY_ID, PLACE_ID, VIEWS, DashboardData, Filters, NotMaterialized
from api.security import Read, ReadScope
from radar_pipeline.build_status import building_message
from radar_pipeline.vocabulary import Phenomenon

log = logging.getLogger("radar.api.dashboard")
STATIC = Path(__file__).resolve().parent / "static"
router = APIRouter(include_in_schema=False)

Phen = Phenomenon
Year = Annotated[int | None, Query(ge=1900, le=2100)]
View = Literal[VIEWS]  # type: ignore[valid-type]


def _data(request: Request) -> DashboardData:
    service = request.app.state.service
    engine = service.engine()
    if engine is None:
        raise HTTPException(
            409,
            detail={
                "code": "database_unavailable",
                "message": "PostgreSQL no está disponible para leer los precómputos",
            },
        )
    cached = getattr(request.app.state, "dashboard_data", None)
    if cached is None or cached.engine is not engine:
        cached = request.app.state.dashboard_data = DashboardData(engine, service.aggregates())
    return cached


def _filters(
    fenomeno: str | None, desde: int | None, hasta: int | None, entidad: str | None, lugar: str | None
) -> Filters:
    if entidad is not None and not ENTITY_ID.match(entidad):
        raise HTTPException(
            422,
            detail={
                "code": "invalid_filter",
                "message": "entidad: un entity_id del diccionario o un país (country:CHN)",
            },
        )
    if lugar is not None and not PLACE_ID.match(lugar):
        raise HTTPException(
            422,
            detail={
                "code": "invalid_filter",
                "message": "lugar: un place_id (department:18, municipality:52835, country:COL) o una subregión (subregion:catatumbo)",
            },
        )
    if desde is not None and hasta is not None and desde > hasta:
        desde, hasta = hasta, desde
    return Filters(phenomenon=fenomeno, year_from=desde, year_to=hasta, entity=entidad, place=lugar)


def _guard(fn):
    try:
        return fn()
    except NotMaterialized as exc:
        # while `radar up` builds, say what and how far (build_status), not only "not materialized"
        return {
            "materialized": False,
            "message": f"'{exc}' no está materializado todavía",
            "construccion": building_message(),
        }
    except sa.exc.SQLAlchemyError as exc:
        log.warning("dashboard query failed: %s", exc)
        raise HTTPException(409, detail={"code": "query_failed", "message": "no pude leer los precómputos"}) from exc


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/tablero/", status_code=307)


@router.get("/tablero")
def tablero_redirect() -> RedirectResponse:
    return RedirectResponse("/tablero/", status_code=307)


@router.get("/tablero/")
def page() -> Response:
    if not (STATIC / "vendor" / "d3.min.js").is_file() or not (STATIC / "geo" / "sources.json").is_file():
        return HTMLResponse(
            '<!doctype html><html lang="es"><head><meta charset="utf-8"><title>Radar — tablero</title></head><body>'
            "<main><h1>El tablero no está instalado</h1><p>Faltan las bibliotecas o los límites geográficos. Ejecute "
            "<code>npm ci --prefix api/dashboard</code> y <code>python api/dashboard/build.py</code>.</p></main></body></html>",
            status_code=503,
        )
    index = STATIC / "index.html"
    return FileResponse(index, media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-cache"})


@router.get("/tablero/api/meta")
def meta(request: Request, scope: ReadScope) -> dict:
    service = request.app.state.service
    llm = service.settings.llm
    out = {
        "modo": service.mode,
        "modelo": {
            "grande": llm.model_large if llm.enabled else None,
            "pequeno": (llm.model_small or llm.model_large) if llm.enabled else None,
        },
    }
    engine = service.engine()
    if engine is None:
        return {**out, "materialized": False, "message": "PostgreSQL no está disponible"}
    return {**out, "materialized": True, **_guard(lambda: _data(request).meta(scope))}


@router.get("/tablero/api/vista/{view}")
def view(
    request: Request,
    scope: ReadScope,
    view: Annotated[View, PathParam()],
    fenomeno: Annotated[Phen | None, Query()] = None,
    desde: Year = None,
    hasta: Year = None,
    entidad: Annotated[str | None, Query(max_length=80)] = None,
    lugar: Annotated[str | None, Query(max_length=4000)] = None,
    nivel: Annotated[Literal["country", "department", "municipality"] | None, Query()] = None,
    grupo: Annotated[str | None, Query(max_length=20)] = None,
    granularidad: Annotated[Literal["year", "month"], Query()] = "year",
    columnas: Annotated[Literal["source", "phenomenon"], Query()] = "source",
) -> dict:
    f = _filters(fenomeno, desde, hasta, entidad, lugar)
    opts = {
        "documents_per_place": {"level": nivel},
        "armed_presence": {"grupo": grupo},
        "timeline": {"granularidad": granularidad},
        "entity_heatmap": {"columnas": columnas},
    }.get(view, {})
    data = _data(request)
    return {"materialized": True, **_guard(lambda: data.view(view, f, scope, **opts))}


@router.get("/tablero/api/evidencia")
def evidencia(
    request: Request,
    scope: ReadScope,
    vista: Annotated[View, Query()],
    ids: Annotated[str, Query(max_length=2000, pattern=r"^[0-9,]+$")],
    fenomeno: Annotated[Phen | None, Query()] = None,
    desde: Year = None,
    hasta: Year = None,
    entidad: Annotated[str | None, Query(max_length=80)] = None,
    lugar: Annotated[str | None, Query(max_length=4000)] = None,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict:
    f = _filters(fenomeno, desde, hasta, entidad, lugar)
    data = _data(request)
    row_ids = [int(x) for x in ids.split(",") if x and len(x) <= 18][:200]
    if not row_ids:
        raise HTTPException(422, detail={"code": "invalid_filter", "message": "ids: identificadores de filas"})
    return {"materialized": True, **_guard(lambda: data.evidence(vista, row_ids, f, offset, limit, scope))}


@router.get("/tablero/api/resolver", dependencies=[Read])
def resolver(
    request: Request,
    entidad: Annotated[str | None, Query(max_length=120)] = None,
    lugar: Annotated[str | None, Query(max_length=120)] = None,
) -> dict:
    data = _data(request)
    return _guard(lambda: data.resolve(entidad, lugar))
