"""Search latency benchmark on the materialized full index: writes a JSON report.

Not a test: it measures, for the default ``RetrievalConfig`` and the same without the second
stage, the per-question latency (ms) of ``Searcher.search`` over 100 questions (the 25 Codefest
dev questions + 75 XQuAD ones), p50 / p95 / max, after one warm-up query; and how many top-k
passages had no precomputed re-ranker vector (encoded at query time, or imputed past
``rerank_encode_limit``).

Usage: ``python evals/bench_search.py [--out evals/reports/bench_search.json]``
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.bench_pipeline import percentile  # noqa: E402
from evals.datasets import load_codefest_dev, load_xquad  # noqa: E402
from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "bench_search.json")
    args = ap.parse_args()
    settings = get_settings()
    questions = [q.question for q in load_codefest_dev().questions]
    questions += [q.text for q in load_xquad("xquad_es_en").queries[:100 - len(questions)]]
    encoder = build_encoder(EncoderSpec())
    t0 = time.perf_counter()
    searcher = Searcher(settings.index_dir / encoder.name, encoder, reranker=build_reranker())
    load_s = time.perf_counter() - t0
    have = searcher._rerank_have
    report: dict = {"queries": len(questions), "index_load_seconds": round(load_s, 2),
                    "passages": searcher.passages.height,
                    "rerank_vector_coverage": round(float(have.mean()), 4) if have is not None else 0.0}
    default = RetrievalConfig()
    def stats(lat: list[float]) -> dict:
        if not lat:
            return {"queries": 0}
        return {"queries": len(lat), "p50_ms": round(statistics.median(lat), 2),
                "p95_ms": round(percentile(lat, 0.95), 2), "max_ms": round(max(lat), 2)}

    for name, cfg in (("first_stage_only", default.with_(rerank_k=0)), ("default", default)):
        searcher.search("warm-up", cfg.with_(rerank_encode_limit=0))
        lat, covered = [], []
        for q in questions:
            before = len(searcher._rerank_cache)
            t1 = time.perf_counter()
            searcher.search(q, cfg)
            lat.append((time.perf_counter() - t1) * 1000)
            covered.append(len(searcher._rerank_cache) == before)
        report[name] = {"config": {"rerank_k": cfg.rerank_k, "rerank_encode_limit": cfg.rerank_encode_limit},
                        **stats(lat),
                        # questions whose top-k all had precomputed vectors vs those that encoded some
                        "all_vectors_precomputed": stats([x for x, c in zip(lat, covered) if c]),
                        "encoded_at_query_time": stats([x for x, c in zip(lat, covered) if not c])}
    report["passages_encoded_at_query_time"] = len(searcher._rerank_cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
