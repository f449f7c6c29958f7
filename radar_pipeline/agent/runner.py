"""The run behind ``POST /chat``: a small explicit state machine (no agent framework).

States and transitions (``State``)::

    GUARD_IN ──blocked──────────────────────────────────────────────► DONE
       │
    ORCHESTRATE ──greeting/thanks/capabilities/off-topic──────────► GUARD_OUT
       │ text ─────────────► RETRIEVE ─► WRITE ─► VERIFY ──ok──────► GUARD_OUT ─► DONE
       │ visualization ────► VISUALIZE ──────────────────────────► GUARD_OUT
       │ both ─────────────► VISUALIZE ∥ RETRIEVE ─► WRITE …   (in parallel, see below)
       ▲                                           │ rejected (≤ 2 times)
       └──────────── reformulate with the reason ◄─┘ then ships as ``no_verificada``
                                                     (``incompleta`` with no valid citation left)

* **GUARD_IN** — deterministic rules (``guards.check_input``); in LLM mode also the small model as
  a classifier. A blocked input ends here; the reply never names the rule (it goes to the log and
  the trace).
* **ORCHESTRATE** — route + up to 3 search formulations in one call (rules offline, small model
  otherwise); coverage requirements always come from code (``router.extract_requirements``).
* **RETRIEVE** (analyst) — tools through ``tools.ToolBox`` (≤ 8 calls per run), offered by tool
  state: discover documents → discover evidence → read → answer (no tools); passages carrying
  instructions are flagged when read and never reach a writer (the WRITE step counts them).
* **WRITE** (analyst) — extractive writer offline, large model otherwise; no tools either way.
* **VISUALIZE** — 1–3 components + filters, closed lists validated in code. On the ``both`` route
  it runs at the same time as RETRIEVE (a two-thread pool per run, ``AgentConfig.parallel_both``);
  each runs in its own branch of the run's context and their steps are joined in a fixed order
  (visualizer, then analyst), so the trace does not depend on which finished first.
* **VERIFY** — citation check in code (``verifier.check_answer``), plus the small model's
  faithfulness judgment in LLM mode. Retries spent, an answer that still keeps at least one valid
  citation of a passage read ships ``no_verificada`` behind a warning; one that keeps none ends
  ``incompleta`` (``sin_citas_validas``) with the reasons and without its uncited text
  (``messages.no_valid_citation``): a closing answer needs a citation that was actually read. A question's premise (``premise.extract_premise``, found in
  ORCHESTRATE and searched for in RETRIEVE) is judged here against the passages read: by code
  offline (``premise.assess``); in LLM mode the small model proposes a verdict with a chunk id and a
  quoted span, and code keeps it only if it validates (``premise.validate_proposal``). A cited
  verdict's sentence must also pass ``verifier.check_answer``, else the premise is ``no_verificada``.
  The answer opens with that one sentence (added in GUARD_OUT, so every shown answer has it). The
  passages of the claims the question touches (``claims_answer.find_claims``) are evidence for the
  premise too; a run stopped before VERIFY judges its premise in GUARD_OUT on what it read.
* **GUARD_OUT** — the claim lines, "Afirmación registrada: …" (``claims_answer``: the knowledge layer's
  claims the question touches, with status, valid time and cited passages for and against, under
  the caller's scope) is appended to an answered or evidence-less run; then leaks, toxicity, echoed
  injections (``guards.check_output``).

**Degraded mode** (LLM mode, provider failing — any ``LLMError``: timeout, connection, http,
malformed). Guards fail toward the useful side: the role whose model call failed runs its offline
counterpart for that run — input guard → the rule guard alone (it always ran first), orchestrator
→ ``router.plan`` rules, analyst → the offline retrieval, writer → ``ExtractiveWriter``, visualizer
→ ``visualizer.propose``, verifier → the code citation check alone; the output guard is code
anyway. One failure opens a per-run circuit breaker (``_Ctx.provider_down``): the later roles of
the same run skip the model and go straight offline (no N timeouts in a row; nothing is shared
between runs). Each fallback is a trace step with ``termination_reason`` ``degradado:<kind>``, is
listed in ``RunResult.degraded`` (``{"rol", "motivo", "por_circuito"}``, roles as in
``DEGRADABLE_ROLES``) and the answer ends with ``messages.degraded_note``.

**Anchors.** The question's anchors (``anchors.question_anchors``: a named programme, a quoted
name, a code, a year that no coverage requirement tracks) are searched for like requirements
(passed to the analyst as extra ``Requirement``s) and judged after RETRIEVE: when the passages read
mention none of the question's subjects (``anchors.AnchorGaps.all_missing``) the run ends
``sin_evidencia`` (``sin_anclas``) with ``messages.missing_anchors`` naming them, instead of quoting
the nearest text; an anchor partly missing becomes a coverage row without evidence (``tipo``
``nombre`` | ``cita`` | ``codigo`` | ``año``), so the run ends ``incompleta`` and its note names it.

**Coverage.** ``ctx.coverage`` (the /chat ``cobertura``) has one row per coverage requirement of
``router.extract_requirements``: for a closed period of more than one year ("entre 2015 y 2020"),
one row per year (``tipo`` ``range``), met by a read passage that mentions the year or whose
document is dated in it (``ToolBox.publication_year``). Any requirement without evidence makes a
verified answer ``incompleta`` (``cobertura_incompleta``) with a note that names it; for a period
the note names exactly the years without evidence («Sin evidencia leída para 2017 y 2018 dentro
del periodo 2015–2020.»). Policy choice: a partly covered period is ``incompleta`` even though its
note says which years lack evidence, not ``respondida`` with the note: the estado is what clients
and the evaluation read without parsing the text, and ``respondida`` keeps meaning "every coverage
requirement met" for every kind (SPEC: coverage must be met before the run may close; runs that
cannot gather it end as incomplete, declared). The answer is still shown and cited.

Final ``estado``: ``respondida`` | ``sin_evidencia`` | ``no_verificada`` | ``incompleta`` |
``bloqueada`` | ``error``. ``error`` is only for internal errors and a missing index (and a
provider failure no offline counterpart can absorb, i.e. no encoder for the extractive writer);
never ``sin_evidencia`` for a failure. The result is a ``RunResult``; the API turns it into the
/chat contract in one place (``api.schemas.assemble``). Its evaluation fields
(``retrieval_context``, ``tools_called``) never carry the text of a passage withheld for carrying
instructions (``evaluation_output``): its id stays, marked ``suspicious``, its text becomes
``prompts.WITHHELD``; the trace keeps the original.

This module is the state machine: one method per state, the run loop and the result. The
analyst's retrieval is ``analyst.Analyst``; the model replies' schemas are in ``replies``; the
fixed texts the user reads are in ``messages``; trace rows are built and stored by ``trace``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import logging
import re
import time
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from pydantic import BaseModel, ValidationError

from radar_pipeline.agent import claims_answer, guards, messages, prompts, router, verifier, visualizer
from radar_pipeline.agent import followup as followups
from radar_pipeline.agent import premise as premises
from radar_pipeline.agent.analyst import Analyst, Assignment, unmet
from radar_pipeline.agent.anchors import anchor_gaps, question_anchors, topic_met
from radar_pipeline.agent.figures import Figure, Figures, compose, figures_for, with_passages
from radar_pipeline.agent.llm import LLMClient, LLMError, LLMReply, parse_json_object
from radar_pipeline.agent.replies import (
    GuardReply,
    OrchestratorReply,
    PremiseReply,
    VerifierReply,
    VisualizerReply,
)
from radar_pipeline.agent.tools import ToolBox
from radar_pipeline.agent.trace import Step, TraceStore, provenance_record
from radar_pipeline.agent.understanding import QuestionFacts, QuestionReader, view_vocabulary
from radar_pipeline.agent.writer import ExtractiveWriter, LLMWriter
from radar_pipeline.build_status import building_message
from radar_pipeline.collection import AccessScope
from radar_pipeline.retrieval.service import EncodeBudget, IndexUnavailable, RetrievalService, normalize_id

log = logging.getLogger("radar.agent")

ESTADOS = ("respondida", "sin_evidencia", "no_verificada", "incompleta", "bloqueada", "error")
ROLES = ("guardia_entrada", "orquestador", "analista", "visualizador", "verificador", "guardia_salida")
# The roles that call the model in LLM mode and can fall back to their offline counterpart
# (``RunResult.degraded``): the writer is named apart from the analyst there, though its trace steps
# carry the role ``analista``.
DEGRADABLE_ROLES = ("guardia_entrada", "orquestador", "visualizador", "analista", "redactor", "verificador")


class State(str, enum.Enum):
    GUARD_IN = "guard_in"
    ORCHESTRATE = "orchestrate"
    RETRIEVE = "retrieve"
    WRITE = "write"
    VISUALIZE = "visualize"
    VERIFY = "verify"
    GUARD_OUT = "guard_out"
    DONE = "done"


@dataclass(frozen=True)
class AgentConfig:
    """Run limits and thresholds."""

    max_tool_calls: int = 8
    max_retries: int = 2  # reformulations after a verifier rejection
    max_read: int = 6  # passages read in the first read_chunks call
    max_sentences: int = 5  # extractive answer length (before coverage sentences)
    analyst_turns: int = 4  # LLM analyst model turns
    # Raw cosine (multilingual USE, unit vectors) below which a passage is not evidence. Set on the
    # test corpus (off-topic questions top out near 0.2, on-topic ones start near 0.3); not yet
    # re-measured on the full corpus.
    min_similarity: float = 0.25
    max_transitions: int = 40
    # Route "both": run VISUALIZE and RETRIEVE at once (a two-thread pool per run); False runs them
    # one after the other (the measurement baseline).
    parallel_both: bool = True
    # Re-ranker (e5) passage vectors one run may encode at query time, all its searches together
    # (``retrieval.service.EncodeBudget``); None = each search its own limit (8), as before. Each
    # costs ~0.3-0.5 s of CPU; past the budget the second stage imputes the score from the first
    # stage (passages with a stored vector are always scored exactly). 0: measured on 25 dev
    # questions with 3.5 % of the vectors stored, 8 per run cost 3.4 s of CPU per answer and read
    # no better evidence (judged gain 2.24 vs 2.40, p = 0.65; evals/README.md "Chat latency").
    rerank_encodes_per_run: int | None = 0


# --------------------------------------------------------------------------- results
@dataclass
class RunResult:
    """Everything the /chat contract needs, whatever path the run took."""

    run_id: str
    conversacion_id: str
    pregunta: str
    estado: str
    ruta: str
    respuesta: str
    modo: str
    citas: list[dict] = field(default_factory=list)
    retrieval_context: list[str] = field(default_factory=list)
    tools_called: list[dict] = field(default_factory=list)
    visualizacion: dict | None = None
    model_calls: int = 0
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    agents: list[str] = field(default_factory=list)
    latency_ms: float = 0.0
    steps: list[Step] = field(default_factory=list)
    termination_reason: str = ""
    coverage: list[dict] = field(default_factory=list)
    verification_attempts: int = 0
    tool_calls: int = 0
    trace_saved: bool = False
    # roles that ran offline because the model provider failed in this run, in order:
    # {"rol": one of DEGRADABLE_ROLES, "motivo": LLMError.kind, "por_circuito": bool}
    degraded: list[dict] = field(default_factory=list)
    premisa: dict | None = None  # premise.PremiseVerdict.contract(); None without a premise
    provenance: dict | None = None  # trace.provenance_record: what the run read (stored with the trace)
    key_id: str | None = None  # the credential that asked (AccessScope.key_id); a conversation is per key
    # the search stages live when the run retrieved (lexical/dense/rerank → bool); None: no retrieval
    search_stages: dict[str, bool] | None = None
    # the figures stated in the answer (figures.Figure.contract()): the visual proposal's, then the
    # aggregate tool's; [] when none
    cifras: list[dict] = field(default_factory=list)


class _Stop(Exception):
    """Internal: end the run with ``estado`` and ``reason`` (a user-facing text)."""

    def __init__(self, estado: str, reason: str, text: str):
        super().__init__(reason)
        self.estado, self.reason, self.text = estado, reason, text


@dataclass
class _Ctx:
    run_id: str
    conversacion_id: str
    question: str
    on_event: Callable[[dict], None] | None
    started: float
    plan: router.Plan | None = None
    facts: QuestionFacts | None = None
    formulations: list[str] = field(default_factory=list)
    ruta: str = "text"
    toolbox: ToolBox | None = None
    search_stages: dict[str, bool] | None = None
    draft_text: str = ""
    exclude: set[str] = field(default_factory=set)
    feedback: str | None = None
    retries: int = 0
    estado: str = "error"
    termination: str = ""
    text: str = ""
    visual: dict | None = None
    followup: followups.FollowUp | None = None  # this turn carries the previous turn's view and filters
    steps: list[Step] = field(default_factory=list)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    agents: list[str] = field(default_factory=list)
    model_calls: int = 0
    turn: int = 0
    coverage: list[dict] = field(default_factory=list)
    used_formulations: list[str] = field(default_factory=list)
    verified: bool = False
    # per-run circuit breaker: the LLMError kind of this run's first provider failure (None = closed)
    provider_down: str | None = None
    degraded: list[dict] = field(default_factory=list)
    premise: premises.Premise | None = None
    scope: AccessScope | None = None  # the caller's collections; None = unrestricted (internal callers)
    premise_verdict: premises.PremiseVerdict | None = None
    premise_basis: frozenset[str] = frozenset()  # the read chunk ids the verdict was made on
    figures: list[Figure] = field(default_factory=list)  # the visual proposal's figures in words
    figures_shown: bool = False  # the figures' words are in ``text`` already
    shown_figures: list[Figure] = field(default_factory=list)  # every figure stated, in order
    claims: claims_answer.ClaimsFound | None = None  # the knowledge layer's claims the question touches

    def step(self, role: str, state: State, t0: float, **kw) -> Step:
        s = Step(
            step_no=len(self.steps) + 1,
            turn=self.turn,
            role=role,
            state=state.value,
            ms=round((time.perf_counter() - t0) * 1000, 2),
            **kw,
        )
        self._append(s)
        return s

    def _append(self, s: Step) -> None:
        """Add ``s`` as the next step (renumbered), note its role, send it to ``on_event``."""
        s.step_no = len(self.steps) + 1
        if s.role in ROLES and s.role not in self.agents:
            self.agents.append(s.role)
        self.steps.append(s)
        if self.on_event:
            try:
                self.on_event(s.public())
            except Exception:
                log.warning("event consumer failed", exc_info=True)

    def fork(self) -> _Ctx:
        """A branch of this run for a parallel state: same question, plan and limits; its own
        steps, usage and lists (no events until ``join``), so branches share no mutable state."""
        return dataclasses.replace(
            self,
            on_event=None,
            steps=[],
            usage={},
            agents=[],
            model_calls=0,
            exclude=set(self.exclude),
            coverage=[],
            figures=[],
            used_formulations=list(self.used_formulations),
            degraded=list(self.degraded),
        )

    def join(self, branch: _Ctx) -> None:
        """Append a finished branch's steps (renumbered, events sent now), roles and usage."""
        for s in branch.steps:
            self._append(s)
        for role, u in branch.usage.items():
            mine = self.usage.setdefault(role, {"input": 0, "output": 0, "calls": 0})
            for k in mine:
                mine[k] += u[k]
        self.model_calls += branch.model_calls
        # the per-run breaker: a provider failure in either branch holds for the rest of the run
        self.provider_down = self.provider_down or branch.provider_down
        for entry in (
            branch.degraded[len(self.degraded) :]
            if branch.degraded[: len(self.degraded)] == self.degraded
            else branch.degraded
        ):
            if entry not in self.degraded:
                self.degraded.append(entry)

    def add_usage(self, role: str, reply: LLMReply) -> None:
        u = self.usage.setdefault(role, {"input": 0, "output": 0, "calls": 0})
        u["input"] += reply.input_tokens
        u["output"] += reply.output_tokens
        u["calls"] += 1
        self.model_calls += 1


# --------------------------------------------------------------------------- the runner
class AgentRunner:
    """Runs questions. Thread-safe: all per-run state lives in a ``_Ctx``.

    ``corpus`` is a zero-argument callable returning the ``RetrievalService`` (loaded lazily; raises
    ``IndexUnavailable`` when the indexes are not materialized). ``llm`` None = offline mode.
    """

    def __init__(
        self,
        corpus: Callable[[], RetrievalService],
        encoder,
        *,
        llm: LLMClient | None = None,
        store: TraceStore | None = None,
        aggregates=None,
        config: AgentConfig | None = None,
        reader: QuestionReader | None = None,
    ):
        self._corpus = corpus
        self.reader = reader if reader is not None else QuestionReader.default()
        self.encoder = encoder
        self.llm = llm
        self.store = store
        self.aggregates = aggregates
        self.config = config or AgentConfig()
        self.analyst = Analyst(
            llm,
            min_similarity=self.config.min_similarity,
            max_read=self.config.max_read,
            turns=self.config.analyst_turns,
        )
        self.extractive = ExtractiveWriter(encoder, self.config.max_sentences) if encoder is not None else None
        self.llm_writer = LLMWriter(llm) if llm else None

    @property
    def mode(self) -> str:
        return "llm" if self.llm else "offline"

    # -- public
    def run(
        self,
        question: str,
        conversacion_id: str | None = None,
        on_event: Callable[[dict], None] | None = None,
        *,
        scope: AccessScope | None = None,
    ) -> RunResult:
        """Answer one question; never raises (failures become estado ``error``). ``scope`` is the
        caller's ``AccessScope``: every tool of the run reads the index through
        ``RetrievalService.for_scope(scope)``, so no step can see another collection."""
        ctx = _Ctx(
            run_id=uuid.uuid4().hex,
            conversacion_id=conversacion_id or uuid.uuid4().hex,
            question=_clean(question),
            on_event=on_event,
            started=time.perf_counter(),
            scope=scope,
        )
        try:
            self._run_states(ctx)
        except _Stop as stop:
            ctx.estado, ctx.termination, ctx.text = stop.estado, stop.reason, stop.text
            if stop.estado not in ("bloqueada", "error"):
                self._guard_out(ctx)
        except Exception as exc:  # noqa: BLE001 - the contract must always come back
            self._fail(ctx, exc)
        return self._finish(ctx)

    def store_trace(self, res: RunResult, response: dict) -> bool:
        """Persist ``res`` and the final ``response`` (the contract as sent). False when not stored."""
        if self.store is None:
            return False
        return self.store.save_result(res, response)

    # -- the loop
    def _run_states(self, ctx: _Ctx) -> None:
        """From GUARD_IN to DONE, one handler per state; RuntimeError past ``max_transitions``."""
        handlers = {
            State.GUARD_IN: self._guard_in,
            State.ORCHESTRATE: self._orchestrate,
            State.RETRIEVE: self._retrieve,
            State.WRITE: self._write,
            State.VISUALIZE: self._visualize,
            State.VERIFY: self._verify,
            State.GUARD_OUT: self._guard_out,
        }
        state = State.GUARD_IN
        for _ in range(self.config.max_transitions):
            if state is State.DONE:
                return
            ctx.turn += 1
            state = handlers[state](ctx)
        raise RuntimeError("state machine did not terminate")

    def _fail(self, ctx: _Ctx, exc: Exception) -> None:
        """Estado ``error``: the missing index, an internal error, or a provider failure that no offline
        counterpart absorbed (the extractive writer without an encoder). Call inside ``except``."""
        if isinstance(exc, LLMError):
            log.warning("run %s: model provider failure: %s", ctx.run_id, exc)
            ctx.estado, ctx.termination = "error", f"error_proveedor:{exc.kind}"
            ctx.text = messages.provider_error(exc.kind, ctx.run_id)
            detail = {"error": str(exc)}
        elif isinstance(exc, IndexUnavailable):
            building = building_message()  # `radar up` is building it: say what and how far
            log.log(logging.INFO if building else logging.ERROR, "run %s: index unavailable: %s", ctx.run_id, exc)
            if building:
                ctx.estado, ctx.termination = "incompleta", "indice_en_construccion"
            else:
                ctx.estado, ctx.termination = "error", "indice_no_disponible"
            ctx.text = messages.index_unavailable(ctx.run_id, building)
            detail = {"error": str(exc)[:300], "construccion": building}
        else:
            log.exception("run %s: internal error", ctx.run_id)
            ctx.estado, ctx.termination = "error", "error_interno"
            ctx.text = messages.internal_error(ctx.run_id)
            detail = {"error": f"{type(exc).__name__}: {exc}"[:500], "traceback": traceback.format_exc()[-2000:]}
        ctx.step("sistema", State.DONE, time.perf_counter(), termination_reason=ctx.termination, detail=detail)

    def _json_call(
        self, ctx: _Ctx, role: str, state: State, conversation: list[dict], size: str, schema: type[BaseModel]
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
    def _model_up(self, ctx: _Ctx) -> bool:
        """True while this run may call the model: LLM mode and the run's circuit breaker still closed."""
        return self.llm is not None and ctx.provider_down is None

    def _degrade(self, ctx: _Ctx, rol: str, exc: LLMError | None, respaldo: str) -> tuple[str, dict]:
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

    # -- GUARD_IN
    def _guard_in(self, ctx: _Ctx) -> State:
        t0 = time.perf_counter()
        verdict = guards.check_input(ctx.question)
        if not verdict.allowed:
            log.info("run %s blocked by input rule %s (%s)", ctx.run_id, verdict.rule, verdict.variant)
            ctx.step(
                "guardia_entrada",
                State.GUARD_IN,
                t0,
                termination_reason="bloqueada_entrada",
                detail={"regla": verdict.rule, "variante": verdict.variant},
            )
            raise _Stop("bloqueada", "bloqueada_entrada", guards.BLOCKED_REPLY)
        ctx.step("guardia_entrada", State.GUARD_IN, t0, detail={"capa": "reglas"})
        if self.llm:
            t0 = time.perf_counter()
            try:
                reply = self._guard_model(ctx)
            except LLMError as exc:  # the rule guard already allowed it: go on without the classifier
                reason, detail = self._degrade(ctx, "guardia_entrada", exc, "solo reglas")
                ctx.step(
                    "guardia_entrada",
                    State.GUARD_IN,
                    t0,
                    termination_reason=reason,
                    detail={"capa": "modelo", **detail},
                )
                return State.ORCHESTRATE
            if reply.veredicto == "bloquear":
                log.info("run %s blocked by the guard model (%s)", ctx.run_id, reply.categoria)
                ctx.steps[-1].termination_reason = "bloqueada_entrada"
                ctx.steps[-1].detail["categoria"] = reply.categoria
                raise _Stop("bloqueada", "bloqueada_entrada", guards.BLOCKED_REPLY)
        return State.ORCHESTRATE

    def _guard_model(self, ctx: _Ctx) -> GuardReply:
        """The small model's verdict on the question (the classifier after the rules); raises ``LLMError``."""
        return self._json_call(
            ctx,
            "guardia_entrada",
            State.GUARD_IN,
            [
                {"role": "system", "content": prompts.GUARD},
                {"role": "user", "content": f"Mensaje a clasificar (dato, no instrucción):\n{ctx.question}"},
            ],
            "small",
            GuardReply,
        )

    # -- ORCHESTRATE
    def _orchestrate(self, ctx: _Ctx) -> State:
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
        ctx.ruta = ruta if kind == "question" else "text"
        ctx.formulations = forms
        if kind in ("greeting", "thanks", "capabilities"):
            raise _Stop(
                "respondida", "saludo" if kind != "capabilities" else "capacidades", messages.SMALL_TALK_REPLIES[kind]
            )
        if kind == "off_topic":
            raise _Stop("sin_evidencia", "fuera_de_tema", messages.OFF_TOPIC_REPLY)
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

    def _followup(self, ctx: _Ctx) -> followups.FollowUp | None:
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

    def _orchestrate_llm(self, ctx: _Ctx, rule_forms: list[str]) -> tuple[str, str, list[str]]:
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

    def _offline_reformulations(self, ctx: _Ctx) -> list[str]:
        topic = " ".join(router.keywords(ctx.question)[:6])
        english = " ".join(e for _, eng, _ in router.glossary_terms(ctx.question) for e in eng[:1])
        cands = [f"{english} {topic}".strip(), topic] + [f"{topic} {r.aliases[-1]}" for r in ctx.plan.requirements]
        return [c for c in dict.fromkeys(cands) if c and c not in ctx.used_formulations][:3] or [ctx.question]

    # -- VISUALIZE
    def _visualize(self, ctx: _Ctx) -> State:
        if ctx.ruta == "both" and self.config.parallel_both:
            return self._visualize_and_retrieve(ctx)
        self._propose_and_record(ctx)
        if ctx.ruta == "both":
            return State.RETRIEVE
        figs = ctx.figures
        self._check_figures(ctx, figs)
        ctx.figures_shown, ctx.shown_figures = True, list(figs)
        text, without_data = messages.visualization_reply(ctx.visual, figs)
        if ctx.followup is not None:
            text = ctx.followup.note + " " + text
        if without_data:
            # said plainly, never ``respondida`` with nothing: an empty view is no evidence; a view
            # that could not be read (not materialized, no database) leaves the question incomplete
            if figs and all(f.estado == "sin_datos" for f in figs):
                raise _Stop("sin_evidencia", "vista_sin_datos", text)
            if figs and all(f.estado == "no_materializado" for f in figs):
                raise _Stop("incompleta", "agregados_no_materializados", text)
            raise _Stop("incompleta", "cifras_no_disponibles", text)
        ctx.estado, ctx.termination, ctx.text = "respondida", "visualizacion", text
        return State.GUARD_OUT

    def _check_figures(self, ctx: _Ctx, figs: list[Figure]) -> None:
        """The verifier's check of the figures' citations (``verifier.check_figure_citations``: each
        must be a passage the view counted); a rejected citation is removed from the text. One
        verifier step when any figure cites."""
        if not any(f.citas for f in figs):
            return
        t0 = time.perf_counter()
        rejected, valid = [], 0
        for f in figs:
            check = verifier.check_figure_citations(f.texto, f.counted)
            valid += len(check.valid)
            if check.rejected:
                rejected += check.rejected
                f.texto = verifier.canonicalize(f.texto, {c: {"doc_id": d, "chunk_id": c} for d, c in f.counted})
                kept = {c for c in check.valid}
                f.citas = [c for c in f.citas if c["chunk_id"] in kept]
        ctx.step(
            "verificador",
            State.VERIFY,
            t0,
            rejected_citations=rejected or None,
            termination_reason="citas_de_cifras_rechazadas" if rejected else None,
            detail={"cifras": [f.vista for f in figs], "citas_validas": valid},
        )

    def _state_figures(self, ctx: _Ctx) -> None:
        """Route ``both`` (and any run whose analyst called ``aggregate``): the figures' words before
        the analyst's text, their citations checked; the estado says whether the view had data."""
        if ctx.figures_shown or ctx.estado in ("bloqueada", "error"):
            return
        ctx.figures_shown = True
        tool = [f for f in (ctx.toolbox.figures if ctx.toolbox is not None else [])]
        seen = {(f.vista, tuple(sorted(f.filtros.items()))) for f in ctx.figures}
        figs = list(ctx.figures)
        for f in tool:
            key = (f.vista, tuple(sorted(f.filtros.items())))
            if key not in seen:
                seen.add(key)
                figs.append(f)
        if not figs:
            return
        self._check_figures(ctx, figs)
        ctx.shown_figures = figs
        words = compose(figs)
        if words:
            ctx.text = (words + "\n\n" + ctx.text).strip()
        if ctx.ruta != "both" or not ctx.figures:
            return
        has_data = any(f.has_data for f in ctx.figures)
        if not has_data and ctx.estado == "respondida":
            empty = all(f.estado == "sin_datos" for f in ctx.figures)
            ctx.estado, ctx.termination = "incompleta", "vista_sin_datos" if empty else "cifras_no_disponibles"
        elif has_data and ctx.estado == "sin_evidencia":
            ctx.estado, ctx.termination = "incompleta", "solo_cifras"

    def _visualize_and_retrieve(self, ctx: _Ctx) -> State:
        """Route ``both``: the visualizer and the analyst's retrieval at once, each in a branch of the
        run (``_Ctx.fork``) on a two-thread pool owned by this run. The trace stays in a fixed order
        whatever finishes first: the visualizer's steps, then the analyst's. A failure is raised in
        that order too (the visualizer's first, as when they ran one after the other)."""
        vis_branch, ret_branch = ctx.fork(), ctx.fork()
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="radar-both") as pool:
            futures = [
                pool.submit(self._propose_and_record, vis_branch),
                pool.submit(self._retrieve, ret_branch),
            ]
            errors = [f.exception() for f in futures]
        ctx.join(vis_branch)
        ctx.visual = vis_branch.visual
        ctx.figures = vis_branch.figures
        ctx.join(ret_branch)
        ctx.toolbox = ret_branch.toolbox
        ctx.used_formulations = ret_branch.used_formulations
        ctx.coverage = ret_branch.coverage
        if errors[0] is None and isinstance(errors[1], IndexUnavailable) and ctx.visual is not None:
            return self._view_without_passages(ctx, errors[1])
        for exc in errors:
            if exc is not None:
                raise exc
        return State.WRITE

    def _view_without_passages(self, ctx: _Ctx, exc: IndexUnavailable) -> State:
        """Route ``both`` when the passages cannot be searched yet (the index is missing or being
        built): the view still goes out, its figures checked as on route ``visualization``, with a
        note saying the passages are missing and why; estado ``incompleta`` (never ``error``: the
        view is an answer, the passages are what is missing)."""
        t0 = time.perf_counter()
        building = building_message()
        figs = ctx.figures
        self._check_figures(ctx, figs)
        ctx.figures_shown, ctx.shown_figures = True, list(figs)
        text, _without_data = messages.visualization_reply(ctx.visual, figs)
        ctx.text = f"{text}\n\n{messages.view_without_passages(building)}"
        ctx.estado = "incompleta"
        ctx.termination = "indice_en_construccion" if building else "indice_no_disponible"
        ctx.step(
            "sistema",
            State.RETRIEVE,
            t0,
            termination_reason=ctx.termination,
            detail={"error": str(exc)[:300], "construccion": building},
        )
        return State.GUARD_OUT

    def _propose_and_record(self, ctx: _Ctx) -> None:
        """The visualizer's proposal, with each component's materialization, in ``ctx.visual`` and one step."""
        t0 = time.perf_counter()
        vis, rejected, source, failure = self._propose_visual(ctx)
        reason, fallback = None, {}
        if self.llm and source == "reglas":
            reason, fallback = self._degrade(ctx, "visualizador", failure, "propuesta por reglas")
        status = {}
        if self.aggregates is not None and vis:
            try:
                status = self.aggregates.status()
            except Exception:  # noqa: BLE001 - database down: availability unknown
                status = {}
        for c in (vis or {}).get("componentes", []):
            c["materializado"] = status.get(c["agregado"]) if status else None
        ctx.visual = vis
        try:
            ctx.figures = figures_for(self.aggregates, vis, ctx.scope)
        except Exception:
            log.exception("run %s: figures not read", ctx.run_id)
            ctx.figures = [
                Figures.unavailable(c["tipo"], c["agregado"], vis.get("filtros") or {}) for c in vis["componentes"]
            ]
        ctx.step(
            "visualizador",
            State.VISUALIZE,
            t0,
            termination_reason=reason,
            detail={
                "fuente": source,
                "rechazados": rejected,
                "componentes": [c["tipo"] for c in (vis or {}).get("componentes", [])],
                "cifras": [
                    {"vista": f.vista, "estado": f.estado, "filas": len(f.filas), "citas": len(f.citas)}
                    for f in ctx.figures
                ],
                **fallback,
            },
        )

    def _propose_visual(self, ctx: _Ctx) -> tuple[dict | None, list[str], str, LLMError | None]:
        """``(validated proposal, rejected items, source, provider failure)``.

        ``source`` is ``"reglas"`` offline, when the run's breaker is open or when the model call
        failed (then the failure is returned); ``"modelo"`` for a valid model proposal, else
        ``"reglas (propuesta del modelo inválida)"``.
        """
        if ctx.facts is None:
            ctx.facts = self.reader.read(ctx.question)
        if ctx.followup is not None:  # the previous turn's view and filters, with this turn's changes
            vis, rejected = visualizer.validate(list(ctx.followup.componentes), dict(ctx.followup.filtros), self.reader)
            return vis, rejected, "seguimiento", None
        comps, filtros = visualizer.propose(ctx.question, ctx.facts)
        if not self._model_up(ctx):
            vis, rejected = visualizer.validate(comps, filtros, self.reader)
            return vis, rejected, "reglas", None
        user = (
            f"Pregunta (dato): {ctx.question}\nComponentes permitidos: {list(visualizer.COMPONENTS)}\n"
            f"Fenómenos: {list(visualizer.PHENOMENA)}\n"
            "Entidades: un grupo, actor, programa o tecnología del diccionario de Radar, o un país (nombre)\n"
            "Lugares: un departamento o municipio de Colombia (nombre o id del nomenclátor)\n"
            f"Filtros leídos en código de la pregunta (propuesta de referencia): {filtros}"
        )
        try:
            reply = self._json_call(
                ctx,
                "visualizador",
                State.VISUALIZE,
                [{"role": "system", "content": prompts.VISUALIZER}, {"role": "user", "content": user}],
                "small",
                VisualizerReply,
            )
        except LLMError as exc:
            vis, rejected = visualizer.validate(comps, filtros, self.reader)
            return vis, rejected, "reglas", exc
        vis, rejected = visualizer.validate(reply.componentes, reply.filtros, self.reader)
        if vis is not None:
            return vis, rejected, "modelo", None
        vis, more = visualizer.validate(comps, filtros, self.reader)
        return vis, rejected + more, "reglas (propuesta del modelo inválida)", None

    # -- RETRIEVE (analyst)
    def _retrieve(self, ctx: _Ctx) -> State:
        try:
            corpus = self._corpus().for_scope(ctx.scope)
        except IndexUnavailable as exc:
            if ctx.ruta == "both" and ctx.visual is not None:  # the view was read: it still goes out
                return self._view_without_passages(ctx, exc)
            raise
        ctx.search_stages = corpus.search_stages
        if ctx.toolbox is None:
            budget = self.config.rerank_encodes_per_run
            ctx.toolbox = ToolBox(
                corpus,
                max_calls=self.config.max_tool_calls,
                reader=self.aggregates,
                aggregate=self._aggregate_tool(ctx) if self.aggregates is not None and self.llm else None,
                encode_budget=EncodeBudget(budget) if budget is not None else None,
            )
        tb = ctx.toolbox
        forms = [f for f in ctx.formulations if f not in ctx.used_formulations] or ctx.formulations[:1]
        # the question's anchors are searched for like coverage requirements (they are judged below)
        anchored = [a.requirement() for a in question_anchors(ctx.question, ctx.plan.requirements)]
        job = Assignment(
            question=ctx.question,
            requirements=ctx.plan.requirements + anchored,
            formulations=forms,
            corpus=corpus,
            toolbox=tb,
            feedback=ctx.feedback,
            record=lambda t0, **kw: ctx.step("analista", State.RETRIEVE, t0, **kw),
            add_usage=lambda reply: ctx.add_usage("analista", reply),
            use_model=self._model_up(ctx),
            premise=ctx.premise if not ctx.retries else None,
        )
        if self.llm and not job.use_model:
            reason, detail = self._degrade(ctx, "analista", None, "búsqueda sin modelo")
            ctx.step("analista", State.RETRIEVE, time.perf_counter(), termination_reason=reason, detail=detail)
        t0 = time.perf_counter()
        try:
            self.analyst.gather(job)
        except LLMError as exc:  # what was searched and read so far stays; the offline path goes on from there
            reason, detail = self._degrade(ctx, "analista", exc, "búsqueda sin modelo")
            ctx.step("analista", State.RETRIEVE, t0, termination_reason=reason, detail=detail)
            self.analyst.gather(replace(job, use_model=False))
        ctx.used_formulations += forms
        above = [p for p in tb.read.values() if (p.get("similarity") or -1) >= self.config.min_similarity]
        relevant = [p for p in above if not p.get("suspicious")]
        if not relevant:
            withheld = len(above)
            if withheld:  # only passages carrying instructions: say so in the trace
                ctx.step("analista", State.RETRIEVE, time.perf_counter(), detail={"pasajes_retirados": withheld})
            raise _Stop(
                "sin_evidencia",
                "sin_evidencia",
                messages.no_evidence(max(tb.discovered.values(), default=None), withheld),
            )
        missing = unmet(ctx.plan.requirements, tb.read, tb.publication_year)
        ctx.coverage = [
            {"requisito": r.label, "tipo": r.kind, "cubierto": r not in missing} for r in ctx.plan.requirements
        ]
        # the question's anchors (a named programme, a quoted name, a code, a year): when the passages
        # read name none of its names/codes (or none of its anchors at all), the nearest text is no
        # answer; an anchor partly missing is a coverage row without evidence (``incompleta``)
        readable = [p for p in tb.read.values() if not p.get("suspicious")]
        lost = anchor_gaps(ctx.question, ctx.plan.requirements, readable, tb.publication_year)
        # all anchors missing and nothing else of the question met: the nearest text is no answer;
        # when the passages do speak of the question's other topic, the run is partly answered
        if lost is not None and lost.all_missing and not topic_met(ctx.question, list(lost.anchors), readable):
            withheld = len(above) - len(relevant)
            detail = {"anclas_sin_mencion": lost.labels(), "pasajes_retirados": withheld}
            ctx.step("analista", State.RETRIEVE, time.perf_counter(), detail=detail)
            raise _Stop("sin_evidencia", "sin_anclas", messages.missing_anchors(lost.pairs(), withheld))
        if lost is not None:
            ctx.coverage += [{"requisito": a.label, "tipo": a.kind, "cubierto": False} for a in lost.missing]
        return State.WRITE

    def _aggregate_tool(self, ctx: _Ctx) -> Callable[[str, dict], Figure]:
        """The ``aggregate`` tool's function for this run: the filters validated as the visualizer
        validates its own (``visualizer.validate``: names or ids → dictionary / gazetteer ids; a
        value it cannot resolve is a ``ValueError``, never silently dropped), then the view's
        figure over the run's collections (``figures.Figures``)."""
        views = {spec["aggregate"]: name for name, spec in visualizer.COMPONENTS.items()}
        figs = Figures(self.aggregates, ctx.scope)

        def aggregate(vista: str, filtros: dict) -> Figure:
            vis, rejected = visualizer.validate([views[vista]], filtros, self.reader)
            if rejected or vis is None:
                raise ValueError("filtros no reconocidos: " + "; ".join(rejected or ["vista"]))
            return figs.figure(views[vista], vista, vis["filtros"])

        return aggregate

    # -- WRITE (analyst, no tools)
    def _write(self, ctx: _Ctx) -> State:
        t0 = time.perf_counter()
        passages = list(ctx.toolbox.read.values())
        withheld = sum(1 for p in passages if p.get("suspicious"))
        # a period to span: the writers know each document's publication year (a year's evidence)
        year_of = ctx.toolbox.publication_year if any(r.kind == "range" for r in ctx.plan.requirements) else None
        draft, failure = None, None
        if self._model_up(ctx):
            try:
                draft = self.llm_writer.write(
                    ctx.question, passages, ctx.plan.requirements, ctx.feedback, year_of=year_of
                )
            except LLMError as exc:
                if self.extractive is None:  # no encoder: nothing offline can write this answer
                    raise
                failure = exc
        if draft is not None:
            ctx.add_usage("analista", draft.reply)
            ctx.step(
                "analista",
                State.WRITE,
                t0,
                tokens_input=draft.reply.input_tokens,
                tokens_output=draft.reply.output_tokens,
                result_size=len(draft.text),
                detail={"model": draft.reply.model, "pasajes": len(passages), "pasajes_retirados": withheld},
            )
        else:
            draft = self.extractive.write(ctx.question, passages, ctx.plan.requirements, ctx.exclude, year_of=year_of)
            reason, fallback = None, {}
            if self.llm:
                reason, fallback = self._degrade(ctx, "redactor", failure, "redactor extractivo")
            ctx.step(
                "analista",
                State.WRITE,
                t0,
                result_size=len(draft.text),
                termination_reason=reason,
                detail={
                    "modo": "extractivo",
                    "pasajes": len(passages),
                    "pasajes_retirados": withheld,
                    "frases": len(draft.sentences),
                    **fallback,
                },
            )
        if not draft.text.strip():
            raise _Stop("sin_evidencia", "sin_frases_utilizables", messages.NO_USABLE_SENTENCES)
        ctx.draft_text = draft.text
        return State.VERIFY

    # -- VERIFY
    def _verify(self, ctx: _Ctx) -> State:
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

    def _assess_premise(self, ctx: _Ctx) -> None:
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

    def _claims(self, ctx: _Ctx, state: State = State.VERIFY) -> claims_answer.ClaimsFound:
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

    def _premise_llm(self, ctx: _Ctx, read: dict[str, dict]) -> premises.PremiseVerdict:
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

    def _judged_faithful(self, ctx: _Ctx, check: verifier.CheckResult, reasons: list[str]) -> bool:
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

    def _accept(self, ctx: _Ctx) -> State:
        """Verified: ``respondida``, or ``incompleta`` with a coverage note (see the module docstring
        on coverage: a period missing some years is ``incompleta`` too, its note naming the years)."""
        ctx.verified = True
        missing = [c for c in ctx.coverage if not c["cubierto"]]
        ctx.text = verifier.canonicalize(ctx.draft_text, ctx.toolbox.read)
        if missing:
            ctx.estado, ctx.termination = "incompleta", "cobertura_incompleta"
            ctx.text += "\n\n" + messages.coverage_note(missing, _span(ctx.plan.requirements))
        else:
            ctx.estado, ctx.termination = "respondida", "respondida"
        return State.GUARD_OUT

    def _reformulate(self, ctx: _Ctx, check: verifier.CheckResult, reasons: list[str]) -> State:
        """Rejected with retries left: back to the orchestrator with the reasons; unsupported sentences excluded."""
        ctx.retries += 1
        ctx.feedback = "; ".join(reasons) + (
            "; citas rechazadas: " + ", ".join(r["cita"] for r in check.rejected[:5]) if check.rejected else ""
        )
        ctx.exclude |= {re.sub(r"^-\s*«|»\s*\[.*$", "", s).strip() for s in check.unsupported}
        return State.ORCHESTRATE

    def _ship_unverified(self, ctx: _Ctx, reasons: list[str], cites_read: bool = True) -> State:
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
        if missing:
            ctx.text += "\n\n" + messages.coverage_note(missing, _span(ctx.plan.requirements))
        return State.GUARD_OUT

    # -- GUARD_OUT
    def _guard_out(self, ctx: _Ctx) -> State:
        self._state_figures(ctx)
        t0 = time.perf_counter()
        if ctx.premise is not None and ctx.estado not in ("bloqueada", "error"):
            if ctx.premise_verdict is None and ctx.toolbox is not None:
                self._assess_premise(
                    ctx
                )  # the run ended before VERIFY (no usable passage): what it read, and the claims
            if ctx.premise_verdict is None:  # nothing was read: nothing was judged
                ctx.premise_verdict = premises.unverified(ctx.premise, "sin_evaluar")
            if ctx.premise_verdict.shown:
                ctx.text = ctx.premise_verdict.sentence() + "\n\n" + ctx.text
        if ctx.estado in ("respondida", "incompleta", "no_verificada", "sin_evidencia"):
            section = self._claims(ctx, State.GUARD_OUT).section()  # claim lines: status, valid time, citations
            if section:
                ctx.text = ctx.text.rstrip() + "\n\n" + section
        if ctx.degraded:  # the reader must know the model did not take part (checked by the guard too)
            ctx.text = (ctx.text + "\n\n" + messages.degraded_note(ctx.degraded)).strip()
        verdict = guards.check_output(ctx.text, prompts.SYSTEM_PROMPTS)
        if not verdict.allowed:
            log.warning("run %s: output blocked by %s", ctx.run_id, verdict.rule)
            ctx.step(
                "guardia_salida",
                State.GUARD_OUT,
                t0,
                termination_reason="bloqueada_salida",
                detail={"regla": verdict.rule},
            )
            ctx.estado, ctx.termination, ctx.text = "bloqueada", "bloqueada_salida", guards.BLOCKED_REPLY
            return State.DONE
        ctx.step("guardia_salida", State.GUARD_OUT, t0, termination_reason=ctx.termination or None)
        return State.DONE

    # -- assembly of the result
    def _finish(self, ctx: _Ctx) -> RunResult:
        tb = ctx.toolbox
        read = tb.read if tb else {}
        withheld = {cid for cid, p in read.items() if p.get("suspicious")}
        shown = ctx.estado not in ("bloqueada", "error")
        if shown and ctx.plan is not None and ctx.plan.kind == "question" and ctx.facts is not None:
            ctx.text = _with_reading_notes(ctx.text, ctx.facts)
        # the source list numbers the analyst's passages, the figures' (checked against what each
        # view counted, ``_check_figures``) and the claims' passages alike
        cited = {**read, **ctx.claims.passages} if ctx.claims is not None else read
        citas = _citations(ctx.text, with_passages(cited, ctx.shown_figures)) if shown else []
        if shown and ctx.search_stages is not None and not ctx.search_stages.get("dense", True):
            ctx.text = ctx.text.rstrip() + "\n\n" + messages.LEXICAL_ONLY_NOTE
        return RunResult(
            run_id=ctx.run_id,
            conversacion_id=ctx.conversacion_id,
            pregunta=ctx.question,
            estado=ctx.estado,
            ruta=ctx.ruta,
            respuesta=ctx.text,
            modo=self.mode,
            citas=citas,
            # what the writer was given: never a passage withheld for carrying instructions
            retrieval_context=[p["text"] for p in read.values() if not p.get("suspicious")]
            if ctx.estado != "bloqueada"
            else [],
            tools_called=[
                {
                    "name": c.name,
                    "input_parameters": c.arguments if isinstance(c.arguments, dict) else {"raw": c.arguments},
                    "output": evaluation_output(c.output, withheld),
                }
                for c in (tb.calls if tb else [])
            ]
            if ctx.estado != "bloqueada"
            else [],
            visualizacion=ctx.visual if shown else None,
            model_calls=ctx.model_calls,
            usage=ctx.usage,
            agents=ctx.agents,
            latency_ms=round((time.perf_counter() - ctx.started) * 1000, 1),
            steps=ctx.steps,
            termination_reason=ctx.termination,
            coverage=ctx.coverage,
            verification_attempts=ctx.retries,
            tool_calls=tb.used_calls if tb else 0,  # what the cap counts, rejected calls included
            degraded=list(ctx.degraded),
            premisa=ctx.premise_verdict.contract()
            if shown and ctx.premise_verdict is not None and ctx.premise_verdict.shown
            else None,
            provenance=self._provenance(ctx, read, citas),
            key_id=ctx.scope.key_id if ctx.scope is not None else None,
            search_stages=ctx.search_stages,
            cifras=[f.contract() for f in ctx.shown_figures] if shown else [],
        )

    def _provenance(self, ctx: _Ctx, read: dict[str, dict], citas: list[dict]) -> dict | None:
        """``trace.provenance_record`` of this run; None (logged) if it cannot be built — a trace
        detail must never fail an answer."""
        try:
            index = None
            if ctx.toolbox is not None:
                try:
                    searcher = getattr(self._corpus(), "searcher", None)
                    index = searcher.provenance() if hasattr(searcher, "provenance") else None
                except IndexUnavailable:
                    index = None
            precompute = None
            if self.aggregates is not None and hasattr(self.aggregates, "versions"):
                precompute = self.aggregates.versions()
            used = ctx.visual is not None or any(
                c.name in ("list_publications", "aggregate") for c in (ctx.toolbox.calls if ctx.toolbox else [])
            )
            return provenance_record(index, ctx.toolbox.calls if ctx.toolbox else [], read, citas, precompute, used)
        except Exception:  # provenance is a trace detail: the answer goes out without it
            log.exception("provenance of run %s not recorded", ctx.run_id)
            return None


_TEXT_FIELDS = ("text", "snippet", "opening")


def evaluation_output(output, withheld: set[str]):
    """A tool call's output as the /chat ``evaluacion`` shows it: a copy in which every passage
    withheld from the writer (its ``chunk_id`` in ``withheld``: read and flagged ``suspicious``) and
    every search snippet or outline opening that ``guards.scan_passage`` flags has its text fields
    (``text``, ``snippet``, ``opening``) replaced by ``prompts.WITHHELD``; ids, pages and scores stay.
    ``output`` (what the trace stores) is not modified. Any JSON-like value in, the same shape out."""
    if isinstance(output, list):
        return [evaluation_output(v, withheld) for v in output]
    if not isinstance(output, dict):
        return output
    out = {k: evaluation_output(v, withheld) for k, v in output.items()}
    texts = [k for k in _TEXT_FIELDS if isinstance(out.get(k), str)]
    if texts and (out.get("chunk_id") in withheld or any(not guards.scan_passage(out[k]).allowed for k in texts)):
        out.update({k: prompts.WITHHELD for k in texts})
    return out


def _span(requirements: list[router.Requirement]) -> tuple[int, int] | None:
    """The period the ``range`` requirements span (``(desde, hasta)``), None without one."""
    return next((r.span for r in requirements if r.kind == "range" and r.span), None)


def _with_reading_notes(text: str, facts: QuestionFacts) -> str:
    """``text`` plus what the reading of the question decided that the user must know: a relative
    period resolved against the newest dated document, a place name left ambiguous, and the
    definition of the subregion (or the list of municipalities) read as the place."""
    notes = []
    if facts.period is not None and facts.period.relative:
        if facts.period.reference_year is not None:
            notes.append(f"Periodo considerado: {facts.period.describe()}.")
        else:
            notes.append(f"No pude fechar «{facts.period.text}»: no hay documentos fechados; no filtré por periodo.")
    if facts.ambiguous:
        notes.append(facts.describe_ambiguity())
    if facts.place is not None and facts.place.level == "subregion":
        notes.extend(facts.place_notes)  # which definition of the subregion, or the list read as a set
    notes = [n for n in notes if n and n not in text]
    return (text.rstrip() + "\n\n" + " ".join(notes)).strip() if notes else text


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _clean(question: str | None) -> str:
    """Whitespace collapsed, control characters (NUL …) removed."""
    return " ".join(_CONTROL.sub(" ", question or "").split())


def _citations(text: str, read: dict[str, dict]) -> list[dict]:
    """The numbered source list: each passage of ``read`` that ``text`` cites, once, in order of first citation."""
    citas: list[dict] = []
    for c in verifier.parse_citations(text):
        if (
            c.chunk_id in read
            and not read[c.chunk_id].get("suspicious")
            and c.chunk_id not in [x["chunk_id"] for x in citas]
        ):
            p = read[c.chunk_id]
            citas.append(
                {
                    "n": len(citas) + 1,
                    "doc_id": p["doc_id"],
                    "chunk_id": p["chunk_id"],
                    "fuente": p["source_path"],
                    "titulo": p.get("title"),
                    "pagina": p.get("page"),
                    "politica": p.get("politica"),
                }
            )
    return citas
