"""DONE: the /chat result (``state.RunResult``) from a run's context: reading notes, citations,
the tools' outputs for evaluation (withheld passages emptied), provenance. Mixed into
``runner.AgentRunner``.
"""

from __future__ import annotations

import logging
import time

from radar_pipeline.agent import guards, messages, prompts
from radar_pipeline.agent.reading.understanding import QuestionFacts
from radar_pipeline.agent.roles import verifier
from radar_pipeline.agent.roles.figures import with_passages
from radar_pipeline.agent.run.state import RunContext, RunResult
from radar_pipeline.agent.trace import provenance_record
from radar_pipeline.retrieval.service import IndexUnavailable

log = logging.getLogger("radar.agent")


class Finishing:
    """DONE (a mixin of ``runner.AgentRunner``: its attributes and other steps through ``self``)."""

    # -- assembly of the result
    def _finish(self, ctx: RunContext) -> RunResult:
        tb = ctx.toolbox
        read = tb.read if tb else {}
        withheld = {cid for cid, p in read.items() if p.get("suspicious")}
        shown = ctx.estado not in ("bloqueada", "error")
        if shown and ctx.plan is not None and ctx.plan.kind == "question" and ctx.facts is not None:
            premise_first = ctx.premise_verdict is not None and ctx.premise_verdict.estado == "falsa"
            ctx.text = _with_reading_notes(ctx.text, ctx.facts, after_premise=premise_first)
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

    def _provenance(self, ctx: RunContext, read: dict[str, dict], citas: list[dict]) -> dict | None:
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


def _with_reading_notes(text: str, facts: QuestionFacts, *, after_premise: bool = False) -> str:
    """``text`` plus what the reading of the question decided that the user must know: a relative
    period resolved against the newest dated document, a place name left ambiguous, and the
    definition of the subregion (or the list of municipalities) read as the place; before it all
    (after the premise sentence when ``after_premise``: a premise found false opens the answer), a
    municipality the question placed in the wrong department."""
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
    text = (text.rstrip() + "\n\n" + " ".join(notes)).strip() if notes else text
    # where the question places a municipality wrongly ("Miranda, en Nariño"): said first, a premise
    # the answer corrects before anything it quotes
    misplaced = [n for n in facts.places_misplaced if n not in text]
    if not misplaced:
        return text
    if after_premise and "\n\n" in text:
        # the premise found false opens the answer (its sentence cites the passage): the place's note follows it
        head, rest = text.split("\n\n", 1)
        return f"{head}\n\n{' '.join(misplaced)}\n\n{rest}"
    return (" ".join(misplaced) + "\n\n" + text).strip()


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
