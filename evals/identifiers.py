"""Identifier priority, measured (issue 26 §4): rank of the first passage naming the identifier a
question names, without and with the identifier component, and the dev set's NDCG@10 both ways.

Questions: ``evals/labelled/identifier_questions.jsonl`` (Spanish, written for this measure, several
kinds: alert codes, designations, programmes and treaties of the entity dictionary, names found by
shape), each with ``names``: a regular expression written by hand for the passages that name the
identifier (independent of ``radar_pipeline.retrieval.identifiers``, which it checks).

Per question, for the default configuration with ``identifier_weight`` 0 (before) and as
configured (after): the rank (1-based, passages as served, read 100 deep) of the first passage the
``names`` expression matches, None when none is in the first 100; the identifiers recognised.
Summary: mean reciprocal rank, hits at 1 and 10. Then the 25 Codefest dev questions both ways,
scored on the deepened judgments (``--judgments-from``: files, for a read-only home) with the paired
randomization test (``evals.scoring.compare``) of deepened NDCG@10, NDCG'@10, Judged@10 and F1@3.

Usage (on a materialized home, read only)::

    RADAR_HOME=/work/homes/eval python evals/identifiers.py --judgments-from evals/judging \\
        --out evals/reports/identifiers.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.judging import merged_qrels_from_files, read_merged  # noqa: E402 - after the sys.path set-up (script)
from evals.runner import run_codefest  # noqa: E402 - after the sys.path set-up (script)
from evals.scoring import compare  # noqa: E402 - after the sys.path set-up (script)
from radar_pipeline import db  # noqa: E402 - after the sys.path set-up (script)
from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402 - after the sys.path set-up (script)
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402 - after the sys.path set-up (script)
from radar_pipeline.retrieval.policy import PolicyConfig  # noqa: E402 - after the sys.path set-up (script)
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher  # noqa: E402 - after the sys.path set-up (script)

QUESTIONS = ROOT / "evals" / "labelled" / "identifier_questions.jsonl"


def first_naming_rank(passages: list[dict], names: str) -> int | None:
    """1-based rank of the first passage whose text ``names`` (a regular expression) matches."""
    rx = re.compile(names)
    return next((p["rank"] for p in passages if rx.search(p["text"])), None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--judgments-from", type=Path, default=None, help="judging folder (files) instead of PostgreSQL")
    ap.add_argument("--encode-limit", type=int, default=0, help="re-ranker encodings at query time (0: impute)")
    ap.add_argument("--no-dev", action="store_true", help="skip the dev set's paired test")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "identifiers.json")
    args = ap.parse_args()
    settings = get_settings()
    enc = build_encoder(EncoderSpec())
    searcher = Searcher(settings.index_dir / enc.name, enc, reranker=build_reranker())
    after = RetrievalConfig(rerank_encode_limit=args.encode_limit)
    before = after.with_(identifier_weight=0.0)
    deep_cfg = {"before": before, "after": after}
    rows = []
    for line in args.questions.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        row = {"id": q["id"], "kind": q["kind"], "question": q["question"]}
        for label, cfg in deep_cfg.items():
            t0 = time.perf_counter()
            res = searcher.search(q["question"], cfg.with_(policy=PolicyConfig(k_passages=100)))
            row[f"{label}_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            row[f"rank_{label}"] = first_naming_rank(res.passages, q["names"])
            if label == "after":
                row["identifiers"] = res.identifiers
                top = res.passages[:10]
                row["top10_naming_after"] = sum(1 for p in top if re.search(q["names"], p["text"]))
                row["top1_identifier_component"] = top[0]["score_components"]["identifier"] if top else None
            else:
                row["top10_naming_before"] = sum(1 for p in res.passages[:10] if re.search(q["names"], p["text"]))
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), file=sys.stderr, flush=True)

    def summary(label: str) -> dict:
        ranks = [r[f"rank_{label}"] for r in rows]
        return {
            "mrr@100": round(sum(1 / x for x in ranks if x) / len(ranks), 4),
            "hit@1": sum(1 for x in ranks if x == 1),
            "hit@10": sum(1 for x in ranks if x and x <= 10),
            "found@100": sum(1 for x in ranks if x),
            "naming_in_top10": sum(r[f"top10_naming_{label}"] for r in rows),
        }

    report: dict = {
        "home": str(settings.home),
        "questions": len(rows),
        "recognised": sum(1 for r in rows if r["identifiers"]),
        "before": summary("before"),
        "after": summary("after"),
        "per_question": rows,
    }
    if not args.no_dev:
        if args.judgments_from is not None:
            (mapping,) = sorted((args.judgments_from / "organiser").glob("*.mapping.jsonl"))
            deep = merged_qrels_from_files(
                mapping, {p.stem: p for p in sorted((args.judgments_from / "graded").glob("*.jsonl"))}
            )
        else:
            deep = read_merged(db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata)))
        reps = {label: run_codefest(searcher, cfg, deep_records=deep) for label, cfg in deep_cfg.items()}
        dev = {"questions_with_identifiers": [], "metrics": {}}
        from evals.datasets import load_codefest_dev

        for qq in load_codefest_dev().questions:
            ids = searcher.identifiers(qq.question)
            if ids:
                dev["questions_with_identifiers"].append(
                    {"query_id": qq.query_id, "identifiers": [i.text for i in ids]}
                )
        for m in ("deep_ndcg@10", "deep_judged@10", "deep_ndcg'@10", "ndcg@10", "f1@3"):
            t = compare(reps["after"].per_query, reps["before"].per_query, m)
            dev["metrics"][m] = {
                "before": round(t.mean_b, 4),
                "after": round(t.mean_a, 4),
                "diff": round(t.diff, 4),
                "p": round(t.p_value, 4),
            }
        report["dev"] = dev
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    print(json.dumps({k: v for k, v in report.items() if k != "per_question"}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
