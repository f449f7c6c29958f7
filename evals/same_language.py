"""Same-language pull: each change alone against its baseline, paired per question, deepened judgments.

A Spanish question meets Spanish text on both rankers, so English sources that answer it lose
(issue 17). The variants are named configurations in ``evals/configs.py``: (a) the English glossary
terms as their own query (``_gq05``/``_gq10``), (b) a cap on Spanish passages in the top 10 for
AI-military questions or for every question (``_escap03ai``/``_escap03``), (c) the phenomenon prior
(``_boost105``/``_boost110``), (d) the induced lexicon on the BM25 query (``_lex``). For each, on the Codefest dev questions and the deepened judgments
(the shared blind judgments + imported grades), the row holds: deep NDCG@10 overall and per
phenomenon, Judged@10, NDCG'@10, the original-judgment NDCG@10, the Spanish share of the top 10
per phenomenon, and against the baseline the mean paired difference, its 95 % bootstrap interval
(10,000 resamples of questions) and the paired randomization p (``evals.scoring.compare``), with the
"not measurable yet" flag when either side's deep Judged@10 < 0.9. The deepened judgments are the
merged qrels of PostgreSQL (``qrels_merged``, as ``compare_all.py`` reads them; the shared file alone
when no database is reachable); ``--from-per-query`` takes the scores ``compare_all.py`` saved.

Usage: ``python evals/same_language.py --stage first|full`` → ``evals/reports/same_language_<stage>.json``.
``full`` re-ranks with e5 and needs the re-ranker vectors of the pools (``evals/fill_rerank_pools.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.configs import CONFIGS  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.datasets import load_codefest_dev  # noqa: E402 - after the sys.path set-up above
from evals.judging import read_merged  # noqa: E402 - after the sys.path set-up above
from evals.runner import run_codefest  # noqa: E402 - after the sys.path set-up above
from evals.scoring import compare, measurability  # noqa: E402 - after the sys.path set-up above
from radar_pipeline import db  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.retrieval.search import Searcher  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.vocabulary import CODEFEST_CODES  # noqa: E402 - after the sys.path set-up above

BASES = {"first": "hybrid_rrf_gd_b05", "full": "hybrid_rrf_gd_b05_rr200"}
SUFFIXES = ("_gq05", "_gq10", "_escap03ai", "_escap03aisp", "_escap03", "_boost105", "_boost110", "_lex")


def bootstrap_ci(diffs: np.ndarray, n: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the mean of per-question paired differences."""
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, diffs.size, size=(n, diffs.size))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def spanish_share(searcher: Searcher, cfg, dev) -> dict[str, float]:
    """Mean share of Spanish-language passages in the top 10, per phenomenon code and overall."""
    lang = dict(zip(searcher._chunk_ids, searcher._langs, strict=True))
    per: dict[str, list[float]] = {}
    for q in dev.questions:
        top = searcher.search(q.question, cfg).passages[:10]
        share = sum(lang[p["chunk_id"]] == "es" for p in top) / max(len(top), 1)
        per.setdefault(q.phenomenon, []).append(share)
        per.setdefault("overall", []).append(share)
    return {k: round(float(np.mean(v)), 3) for k, v in per.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", choices=sorted(BASES), default="first")
    ap.add_argument("--only", nargs="*", default=None, help="suffixes to run (default all)")
    ap.add_argument(
        "--from-per-query",
        type=Path,
        default=None,
        help="no searching: read the runs `compare_all.py --per-query-dir` saved (no Spanish share then)",
    )
    args = ap.parse_args()
    base_name = BASES[args.stage]
    names = [base_name] + [base_name + s for s in (args.only or SUFFIXES)]
    if args.from_per_query is None:
        settings = get_settings()
        enc = build_encoder(EncoderSpec())
        rr = build_reranker() if args.stage == "full" else None
        searcher = Searcher(settings.index_dir / enc.name, enc, reranker=rr)
        dev = load_codefest_dev()
        try:  # the merged deepened judgments (shared + `radar judge import`), as compare_all.py reads them
            deep = read_merged(db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata)))
        except Exception as exc:  # noqa: BLE001 - no database: the shared deepened judgments alone
            print(f"PostgreSQL not reachable ({exc}); deepened judgments = shared file only", file=sys.stderr)
            deep = read_merged(None)
    reports = {}
    rows = []
    for name in names:
        if args.from_per_query is not None:
            from evals.compare_all import SavedReport

            rep = SavedReport.load(args.from_per_query, name)
        else:
            rep = run_codefest(searcher, CONFIGS[name], dev=dev, deep_records=deep)
        reports[name] = rep
        agg = rep.aggregate
        row = {
            "config": name,
            "deep_ndcg@10": round(agg["overall"]["deep_ndcg@10"], 4),
            "deep_judged@10": round(agg["overall"]["deep_judged@10"], 4),
            "deep_ndcg'@10": round(agg["overall"]["deep_ndcg'@10"], 4),
            "ndcg@10 original": round(agg["overall"]["ndcg@10"], 4),
            "per phenomenon deep_ndcg@10": {
                CODEFEST_CODES[ph]: round(agg[ph]["deep_ndcg@10"], 4) for ph in ("F1", "F2", "F3")
            },
            "per phenomenon deep_judged@10": {
                CODEFEST_CODES[ph]: round(agg[ph]["deep_judged@10"], 4) for ph in ("F1", "F2", "F3")
            },
            "spanish share top10": (
                spanish_share(searcher, CONFIGS[name], dev) if args.from_per_query is None else None
            ),
        }
        if name != base_name:
            base = reports[base_name]
            for metric in ("deep_ndcg@10", "deep_ndcg'@10"):
                t = compare(rep.per_query, base.per_query, metric)
                d = (rep.per_query[metric] - base.per_query[metric]).to_numpy()
                lo, hi = bootstrap_ci(d)
                row[f"{metric} diff"] = round(t.diff, 4)
                row[f"{metric} 95% CI"] = [round(lo, 4), round(hi, 4)]
                row[f"{metric} p"] = round(t.p_value, 4)
            pq, bq = rep.per_query, base.per_query
            row["per phenomenon diff"] = {
                CODEFEST_CODES[ph]: round(
                    float(
                        pq.filter(pq["phenomenon"] == ph)["deep_ndcg@10"].mean()
                        - bq.filter(bq["phenomenon"] == ph)["deep_ndcg@10"].mean()
                    ),
                    4,
                )
                for ph in ("F1", "F2", "F3")
            }
            row["vs baseline"] = (
                measurability(agg["overall"]["deep_judged@10"], base.aggregate["overall"]["deep_judged@10"]) or "ok"
            )
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    out = ROOT / "evals" / "reports" / f"same_language_{args.stage}.json"
    out.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
