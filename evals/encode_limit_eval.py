"""Does query-time re-ranker encoding pay at the search level? Per-query Codefest scores for several
``rerank_encode_limit`` values on one index, paired against the first value.

For each limit a fresh ``Searcher`` (no query-time vectors carried over) runs ``evals.runner.run_codefest``
with the default configuration and that limit; the report holds, per limit, the mean NDCG@10 and
Judged@10 on the original and the deepened judgments, seconds, the paired randomization test's p
against the first limit (``evals.metrics.paired_randomization_test``) and the per-query values.
Meaningful only where the index lacks re-ranker vectors (``rerank_vectors`` incomplete); read
NDCG@10 together with Judged@10 (evals/README.md, "Incomplete judgments").

Usage: ``RADAR_HOME=... python evals/encode_limit_eval.py --limits 8 0 [--out evals/reports/encode_limit.json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

METRICS = ("ndcg@10", "judged@10", "deep_ndcg@10", "deep_judged@10")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limits", type=int, nargs="+", required=True, help="rerank_encode_limit values (first = base)")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "encode_limit.json")
    args = ap.parse_args(argv)
    if any(x < 0 for x in args.limits):
        ap.error("--limits must be >= 0")

    from evals.metrics import paired_randomization_test
    from evals.runner import run_codefest
    from radar_pipeline.config import EncoderSpec, get_settings
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import RetrievalConfig, Searcher

    encoder = build_encoder(EncoderSpec())
    index_dir = get_settings().index_dir / encoder.name
    per_query: dict[int, dict[str, list[float]]] = {}
    summary: dict[int, dict] = {}
    for limit in args.limits:
        searcher = Searcher(index_dir, encoder, reranker=build_reranker())
        t0 = time.perf_counter()
        pq = run_codefest(searcher, RetrievalConfig().with_(rerank_encode_limit=limit)).scores.per_query
        per_query[limit] = {m: pq[m].to_list() for m in METRICS if m in pq.columns}
        summary[limit] = {m: round(sum(v) / len(v), 4) for m, v in per_query[limit].items()}
        summary[limit]["seconds"] = round(time.perf_counter() - t0, 1)
        summary[limit]["rerank_coverage"] = round(searcher.rerank_coverage, 4)
    base = args.limits[0]
    for limit in args.limits[1:]:
        for m in ("ndcg@10", "deep_ndcg@10"):
            if m in per_query[limit]:
                summary[limit][f"p_{m}_vs_{base}"] = round(
                    paired_randomization_test(per_query[limit][m], per_query[base][m]).p_value, 4
                )
    report = {"index_dir": str(index_dir), "summary": summary, "per_query": per_query}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
