"""Re-scorings of the default's candidate pool: second-stage variants, document signals, a learned ranker.

The signals available offline on a CPU are computed once per Codefest dev question over the
first-stage candidate pool of the default configuration (``rerank_k`` = 0): the fused first-stage
score (``rrf``), the dense USE cosine (``use``), BM25 with the glossary (``bm25``), and e5-small
cosines from the re-ranker's passage vectors (``rerank_vectors``; missing ones are encoded) under
several query forms. Each variant then re-scores the pool with the project's own
``fusion.rerank`` (top ``k`` distinct texts, convex interpolation) or adds a signal to it, and is
scored like ``radar eval`` (``evals.gap_analysis.reorder_run`` → ``score_codefest_run``) with a
paired randomization test against the pool's default re-scoring. The default row reproduces
``radar eval``'s figure from the same pieces (a consistency check printed with the table).

Also: per-signal separation of judged positives from the rest of the pool (mean per-question ROC
AUC, ties counted half), and a leave-one-question-out logistic regression over all signals
(ridge-regularised, fitted by iteratively reweighted least squares; features standardised per
question) — the learned-linear-ranker ceiling of these signals, not a candidate default (25
questions).

Run: ``python evals/pool_variants.py [--words64]`` → ``evals/reports/pool_variants.json`` and a
table (~1 min with precomputed re-ranker vectors; ``--words64`` adds the e5-over-64-words variant,
which encodes every pool passage again: ~20 min on one core; without it the report has no
64-word row).
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.datasets import CodefestDev, load_codefest_dev
from evals.gap_analysis import reorder_run
from evals.scoring import build_judged_index, compare, score_codefest_run
from radar_pipeline.retrieval.fusion import rerank, top_distinct
from radar_pipeline.retrieval.policy import Candidate, PolicyConfig

__all__ = ["PoolSignals", "second_stage", "doc_feature", "roc_auc", "fit_logistic", "loo_logistic", "main"]

REPORT = Path(__file__).parent / "reports" / "pool_variants.json"


@dataclass
class PoolSignals:
    """One question's first-stage pool: ``cands`` (n candidates, first-stage fused score), the
    per-candidate signal arrays ``signals[name]`` (each shape (n,)), the e5 passage vectors
    ``e5_vectors`` (n, d) and query vectors ``e5_queries[form]`` (d,), and grades (n,) 0/1/2."""

    cands: list[Candidate]
    signals: dict[str, np.ndarray] = field(default_factory=dict)
    e5_vectors: np.ndarray | None = None
    e5_queries: dict[str, np.ndarray] = field(default_factory=dict)
    grades: np.ndarray | None = None

    def with_scores(self, scores: Sequence[float]) -> list[Candidate]:
        """The pool's candidates carrying ``scores`` (same order)."""
        return [
            Candidate(c.row, c.chunk_id, c.doc_id, c.source_path, c.text, float(s))
            for c, s in zip(self.cands, scores, strict=False)
        ]


def second_stage(cands: Sequence[Candidate], sims: np.ndarray, k: int, weight: float) -> np.ndarray:
    """Scores (n,) of ``fusion.rerank`` applied as ``Searcher.second_stage`` does: the top ``k``
    distinct texts by first-stage score are re-scored with ``sims`` (n,), duplicates of a
    re-scored text share its score, everything else keeps its first-stage order below them."""
    first = {i: c.score for i, c in enumerate(cands)}
    top = top_distinct(first, lambda i: cands[i].text, k)
    out = rerank(first, {i: float(sims[i]) for i in top}, weight)
    by_text = {cands[i].text: out[i] for i in top}
    return np.array([by_text.get(c.text, out[i]) for i, c in enumerate(cands)])


def _minmax(x: np.ndarray) -> np.ndarray:
    span = float(x.max() - x.min()) if x.size else 0.0
    return (x - x.min()) / span if span > 0 else np.zeros_like(x, dtype=float)


def doc_feature(cands: Sequence[Candidate], scores: np.ndarray, how: str) -> np.ndarray:
    """Per-candidate value (n,) of a document aggregate of ``scores`` over the pool, keyed by
    source file: ``max`` (best passage), ``top3mean`` (mean of its best 3) or ``count`` (log of
    1 + its passages in the pool). Raises ``ValueError`` for another ``how``."""
    by: dict[str, list[float]] = defaultdict(list)
    for c, s in zip(cands, scores, strict=False):
        by[c.source_path].append(float(s))
    if how == "max":
        agg = {p: max(v) for p, v in by.items()}
    elif how == "top3mean":
        agg = {p: float(np.mean(sorted(v, reverse=True)[:3])) for p, v in by.items()}
    elif how == "count":
        agg = {p: float(np.log1p(len(v))) for p, v in by.items()}
    else:
        raise ValueError(f"unknown document aggregate {how!r}")
    return np.array([agg[c.source_path] for c in cands])


def roc_auc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """ROC AUC (Mann–Whitney U / (n_pos · n_neg); ties count ½) of ``scores`` (n,) for the boolean
    labels ``positive`` (n,); None when either class is empty."""
    pos, neg = scores[positive], scores[~positive]
    if not pos.size or not neg.size:
        return None
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50) -> np.ndarray:
    """Ridge-regularised logistic regression by iteratively reweighted least squares (Newton's
    method; e.g. Hastie, Tibshirani & Friedman, *Elements of Statistical Learning*, §4.4.1).
    ``X`` (n, d) features, ``y`` (n,) 0/1; returns weights (d + 1,), the last one the intercept
    (not penalised). ``l2`` ≥ 0 is the penalty on the other weights."""
    A = np.hstack([X, np.ones((X.shape[0], 1))])
    w = np.zeros(A.shape[1])
    pen = np.full(A.shape[1], l2)
    pen[-1] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-A @ w))
        grad = A.T @ (p - y) + pen * w
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(pen) + 1e-9 * np.eye(A.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def _standardise(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(0)) / (X.std(0) + 1e-9)


def loo_logistic(
    features: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray], l2: float
) -> dict[str, np.ndarray]:
    """Leave-one-question-out scores: for each question id, a logistic regression fitted on every
    other question's (standardised) features (n_q, d) and 0/1 labels (n_q,), applied to its own.
    Returns ``{question id: decision values (n_q,)}``."""
    std = {q: _standardise(X) for q, X in features.items()}
    out = {}
    for q in std:
        X = np.vstack([std[o] for o in std if o != q])
        y = np.concatenate([labels[o] for o in std if o != q]).astype(float)
        w = fit_logistic(X, y, l2)
        out[q] = std[q] @ w[:-1] + w[-1]
    return out


def collect(searcher, cfg, dev: CodefestDev, reranker, words64=None) -> dict[str, PoolSignals]:
    """Every dev question's first-stage pool under ``cfg`` with ``rerank_k`` 0, its signals,
    e5 vectors/queries and grades (see ``PoolSignals``)."""
    from radar_pipeline.retrieval.glossary import expand_query

    index = build_judged_index(dev)
    first = cfg.with_(rerank_k=0)
    pools = {}
    for q in dev.questions:
        fused, _, _ = searcher.candidates(q.question, first)
        rows = [c.row for c in fused]
        qvec = searcher.query_vector(q.question, first)
        bm25 = searcher.bm25_scores(q.question, first)
        ps = PoolSignals(list(fused))
        ps.signals["rrf"] = np.array([c.score for c in fused])
        ps.signals["use"] = searcher.vectors[rows] @ qvec
        ps.signals["bm25"] = bm25[rows] if bm25 is not None else np.zeros(len(rows))
        ps.e5_vectors, _ = searcher.rerank_vectors(rows, None)
        extra = expand_query(q.question)
        forms = {
            "glossary": f"{q.question} {extra}" if extra else q.question,
            "plain": q.question,
            "english_terms": extra or q.question,
        }
        for name, text in forms.items():
            ps.e5_queries[name] = reranker.encode_queries([text])[0]
        ps.e5_queries["passage_prefix"] = reranker.encode_passages([forms["glossary"]])[0]
        mean = ps.e5_queries["glossary"] + ps.e5_queries["plain"] + ps.e5_queries["english_terms"]
        ps.e5_queries["mean_of_forms"] = mean / np.linalg.norm(mean)
        for name, v in ps.e5_queries.items():
            ps.signals[f"e5_{name}"] = ps.e5_vectors @ v
        if words64 is not None:
            ps.signals["e5_words64"] = words64.encode_passages([c.text for c in fused]) @ ps.e5_queries["glossary"]
        ps.grades = np.array([index.grade(q.query_id, c.text) for c in fused])
        pools[q.query_id] = ps
    return pools


def _static_features(ps: PoolSignals, passage_table) -> dict[str, np.ndarray]:
    """Signals that need no query: chunk position in its document, digit share, length (words),
    document size (passages), Spanish/Portuguese text, Codefest file."""
    from evals.datasets import benchmark_doc_id

    pos, size, lang = passage_table
    rows = [c.row for c in ps.cands]
    texts = [c.text for c in ps.cands]
    return {
        "log_position": np.log1p(pos[rows]),
        "digit_share": np.array([sum(ch.isdigit() for ch in t) / max(1, len(t)) for t in texts]),
        "log_words": np.log1p([len(t.split()) for t in texts]),
        "log_doc_size": np.log1p(size[rows]),
        "not_english": (lang[rows] != "en").astype(float),
        "codefest_file": np.array([benchmark_doc_id(c.source_path) is not None for c in ps.cands], float),
    }


def variants(k: int, w: float) -> dict[str, Callable[[PoolSignals], np.ndarray]]:
    """Named re-scorings of a pool: ``{name: PoolSignals → scores (n,)}``; ``default`` is the
    configuration's own second stage (depth ``k``, weight ``w``, glossary query)."""

    def ss(signal: str, weight: float = w) -> Callable[[PoolSignals], np.ndarray]:
        return lambda ps: second_stage(ps.cands, ps.signals[signal], k, weight)

    def rocchio(top: int, alpha: float) -> Callable[[PoolSignals], np.ndarray]:
        def f(ps: PoolSignals) -> np.ndarray:
            s0 = second_stage(ps.cands, ps.signals["e5_glossary"], k, w)
            q = ps.e5_queries["glossary"] + alpha * ps.e5_vectors[np.argsort(-s0)[:top]].mean(0)
            return second_stage(ps.cands, ps.e5_vectors @ (q / np.linalg.norm(q)), k, w)

        return f

    def plus_doc(how: str, lam: float) -> Callable[[PoolSignals], np.ndarray]:
        def f(ps: PoolSignals) -> np.ndarray:
            s0 = second_stage(ps.cands, ps.signals["e5_glossary"], k, w)
            return _minmax(s0) + lam * _minmax(doc_feature(ps.cands, _minmax(s0) if how == "count" else s0, how))

        return f

    out = {"default": ss("e5_glossary")}
    out.update({f"weight {x}": ss("e5_glossary", x) for x in (0.5, 0.6, 0.8, 0.9, 1.0)})
    out.update({f"e5 query: {n}": ss(f"e5_{n}") for n in ("plain", "english_terms", "passage_prefix", "mean_of_forms")})
    out.update({"rocchio top3 a0.3": rocchio(3, 0.3), "rocchio top10 a0.6": rocchio(10, 0.6)})
    out.update(
        {
            "+ doc max l1.0": plus_doc("max", 1.0),
            "+ doc top3mean l0.3": plus_doc("top3mean", 0.3),
            "+ doc count l0.3": plus_doc("count", 0.3),
        }
    )
    out["e5 over 64 words"] = ss("e5_words64")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``[--words64]``: build the default searcher, collect the pools, score every variant, write
    ``REPORT`` and print a table."""
    import argparse

    ap = argparse.ArgumentParser(description="Re-scorings of the default's Codefest candidate pools")
    ap.add_argument("--words64", action="store_true", help="add e5 over the first 64 words (~25 min)")
    args = ap.parse_args(argv)

    import polars as pl

    from evals.configs import CONFIGS, DEFAULT_NAME
    from radar_pipeline.config import EncoderSpec, RerankerSpec, get_settings
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import Searcher

    settings = get_settings()
    encoder = build_encoder(EncoderSpec())
    reranker = build_reranker()
    searcher = Searcher(settings.index_dir / encoder.name, encoder, reranker=reranker)
    cfg = CONFIGS[DEFAULT_NAME]
    dev = load_codefest_dev()
    index = build_judged_index(dev)
    t0 = time.perf_counter()
    words64 = build_reranker(RerankerSpec(max_words=64)) if args.words64 else None
    pools = collect(searcher, cfg, dev, reranker, words64)
    table = searcher.passages.select("doc_id", "language").with_row_index("row")
    pos = table.with_columns(pl.col("row").cum_count().over("doc_id").alias("pos"))["pos"].to_numpy() - 1
    size = table.with_columns(pl.len().over("doc_id").alias("n"))["n"].to_numpy()
    lang = np.array([x or "" for x in table["language"].to_list()])

    def score(fn: Callable[[str, PoolSignals], np.ndarray], policy: PolicyConfig = cfg.policy):
        run = reorder_run(pools, lambda qid, pool: pools[qid].with_scores(fn(qid, pools[qid])), policy)
        return score_codefest_run(run, dev=dev, index=index)

    rows, base = [], None
    named = variants(cfg.rerank_k, cfg.rerank_weight)
    for name, fn in named.items():
        if name == "e5 over 64 words" and not args.words64:
            continue
        res = score(lambda qid, ps, fn=fn: fn(ps))
        base = res if name == "default" else base
        rows.append((name, res))
    default_fn = named["default"]
    for n in (1, 3):
        rows.append(
            (f"document = mean of best {n}", score(lambda qid, ps: default_fn(ps), replace(cfg.policy, doc_top_n=n)))
        )
    static = {q: _static_features(ps, (pos, size, lang)) for q, ps in pools.items()}
    names = ["rrf", "use", "bm25", "e5_glossary", "e5_plain"] + list(next(iter(static.values())))
    feats = {
        q: np.stack([ps.signals[n] if n in ps.signals else static[q][n] for n in names], 1) for q, ps in pools.items()
    }
    labels = {q: (ps.grades > 0) for q, ps in pools.items()}
    for l2 in (100.0, 10.0, 1.0):
        loo = loo_logistic(feats, labels, l2)
        rows.append((f"learned linear ranker, LOO, l2 {l2:g}", score(lambda qid, ps, loo=loo: loo[qid])))
    aucs = {}
    for j, n in enumerate(names):
        vals = [roc_auc(feats[q][:, j], labels[q]) for q in pools]
        aucs[n] = round(float(np.mean([v for v in vals if v is not None])), 3)

    out_rows = []
    for name, res in rows:
        a = res.aggregate["overall"]
        p = None if res is base else compare(base.per_query, res.per_query, "ndcg@10").p_value
        out_rows.append(
            {
                "variant": name,
                "ndcg@10": round(a["ndcg@10"], 4),
                "f1@3": round(a["f1@3"], 4),
                "p_ndcg_vs_default": None if p is None else round(p, 4),
            }
        )
    report = {
        "config": cfg.name,
        "questions": len(pools),
        "pool_size_mean": round(float(np.mean([len(p.cands) for p in pools.values()])), 1),
        "rows": out_rows,
        "roc_auc_per_signal": aucs,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    for r in out_rows:
        p = "" if r["p_ndcg_vs_default"] is None else f"p={r['p_ndcg_vs_default']:.3f}"
        print(f"{r['variant']:40s} NDCG@10 {r['ndcg@10']:.3f}  F1@3 {r['f1@3']:.3f}  {p}")
    print("ROC AUC per signal:", aucs)
    print(f"wrote {REPORT}")


if __name__ == "__main__":
    main(sys.argv[1:])
