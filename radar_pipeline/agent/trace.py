"""Run traces in PostgreSQL: one ``agent_runs`` row per /chat run, one ``agent_steps`` row per step.

A step records: turn, role, tool (if any), call id, arguments, result size, milliseconds, tokens
in/out, termination reason and rejected citations, plus a small ``detail`` JSON. A role that fell
back to its offline counterpart because the model provider failed (degraded mode, see
``runner``) has a step with termination reason ``degradado:<kind>`` and ``detail.respaldo``. Block reasons of
the guards are stored here (and logged), never returned to the user. ``radar trace RUN_ID`` prints
a run with ``format_trace``. ``run_row`` turns a finished ``run.state.RunResult`` into its run row, with the run's
``provenance`` (``provenance_record``: index version, encoders, retrieval configuration, precompute
versions, searches and passage hashes), which ``radar replay`` and ``radar impact`` read.

The tables have their own ``MetaData`` (``ensure_agent_schema`` creates them), independent of the
pipeline's schema.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import asdict, dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from radar_pipeline.agent.roles.followup import PreviousTurn
from radar_pipeline.spool import Spool

log = logging.getLogger("radar.agent.trace")

metadata = sa.MetaData()

agent_runs = sa.Table(
    "agent_runs",
    metadata,
    sa.Column("run_id", sa.Text, primary_key=True),
    sa.Column("conversacion_id", sa.Text, nullable=True, index=True),
    sa.Column("pregunta", sa.Text, nullable=False),
    sa.Column("estado", sa.Text, nullable=False, index=True),
    sa.Column("ruta", sa.Text, nullable=False),
    sa.Column("modo", sa.Text, nullable=False),
    sa.Column("termination_reason", sa.Text, nullable=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("model_calls", sa.Integer, nullable=False),
    sa.Column("tool_calls", sa.Integer, nullable=False),
    sa.Column("tokens_input", sa.Integer, nullable=False),
    sa.Column("tokens_output", sa.Integer, nullable=False),
    sa.Column("response", JSONB, nullable=False),
    sa.Column(
        "provenance",
        JSONB,
        nullable=True,
        comment="what the run read: index_version, encoders, retrieval config, precompute versions, "
        "searches and the SHA-256 of every passage given to the writer (provenance_record)",
    ),
    sa.Column(
        "key_id",
        sa.Text,
        nullable=True,
        index=True,
        comment="the credential that asked (AccessScope.key_id): a conversation's history is read per key",
    ),
)

agent_steps = sa.Table(
    "agent_steps",
    metadata,
    sa.Column("run_id", sa.Text, sa.ForeignKey("agent_runs.run_id", ondelete="CASCADE"), primary_key=True),
    sa.Column("step_no", sa.Integer, primary_key=True),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("role", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("tool", sa.Text, nullable=True),
    sa.Column("call_id", sa.Text, nullable=True),
    sa.Column("arguments", JSONB, nullable=True),
    sa.Column("result_size", sa.Integer, nullable=True),
    sa.Column("ms", sa.Float, nullable=False),
    sa.Column("tokens_input", sa.Integer, nullable=False),
    sa.Column("tokens_output", sa.Integer, nullable=False),
    sa.Column("termination_reason", sa.Text, nullable=True),
    sa.Column("rejected_citations", JSONB, nullable=True),
    sa.Column("detail", JSONB, nullable=True),
)


def ensure_agent_schema(engine: sa.Engine) -> None:
    """Create ``agent_runs`` and ``agent_steps`` if missing (idempotent, safe concurrently); a
    table created before provenance was recorded gains the ``provenance`` and ``key_id`` columns."""
    from radar_pipeline.db import create_all_locked

    create_all_locked(
        engine,
        metadata,
        (
            "ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS provenance jsonb",
            "ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS key_id text",
        ),
    )


@dataclass
class Step:
    """One traced step (see module docstring). ``detail`` must be JSON-serialisable."""

    step_no: int
    turn: int
    role: str
    state: str
    ms: float
    tool: str | None = None
    call_id: str | None = None
    arguments: Any = None
    result_size: int | None = None
    tokens_input: int = 0
    tokens_output: int = 0
    termination_reason: str | None = None
    rejected_citations: list | None = None
    detail: dict = field(default_factory=dict)

    def public(self) -> dict:
        """The step as streamed to clients: no guard rule, no internal detail."""
        d = asdict(self)
        d.pop("detail")
        if self.role.startswith("guardia"):
            d["arguments"] = None
        return d


def _strip_nul(v: Any) -> Any:
    if isinstance(v, str):
        return v.replace("\x00", "")
    if isinstance(v, list):
        return [_strip_nul(x) for x in v]
    if isinstance(v, dict):
        return {_strip_nul(k): _strip_nul(x) for k, x in v.items()}
    return v


def _json(v: Any) -> Any:
    """JSON-safe copy without NUL characters (PostgreSQL text and JSONB reject them)."""
    return _strip_nul(json.loads(json.dumps(v, ensure_ascii=False, default=str)))


def run_row(result, response: dict) -> dict:
    """The ``agent_runs`` row of a finished run.

    ``result`` is a ``run.state.RunResult``; ``response`` the /chat contract as sent. ``started_at`` is
    now minus the run's latency; tokens are summed over roles; the question is cut at 5000 chars.
    """
    tin = sum(u["input"] for u in result.usage.values())
    tout = sum(u["output"] for u in result.usage.values())
    return {
        "run_id": result.run_id,
        "conversacion_id": result.conversacion_id,
        "pregunta": result.pregunta[:5000],
        "estado": result.estado,
        "ruta": result.ruta,
        "modo": result.modo,
        "termination_reason": result.termination_reason,
        "started_at": dt.datetime.now(dt.UTC) - dt.timedelta(milliseconds=result.latency_ms),
        "latency_ms": result.latency_ms,
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
        "tokens_input": tin,
        "tokens_output": tout,
        "response": response,
        "provenance": _json(getattr(result, "provenance", None)),
        "key_id": getattr(result, "key_id", None),
    }


def provenance_record(
    index: dict | None,
    calls: list,
    read: dict[str, dict],
    citas: list[dict],
    precompute: dict | None,
    precompute_read: bool,
) -> dict:
    """What a run read, so its answer can be audited and replayed after the corpus changes.

    ``index``: ``Searcher.provenance()`` (``index_version``, ``encoder``/``encoder_version``,
    ``reranker``/``reranker_version``, ``retrieval``, ``passages``) or None without an index;
    ``calls``: the run's ``ToolCallRecord``s (searches are kept with their arguments, their
    query-time re-ranker encoding limit ``rerank_encode_limit`` (None: no run budget) and the
    chunk ids they returned, in rank order); ``read``: chunk_id → the passages given to the writer;
    ``citas``: the answer's citations; ``precompute``: ``versioning.run_versions`` (asset → run id
    and ``precompute_version``); ``precompute_read``: whether the run read precompute tables
    (visualization or publication dates). Passages are recorded by ``sha256`` of their text (the
    same hash as ``chunks.text_sha``), not by text."""
    from radar_pipeline.chunking import text_sha

    cited = {c["chunk_id"] for c in citas}
    searches = []
    for c in calls:
        if not c.executed or c.name not in ("search_evidence", "search_documents"):
            continue
        args = c.arguments if isinstance(c.arguments, dict) else {}
        out = c.output or {}
        searches.append(
            {
                "tool": c.name,
                "query": args.get("query"),
                "k": args.get("k"),
                "doc_ids": args.get("doc_ids") or [],
                "rerank_encode_limit": getattr(c, "encode_limit", None),
                "results": [p["chunk_id"] for p in out.get("passages", [])]
                or [d["doc_id"] for d in out.get("documents", [])],
            }
        )
    return {
        **(index or {"index_version": None}),
        "searches": searches,
        "passages": [
            {
                "chunk_id": cid,
                "doc_id": p["doc_id"],
                "sha256": text_sha(p["text"]),
                "similarity": p.get("similarity"),
                "cited": cid in cited,
            }
            for cid, p in read.items()
        ],
        "precompute": precompute or {},
        "precompute_read": precompute_read,
    }


class TraceStore:
    """Writes and reads traces. ``save`` never raises (a trace failure must not fail an answer)."""

    def __init__(self, engine: sa.Engine, spool: Spool | None = None):
        self.engine = engine
        self.spool = spool
        ensure_agent_schema(engine)

    def save(self, run: dict, steps: list[Step]) -> bool:
        """Store one run and its steps. When PostgreSQL cannot take them, the rows go to the
        ``spool`` (if any) and are written, in order, on the next successful save: an outage loses
        no trace. Returns True when stored now, False when spooled (or lost without a spool)."""
        run = {k: v.replace("\x00", "") if isinstance(v, str) else v for k, v in run.items()}
        step_rows = [
            {
                **asdict(s),
                "run_id": run["run_id"],
                "arguments": _json(s.arguments),
                "rejected_citations": _json(s.rejected_citations),
                "detail": _json(s.detail),
            }
            for s in steps
        ]
        try:
            self._insert(run, step_rows)
        except Exception:
            log.exception("could not store trace of run %s", run.get("run_id"))
            if self.spool is not None:
                try:
                    self.spool.add({"run": run, "steps": step_rows})
                except OSError:
                    log.exception("could not spool trace of run %s: it is lost", run.get("run_id"))
            return False
        if self.spool is not None:
            self.spool.drain(self._replay)
        return True

    def _replay(self, rec: dict) -> None:
        """Write one spooled trace. A run already stored counts as written: when PostgreSQL stops
        while committing, the commit can succeed on the server while the client sees a broken
        connection, so the trace is spooled *and* stored; replaying it would fail on the primary key
        for ever and keep every later trace in the spool (seen in the outage test under load)."""
        try:
            self._insert(rec["run"], rec["steps"])
        except sa.exc.IntegrityError:
            with self.engine.connect() as conn:
                stored = conn.execute(
                    sa.select(agent_runs.c.run_id).where(agent_runs.c.run_id == rec["run"]["run_id"])
                ).first()
            if stored is None:
                raise  # another constraint: keep it (and the rest) spooled

    def _insert(self, run: dict, step_rows: list[dict]) -> None:
        with self.engine.begin() as conn:
            conn.execute(agent_runs.insert().values(**{**run, "response": _json(run["response"])}))
            if step_rows:
                conn.execute(agent_steps.insert(), step_rows)

    def save_result(self, result, response: dict) -> bool:
        """Store a finished run (a ``run.state.RunResult``) with the /chat ``response`` as sent; see ``save``."""
        return self.save(run_row(result, response), result.steps)

    def load(self, run_id: str) -> dict | None:
        """``{"run": {...}, "steps": [...], "vigencia": {...}}`` or None; ``vigencia`` is
        ``staleness.answer_validity``: whether a later materialization closed a cited passage."""
        from radar_pipeline.agent.staleness import answer_validity

        with self.engine.connect() as conn:
            run = conn.execute(sa.select(agent_runs).where(agent_runs.c.run_id == run_id)).mappings().first()
            if run is None:
                return None
            steps = (
                conn.execute(
                    sa.select(agent_steps).where(agent_steps.c.run_id == run_id).order_by(agent_steps.c.step_no)
                )
                .mappings()
                .all()
            )
            validity = answer_validity(conn, run_id)
        return {"run": dict(run), "steps": [dict(s) for s in steps], "vigencia": validity}

    def recent_questions(self, conversacion_id: str, n: int = 3, *, key_id: str | None = None) -> list[str]:
        """The last ``n`` questions of ``conversacion_id``, oldest first. A conversation id is chosen
        by the client, so it is read per credential: only runs asked with ``key_id`` (runs stored
        without a key match ``key_id=None`` only), never another key's questions."""
        owner = agent_runs.c.key_id.is_(None) if key_id is None else agent_runs.c.key_id == key_id
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    sa.select(agent_runs.c.pregunta)
                    .where(agent_runs.c.conversacion_id == conversacion_id, owner)
                    .order_by(agent_runs.c.started_at.desc())
                    .limit(n)
                )
                .scalars()
                .all()
            )
        return list(reversed(rows))

    def previous_view(self, conversacion_id: str, *, key_id: str | None = None):
        """The last run of ``conversacion_id`` asked with ``key_id`` (read per credential, as
        ``recent_questions``: another key's runs never count) as a ``followup.PreviousTurn`` when it
        answered with a view (its contract's ``visualizacion``), or with no view and no filters for a
        text answer (``followup.follow`` then reads the filters its question states); None when the
        conversation has no run, or its last run was refused or failed."""
        owner = agent_runs.c.key_id.is_(None) if key_id is None else agent_runs.c.key_id == key_id
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    sa.select(agent_runs.c.pregunta, agent_runs.c.ruta, agent_runs.c.estado, agent_runs.c.response)
                    .where(agent_runs.c.conversacion_id == conversacion_id, owner)
                    .order_by(agent_runs.c.started_at.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
        if row is None or row["estado"] in ("bloqueada", "error"):
            return None
        vis = (row["response"] or {}).get("visualizacion") or {}
        comps = tuple(c.get("tipo") for c in vis.get("componentes") or [] if c.get("tipo"))
        if not comps:
            return PreviousTurn(row["pregunta"], row["ruta"] or "text", (), {})
        return PreviousTurn(row["pregunta"], row["ruta"], comps, dict(vis.get("filtros") or {}))


def format_trace(trace: dict) -> str:
    """Human-readable trace: a header with the run (and, for a degraded run, the roles that fell back and
    why, from the stored response's ``metadata.roles_degradados``), then one line per step; fallback
    steps show ``fin=degradado:<kind>`` and their ``respaldo`` in the detail."""
    r = trace["run"]
    started = r["started_at"].isoformat() if isinstance(r["started_at"], dt.datetime) else r["started_at"]
    lines = [
        f"run {r['run_id']}  conversación {r['conversacion_id']}  {started}",
        f"pregunta: {r['pregunta']}",
        f"estado: {r['estado']}  ruta: {r['ruta']}  modo: {r['modo']}  terminación: {r['termination_reason']}",
        f"latencia: {r['latency_ms']:.0f} ms  llamadas al modelo: {r['model_calls']}  herramientas: {r['tool_calls']}  "
        f"tokens: {r['tokens_input']} in / {r['tokens_output']} out",
    ]
    meta = (r.get("response") or {}).get("metadata") or {}
    if meta.get("degradado"):
        lines.append(
            "modo degradado (el proveedor del modelo falló): "
            + ", ".join(
                f"{d['rol']} ({d['motivo']}{', por circuito' if d.get('por_circuito') else ''})"
                for d in meta.get("roles_degradados") or []
            )
        )
    validity = trace.get("vigencia") or {}
    if validity.get("citas_no_vigentes"):
        lines.append(
            f"respuesta desactualizada: {len(validity['citas_no_vigentes'])} cita(s) ya no vigente(s) "
            "(una materialización posterior cerró el pasaje citado)"
        )
    for c in validity.get("citas_no_vigentes") or []:
        repl = c.get("reemplazo")
        now = (
            f"reemplazado por {repl['chunk_id']}{' (texto cambiado)' if repl['texto_cambiado'] else ' (mismo texto)'}"
            if repl
            else "sin reemplazo"
        )
        lines.append(
            f"cita no vigente [{c['n']}] {c['doc_id']}:{c['chunk_id']}: {c['estado']} ({c['supersede_reason']}, "
            f"{c['superseded_at']}); {now}; detectada por {c['detectado_por']}"
        )
    lines += [
        "",
        f"{'#':>3} {'turno':>5} {'rol':<17} {'estado':<11} {'herramienta':<17} {'call_id':<18} {'ms':>8} {'tok in':>7} {'tok out':>7} {'bytes':>7}  fin / citas rechazadas / argumentos",
    ]
    for s in trace["steps"]:
        extra = []
        if s["termination_reason"]:
            extra.append(f"fin={s['termination_reason']}")
        if s["rejected_citations"]:
            extra.append(f"rechazadas={json.dumps(s['rejected_citations'], ensure_ascii=False)[:200]}")
        if s["arguments"] is not None:
            extra.append(f"args={json.dumps(s['arguments'], ensure_ascii=False)[:160]}")
        if s["detail"]:
            extra.append(f"detalle={json.dumps(s['detail'], ensure_ascii=False)[:200]}")
        lines.append(
            f"{s['step_no']:>3} {s['turn']:>5} {s['role']:<17} {s['state']:<11} {(s['tool'] or '-'):<17} "
            f"{(s['call_id'] or '-'):<18} {s['ms']:>8.1f} {s['tokens_input']:>7} {s['tokens_output']:>7} "
            f"{(s['result_size'] if s['result_size'] is not None else '-'):>7}  {' '.join(extra)}"
        )
    return "\n".join(lines)
