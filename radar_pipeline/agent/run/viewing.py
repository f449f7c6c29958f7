"""VISUALIZE, and VISUALIZE ∥ RETRIEVE for route ``both``: the dashboard view proposed
(``roles.visualizer``, or the small model), its figures read from the precompute tables, checked and
stated in words (``roles.figures``). Mixed into ``runner.AgentRunner``.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from radar_pipeline.agent import messages, prompts
from radar_pipeline.agent.llm import LLMError
from radar_pipeline.agent.reading.anchors import missing_anchors, question_anchors
from radar_pipeline.agent.replies import VisualizerReply
from radar_pipeline.agent.roles import verifier, visualizer
from radar_pipeline.agent.roles.figures import (
    Figure,
    Figures,
    compose,
    figures_for,
    not_for_name,
    not_for_place,
    then_passages,
)
from radar_pipeline.agent.run.state import RunContext, State, Stop
from radar_pipeline.build_status import building_message
from radar_pipeline.retrieval.service import IndexUnavailable
from radar_pipeline.textfold import fold_question

log = logging.getLogger("radar.agent")


class Viewing:
    """VISUALIZE, and VISUALIZE ∥ RETRIEVE for route ``both`` (a mixin of ``runner.AgentRunner``: its attributes and other steps through ``self``)."""

    # -- VISUALIZE
    def _visualize(self, ctx: RunContext) -> State:
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
        # a view read and found empty (or not built yet) sends the question to the passages; a view
        # that cannot be read at all (no precompute database) is reported as before
        readable_but_empty = figs and all(f.estado in ("sin_datos", "no_materializado") for f in figs)
        if without_data and readable_but_empty and self._passages_searchable():
            return self._view_empty_read_passages(ctx, figs)
        if without_data:
            # said plainly, never ``respondida`` with nothing: an empty view is no evidence; a view
            # that could not be read (not materialized, no database) leaves the question incomplete
            if figs and all(f.estado == "sin_datos" for f in figs):
                raise Stop("sin_evidencia", "vista_sin_datos", text)
            if figs and all(f.estado == "no_materializado" for f in figs):
                raise Stop("incompleta", "agregados_no_materializados", text)
            raise Stop("incompleta", "cifras_no_disponibles", text)
        unseen = self._unseen_subjects(ctx, figs)
        if unseen:
            # the view counts what its filters select; the question's own subject («Los Serpientes del
            # Sinú», a programme, a code) is in none of the passages it counted: the figures are no
            # answer about it, and the answer says so before them
            raise Stop("incompleta", "vista_sin_sujeto", messages.view_without_subject(unseen) + "\n\n" + text)
        ctx.estado, ctx.termination, ctx.text = "respondida", "visualizacion", text
        return State.GUARD_OUT

    def _passages_searchable(self) -> bool:
        """Whether the passage index can be searched now (False while it is missing or being built)."""
        try:
            self._corpus()
        except IndexUnavailable:
            return False
        return True

    def _view_empty_read_passages(self, ctx: RunContext, figs: list[Figure]) -> State:
        """Route ``visualization`` whose view has nothing to show under the question's filters (no row
        for the place, the period; or its table not materialized yet): the passages are searched as on
        route ``both`` (issue 22: "¿Qué grupos armados tienen presencia en Tumaco?" came back
        ``sin_evidencia`` from a presence table that covers the Amazon basin only, while 200 passages of
        the corpus name Tumaco). An empty view is no evidence either way; what the passages say decides
        the estado, and the figures' words ("no hay datos…") still come first (``_state_figures``).
        Returns RETRIEVE."""
        t0 = time.perf_counter()
        # the route stays the reading's (a follow-up carries it: "¿Y en Nariño?" is still a view)
        ctx.view_was_empty = True
        ctx.figures = [then_passages(f) for f in ctx.figures]
        ctx.figures_shown, ctx.shown_figures = False, []  # stated with the passages' answer, not alone
        if not ctx.formulations:
            ctx.formulations = [ctx.question]
        ctx.step(
            "sistema",
            State.VISUALIZE,
            t0,
            detail={"vista_sin_cifras": [f.vista for f in figs], "sigue": "búsqueda de pasajes"},
        )
        return State.RETRIEVE

    def _unseen_subjects(self, ctx: RunContext, figs: list[Figure]) -> list[str]:
        """The question's subjects (``reading.anchors.question_anchors`` with ``subject``: a quoted
        name, a code, a name after "el programa…") that none of the passages the figures cite
        mentions, when all of them are missing; [] when the question has none, the figures cite no
        passage, or the corpus cannot be read."""
        subjects = [a for a in question_anchors(ctx.question) if a.subject]
        if not subjects:
            return []
        try:
            corpus = self._corpus()
        except Exception:  # noqa: BLE001 - no index: the figures stand as they are
            return []
        passages = []
        for f in figs:
            for c in f.citas:
                row = corpus.row_of.get(c.get("chunk_id"))
                if row is not None:
                    passages.append({"text": corpus.texts[row], "doc_id": c.get("doc_id")})
        if not passages:  # the figures cite nothing that could name the subject: it is unseen
            return [a.label for a in subjects]
        missing = missing_anchors(subjects, passages)
        return [a.label for a in missing] if len(missing) == len(subjects) else []

    @staticmethod
    def _names_outside_filters(ctx: RunContext, unplaced: list[str]) -> list[str]:
        """The names the question is about (``reading.anchors.question_anchors``: a run of
        capitalised words that are no everyday word, ``nombre``) that its reading did not turn into a
        filter — no entity, place, ambiguous place or place abroad of ``ctx.facts`` covers them — and
        that are no unrecognised place (``unplaced``, said by the figures already). Subjects (quoted
        names, codes, "el programa X") keep their own check (``_unseen_subjects``). Returns the labels
        as written, in order."""
        facts = ctx.facts
        if facts is None:
            return []
        requirements = ctx.plan.requirements if ctx.plan is not None else []
        matched = [
            fold_question(x.matched)
            for x in (*facts.places, *facts.ambiguous, *facts.entities)
            if getattr(x, "matched", None)
        ]
        matched += [fold_question(x) for x in (*facts.places_abroad, *unplaced)]
        out = []
        for a in question_anchors(ctx.question, requirements):
            if a.kind != "nombre" or a.subject or not a.decisive:
                continue
            label = fold_question(a.label)
            if any(label in m or m in label for m in matched if m):
                continue
            out.append(a.label)
        return out

    def _check_figures(self, ctx: RunContext, figs: list[Figure]) -> None:
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

    def _state_figures(self, ctx: RunContext) -> None:
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
        if words and ctx.view_was_empty and ctx.followup is not None:
            words = ctx.followup.note + " " + words  # what this turn kept of the previous one, first
        if words:
            ctx.text = (words + "\n\n" + ctx.text).strip()
        if ctx.ruta != "both" or not ctx.figures:
            return
        has_data = any(f.has_data for f in ctx.figures)
        if not has_data and ctx.estado == "respondida" and not ctx.view_was_empty:
            empty = all(f.estado == "sin_datos" for f in ctx.figures)
            ctx.estado, ctx.termination = "incompleta", "vista_sin_datos" if empty else "cifras_no_disponibles"
        elif has_data and ctx.estado == "sin_evidencia" and ctx.view_question:
            # a question read as a view: its figures answer it, as on route visualization; the
            # passages had no sentence to add, which is no gap in the answer
            unseen = self._unseen_subjects(ctx, ctx.figures)
            if unseen:  # the figures count what their filters select, not the question's own subject
                ctx.estado, ctx.termination = "incompleta", "vista_sin_sujeto"
                ctx.text = messages.view_without_subject(unseen) + "\n\n" + words
            else:
                ctx.estado, ctx.termination, ctx.text = "respondida", "visualizacion", words
        elif has_data and ctx.estado == "sin_evidencia":
            ctx.estado, ctx.termination = "incompleta", "solo_cifras"
        elif ctx.estado == "sin_evidencia" and not all(f.estado == "sin_datos" for f in ctx.figures):
            # no passage, and a view that could not be read (not materialized, no database): the
            # question is left incomplete, as on route visualization; only an empty view is no evidence
            not_built = all(f.estado == "no_materializado" for f in ctx.figures)
            ctx.estado = "incompleta"
            ctx.termination = "agregados_no_materializados" if not_built else "cifras_no_disponibles"

    def _visualize_and_retrieve(self, ctx: RunContext) -> State:
        """Route ``both``: the visualizer and the analyst's retrieval at once, each in a branch of the
        run (``RunContext.fork``) on a two-thread pool owned by this run. The trace stays in a fixed order
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

    def _view_without_passages(self, ctx: RunContext, exc: IndexUnavailable) -> State:
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

    def _propose_and_record(self, ctx: RunContext) -> None:
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
        # a place the question names that the gazetteer does not know ("en Hallstatt", "in Toronto")
        # is never dropped silently: the figures say so, and a map it leaves unfiltered states no row
        unplaced = visualizer.unrecognised_places(ctx.question, ctx.facts, self.reader) if ctx.facts and vis else []
        if unplaced:
            answers = visualizer.view_answers_without(ctx.question, vis)
            ctx.figures = [not_for_place(f, unplaced, answers) for f in ctx.figures]
        # a name the question is about that no filter holds ("¿Dónde operan Los Mexicanos?", a gang
        # the dictionary does not know): the view's rows are other actors', so it states none and
        # the passages are read (the empty-view path)
        unnamed = self._names_outside_filters(ctx, unplaced) if vis else []
        if unnamed:
            ctx.figures = [not_for_name(f, unnamed) for f in ctx.figures]
        ctx.step(
            "visualizador",
            State.VISUALIZE,
            t0,
            termination_reason=reason,
            detail={
                "fuente": source,
                "rechazados": rejected,
                "lugares_no_reconocidos": unplaced or None,
                "nombres_sin_filtro": unnamed or None,
                "componentes": [c["tipo"] for c in (vis or {}).get("componentes", [])],
                "cifras": [
                    {"vista": f.vista, "estado": f.estado, "filas": len(f.filas), "citas": len(f.citas)}
                    for f in ctx.figures
                ],
                **fallback,
            },
        )

    def _propose_visual(self, ctx: RunContext) -> tuple[dict | None, list[str], str, LLMError | None]:
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
