"""Schemas of the JSON replies the small model gives in LLM mode (validated by ``AgentRunner._json_call``).

Unknown keys are ignored; a reply that does not validate gets one repair request, then it counts
as a provider failure (``LLMError('malformed')``): the role falls back to its offline counterpart
(degraded mode, see ``runner``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class GuardReply(_Reply):
    """Input guard: allow or block; ``categoria`` goes to the trace, never to the user."""

    veredicto: Literal["permitir", "bloquear"]
    categoria: str | None = None


class OrchestratorReply(_Reply):
    """Orchestrator: question kind, route and search formulations (the first 3 are used)."""

    tipo: Literal["pregunta", "saludo", "fuera_de_tema"] = "pregunta"
    ruta: Literal["text", "visualization", "both"] = "text"
    formulaciones: list[str] = Field(default_factory=list, max_length=6)  # the first 3 are used


class VerifierReply(_Reply):
    """Verifier: faithfulness verdict, its reason and the unsupported sentences."""

    fiel: bool
    motivo: str = ""
    frases_sin_soporte: list[str] = Field(default_factory=list)


class PremiseReply(_Reply):
    """Premise check: a proposed verdict, the chunk id it rests on and the span quoted from it.

    Only a proposal; ``premise.validate_proposal`` keeps it when the chunk was read, the span is in
    it and the sentence holding it contradicts (``falsa``) or supports (``verdadera``) the premise.
    """

    estado: Literal["verdadera", "falsa", "no_verificada"] = "no_verificada"
    chunk_id: str | None = None
    fragmento: str | None = Field(None, max_length=2000)


class VisualizerReply(_Reply):
    """Visualizer: proposed components and filters (closed lists checked by ``visualizer.validate``)."""

    componentes: list[Any] = Field(default_factory=list)
    filtros: dict = Field(default_factory=dict)
