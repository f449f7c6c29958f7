"""POST /chat and POST /chat/stream (Server-Sent Events).

Both run the same ``AgentRunner.run``; the contract is assembled once (``api.schemas.assemble``)
and the trace is stored after assembly, with the response as sent. The stream emits one
``event: step`` per finished step (role, state, tool, call id, ms, tokens; guard rules are never
included) and then ``event: final`` with the full ``ChatResponse``.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from api.deps import ServiceDep
from api.schemas import ChatRequest, ChatResponse, assemble, error_response
from api.security import Chat, ChatScope
from radar_pipeline.agent.service import AgentService
from radar_pipeline.collection import AccessScope

log = logging.getLogger("radar.api.chat")
router = APIRouter(tags=["chat"], dependencies=[Chat])  # scope: chat

_CONTRACT_ERRORS = {
    400: {"model": ChatResponse, "description": "Cuerpo ilegible (contrato completo, estado=error)"},
    422: {"model": ChatResponse, "description": "Solicitud inválida (contrato completo, estado=error)"},
    500: {"model": ChatResponse, "description": "Error inesperado (contrato completo, estado=error)"},
}


def run_chat(
    service: AgentService,
    req: ChatRequest,
    on_event: Callable[[dict], None] | None = None,
    scope: AccessScope | None = None,
) -> ChatResponse:
    """Run one question under the caller's ``scope`` (every tool of the run reads only its
    collections) and return the contract; never raises."""
    try:
        runner = service.runner()
    except Exception:
        log.exception("agent runner unavailable")
        return error_response(
            "El servicio del agente no pudo iniciarse.",
            pregunta=req.pregunta,
            reason="servicio_no_disponible",
            modo=service.mode,
            conversacion_id=req.conversacion_id,
        )
    result = runner.run(req.pregunta, req.conversacion_id, on_event, scope=scope)
    try:
        resp = assemble(result)
    except ValidationError:
        log.exception("run %s: result does not fit the contract", result.run_id)
        resp = error_response(
            "No pude ensamblar la respuesta.",
            pregunta=req.pregunta,
            reason="contrato_invalido",
            modo=service.mode,
            conversacion_id=result.conversacion_id,
        )
    runner.store_trace(result, resp.model_dump(mode="json"))
    return resp


@router.post(
    "/chat",
    response_model=ChatResponse,
    responses=_CONTRACT_ERRORS,
    summary="Responde una pregunta con citas [doc_id:chunk_id]",
)
def chat(req: ChatRequest, service: ServiceDep, scope: ChatScope) -> ChatResponse:
    """The agent's answer, from the caller's collections only. Always the full contract;
    ``metadata.estado`` says how the run ended."""
    return run_chat(service, req, scope=scope)


@router.post(
    "/chat/stream",
    response_class=StreamingResponse,
    summary="La misma ejecución como Server-Sent Events",
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "event: step (uno por paso terminado) … event: final (ChatResponse)",
        },
        **_CONTRACT_ERRORS,
    },
)
def chat_stream(req: ChatRequest, service: ServiceDep, scope: ChatScope) -> StreamingResponse:
    events: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            resp = run_chat(service, req, on_event=lambda e: events.put(("step", e)), scope=scope)
        except Exception:
            log.exception("stream worker failed")
            resp = error_response("Error interno.", pregunta=req.pregunta, modo=service.mode)
        events.put(("final", resp.model_dump(mode="json")))
        events.put(None)

    threading.Thread(target=work, name="chat-stream", daemon=True).start()

    def gen():
        while True:
            item = events.get()
            if item is None:
                return
            name, data = item
            yield f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"

    return StreamingResponse(
        gen(), media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
