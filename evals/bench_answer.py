"""Answer latency benchmark: how long does an offline text answer take on a materialized home?

Not a test: it measures issue 22's speed target (offline text answers p50 ≤ 3 s and p95 ≤ 8 s on
the full corpus with every search stage live, on a quiet machine). On ``--home`` (a materialized
``RADAR_HOME``, read only: traces off, nothing written there) it builds the agent as ``radar serve``
does (``evals.answers.runs.build_service``: indexes, encoder, re-ranker, PostgreSQL precomputes,
offline), asks one warm-up question outside the set (not timed), then every question of ``--set``
once, one at a time, and writes a JSON report (each question once: the retrieval service caches
searches, so a second pass would time the cache):

``overall`` and ``by_route`` (``n``, ``p50_ms``, ``p95_ms``, ``mean_ms``; nearest-rank), ``text``
(the target's population: the text route), ``by_step`` and ``by_step_tool`` (time per question in
each state of the run and in each tool), ``slowest_step`` (the state with the largest mean time per
question, with its share of the mean latency) and ``slowest_step_tool`` (the same per state/tool),
``stages`` (the search stages the loaded index
serves) and ``all_stages_live``, ``machine`` (CPUs, 1-minute load average before and after:
``quiet`` when it was below a quarter of the CPUs before the run), ``targets`` and ``meets``, and
one row per question (id, type, route, estado, latency, per-state ms).

Usage: ``python evals/bench_answer.py --home /work/radar_home [--set dev] [--limit N]
[--out evals/reports/bench_answer.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGETS = {"p50_ms": 3000.0, "p95_ms": 8000.0}


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def bench(service, items, *, log=print) -> dict:
    """Time every item of ``items`` (``evals.answers.sets.QuestionItem``) once through ``service``
    (an ``AgentService``); returns the report of the module docstring (without
    ``generated_at``/``home``)."""
    from evals.answers.runs import run_set
    from evals.answers.scoring import latency_summary

    stages = service.corpus().search_stages
    load_before = _load()
    records = run_set(service.runner(), items, corpus=service.corpus, warmup=True, log=log)
    load_after = _load()
    lat = latency_summary(records)
    text = lat["by_route"].get("text")
    cpus = os.cpu_count() or 1
    per_q = []
    for rec in records:
        by_state: dict[str, float] = defaultdict(float)
        for s in rec["steps"]:
            by_state[s["state"]] += s["ms"]
        per_q.append(
            {
                "id": rec["question_id"],
                "type": rec["type"],
                "route": rec["ruta"],
                "estado": rec["estado"],
                "latency_ms": rec["latency_ms"],
                "steps_ms": {k: round(v, 1) for k, v in by_state.items()},
            }
        )
    measured = text or lat["overall"]
    return {
        "n": len(records),
        "mode": service.mode,
        "stages": stages,
        "all_stages_live": all(stages.get(k) for k in ("lexical", "dense", "rerank")),
        "machine": {
            "cpus": cpus,
            "loadavg_1m_before": load_before,
            "loadavg_1m_after": load_after,
            "quiet": load_before is not None and load_before < cpus / 4,
        },
        "overall": lat["overall"],
        "text": text,
        "by_route": lat["by_route"],
        "by_step": lat["by_step"],
        "by_step_tool": lat["by_step_tool"],
        "slowest_step": lat["slowest_step"],
        "slowest_step_tool": lat["slowest_step_tool"],
        "targets": {"population": "text route" if text else "all routes", **TARGETS},
        "meets": {k: measured[k] is not None and measured[k] <= v for k, v in TARGETS.items()},
        "questions": per_q,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="a materialized RADAR_HOME (read only)")
    ap.add_argument("--set", default="dev", help="answer set name (evals/answers/sets) or a .jsonl path")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "bench_answer.json")
    args = ap.parse_args(argv)
    os.environ["RADAR_HOME"] = str(args.home)

    from evals.answers.runs import build_service
    from evals.answers.sets import load_set, set_path

    items = load_set(set_path(args.set))
    items = items[: args.limit] if args.limit > 0 else items
    t0 = time.perf_counter()
    service = build_service(offline=True)
    service.corpus()
    load_s = time.perf_counter() - t0
    report = bench(service, items)
    report = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "home": str(args.home),
        "set": args.set,
        "index": {k: v for k, v in service.index_status().items() if k in ("index_version", "passages", "dir")},
        "service_load_s": round(load_s, 1),
        **report,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    m = report["text"] or report["overall"]
    print(
        f"{report['n']} answers: p50 {m['p50_ms']} ms, p95 {m['p95_ms']} ms ({report['targets']['population']}); "
        f"slowest step {report['slowest_step']}; stages {report['stages']}; wrote {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
