"""Dump what one version of Radar's rule reader makes of Stage-2 questions: route, components,
filters, and the rules' own reasons (which rule fired), per item.

Run it against the code of any commit (``--root``: a directory holding that commit's
``radar_pipeline/`` and ``evals/``, e.g. from ``git archive <commit> radar_pipeline evals``) to
recover the reading a frozen reader gave a set **before anyone read it**: the blind first contact
that ``evals/stage2_learned.py`` combines with the learned reader. Only that commit's code is
imported, so the output is the frozen reader's, scored later with today's scorer and labels::

    python evals/stage2_dump_reading.py --root /tmp/old_eaac455 \\
        --questions evals/stage2/questions_final26.jsonl --out /tmp/final26_eaac455.json

Output: JSON ``{"root": ..., "rows": [{"id", "question", "got": {kind, route, components, filters,
ambiguous}, "reasons": [...]}]}``; ``reasons`` are ``intent.classify``'s for the question, called as
``visualizer.propose`` calls it (``component:rule``, e.g. ``mapa_lugares:dónde``; ``sin vista`` when
no view rule fired); ``forced``: the components and filters ``visualizer.propose`` gives the
question whatever its route (to score a route a combination changes to a view).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, required=True, help="directory with the reader's radar_pipeline/ and evals/")
    ap.add_argument("--questions", type=Path, action="append", required=True)
    ap.add_argument("--reference-year", type=int, default=2025)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    questions = [p.resolve() for p in args.questions]
    sys.path.insert(0, str(args.root.resolve()))
    from evals.stage2 import load_questions, read_item  # that commit's
    from radar_pipeline.agent.reading import intent
    from radar_pipeline.agent.reading.understanding import QuestionReader
    from radar_pipeline.agent.roles import visualizer
    from radar_pipeline.config import get_settings

    reader = QuestionReader.from_shared(get_settings().shared_dir, reference_year=args.reference_year)
    accepted = set(inspect.signature(intent.classify).parameters)
    rows = []
    for path in questions:
        for item in load_questions(path):
            q = item["question"]
            got = read_item(item, reader)
            facts = reader.read(q)
            flags = {
                "has_armed_group": any(e.category == "armed_group" for e in facts.entities),
                "has_place": bool(facts.places or facts.ambiguous),
                "has_country": any(e.category == "country" for e in facts.entities),
            }
            read = intent.classify(q, **{k: v for k, v in flags.items() if k in accepted})
            # the view the rules would propose were the question routed to one (filters included),
            # to score a route changed to a view afterwards
            comps, filtros = visualizer.propose(q, facts)
            vis, _ = visualizer.validate(comps, filtros, reader)
            forced = {"components": [c["tipo"] for c in vis["componentes"]], "filters": vis["filtros"]} if vis else None
            rows.append({"id": item["id"], "question": q, "got": got, "reasons": list(read.reasons), "forced": forced})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"root": str(args.root), "rows": rows}, ensure_ascii=False))
    print(f"{len(rows)} items -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
