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

from evals.datasets import load_codefest_dev, load_xquad  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.config import EncoderSpec, RadarSettings, get_settings  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher  # noqa: E402 - after the sys.path set-up above (run as a script)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank ``q``-quantile (0–1) of ``values``; raises ``IndexError`` when empty."""
    values = sorted(values)
    idx = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[idx]


def latency_stats(lat_ms: list[float]) -> dict:
    """``{queries, p50_ms, p95_ms, max_ms}`` of per-question latencies in ms (``{queries: 0}`` if none)."""
    if not lat_ms:
        return {"queries": 0}
    return {
        "queries": len(lat_ms),
        "p50_ms": round(statistics.median(lat_ms), 2),
        "p95_ms": round(percentile(lat_ms, 0.95), 2),
        "max_ms": round(max(lat_ms), 2),
    }


def measure_search(settings: RadarSettings) -> dict:
    """Load the searcher of ``settings``' index and time 100 questions (25 Codefest dev + 75
    XQuAD) with the first stage only and with the default configuration; see the module doc."""
    questions = [q.question for q in load_codefest_dev().questions]
    questions += [q.text for q in load_xquad("xquad_es_en").queries[: 100 - len(questions)]]
    encoder = build_encoder(EncoderSpec())
    t0 = time.perf_counter()
    searcher = Searcher(settings.index_dir / encoder.name, encoder, reranker=build_reranker())
    report: dict = {
        "queries": len(questions),
        "index_load_seconds": round(time.perf_counter() - t0, 2),
        "passages": searcher.passages.height,
        "rerank_vector_coverage": round(searcher.rerank_coverage, 4),
    }
    default = RetrievalConfig()
    for name, cfg in (("first_stage_only", default.with_(rerank_k=0)), ("default", default)):
        searcher.search("warm-up", cfg.with_(rerank_encode_limit=0))
        lat, covered = [], []
        for q in questions:
            before = searcher.encoded_at_query_time
            t1 = time.perf_counter()
            searcher.search(q, cfg)
            lat.append((time.perf_counter() - t1) * 1000)
            covered.append(searcher.encoded_at_query_time == before)
        report[name] = {
            "config": {"rerank_k": cfg.rerank_k, "rerank_encode_limit": cfg.rerank_encode_limit},
            **latency_stats(lat),
            # questions whose top-k all had precomputed vectors vs those that encoded some
            "all_vectors_precomputed": latency_stats([x for x, c in zip(lat, covered, strict=False) if c]),
            "encoded_at_query_time": latency_stats([x for x, c in zip(lat, covered, strict=False) if not c]),
        }
    report["passages_encoded_at_query_time"] = searcher.encoded_at_query_time
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "bench_search.json")
    args = ap.parse_args()
    report = measure_search(get_settings())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
