"""Score a labelled claim sample: precision per predicate and language, stance accuracy, recall.

``python -m evals.claims.score LABELS.jsonl [--sample sample_to_label.jsonl] [--database-url URL]
[--json OUT]``. Labels: JSONL with ``item_id``, ``claim_correct`` (0/1), ``stance_correct`` (0/1),
optional ``missing_claims`` (list of ``{predicate, ...}``) — see LABELLING.md.

- claim precision = mean ``claim_correct`` per predicate, per language and overall, with the Wilson
  score 95 % interval (Wilson 1927; adequate for small n and p near 0 or 1);
- stance accuracy = mean ``stance_correct``;
- recall (estimate on the sampled passages) per predicate = correct / (correct + missing noted for
  that predicate);
- span provenance of the sample: share of items whose quoted span occurs in their passage;
- with ``--database-url``: ``provenance_coverage`` of every claim version in the database (must
  be 1.0) and the evidence check of the current claims.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).with_name("sample_to_label.jsonl")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of k successes in n trials (95 % for z = 1.96); (0, 1) when n = 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rate(vals: list[int]) -> dict[str, Any]:
    k, n = sum(vals), len(vals)
    lo, hi = wilson(k, n)
    return {"n": n, "correct": k, "rate": round(k / n, 4) if n else None, "ci95": [round(lo, 4), round(hi, 4)]}


def score(sample: list[dict[str, Any]], labels: list[dict[str, Any]]) -> dict[str, Any]:
    """The report (module docstring) of ``labels`` against ``sample``. Raises ``ValueError`` on a
    label whose item is not in the sample or whose 0/1 fields are missing."""
    items = {s["item_id"]: s for s in sample}
    by_pred: dict[str, list[int]] = defaultdict(list)
    by_lang: dict[str, list[int]] = defaultdict(list)
    by_pred_lang: dict[str, list[int]] = defaultdict(list)
    stance: dict[str, list[int]] = defaultdict(list)
    missing: dict[str, int] = defaultdict(int)
    allc, alls = [], []
    for lab in labels:
        it = items.get(lab.get("item_id"))
        if it is None:
            raise ValueError(f"label for unknown item {lab.get('item_id')!r}")
        for f in ("claim_correct", "stance_correct"):
            if lab.get(f) not in (0, 1):
                raise ValueError(f"{lab['item_id']}: {f} must be 0 or 1")
        c, s = int(lab["claim_correct"]), int(lab["stance_correct"])
        by_pred[it["predicate"]].append(c)
        by_lang[it["language"]].append(c)
        by_pred_lang[f"{it['predicate']}/{it['language']}"].append(c)
        stance[it["predicate"]].append(s)
        allc.append(c)
        alls.append(s)
        for m in lab.get("missing_claims") or []:
            missing[m.get("predicate") or "other"] += 1
    recall = {}
    for p, vals in by_pred.items():
        k = sum(vals)
        recall[p] = {
            "correct": k,
            "missing": missing.get(p, 0),
            "recall": round(k / (k + missing[p]), 4) if k + missing.get(p, 0) else None,
        }
    spans_ok = sum(1 for s in sample if s["quoted_span"] and s["quoted_span"] in s["passage"])
    return {
        "items_labelled": len(labels),
        "items_in_sample": len(sample),
        "claim_precision": _rate(allc),
        "claim_precision_by_predicate": {p: _rate(v) for p, v in sorted(by_pred.items())},
        "claim_precision_by_language": {p: _rate(v) for p, v in sorted(by_lang.items())},
        "claim_precision_by_predicate_language": {p: _rate(v) for p, v in sorted(by_pred_lang.items())},
        "stance_accuracy": _rate(alls),
        "stance_accuracy_by_predicate": {p: _rate(v) for p, v in sorted(stance.items())},
        "recall_estimate_by_predicate": recall,
        "missing_claims_other": missing.get("other", 0),
        "sample_span_in_passage": {"items": len(sample), "ok": spans_ok},
    }


def database_checks(url: str) -> dict[str, Any]:
    """Provenance coverage over every claim version and the evidence check of current claims."""
    from radar_pipeline import db
    from radar_pipeline.claims.store import check_evidence, check_single_current, provenance_coverage

    engine = db.create_engine(db.normalize_url(url))
    return {
        "provenance_coverage": provenance_coverage(engine),
        "evidence_check": check_evidence(engine),
        "single_current_version": check_single_current(engine),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="Score a labelled claim sample (evals/claims/LABELLING.md).")
    ap.add_argument("labels", type=Path)
    ap.add_argument("--sample", type=Path, default=SAMPLE)
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = ap.parse_args()
    report = score(_read(args.sample), _read(args.labels))
    if args.database_url:
        report["database"] = database_checks(args.database_url)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
