"""Precision and recall of "non-statement" of ``radar_pipeline.agent.statements`` on the hand-labelled
sample ``evals/labelled/sentence_kinds.jsonl``.

The sample: 300 sentences of the Codefest corpus (``F1``–``F3`` ``*.txt``), one random 6,000-character
block per file (seed 22), split with ``radar_pipeline.sentences.split_sentences``, first and last
piece of the block dropped (cut by the block), 30–480 characters; 210 that the writer's shape filter
(``writer._usable``) lets through — the sentences that could become quotes — and 90 that it drops.
Each was labelled by hand with one of ``statements.KINDS``.

Run: ``python -m evals.sentence_kinds`` (prints JSON: overall, on the shape-filtered subset, and the
writer's combined filter ``_usable and is_statement``; plus the confusions).
"""

from __future__ import annotations

import json
from pathlib import Path

from radar_pipeline.agent.roles.writer import _usable
from radar_pipeline.agent.statements import sentence_kind

SAMPLE = Path(__file__).with_name("labelled") / "sentence_kinds.jsonl"


def load(path: Path = SAMPLE) -> list[dict]:
    """The labelled rows: ``{"id", "source", "usable", "sentence", "kind"}``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _pr(gold: list[bool], pred: list[bool]) -> dict:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    fp = sum(p and not g for g, p in zip(gold, pred, strict=True))
    fn = sum(g and not p for g, p in zip(gold, pred, strict=True))
    return {
        "n": len(gold),
        "non_statements": sum(gold),
        "precision": round(tp / max(1, tp + fp), 3),
        "recall": round(tp / max(1, tp + fn), 3),
        "statements_dropped": fp,
        "non_statements_kept": fn,
    }


def measure(rows: list[dict] | None = None) -> dict:
    """``{"all", "usable", "writer", "confusions"}``: precision/recall of predicting "non-statement"
    on every row, on the rows ``_usable`` lets through, and of the writer's whole filter on every row."""
    rows = rows if rows is not None else load()
    pred = [sentence_kind(r["sentence"]) for r in rows]
    gold = [r["kind"] != "statement" for r in rows]
    non = [p != "statement" for p in pred]
    usable = [i for i, r in enumerate(rows) if r["usable"]]
    writer = [not (_usable(r["sentence"]) and p == "statement") for r, p in zip(rows, pred, strict=True)]
    confusions = [
        {"id": r["id"], "gold": r["kind"], "pred": p, "sentence": r["sentence"][:120]}
        for r, p in zip(rows, pred, strict=True)
        if (r["kind"] == "statement") != (p == "statement")
    ]
    return {
        "all": _pr(gold, non),
        "usable": _pr([gold[i] for i in usable], [non[i] for i in usable]),
        "writer": _pr(gold, writer),
        "confusions": confusions,
    }


if __name__ == "__main__":
    print(json.dumps(measure(), ensure_ascii=False, indent=1))
