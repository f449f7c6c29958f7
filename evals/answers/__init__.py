"""Answer evaluation: does the agent state the key facts an analyst expects, with citations that
support each sentence, without boilerplate, flagging false premises and declining the unanswerable?

Pieces, in data order:

* ``sets`` — the question sets (``evals/answers/sets/<name>.jsonl``, written blind by analysts);
* ``runs`` — one run of a set through the offline agent (as ``radar serve`` builds it), one question
  at a time, with latency and per-step timings; stored in PostgreSQL (``store``);
* ``judging`` — blind batches for judges out (``radar answers export``), graded batches in
  (``radar answers import``), checked against the exported shape;
* ``scoring`` — merged grades, metrics with bootstrap intervals per set / phenomenon / type, Cohen's
  kappa between judges, latency p50/p95 with the slowest step (``radar answers score``);
* the ``answer_evaluation`` Dagster asset (``assets/evals.py``) runs and scores on every
  materialization; ``evals/bench_answer.py`` is the latency benchmark.

The judging guide is ``evals/answers/README.md``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from evals.answers.judging import latest_grades
from evals.answers.runs import latest_run_key, load_run
from evals.answers.scoring import score_run

REPORTS = Path(__file__).resolve().parents[1] / "reports"

__all__ = ["REPORTS", "report_path", "score_stored", "write_report"]


def score_stored(engine: sa.Engine, set_name: str, run_key: str | None = None) -> dict[str, Any]:
    """The report (``scoring.score_run``) of a stored run of ``set_name`` (default: its newest run)
    with every grade imported so far. Raises ``KeyError`` when the set has no run."""
    key = run_key or latest_run_key(engine, set_name)
    if key is None:
        raise KeyError(f"no stored run of set {set_name!r} (run `radar answers run --set {set_name}` first)")
    name, meta, records = load_run(engine, key)
    return score_run(records, latest_grades(engine), set_name=name, run_key=key, run_meta=meta)


def report_path(set_name: str) -> Path:
    """``evals/reports/answers_<set>.json``."""
    return REPORTS / f"answers_{set_name}.json"


def write_report(report: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``report`` as indented JSON (UTF-8); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return p
