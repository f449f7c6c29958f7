"""How the agent's offline path reads a question, for the question-reading tests: one helper instead of a
copy in each test module."""

from __future__ import annotations

from radar_pipeline.agent.roles import router, visualizer


def read_question(reader, question: str) -> tuple[str, list[str], dict, list[str]]:
    """``(route, components, filters without empty values, ambiguous names)`` of ``question``: the
    router's plan, then the visualizer's proposal validated against ``reader`` (a ``QuestionReader``).
    A plan that is not a question (smalltalk, blocked) gives its kind as the route."""
    facts = reader.read(question)
    plan = router.plan(question, facts)
    ambiguous = [a.matched for a in facts.ambiguous]
    if plan.kind != "question" or plan.ruta == "text":
        return (plan.ruta if plan.kind == "question" else plan.kind), [], {}, ambiguous
    comps, filtros = visualizer.propose(question, facts)
    vis, _ = visualizer.validate(comps, filtros, reader)
    return (
        plan.ruta,
        [c["tipo"] for c in vis["componentes"]],
        {k: v for k, v in vis["filtros"].items() if v},
        ambiguous,
    )


def premise_verdict(question: str, text: str, language: str = "en"):
    """The premise judge's verdict (``premise.assess``) on the premise of ``question`` against one
    passage ``text`` (chunk ``c1`` of document ``d1``); fails the test when the question has no premise."""
    from radar_pipeline.agent.roles.premise import assess, extract_premise

    premise = extract_premise(question)
    assert premise is not None, question
    read = {"c1": {"doc_id": "d1", "chunk_id": "c1", "text": text, "language": language}}
    return assess(premise, read)
