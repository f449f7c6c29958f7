"""RETRIEVE and WRITE: the analyst's reading (``roles.analyst``, tools of ``tools.ToolBox``), the
anchors and coverage checks, then the extractive or the large-model writer. Mixed into
``runner.AgentRunner``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace

from radar_pipeline.agent import messages
from radar_pipeline.agent.llm import LLMError
from radar_pipeline.agent.reading.anchors import anchor_gaps, names_a_source, question_anchors, topic_met
from radar_pipeline.agent.roles import visualizer
from radar_pipeline.agent.roles.analyst import Assignment, unmet
from radar_pipeline.agent.roles.figures import Figure, Figures
from radar_pipeline.agent.run.state import RunContext, State, Stop
from radar_pipeline.agent.tools import ToolBox
from radar_pipeline.retrieval.service import EncodeBudget, IndexUnavailable
from radar_pipeline.textfold import fold_question

log = logging.getLogger("radar.agent")


class Answering:
    """RETRIEVE and WRITE (a mixin of ``runner.AgentRunner``: its attributes and other steps through ``self``)."""

    # -- RETRIEVE (analyst)
    def _retrieve(self, ctx: RunContext) -> State:
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
        # (a place the question is about is searched once, as its ``lugar`` requirement)
        places = {a for r in ctx.plan.requirements if r.kind == "lugar" for a in (*r.aliases, fold_question(r.label))}
        anchored = [
            a.requirement()
            for a in question_anchors(ctx.question, ctx.plan.requirements)
            if fold_question(a.label) not in places
        ]
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
            raise Stop(
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
            raise Stop("sin_evidencia", "sin_anclas", messages.missing_anchors(lost.pairs(), withheld))
        if lost is not None:
            ctx.coverage += [{"requisito": a.label, "tipo": a.kind, "cubierto": False} for a in lost.missing]
        return State.WRITE

    @staticmethod
    def _names_not_quoted(ctx: RunContext, quoted: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The names the question is about (``anchors.question_anchors``: a name of capitalised words
        that are no everyday word, or a quoted name; decisive ones; not a code nor a name given as
        the source) when no quoted sentence names any of them, though the passages read mention them ("¿Qué actividades tienen Los Paisas?" answered with
        sentences about other activities), as ``(label, kind)``. Not a place the question is about
        (its ``lugar`` requirement, or the department that qualifies it: the writer says those), nor
        a name already found missing from the passages read (its coverage row says so); [] when
        nothing was quoted verbatim (the large model's draft)."""
        if not quoted:
            return []
        already = {fold_question(str(c["requisito"])) for c in ctx.coverage}
        places = {
            a
            for r in ctx.plan.requirements
            if r.kind == "lugar"
            for a in (*r.aliases, fold_question(r.label), *r.qualifiers)
        }
        folded = [fold_question(sentence) for sentence, _ in quoted]
        out = []
        for a in question_anchors(ctx.question, ctx.plan.requirements):
            label = fold_question(a.label)
            # (a code mostly designates the document asked about, "la AT 016-18", "ESA 2025": its
            # findings need not repeat it; so does a name given as the source)
            if a.kind not in ("nombre", "cita") or not a.decisive or label in places or label in already:
                continue
            if names_a_source(ctx.question, a):
                continue
            if any(a.met_by(t) for t in folded):
                return []  # the quotes name something the question is about by name
            out.append((a.label, a.kind))
        return out

    @staticmethod
    def _years_not_quoted(ctx: RunContext, quoted: list[tuple[str, str]]) -> list[str]:
        """The years the question names as anchors ("¿Qué alertas emitió la Defensoría para Arauca
        en 2016?") that no quote meets: none names the year and none comes from a document published
        in it (``ToolBox.publication_year``). ``quoted``: the draft's ``(sentence, chunk_id)``; []
        when nothing was quoted verbatim (the large model's draft) or the years were already found
        missing from the passages read (their coverage rows say so). A bound of a period of several
        years or an open one ("desde 2019") is not such a year."""
        if not quoted:
            return []
        tb = ctx.toolbox
        already = {c["requisito"] for c in ctx.coverage}
        years = [a.label for a in question_anchors(ctx.question, ctx.plan.requirements) if a.kind == "año"]
        period = ctx.facts.period if ctx.facts is not None else None
        if period is not None and not (period.closed and period.desde == period.hasta):
            # a bound of a longer or open period ("desde 2019", "entre 2015 y 2020") dates no fact
            years = [y for y in years if int(y) not in (period.desde, period.hasta)]
        out = []
        for y in years:
            if y in already:
                continue
            met = False
            for sentence, cid in quoted:
                doc = (tb.read.get(cid) or {}).get("doc_id")
                if y in sentence or (doc and str(tb.publication_year(doc)) == y):
                    met = True
                    break
            if not met:
                out.append(y)
        return out

    def _aggregate_tool(self, ctx: RunContext) -> Callable[[str, dict], Figure]:
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
    def _write(self, ctx: RunContext) -> State:
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
            raise Stop("sin_evidencia", "sin_frases_utilizables", messages.NO_USABLE_SENTENCES)
        # a place the passages read name but no quote does: the answer does not speak of it, so the
        # run is incomplete (the draft's own note, ``writer.unquoted_note``, already says so)
        unquoted = {r.label for r in draft.unmet if r.kind == "lugar"}
        ctx.said_uncovered = set()
        for row in ctx.coverage:
            if row["tipo"] == "lugar" and row["requisito"] in unquoted and row["cubierto"]:
                row["cubierto"] = False
                ctx.said_uncovered.add(row["requisito"])
        text = draft.text
        undated = self._years_not_quoted(ctx, draft.sentences)
        if undated:  # the year dates what is asked: quotes of other years do not answer it
            ctx.coverage += [{"requisito": y, "tipo": "año", "cubierto": False} for y in undated]
            ctx.said_uncovered |= set(undated)
            text = text.rstrip() + "\n\n" + messages.years_not_quoted(undated)
        unnamed = self._names_not_quoted(ctx, draft.sentences)
        if unnamed:  # the thing the question is about by name: quotes that never name it do not answer it
            ctx.coverage += [{"requisito": label, "tipo": kind, "cubierto": False} for label, kind in unnamed]
            ctx.said_uncovered |= {label for label, _ in unnamed}
            text = text.rstrip() + "\n\n" + messages.names_not_quoted(unnamed)
        ctx.draft_text = text
        return State.VERIFY
