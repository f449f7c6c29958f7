"""The run's bookkeeping: the states and roles, the configuration, the per-run context (``RunContext``:
trace steps, usage, events, the branch of a parallel route) and the /chat result (``RunResult``)."""

from __future__ import annotations

import dataclasses
import enum
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from radar_pipeline.agent.llm import LLMReply
from radar_pipeline.agent.reading.understanding import QuestionFacts
from radar_pipeline.agent.roles import claims_answer, router
from radar_pipeline.agent.roles import followup as followups
from radar_pipeline.agent.roles import premise as premises
from radar_pipeline.agent.roles.figures import Figure
from radar_pipeline.agent.tools import ToolBox
from radar_pipeline.agent.trace import Step
from radar_pipeline.collection import AccessScope

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


class Stop(Exception):
    """Internal: end the run with ``estado`` and ``reason`` (a user-facing text)."""

    def __init__(self, estado: str, reason: str, text: str):
        super().__init__(reason)
        self.estado, self.reason, self.text = estado, reason, text


@dataclass
class RunContext:
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
    # coverage rows without evidence that the draft itself already says (a place named in the
    # passages read but in no quote: ``writer.unquoted_note``); the coverage note skips them
    said_uncovered: set[str] = field(default_factory=set)
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
    # a visualization route whose view had nothing to show went on to the passages: what they say sets the estado
    view_was_empty: bool = False
    # a question read as a view that the passages answer too (route both by ``router.also_told``):
    # its figures answer it when the passages have nothing to quote
    view_question: bool = False
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

    def fork(self) -> RunContext:
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
            said_uncovered=set(),
            figures=[],
            used_formulations=list(self.used_formulations),
            degraded=list(self.degraded),
        )

    def join(self, branch: RunContext) -> None:
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


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_question(question: str | None) -> str:
    """Whitespace collapsed, control characters (NUL …) removed."""
    return " ".join(_CONTROL.sub(" ", question or "").split())
