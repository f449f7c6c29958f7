"""Latency of offline ``/chat`` answers, one question at a time, with the slowest step named.

Not a test: it measures what one analyst waits for (issue 22 item 6, target: offline text answers
p50 ≤ 3 s and p95 ≤ 8 s on the full corpus with every search stage live, on a quiet machine). In
one process it builds the agent exactly as the API does (``agent.service.AgentService``: the
configured encoder, re-ranker and index of ``RADAR_HOME``; offline, traces not stored), asks one
warm-up question (loading the encoders and the index, reported apart as ``cold_ms``), then each
question in turn and reads the run's own trace (``RunResult.steps``):

* ``latency_ms``: p50 / p95 / mean / max over all questions and per route (``text``,
  ``visualization``, ``both``), with each run's ``estado``;
* ``steps``: per step kind (``role:state[:tool]``) the total, mean per run, p95 per run and
  share of all answer time; plus ``outside_steps`` (run time no step accounts for, e.g. the
  premise judgement and the result assembly) — ``slowest_step`` names the kind with the largest
  total;
* ``cpu_ms``: the process's CPU time per answer (``time.process_time``), overall and per route: on
  a loaded machine, the estimate of the answer's time on a quiet one (the encoders run one thread);
* ``machine``: ``os.getloadavg()`` at start and end, CPU count, so a number measured on a loaded
  machine is read as such;
* ``search``: the stages live (``lexical``, ``dense``, ``rerank``), the share of passages with a
  precomputed re-ranker vector, and how many re-ranker vectors were encoded at query time.

Questions: the 25 Codefest dev questions (``--questions``, JSONL with ``question``) plus
``VISUAL_QUESTIONS`` (routes ``visualization`` and ``both``; ``--no-visual`` leaves them out).
``--profile FILE.html`` also writes a pyinstrument profile of the measured runs (and its text form
next to it, ``FILE.txt``; needs ``pyinstrument``). The index is only read; with ``--no-database`` the precompute tables are not read
either (visual answers then report the aggregates as unknown).

Usage: ``RADAR_HOME=/work/radar_home python evals/bench_chat_latency.py
[--out evals/reports/bench_chat_latency.json] [--limit N]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Questions that ask to *see* something (router routes ``visualization`` / ``both``), written for
# this benchmark: the dev set holds text questions only.
VISUAL_QUESTIONS = (
    "Muéstrame un mapa de la presencia de grupos armados en Colombia",
    "Gráfico de la evolución anual de publicaciones sobre ciberseguridad",
    "Muestra la línea de tiempo de alertas tempranas en Cauca y explica qué riesgos señalan",
    "¿Qué dicen los documentos sobre drones en conflictos armados? Muéstrame también un gráfico por año",
)


# Asked once before the measured runs (loads the encoders and the index); in no question list, so no
# measured run finds its search already cached.
WARMUP_QUESTION = "¿Qué riesgos plantea la basura espacial para los satélites en órbita baja?"


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in [0, 100]) of ``values``, rounded to 0.1; None for none."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return round(s[k], 1)


def summary(values: list[float]) -> dict:
    """``{n, p50, p95, mean, max}`` of millisecond values (None fields when empty)."""
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "mean": round(statistics.fmean(values), 1) if values else None,
        "max": round(max(values), 1) if values else None,
    }


def step_kind(step) -> str:
    """The kind a trace step is aggregated under: ``role:state`` plus ``:tool`` for a tool call."""
    return f"{step.role}:{step.state}" + (f":{step.tool}" if step.tool else "")


def step_table(runs: list[dict]) -> tuple[dict, str | None]:
    """Per step kind over ``runs`` (each with ``latency_ms`` and ``steps`` = [(kind, ms)]):
    ``{kind: {total_ms, runs, calls, mean_per_run_ms, p95_per_run_ms, share}}`` sorted by total,
    with ``outside_steps`` for the time no step accounts for; and the kind with the largest total."""
    per_run: dict[str, list[float]] = {}
    calls: dict[str, int] = {}
    for r in runs:
        sums: dict[str, float] = {}
        for kind, ms in r["steps"]:
            sums[kind] = sums.get(kind, 0.0) + ms
            calls[kind] = calls.get(kind, 0) + 1
        sums["outside_steps"] = max(0.0, r["latency_ms"] - sum(ms for _, ms in r["steps"]))
        for kind, ms in sums.items():
            per_run.setdefault(kind, []).append(ms)
    total_all = sum(r["latency_ms"] for r in runs) or 1.0
    table = {
        kind: {
            "total_ms": round(sum(v), 1),
            "runs": len(v),
            "calls": calls.get(kind, len(v)),
            "mean_per_run_ms": round(sum(v) / len(runs), 1),
            "p95_per_run_ms": percentile(v + [0.0] * (len(runs) - len(v)), 95),
            "share": round(sum(v) / total_all, 3),
        }
        for kind, v in per_run.items()
    }
    table = dict(sorted(table.items(), key=lambda kv: -kv[1]["total_ms"]))
    return table, next(iter(table), None)


def load_questions(path: Path, visual: bool, limit: int | None) -> list[tuple[str | None, str]]:
    """``[(query_id or None, question)]``: those of ``path`` (JSONL, fields ``question`` and optional
    ``query_id``; the first ``limit`` when given), then ``VISUAL_QUESTIONS`` when ``visual``.
    Raises ``ValueError`` on a file with none."""
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    qs = [(r.get("query_id"), r["question"]) for r in rows]
    if not qs:
        raise ValueError(f"no questions in {path}")
    qs = qs[:limit] if limit else qs
    return qs + ([(None, q) for q in VISUAL_QUESTIONS] if visual else [])


def evidence_grades(runs: list[dict]) -> dict | None:
    """Judged relevance of what each Codefest dev run read and cited: per run ``read_gain`` /
    ``cited_gain`` (sum of the deepened judgments' grades, ``evals.scoring.build_deep_index``: a
    passage inherits the grade of the judged passage it overlaps) and ``read_relevant`` (passages
    with grade ≥ 1); the means over runs with a ``query_id``. None when no run has one. A paired
    quality check of the answers' evidence (``--compare``), not a substitute for ``radar eval``."""
    texts = {id(r): (r.pop("_read_texts", []), r.pop("_cited_texts", [])) for r in runs}
    judged = [r for r in runs if r.get("query_id")]
    if not judged:
        return None
    from evals.scoring import build_deep_index

    index = build_deep_index()
    for r in judged:
        read = [index.grade(r["query_id"], t) for t in texts[id(r)][0]]
        cited = [index.grade(r["query_id"], t) for t in texts[id(r)][1]]
        r["read_gain"], r["cited_gain"] = sum(read), sum(cited)
        r["read_relevant"] = sum(g >= 1 for g in read)
    return {
        k: round(statistics.fmean(r[k] for r in judged), 3) for k in ("read_gain", "cited_gain", "read_relevant")
    } | {"runs": len(judged)}


def compare(a_path: Path, b_path: Path) -> dict:
    """Paired comparison of two reports of this benchmark (same questions, matched by text): latency
    and the evidence grades, mean A, mean B and the paired randomization test's p
    (``evals.metrics.paired_randomization_test``). Raises ``ValueError`` when no question is shared."""
    from evals.metrics import paired_randomization_test

    a = {r["question"]: r for r in json.loads(a_path.read_text())["runs"]}
    b = {r["question"]: r for r in json.loads(b_path.read_text())["runs"]}
    shared = [q for q in a if q in b]
    if not shared:
        raise ValueError("the two reports share no question")
    out = {"questions": len(shared)}
    for key in ("latency_ms", "cpu_ms", "rerank_encoded", "read_gain", "cited_gain", "read_relevant"):
        pairs = [(a[q][key], b[q][key]) for q in shared if key in a[q] and key in b[q]]
        if pairs:
            t = paired_randomization_test([x for x, _ in pairs], [y for _, y in pairs])
            out[key] = {
                "n": len(pairs),
                "mean_a": round(t.mean_a, 3),
                "mean_b": round(t.mean_b, 3),
                "p": round(t.p_value, 4),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, help="RADAR_HOME to read (default: the environment's)")
    ap.add_argument(
        "--questions", type=Path, help="JSONL (default: <RADAR_SHARED_DIR>/eval/codefest_dev/questions.jsonl)"
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions of --questions")
    ap.add_argument("--no-visual", action="store_true", help="leave the visual questions out")
    ap.add_argument("--no-database", action="store_true", help="do not read the precompute tables")
    ap.add_argument("--repeat", type=int, default=1, help="ask the question list this many times")
    ap.add_argument("--profile", type=Path, help="write a pyinstrument HTML profile of the measured runs here")
    ap.add_argument("--label", default="", help="free text stored in the report (e.g. 'before')")
    ap.add_argument(
        "--encodes-per-run",
        default=None,
        help="re-ranker encodings a run may make at query time (AgentConfig.rerank_encodes_per_run); "
        "'none': no run budget (each search its own limit); default: the service's setting",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "bench_chat_latency.json")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="paired comparison of two reports")
    args = ap.parse_args(argv)
    if args.compare:
        print(json.dumps(compare(*args.compare), indent=1))
        return 0
    if args.home:
        os.environ["RADAR_HOME"] = str(args.home.resolve())
    os.environ.pop("RADAR_LLM_BASE_URL", None)  # offline answers only (no model endpoint)
    if args.questions is None:
        from evals.datasets import resolve_shared_dir

        args.questions = resolve_shared_dir() / "eval" / "codefest_dev" / "questions.jsonl"
    questions = load_questions(args.questions, not args.no_visual, args.limit) * max(1, args.repeat)

    from radar_pipeline.agent.service import AgentService, ServiceSettings

    load_start = os.getloadavg()
    settings = ServiceSettings(trace=False, use_database=not args.no_database)
    if args.encodes_per_run is not None:
        per_run = None if args.encodes_per_run.lower() == "none" else int(args.encodes_per_run)
        settings = settings.model_copy(update={"rerank_encodes_per_run": per_run})
    service = AgentService(settings)
    runner = service.runner()
    t0 = time.perf_counter()
    runner.run(WARMUP_QUESTION)
    cold_ms = round((time.perf_counter() - t0) * 1000, 1)
    corpus = service.corpus()
    searcher = corpus.searcher
    encoded_before = getattr(searcher, "encoded_at_query_time", None)

    profiler = None
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.005)
        profiler.start()
    runs = []
    for qid, q in questions:
        encoded = getattr(searcher, "encoded_at_query_time", 0)
        t, cpu = time.perf_counter(), time.process_time()
        res = runner.run(q)
        wall = (time.perf_counter() - t) * 1000
        cpu = (time.process_time() - cpu) * 1000
        encoded = getattr(searcher, "encoded_at_query_time", 0) - encoded
        read = res.retrieval_context
        cited = {c["chunk_id"] for c in res.citas}
        runs.append(
            {
                "query_id": qid,
                "question": q,
                "ruta": res.ruta,
                "estado": res.estado,
                "latency_ms": round(wall, 1),
                "cpu_ms": round(cpu, 1),
                "tool_calls": res.tool_calls,
                # re-ranker passage vectors encoded at query time during this run (its searches;
                # exact one run at a time, unless the searcher's cache was cleared meanwhile)
                "rerank_encoded": max(0, encoded),
                "citations": len(res.citas),
                "steps": [(step_kind(s), s.ms) for s in res.steps],
                "_read_texts": read,
                "_cited_texts": [corpus.chunk(c)["text"] for c in cited if corpus.chunk(c)],
            }
        )
        print(
            f"{wall / 1000:6.2f}s wall {cpu / 1000:6.2f}s cpu {encoded:3d} e5  {res.ruta:13s} {res.estado:13s} {q[:70]}",
            flush=True,
        )
    if profiler is not None:
        profiler.stop()
        args.profile.parent.mkdir(parents=True, exist_ok=True)
        args.profile.write_text(profiler.output_html(), encoding="utf-8")
        args.profile.with_suffix(".txt").write_text(profiler.output_text(show_all=False), encoding="utf-8")
    load_end = os.getloadavg()

    by_route: dict[str, list[float]] = {}
    for r in runs:
        by_route.setdefault(r["ruta"], []).append(r["latency_ms"])
    steps, slowest = step_table(runs)
    evidence = evidence_grades(runs)
    text_runs = [r for r in runs if r["ruta"] == "text"]
    report = {
        "label": args.label,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "radar_home": os.environ.get("RADAR_HOME"),
        "rerank_encodes_per_run": getattr(runner.config, "rerank_encodes_per_run", "n/a"),
        "index_dir": str(service.index_dir()),
        "questions": len(runs),
        "cold_ms": cold_ms,
        "warmup_question": WARMUP_QUESTION,
        "evidence": evidence,
        "latency_ms": summary([r["latency_ms"] for r in runs]),
        "latency_ms_by_route": {k: summary(v) for k, v in sorted(by_route.items())},
        # CPU seconds of this process per answer: what the answer costs without waiting for the
        # machine's other work (~ its wall time on an idle machine, the encoders using one thread)
        "cpu_ms": summary([r["cpu_ms"] for r in runs]),
        "cpu_ms_by_route": {k: summary([r["cpu_ms"] for r in runs if r["ruta"] == k]) for k in sorted(by_route)},
        "estados": {e: sum(r["estado"] == e for r in runs) for e in sorted({r["estado"] for r in runs})},
        "slowest_step": slowest,
        "slowest_step_text": step_table(text_runs)[1] if text_runs else None,
        "steps": steps,
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_start": [round(x, 2) for x in load_start],
            "loadavg_end": [round(x, 2) for x in load_end],
        },
        "search": {
            "stages": corpus.search_stages,
            "passages": corpus.size,
            "rerank_coverage": round(getattr(searcher, "rerank_coverage", 0.0), 4),
            "rerank_encoded_per_run": summary([r["rerank_encoded"] for r in runs]),
            "rerank_encoded_at_query_time": (
                searcher.encoded_at_query_time - encoded_before if encoded_before is not None else None
            ),
        },
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k not in ("runs", "steps")}, ensure_ascii=False, indent=1))
    print(json.dumps(dict(list(steps.items())[:8]), ensure_ascii=False, indent=1))
    service.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
