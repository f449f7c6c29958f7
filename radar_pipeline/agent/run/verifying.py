"""VERIFY: the citations checked in code (``roles.verifier``), the premise assessed
(``roles.premise``), claims in answers (``roles.claims_answer``), the faithfulness judge in LLM mode,
then accept, reformulate or ship unverified. Mixed into ``runner.AgentRunner``.
"""

from __future__ import annotations

import json
import logging
import re
import time

from radar_pipeline.agent import messages, prompts
from radar_pipeline.agent.llm import LLMError
from radar_pipeline.agent.reading.requirements import Requirement
from radar_pipeline.agent.replies import PremiseReply, VerifierReply
from radar_pipeline.agent.roles import claims_answer, verifier
from radar_pipeline.agent.roles import premise as premises
from radar_pipeline.agent.run.state import RunContext, State
from radar_pipeline.retrieval.service import normalize_id

log = logging.getLogger("radar.agent")


class Verifying:
    """VERIFY (a mixin of ``runner.AgentRunner``: its attributes and other steps through ``self``)."""

    # -- VERIFY
    def _verify(self, ctx: RunContext) -> State:
        self._assess_premise(ctx)
        t0 = time.perf_counter()
        check = verifier.check_answer(ctx.draft_text, ctx.toolbox.read)
        reasons = list(check.reasons)
        ok = check.ok
        fallback_reason, fallback = None, {}
        if ok and self.llm:  # the model's faithfulness judgement, or the code check alone when it is down
            failure = None
            if self._model_up(ctx):
                try:
                    ok = self._judged_faithful(ctx, check, reasons)
                except LLMError as exc:
                    failure = exc
            if failure is not None or not self._model_up(ctx):
                fallback_reason, fallback = self._degrade(ctx, "verificador", failure, "solo verificación de citas")
        ctx.step(
            "verificador",
            State.VERIFY,
            t0,
            rejected_citations=check.rejected or None,
            termination_reason=fallback_reason if ok else "rechazada",
            detail={
                "citas_validas": len(check.valid),
                "motivos": reasons,
                "frases_sin_soporte": check.unsupported[:10],
                **fallback,
            },
        )
        if ok:
            return self._accept(ctx)
        if ctx.retries < self.config.max_retries:
            return self._reformulate(ctx, check, reasons)
        return self._ship_unverified(ctx, reasons, bool(check.valid))

    def _assess_premise(self, ctx: RunContext) -> None:
        """Judge ``ctx.premise`` on the passages read (again only when more were read); one trace step."""
        if ctx.premise is None or ctx.toolbox is None:
            return
        read = {**ctx.toolbox.read, **self._claims(ctx).passages}  # a claim's passages are evidence too
        if ctx.premise_verdict is not None and frozenset(read) == ctx.premise_basis:
            return
        ctx.premise_basis = frozenset(read)
        if self.llm:
            verdict, source = self._premise_llm(ctx, read), "modelo"
        else:
            verdict, source = premises.assess(ctx.premise, read), "reglas"
        t0 = time.perf_counter()
        if verdict.chunk_id:
            # the quotes, one per line with their citation: the restated premise is the question's
            # claim (its years and names need not be in the passage that contradicts it)
            check = verifier.check_answer(verdict.evidence_lines(), read)
            if not check.ok:
                verdict = premises.unverified(ctx.premise, "cita_rechazada: " + "; ".join(check.reasons)[:200])
        ctx.premise_verdict = verdict
        ctx.step(
            "verificador",
            State.VERIFY,
            t0,
            detail={
                "premisa": verdict.contract(),
                "polaridad": ctx.premise.polarity,
                "motivo": verdict.reason,
                "fuente": source,
                "pasajes": len(read),
            },
        )

    def _claims(self, ctx: RunContext, state: State = State.VERIFY) -> claims_answer.ClaimsFound:
        """The claims the question touches (``claims_answer.find_claims``, under the caller's scope),
        looked up once per run; one trace step when any lookup was made."""
        if ctx.claims is None:
            t0 = time.perf_counter()
            engine = getattr(self.aggregates, "engine", None)
            ask = ctx.plan is not None and ctx.plan.kind == "question"
            ctx.claims = (
                claims_answer.find_claims(
                    engine, ctx.question, ctx.facts, phenomenon=ctx.plan.phenomenon, scope=ctx.scope
                )
                if ask
                else claims_answer.ClaimsFound()
            )
            if ctx.claims.lookups:
                ctx.step("analista", state, t0, result_size=len(ctx.claims.claims), detail=ctx.claims.trace())
        return ctx.claims

    def _premise_llm(self, ctx: RunContext, read: dict[str, dict]) -> premises.PremiseVerdict:
        """The small model's proposed verdict, validated by code; an invalid reply is ``no_verificada``."""
        user = (
            f"Premisa que la pregunta da por cierta (dato): {ctx.premise.text}\nPregunta (dato): {ctx.question}\n"
            + (
                f"Datos de la premisa: {json.dumps(ctx.premise.slots.describe(), ensure_ascii=False)}\n"
                if ctx.premise.slots
                else ""
            )
            + "\n"
            + prompts.fence_passages(list(read.values()))
        )
        try:
            reply = self._json_call(
                ctx,
                "verificador",
                State.VERIFY,
                [{"role": "system", "content": prompts.PREMISE}, {"role": "user", "content": user}],
                "small",
                PremiseReply,
            )
        except LLMError as exc:
            if exc.kind != "malformed":
                raise
            return premises.unverified(ctx.premise, "propuesta_no_validada: respuesta del modelo no válida")
        chunk_id = normalize_id(reply.chunk_id or "").strip("[] ").split(":")[-1].strip() or None
        return premises.validate_proposal(ctx.premise, reply.estado, chunk_id, reply.fragmento, read)

    def _judged_faithful(self, ctx: RunContext, check: verifier.CheckResult, reasons: list[str]) -> bool:
        """The small model's faithfulness verdict on the cited passages; a rejection adds to ``reasons``/``check``."""
        read = ctx.toolbox.read
        cited = [read[c] for c in check.valid]
        reply = self._json_call(
            ctx,
            "verificador",
            State.VERIFY,
            [
                {"role": "system", "content": prompts.VERIFIER},
                {
                    "role": "user",
                    "content": f"Pregunta (dato): {ctx.question}\n\nRespuesta a verificar:\n{ctx.draft_text}\n\n"
                    + prompts.fence_passages(cited),
                },
            ],
            "small",
            VerifierReply,
        )
        if not reply.fiel:
            reasons.append(f"fidelidad: {reply.motivo[:300]}")
            check.unsupported += reply.frases_sin_soporte[:10]
        return reply.fiel

    def _accept(self, ctx: RunContext) -> State:
        """Verified: ``respondida``, or ``incompleta`` with a coverage note (see the module docstring
        on coverage: a period missing some years is ``incompleta`` too, its note naming the years)."""
        ctx.verified = True
        missing = [c for c in ctx.coverage if not c["cubierto"]]
        ctx.text = verifier.canonicalize(ctx.draft_text, ctx.toolbox.read)
        if missing:
            ctx.estado, ctx.termination = "incompleta", "cobertura_incompleta"
            note = messages.coverage_note(_unsaid(ctx, missing), _span(ctx.plan.requirements))
            ctx.text += "\n\n" + note if note else ""
        else:
            ctx.estado, ctx.termination = "respondida", "respondida"
        return State.GUARD_OUT

    def _reformulate(self, ctx: RunContext, check: verifier.CheckResult, reasons: list[str]) -> State:
        """Rejected with retries left: back to the orchestrator with the reasons; unsupported sentences excluded."""
        ctx.retries += 1
        ctx.feedback = "; ".join(reasons) + (
            "; citas rechazadas: " + ", ".join(r["cita"] for r in check.rejected[:5]) if check.rejected else ""
        )
        ctx.exclude |= {re.sub(r"^-\s*«|»\s*\[.*$", "", s).strip() for s in check.unsupported}
        return State.ORCHESTRATE

    def _ship_unverified(self, ctx: RunContext, reasons: list[str], cites_read: bool = True) -> State:
        """Retries spent: ``no_verificada``, the answer behind a warning (plus the coverage note).
        When the last draft keeps no valid citation of a passage read (``cites_read`` False), the
        run ends ``incompleta`` (``sin_citas_validas``) with the reasons instead, its uncited text
        withheld: an answer with no read citation is no answer (seed 002's closing rule)."""
        if not cites_read:
            ctx.estado, ctx.termination = "incompleta", "sin_citas_validas"
            ctx.text = messages.no_valid_citation(ctx.retries, reasons)
        else:
            ctx.estado, ctx.termination = "no_verificada", "verificacion_agotada"
            draft = verifier.canonicalize(ctx.draft_text, ctx.toolbox.read)
            ctx.text = messages.unverified(ctx.retries, reasons, draft)
        missing = [c for c in ctx.coverage if not c["cubierto"]]
        note = messages.coverage_note(_unsaid(ctx, missing), _span(ctx.plan.requirements)) if missing else ""
        if note:
            ctx.text += "\n\n" + note
        return State.GUARD_OUT


def _unsaid(ctx: RunContext, missing: list[dict]) -> list[dict]:
    """The coverage rows without evidence that the draft has not said yet (a place the passages read
    name but no quote does is said by the writer's own note, ``RunContext.said_uncovered``)."""
    return [c for c in missing if c["requisito"] not in ctx.said_uncovered]


def _span(requirements: list[Requirement]) -> tuple[int, int] | None:
    """The period the ``range`` requirements span (``(desde, hasta)``), None without one."""
    return next((r.span for r in requirements if r.kind == "range" and r.span), None)
