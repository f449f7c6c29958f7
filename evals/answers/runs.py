"""Running a question set through the agent and recording what a judge and a benchmark need.

:func:`build_service` builds the ``AgentService`` the way ``radar serve`` does (indexes of
``RADAR_HOME``, the encoder, PostgreSQL for the precomputes), offline unless asked otherwise, with
traces off (a measurement must not write to the home it reads). :func:`run_set` asks every
question once, one at a time (parallelism 1: latency is measured), after one warm-up question that
is not recorded, and returns one record per question:

``question_id``, ``phenomenon``, ``type``, ``question``, ``key_facts``, ``false_premise`` (from the
set); ``estado``, ``ruta``, ``respuesta``, ``termination_reason``, ``premisa`` (the run's premise
verdict, ``premise.PremiseVerdict.contract()`` or None), ``citas`` (the /chat sources with each
cited passage's ``text``), ``latency_ms`` (wall time of ``AgentRunner.run``), ``steps`` (``state``,
``role``, ``tool``, ``ms`` of each trace step), ``search_stages`` (lexical/dense/rerank → live),
``blind`` (:func:`blind_answer`: the answer as a judge sees it) and ``answer_hash``.

:func:`blind_answer` removes what would name the system or its configuration (the extractive
writer's heading, the source list, the lexical-only and degraded-mode notes), replaces each
``[doc_id:chunk_id]`` by a label ``[P1]``, ``[P2]``… in order of first citation, and splits the
answer into the units a judge grades (:func:`answer_units`). ``answer_hash`` is the SHA-256 of that
blind answer and the cited passages' texts, so grades follow the answer's content across runs and
re-indexing (ids may change, texts do not).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from evals.answers.sets import QuestionItem
from evals.answers.store import answer_results, answer_runs, ensure_answer_schema
from radar_pipeline.agent import messages
from radar_pipeline.agent.roles import verifier

__all__ = [
    "answer_hash",
    "answer_units",
    "blind_answer",
    "build_service",
    "latest_run_key",
    "load_run",
    "run_set",
    "store_run",
]

# A sentence boundary: end punctuation, space, then a capital, an opening quote or a bullet (the
# verifier's claim splitter, ``verifier.split_sentences``, uses the same rule).
_SENT = re.compile(r"(?<=[.!?»”])\s+(?=[A-ZÁÉÍÓÚÑ¿¡«\"•*])")
_BULLET = re.compile(r"^\s*(?:[-•*]|\d{1,2}[.)])\s+")
_SOURCES = re.compile(r"^\s*(?:Fuentes?|Sources?)\s*:")
_LABEL = re.compile(r"\[(P\d+(?:,\s*P\d+)*)\]")
_SYSTEM_LINES = (messages.LEXICAL_ONLY_NOTE,)  # the extractive writer has no fixed heading any more
WARMUP_QUESTIONS = (
    "¿Qué riesgos plantea la basura espacial para los satélites en órbita baja?",
    "¿Cómo usan los ejércitos la inteligencia artificial para analizar imágenes?",
)
"""Asked once before a timed run, unrecorded (the first one the set does not contain)."""


def _is_system_line(line: str) -> bool:
    """Lines that describe the system or its configuration rather than answer: the extractive
    heading, the source list, the lexical-only note and the degraded-mode note (its fixed prefix)."""
    s = line.strip()
    if not s or _SOURCES.match(s) or any(s == t.strip() for t in _SYSTEM_LINES):
        return True
    degraded = messages.degraded_note([{"rol": "analista", "motivo": "timeout", "por_circuito": False}])
    return s.startswith(degraded.split("(")[0].strip())


def _sentences(line: str) -> list[str]:
    """``line`` split at sentence boundaries, except inside a «…» or “…” quotation: a quoted passage of
    several sentences stays one unit with the citation that follows it (the premise sentence quotes
    its passage that way)."""
    out: list[str] = []
    for part in (p.strip() for p in _SENT.split(line) if p.strip()):
        if out and (out[-1].count("«") > out[-1].count("»") or out[-1].count("“") > out[-1].count("”")):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def answer_units(text: str) -> list[dict]:
    """The units a judge grades in a blind answer: a bullet line is one unit, other lines are split
    into sentences (never inside a quotation, :func:`_sentences`). Each ``{"n": 1-based, "text", "citations": ["P1", ...]}`` (labels in the unit,
    in order, once)."""
    units: list[dict] = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        parts = [line.strip()] if _BULLET.match(line) else _sentences(line)
        for part in parts:
            labels: list[str] = []
            for m in _LABEL.finditer(part):
                for lab in re.split(r",\s*", m.group(1)):
                    if lab not in labels:
                        labels.append(lab)
            units.append({"n": len(units) + 1, "text": part, "citations": labels})
    return units


def blind_answer(respuesta: str, passages: dict[str, str]) -> dict:
    """The answer as a judge sees it.

    ``respuesta``: the agent's answer; ``passages``: chunk id → text of the passages the answer may
    cite. Returns ``{"text", "passages": [{"id": "P1", "text", "chunk_id"}], "units"}``: system
    lines removed (:func:`_is_system_line`), citations rewritten to labels in order of first
    citation (a cited id without a known text keeps a label, with an empty text, so the judge sees
    it unsupported), ``units`` from :func:`answer_units`. ``chunk_id`` is kept for the mapping and
    dropped from what the judge gets.
    """
    lines = [ln for ln in (respuesta or "").splitlines() if not _is_system_line(ln)]
    body = "\n".join(lines).strip()
    labels: dict[str, str] = {}

    def relabel(m: re.Match) -> str:
        ids = [c.chunk_id for c in verifier.parse_citations(m.group(0)) if c.chunk_id]
        if not ids:
            return m.group(0)
        out = []
        for cid in ids:
            labels.setdefault(cid, f"P{len(labels) + 1}")
            if labels[cid] not in out:
                out.append(labels[cid])
        return "[" + ", ".join(out) + "]"

    shown = verifier._BRACKET.sub(relabel, body)
    cited = [{"id": lab, "text": passages.get(cid, ""), "chunk_id": cid} for cid, lab in labels.items()]
    return {"text": shown, "passages": cited, "units": answer_units(shown)}


def answer_hash(blind: dict) -> str:
    """SHA-256 (hex) of a blind answer's text and its passages' labels and texts (not their ids)."""
    payload = {"text": blind["text"], "passages": [[p["id"], p["text"]] for p in blind["passages"]]}
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def build_service(*, offline: bool = True, database_url: str | None = None, engine: sa.Engine | None = None):
    """An ``AgentService`` as ``radar serve`` builds it (``RADAR_HOME`` indexes, default encoder,
    PostgreSQL precomputes), traces off; ``offline`` forces the extractive mode whatever
    ``RADAR_LLM_*`` says. ``engine`` / ``database_url``: the database of the precomputes (default:
    ``DATABASE_URL`` or the home's embedded server)."""
    from radar_pipeline.agent.llm import LLMSettings
    from radar_pipeline.agent.service import AgentService, ServiceSettings

    kw: dict[str, Any] = {"trace": False, "database_url": database_url}
    if offline:
        kw["llm"] = LLMSettings(base_url=None, api_key=None, model_large=None, model_small=None)
    return AgentService(ServiceSettings(**kw), engine=engine)


def _passage_texts(corpus: Callable[[], Any], citas: Sequence[dict]) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        svc = corpus()
    except Exception:  # noqa: BLE001 - an index that failed to load: the run's estado says so already
        return out
    for c in citas:
        rec = svc.chunk(c["chunk_id"]) if c.get("chunk_id") else None
        if rec is not None:
            out[c["chunk_id"]] = rec.get("text") or ""
    return out


def record_of(item: QuestionItem, res: Any, wall_ms: float, corpus: Callable[[], Any]) -> dict:
    """The per-question record (module docstring) of one ``RunResult``."""
    texts = _passage_texts(corpus, res.citas or [])
    blind = blind_answer(res.respuesta or "", texts)
    return {
        "question_id": item.id,
        "phenomenon": item.phenomenon,
        "type": item.type,
        "question": item.question,
        "key_facts": list(item.key_facts),
        "false_premise": item.false_premise,
        "estado": res.estado,
        "ruta": res.ruta,
        "respuesta": res.respuesta,
        "termination_reason": res.termination_reason,
        "premisa": res.premisa,
        "citas": [
            {k: c.get(k) for k in ("n", "doc_id", "chunk_id", "fuente", "pagina")}
            | {"text": texts.get(c.get("chunk_id"), "")}
            for c in res.citas or []
        ],
        "latency_ms": round(wall_ms, 1),
        "steps": [
            {"state": s.state, "role": s.role, "tool": s.tool, "ms": round(float(s.ms), 1)} for s in res.steps or []
        ],
        "search_stages": res.search_stages,
        "blind": blind,
        "answer_hash": answer_hash(blind),
    }


def run_set(
    runner: Any,
    items: Sequence[QuestionItem],
    *,
    corpus: Callable[[], Any] | None = None,
    warmup: bool = True,
    log: Callable[[str], None] | None = None,
) -> list[dict]:
    """Ask every question of ``items`` once through ``runner`` (an ``AgentRunner``), one at a time.

    ``corpus``: the runner's retrieval service getter (for the cited passages' texts; default
    ``runner._corpus``). ``warmup``: first ask a question outside the set (:data:`WARMUP_QUESTIONS`),
    unrecorded, so models and lazily loaded indexes are in memory as in a serving process; never one
    of the set's own questions, which the retrieval service's search cache would then answer from
    memory. Returns the records of the module docstring, in
    ``items`` order. Never raises for a failed run (its estado is ``error``).
    """
    corpus = corpus or runner._corpus
    if warmup and items:
        asked = {it.question for it in items}
        runner.run(next(q for q in WARMUP_QUESTIONS if q not in asked))
    out = []
    for i, it in enumerate(items, start=1):
        t0 = time.perf_counter()
        res = runner.run(it.question)
        ms = (time.perf_counter() - t0) * 1000
        out.append(record_of(it, res, ms, corpus) | {"order": i})
        if log:
            log(f"[{i}/{len(items)}] {it.id}: {res.estado} ({ms:.0f} ms)")
    return out


def run_meta(service: Any, records: Sequence[dict]) -> dict:
    """What a run measured: mode, index version and stages (``AgentService.index_status``), machine
    (CPUs, 1-minute load average before/after is the caller's), record count."""
    meta: dict[str, Any] = {"n": len(records), "cpus": os.cpu_count()}
    try:
        meta["mode"] = service.mode
        st = service.index_status()
        meta["index_version"] = st.get("index_version")
        meta["search_stages"] = st.get("stages")
        meta["passages"] = st.get("passages")
        meta["index_dir"] = st.get("dir")
    except Exception as exc:  # noqa: BLE001 - a description of the run must not fail it
        meta["index_status_error"] = str(exc)[:200]
    try:
        meta["loadavg_1m"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    return meta


def store_run(engine: sa.Engine, set_name: str, records: Sequence[dict], meta: dict | None = None) -> str:
    """Store a run's records under a new ``run_key`` (returned)."""
    ensure_answer_schema(engine)
    key = uuid.uuid4().hex[:16]
    with engine.begin() as conn:
        conn.execute(answer_runs.insert().values(run_key=key, set_name=set_name, meta=dict(meta or {})))
        if records:
            conn.execute(
                answer_results.insert(),
                [
                    {"run_key": key, "question_id": r["question_id"], "answer_hash": r["answer_hash"], "record": r}
                    for r in records
                ],
            )
    return key


def latest_run_key(engine: sa.Engine, set_name: str) -> str | None:
    """The newest run of ``set_name``, or None."""
    ensure_answer_schema(engine)
    with engine.connect() as conn:
        return conn.execute(
            sa.select(answer_runs.c.run_key)
            .where(answer_runs.c.set_name == set_name)
            .order_by(answer_runs.c.created_at.desc())
            .limit(1)
        ).scalar()


def load_run(engine: sa.Engine, run_key: str) -> tuple[str, dict, list[dict]]:
    """``(set name, meta, records)`` of a stored run; raises ``KeyError`` for an unknown key."""
    ensure_answer_schema(engine)
    with engine.connect() as conn:
        row = conn.execute(sa.select(answer_runs).where(answer_runs.c.run_key == run_key)).first()
        if row is None:
            raise KeyError(f"no answer run {run_key!r}")
        recs = conn.execute(sa.select(answer_results.c.record).where(answer_results.c.run_key == run_key)).scalars()
        records = sorted(recs, key=lambda r: r.get("order", 0))
    return row.set_name, dict(row.meta), records
