"""The LLM loop's plumbing: a JSON-mode model call validated against a schema (one repair retry), and
the degraded mode (``_model_up``, ``_degrade``: a role that falls back to its offline counterpart,
the run's circuit breaker). Mixed into ``runner.AgentRunner``.
"""

from __future__ import annotations

import logging
import time

from pydantic import BaseModel, ValidationError

from radar_pipeline.agent.llm import LLMError, parse_json_object
from radar_pipeline.agent.run.state import RunContext, State

log = logging.getLogger("radar.agent")


class ModelCalls:
    """The LLM loop's plumbing (a mixin of ``runner.AgentRunner``: its attributes and other steps through ``self``)."""

    def _json_call(
        self, ctx: RunContext, role: str, state: State, conversation: list[dict], size: str, schema: type[BaseModel]
    ) -> BaseModel:
        """A JSON-mode model call validated against ``schema``; one repair retry; else LLMError('malformed')."""
        for attempt in (1, 2):
            t0 = time.perf_counter()
            reply = self.llm.chat(conversation, size=size, json_mode=True, max_tokens=600)
            ctx.add_usage(role, reply)
            try:
                obj = schema.model_validate(parse_json_object(reply.content))
                ctx.step(
                    role,
                    state,
                    t0,
                    tokens_input=reply.input_tokens,
                    tokens_output=reply.output_tokens,
                    result_size=len(reply.content),
                    detail={"model": reply.model, "intento": attempt},
                )
                return obj
            except (LLMError, ValidationError) as exc:
                ctx.step(
                    role,
                    state,
                    t0,
                    tokens_input=reply.input_tokens,
                    tokens_output=reply.output_tokens,
                    result_size=len(reply.content),
                    termination_reason="respuesta_no_valida",
                    detail={"model": reply.model, "intento": attempt, "error": str(exc)[:300]},
                )
                conversation = conversation + [
                    {"role": "assistant", "content": reply.content[:2000]},
                    {
                        "role": "user",
                        "content": "Tu respuesta no es un JSON válido con el esquema pedido. "
                        "Responde solo con el objeto JSON.",
                    },
                ]
        raise LLMError("malformed", f"{role}: invalid JSON twice")

    # -- degraded mode (see the module docstring)
    def _model_up(self, ctx: RunContext) -> bool:
        """True while this run may call the model: LLM mode and the run's circuit breaker still closed."""
        return self.llm is not None and ctx.provider_down is None

    def _degrade(self, ctx: RunContext, rol: str, exc: LLMError | None, respaldo: str) -> tuple[str, dict]:
        """Record that ``rol`` (one of ``DEGRADABLE_ROLES``) runs offline in this run.

        ``exc`` is the provider failure of this role's own call (it opens the run's circuit breaker),
        or None when the breaker was already open and the model was not called. ``respaldo`` names
        the offline counterpart used. Returns ``(termination_reason, detail)`` for the role's trace
        step: ``degradado:<kind>`` and ``{"respaldo", "motivo", "error"}``.
        """
        if exc is not None:
            log.warning("run %s: model provider failed in %s (%s); falling back to %s", ctx.run_id, rol, exc, respaldo)
            if ctx.provider_down is None:
                ctx.provider_down = exc.kind
        kind = exc.kind if exc is not None else (ctx.provider_down or "connection")
        if rol not in [d["rol"] for d in ctx.degraded]:
            ctx.degraded.append({"rol": rol, "motivo": kind, "por_circuito": exc is None})
        error = str(exc)[:300] if exc is not None else "circuito abierto: el proveedor ya falló en esta ejecución"
        return f"degradado:{kind}", {"respaldo": respaldo, "motivo": kind, "error": error}
