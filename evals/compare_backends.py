"""The two index backends on the Codefest dev questions: quality (paired) and search latency.

``faiss`` = ``Searcher`` over the index directory (FAISS flat, bm25s, re-ranker export);
``pgvector`` = ``PgSearcher`` over PostgreSQL alone (HNSW, the exported BM25 tables, vectors from
``embeddings``). For the first stage alone (``rerank_k=0``) and for the default configuration:

* latency: each of the 25 questions searched once per backend, on a fresh searcher after one
  warm-up query, ``Searcher.search`` wall time (ms): p50 / p95 / max;
* quality: ``evals.runner.run_codefest`` on both judgment sets (original; deepened = PostgreSQL's
  merged qrels, else the shared file), compared per question by ``evals.scoring.compare_codefest``
  (paired randomization test, 10,000 sign flips);
* agreement: per question, the share of the top-10 passages both backends return, and the recall of
  the HNSW dense run (``candidates`` rows at ``ef_search``) against FAISS's exact one.

Usage (RADAR_HOME pointing at a full materialization with the ``pgvector_index`` and
``pg_bm25_index`` assets): ``python evals/compare_backends.py [--ef-search 400]
[--rerank-encode-limit 8] [--out evals/reports/backends_codefest.json]``. Where the
``rerank_vectors`` asset is far from complete, ``--rerank-encode-limit 0`` compares the second stage
on the stored vectors alone (the rest imputed from the first stage) instead of timing the encoder.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.bench_search import latency_stats  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.datasets import load_codefest_dev  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.judging import read_merged  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.runner import run_codefest  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.scoring import compare_codefest  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline import db  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.retrieval.pg_search import PgSearcher  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher  # noqa: E402 - after the sys.path set-up above (run as a script)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ef-search", type=int, default=400)
    ap.add_argument(
        "--rerank-encode-limit",
        type=int,
        default=RetrievalConfig().rerank_encode_limit,
        help="passages without a stored re-ranker vector encoded per question (0: imputed, see the module doc)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "backends_codefest.json")
    args = ap.parse_args()
    settings = get_settings()
    enc = build_encoder(EncoderSpec())
    rr = build_reranker()
    engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
    deep = read_merged(engine)
    questions = [q.question for q in load_codefest_dev().questions]
    index_dir = settings.index_dir / enc.name

    def make(backend: str):
        if backend == "faiss":
            return Searcher(index_dir, enc, reranker=rr)
        return PgSearcher(engine, enc, reranker=rr, ef_search=args.ef_search)

    default = RetrievalConfig(rerank_encode_limit=args.rerank_encode_limit)
    report: dict = {
        "ef_search": args.ef_search,
        "rerank_encode_limit": args.rerank_encode_limit,
        "questions": len(questions),
        "configs": {},
    }
    for cname, cfg in (("first_stage_only", default.with_(rerank_k=0)), ("default", default)):
        out: dict = {"latency_ms": {}, "load_seconds": {}}
        runs, searchers = {}, {}
        for backend in ("faiss", "pgvector"):
            t0 = time.perf_counter()
            s = make(backend)  # fresh: vectors encoded at query time by one run must not help the next
            out["load_seconds"][backend] = round(time.perf_counter() - t0, 2)
            s.search("warm-up", cfg.with_(rerank_encode_limit=0))
            lat, tops = [], []
            for q in questions:
                t1 = time.perf_counter()
                res = s.search(q, cfg)
                lat.append((time.perf_counter() - t1) * 1000)
                tops.append([p["chunk_id"] for p in res.passages])
            out["latency_ms"][backend] = latency_stats(lat)
            runs[backend] = tops
            searchers[backend] = s
            print(cname, backend, out["latency_ms"][backend], file=sys.stderr, flush=True)
        out["top10_overlap"] = [
            round(len(set(a) & set(b)) / max(1, len(a)), 2)
            for a, b in zip(runs["faiss"], runs["pgvector"], strict=True)
        ]
        out["identical_top10_questions"] = sum(a == b for a, b in zip(runs["faiss"], runs["pgvector"], strict=True))
        reps = {b: run_codefest(searchers[b], cfg, deep_records=deep) for b in ("faiss", "pgvector")}
        for b, rep in reps.items():
            o = rep.aggregate["overall"]
            out[b] = {
                k: round(float(o[k]), 4)
                for k in ("ndcg@10", "judged@10", "ndcg'@10", "deep_ndcg@10", "deep_judged@10", "deep_ndcg'@10", "f1@3")
            }
            out[b]["recall@candidates"] = rep.aggregate["recall@candidates"]
        out["paired"] = compare_codefest(reps["pgvector"].per_query, reps["faiss"].per_query)  # A = pgvector
        out["per_question_ndcg@10"] = {
            b: dict(
                zip(reps[b].per_query["query_id"], [round(x, 4) for x in reps[b].per_query["ndcg@10"]], strict=True)
            )
            for b in reps
        }
        report["configs"][cname] = out
        report["rerank_vector_coverage"] = round(searchers["pgvector"].rerank_coverage, 4)
    # the HNSW dense run against the exact one, at ef_search, on the same query vectors
    s_f, s_p = Searcher(index_dir, enc), PgSearcher(engine, enc, ef_search=args.ef_search)
    recalls, lat = [], []
    for q in questions:
        qv = s_f.query_vector(q, default)
        exact = set(s_f.dense_run(qv, default.candidates))
        t1 = time.perf_counter()
        approx = set(s_p.dense_run(qv, default.candidates))
        lat.append((time.perf_counter() - t1) * 1000)
        recalls.append(len(exact & approx) / len(exact))
    report["dense_run"] = {
        "k": default.candidates,
        "recall_vs_exact_mean": round(float(np.mean(recalls)), 4),
        "recall_vs_exact_min": round(float(np.min(recalls)), 4),
        "hnsw_query_ms": latency_stats(lat),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str))
    print(json.dumps({k: v for k, v in report.items() if k != "configs"}, indent=1))
    for cname, out in report["configs"].items():
        print(cname, json.dumps({k: out[k] for k in ("latency_ms", "faiss", "pgvector", "identical_top10_questions")}))
        for row in out["paired"]:
            print(cname, row)


if __name__ == "__main__":
    main()
