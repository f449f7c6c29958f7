"""The FastAPI app factory (``create_app``) and its global error handling.

Run with ``radar serve`` (or ``uvicorn api.main:app``, which always requires credentials). Access
control (``api.security``): every endpoint but ``/health``, the docs and the dashboard's static page
declares a scope; bodies over the limit get 413 before parsing; every request is audited; CORS is
closed unless ``RADAR_AUTH_CORS_ORIGINS`` lists origins. Handlers make sure nothing becomes a bare
500: a /chat request that fails validation or crashes outside the run still gets the full
``ChatResponse`` contract with ``estado='error'``; other endpoints answer ``{"error": {code, message}}``.
"""

from __future__ import annotations

import json
import logging
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.dashboard import mount as mount_dashboard
from api.routes import admin, aggregates, chat, claims, documents, health, history, publications, runs, search
from api.schemas import error_response
from api.security import AccessControl, AuditMiddleware
from radar_pipeline.agent.service import AgentService, ServiceSettings

log = logging.getLogger("radar.api")


def _is_chat(request: Request) -> bool:
    return request.url.path.rstrip("/") in ("/chat", "/chat/stream")


# /chat answers its errors in the contract; the reason says which kind (never which rule or key).
# A refusal that the caller can act on (its own key's purpose, the open mode's way to a key) also
# says why in ``respuesta``, as the same refusal says in ``error.message`` on the other endpoints.
_CHAT_EXPLAINED = {"purpose_forbids_endpoint", "unknown_purpose", "open_mode_requires_key"}
_CHAT_REASONS = {
    401: "no_autenticado",
    403: "no_autorizado",
    413: "solicitud_demasiado_grande",
    429: "limite_de_solicitudes",
    503: "servicio_no_disponible",
}


def create_app(
    settings: ServiceSettings | None = None,
    *,
    service: AgentService | None = None,
    access: AccessControl | None = None,
) -> FastAPI:
    """Build the app. ``service`` (tests) or a new ``AgentService(settings)``; nothing heavy loads here.

    ``access`` is the access policy; None means ``AccessControl.open_loopback()`` (no credential,
    loopback peers only: the embedded default and the test apps). ``radar serve`` passes the
    policy it chose, ``api.main:app`` passes ``AccessControl.required()``.
    """
    owned = service is None
    svc = service or AgentService(settings)
    policy = (access or AccessControl.open_loopback()).bind(svc)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        if owned:
            svc.close()

    app = FastAPI(
        title="Radar — agente y API del tablero",
        version="0.1.0",
        lifespan=lifespan,
        description="Preguntas en español respondidas desde las tablas materializadas, con cada afirmación "
        "citada [doc_id:chunk_id]; endpoints de lectura compartidos con el tablero.",
    )
    app.state.service = svc
    app.state.access = policy
    for r in (
        chat.router,
        search.router,
        documents.router,
        publications.router,
        aggregates.router,
        claims.router,
        claims.review_router,
        admin.router,
        runs.router,
        history.router,
        health.router,
    ):
        app.include_router(r)
    mount_dashboard(app)  # the dashboard page, its static files and read endpoints (/tablero/)

    def too_large(path: str, limit: int) -> tuple[str, bytes]:
        msg = f"La solicitud supera el tamaño máximo ({limit} bytes)."
        if path.rstrip("/") in ("/chat", "/chat/stream"):
            body = error_response(msg, reason=_CHAT_REASONS[413], modo=svc.mode).model_dump(mode="json")
        else:
            body = {"error": {"code": "body_too_large", "message": msg}}
        return "application/json", json.dumps(body, ensure_ascii=False).encode("utf-8")

    if policy.settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=policy.settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type"],
        )
    app.add_middleware(AuditMiddleware, access=policy, too_large_body=too_large)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError):
        errors = jsonable_encoder(exc.errors(), custom_encoder={Exception: str})
        if _is_chat(request):
            body = error_response(
                'La solicitud no es válida: se espera {"pregunta": texto de 1 a 2000 caracteres, '
                '"conversacion_id": opcional}.',
                reason="solicitud_invalida",
                modo=svc.mode,
            )
            return JSONResponse(status_code=422, content=body.model_dump(mode="json"))
        return JSONResponse(status_code=422, content={"detail": errors})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if _is_chat(request):
            why = ""
            if isinstance(exc.detail, dict) and exc.detail.get("code") in _CHAT_EXPLAINED:
                why = f" {str(exc.detail.get('message', ''))[:500]}."
            body = error_response(
                f"La solicitud no pudo procesarse (HTTP {exc.status_code}).{why}",
                reason=_CHAT_REASONS.get(exc.status_code, "solicitud_invalida"),
                modo=svc.mode,
            )
            return JSONResponse(
                status_code=exc.status_code, content=body.model_dump(mode="json"), headers=getattr(exc, "headers", None)
            )
        detail = (
            exc.detail
            if isinstance(exc.detail, dict) and "code" in exc.detail
            else {"code": "http_error", "message": str(exc.detail)}
        )
        return JSONResponse(
            status_code=exc.status_code, content={"error": detail}, headers=getattr(exc, "headers", None)
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception):
        log.exception("unhandled error on %s", request.url.path)
        if _is_chat(request):
            return JSONResponse(
                status_code=500,
                content=error_response("Error interno inesperado.", modo=svc.mode).model_dump(mode="json"),
            )
        return JSONResponse(status_code=500, content={"error": {"code": "internal_error", "message": "error interno"}})

    return app


def __getattr__(name: str):
    """``uvicorn api.main:app``: the app is built on first access, from the environment."""
    if name == "app":
        global app
        app = create_app(access=AccessControl.required())
        return app
    raise AttributeError(name)
