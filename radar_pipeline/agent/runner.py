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
  otherwise); coverage requirements always come from code (``requirements.extract_requirements``).
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
anyway. One failure opens a per-run circuit breaker (``RunContext.provider_down``): the later roles of
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
``requirements.extract_requirements``: for a closed period of more than one year ("entre 2015 y 2020"),
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

This module keeps the sequence: the run, its loop over the states and the failure that ends it.
The steps live in ``agent.run``, one module per role of the code, mixed into ``AgentRunner``:
``run.state`` (states, configuration, the per-run ``RunContext``, ``RunResult``), ``run.model_calls``
(JSON model calls, degraded mode), ``run.guarding``, ``run.orchestrating`` (with the follow-up
route), ``run.viewing``, ``run.answering`` (retrieve and write), ``run.verifying``,
``run.finishing`` (``evaluation_output``). The analyst's retrieval is ``roles.analyst.Analyst``; the
model replies' schemas are in ``replies``; the fixed texts the user reads are in ``messages``;
trace rows are built and stored by ``trace``.
"""

from __future__ import annotations

import logging
import time
import traceback
import uuid
from collections.abc import Callable

from radar_pipeline.agent import messages
from radar_pipeline.agent.llm import LLMClient, LLMError
from radar_pipeline.agent.reading.understanding import QuestionReader
from radar_pipeline.agent.roles.analyst import Analyst
from radar_pipeline.agent.roles.writer import ExtractiveWriter, LLMWriter
from radar_pipeline.agent.run.answering import Answering
from radar_pipeline.agent.run.finishing import Finishing
from radar_pipeline.agent.run.guarding import Guarding
from radar_pipeline.agent.run.model_calls import ModelCalls
from radar_pipeline.agent.run.orchestrating import Orchestrating
from radar_pipeline.agent.run.state import AgentConfig, RunContext, RunResult, State, Stop, clean_question
from radar_pipeline.agent.run.verifying import Verifying
from radar_pipeline.agent.run.viewing import Viewing
from radar_pipeline.agent.trace import TraceStore
from radar_pipeline.build_status import building_message
from radar_pipeline.collection import AccessScope
from radar_pipeline.retrieval.service import IndexUnavailable, RetrievalService

log = logging.getLogger("radar.agent")


class AgentRunner(Guarding, Orchestrating, Viewing, Answering, Verifying, Finishing, ModelCalls):
    """Runs questions. Thread-safe: all per-run state lives in a ``RunContext``. The state handlers
    come from the step mixins of ``agent.run`` (module doc).

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
        ctx = RunContext(
            run_id=uuid.uuid4().hex,
            conversacion_id=conversacion_id or uuid.uuid4().hex,
            question=clean_question(question),
            on_event=on_event,
            started=time.perf_counter(),
            scope=scope,
        )
        try:
            self._run_states(ctx)
        except Stop as stop:
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
    def _run_states(self, ctx: RunContext) -> None:
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

    def _fail(self, ctx: RunContext, exc: Exception) -> None:
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
