"""ORCHESTRATE: the route, the search formulations and the coverage requirements (the offline rules of
``roles.router``, or the small model), and the follow-up route (``roles.followup``: a turn merged with
the previous one of its conversation). Mixed into ``runner.AgentRunner``.
"""

from __future__ import annotations

import logging
import time

from radar_pipeline.agent import messages, prompts
from radar_pipeline.agent.llm import LLMError
from radar_pipeline.agent.reading.requirements import glossary_terms, keywords
from radar_pipeline.agent.reading.views import view_vocabulary
from radar_pipeline.agent.replies import OrchestratorReply
from radar_pipeline.agent.roles import followup as followups
from radar_pipeline.agent.roles import premise as premises
from radar_pipeline.agent.roles import router
from radar_pipeline.agent.run.state import RunContext, State, Stop

log = logging.getLogger("radar.agent")


class Orchestrating:
    """ORCHESTRATE (a mixin of ``runner.AgentRunner``: its attributes and other steps through ``self``)."""

    # -- ORCHESTRATE
    def _orchestrate(self, ctx: RunContext) -> State:
        t0 = time.perf_counter()
        if ctx.facts is None:
            ctx.facts = self.reader.read(ctx.question)
        if ctx.plan is None:
            ctx.plan = router.plan(ctx.question, ctx.facts)
        plan = ctx.plan
        kind, ruta, forms = plan.kind, plan.ruta, list(plan.formulations)
        failure: LLMError | None = None
        by_model = False
        if self._model_up(ctx):
            try:
                kind, ruta, forms = self._orchestrate_llm(ctx, forms)
                by_model = True
            except LLMError as exc:
                failure = exc
        if not by_model:
            if ctx.retries:
                forms = self._offline_reformulations(ctx)
                detail = {
                    "modo": "reglas",
                    "reformulacion": ctx.retries,
                    "formulaciones": forms,
                    "motivo": ctx.feedback,
                }
            else:
                detail = {
                    "modo": "reglas",
                    "tipo": kind,
                    "ruta": ruta,
                    "formulaciones": forms,
                    "requisitos": [f"{r.kind}:{r.label}" for r in plan.requirements],
                }
            reason = None
            if self.llm:
                reason, extra = self._degrade(ctx, "orquestador", failure, "enrutador por reglas")
                detail.update(extra)
            ctx.step("orquestador", State.ORCHESTRATE, t0, termination_reason=reason, detail=detail)
        if not ctx.retries and ctx.followup is None:
            ctx.followup = self._followup(ctx)
        if ctx.followup is not None:
            # a follow-up changes the previous turn's view and filters: a question with the follow-up's
            # route (a view; both when it asks why; text when the previous answer was text)
            kind, ruta = "question", ctx.followup.ruta
            if ruta in ("text", "both") and ctx.followup.previous:
                # the search reads the previous question with this turn's change ("¿y en Nariño?")
                forms = [f"{ctx.followup.previous} {ctx.question}", *forms][:3]
            if ctx.steps:
                ctx.steps[-1].detail["seguimiento"] = {
                    "anterior": ctx.followup.previous,
                    "mantiene": list(ctx.followup.carried),
                    "cambia": list(ctx.followup.changed),
                }
        if (
            kind == "question"
            and ruta == "visualization"
            and not by_model
            and ctx.followup is None
            and router.also_told(ctx.question, ctx.facts, plan.reading)
        ):
            # a question whose words cue a view ("¿qué grupos convergen en Maicao según la alerta?"):
            # the view's figures and what the passages say, not the figures alone (router.also_told)
            ruta, ctx.view_question = "both", True
            if ctx.steps:
                ctx.steps[-1].detail["ruta_de_la_lectura"] = "visualization"
        ctx.ruta = ruta if kind == "question" else "text"
        ctx.formulations = forms
        if kind in ("greeting", "thanks", "capabilities"):
            raise Stop(
                "respondida", "saludo" if kind != "capabilities" else "capacidades", messages.SMALL_TALK_REPLIES[kind]
            )
        if kind == "off_topic":
            raise Stop("sin_evidencia", "fuera_de_tema", messages.OFF_TOPIC_REPLY)
        if not ctx.retries:
            ctx.premise = premises.extract_premise(ctx.question)
            if ctx.premise is not None and ctx.steps:
                ctx.steps[-1].detail["premisa"] = {
                    "texto": ctx.premise.text,
                    "polaridad": ctx.premise.polarity,
                    "forma": ctx.premise.kind,
                    "terminos": list(ctx.premise.terms),
                    "anios": list(ctx.premise.years),
                    "ranuras": ctx.premise.slots.describe() if ctx.premise.slots is not None else None,
                }
        if ctx.retries:
            return State.RETRIEVE
        return State.VISUALIZE if ruta in ("visualization", "both") else State.RETRIEVE

    def _followup(self, ctx: RunContext) -> followups.FollowUp | None:
        """The previous turn of this conversation (same credential, from the trace store) merged with
        this turn when this turn is a follow-up (``agent.followup.follow``); None otherwise or without
        a store. A store failure reads as no previous turn (logged): the question is then read alone."""
        if self.store is None or not ctx.conversacion_id or ctx.facts is None:
            return None

        def previous() -> followups.PreviousTurn | None:
            try:
                return self.store.previous_view(
                    ctx.conversacion_id, key_id=ctx.scope.key_id if ctx.scope is not None else None
                )
            except Exception:
                log.warning("run %s: previous turn of %s not read", ctx.run_id, ctx.conversacion_id, exc_info=True)
                return None

        return followups.follow(ctx.question, ctx.facts, previous, self.reader, view_vocabulary())

    def _orchestrate_llm(self, ctx: RunContext, rule_forms: list[str]) -> tuple[str, str, list[str]]:
        """The small model's ``(kind, ruta, formulations)``; ``rule_forms`` when it proposes none usable."""
        history = []
        if self.store and ctx.conversacion_id:
            try:
                history = self.store.recent_questions(
                    ctx.conversacion_id, key_id=ctx.scope.key_id if ctx.scope is not None else None
                )
            except Exception:  # noqa: BLE001 - history is optional
                history = []
        user = f"Pregunta (dato): {ctx.question}\n"
        if history:
            user += "Preguntas anteriores de la conversación: " + " | ".join(history) + "\n"
        if ctx.feedback:
            user += (
                f"Motivo de rechazo del verificador: {ctx.feedback}\nFormulaciones ya usadas: {ctx.used_formulations}\n"
            )
        reply = self._json_call(
            ctx,
            "orquestador",
            State.ORCHESTRATE,
            [{"role": "system", "content": prompts.ORCHESTRATOR}, {"role": "user", "content": user}],
            "small",
            OrchestratorReply,
        )
        kind = {"pregunta": "question", "saludo": "greeting", "fuera_de_tema": "off_topic"}[reply.tipo]
        if ctx.plan.kind in ("greeting", "thanks", "capabilities") and kind == "greeting":
            kind = ctx.plan.kind
        forms = [f for f in (" ".join(str(x).split())[:300] for x in reply.formulaciones) if len(f) >= 2][
            :3
        ] or rule_forms
        return kind, reply.ruta, forms

    def _offline_reformulations(self, ctx: RunContext) -> list[str]:
        topic = " ".join(keywords(ctx.question)[:6])
        english = " ".join(e for _, eng, _ in glossary_terms(ctx.question) for e in eng[:1])
        cands = [f"{english} {topic}".strip(), topic] + [f"{topic} {r.aliases[-1]}" for r in ctx.plan.requirements]
        return [c for c in dict.fromkeys(cands) if c and c not in ctx.used_formulations][:3] or [ctx.question]
