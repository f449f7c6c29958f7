"""Where the Codefest dev gap comes from: candidates, documents, passages, chunking, corpus scope.

The default configuration is run once per dev question over the real index; each question's
whole candidate pool (every passage the first stage fused, with its final score after the
second stage) is kept and then re-ordered under counterfactual orderings, each of which removes
one limit while keeping everything else (policy, scoring, judgments) as it is:

- ``default``: the pool in its own order (= ``radar eval``).
- ``oracle_pool``: the whole pool ordered by judged grade (ties by score) — the most any
  re-ordering of these candidates could reach; ``oracle_top{K}``: an oracle over the current
  top K only (by final score, so after the second stage; K counts passages, duplicates
  included), the rest kept behind in its own order.
- ``oracle_documents``: passages of the question's relevant documents (the F1@3 targets) moved
  ahead of all others, each group in its own order: separates finding the documents (F1@3 →
  1.0) from picking the judged passages inside them. ``oracle_positive_documents``: the same
  with every document that has a judged passage of grade ≥ 1 (grade-1 passages also sit in
  documents outside the F1@3 targets).
- ``codefest_scope``: passages of non-Codefest files (no benchmark id) removed — close to the
  finalist's setting, whose corpus was the Codefest documents only (Radar's index also holds
  ``corpus/radar``, which can never be relevant to these judgments).
- ``containment>=T``: the default order scored with a looser match rule (T < 0.55) — how much
  is lost because Radar's passages are cut differently from the judged ones (a returned passage
  straddling two judged chunks may overlap each by less than 0.55). A looser rule also credits
  merely partial overlaps, so this is an indication, not a bound.

Each row also gives ``repeat_matches`` (top-10 passages matching a judged passage an earlier
one already matched: each is credited, as the reference rule does) and ``ndcg_clipped``
(questions whose DCG exceeded the ideal). Also reported: Recall@candidates (share of judged
positives that some pool passage matches).

Run: ``python evals/gap_analysis.py [--config NAME]`` → ``evals/reports/gap_analysis.json`` and a
table on stdout (~30 s when the re-ranker vectors of the pools are precomputed; see the
``rerank_vectors`` asset). Configurations that order passages by the dense list alone
(``passage_ranking="dense"``) are not analysed: the pool is the fused list.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.datasets import CodefestDev, benchmark_doc_id, load_codefest_dev
from evals.relevance import JudgedPassageIndex
from evals.scoring import build_judged_index, score_codefest_run
from radar_pipeline.retrieval.policy import Candidate, PolicyConfig, rank_documents, rank_passages

__all__ = [
    "Pool",
    "analyse",
    "candidate_recall",
    "codefest_scope",
    "collect_pools",
    "keep",
    "main",
    "oracle_documents",
    "oracle_grade",
    "reorder_run",
]

#: question id → its candidate pool (distinct rows, final scores)
Pool = Mapping[str, Sequence[Candidate]]
#: (question id, pool) → re-scored pool (candidates dropped from the list are removed)
Reorder = Callable[[str, Sequence[Candidate]], list[Candidate]]

REPORT = Path(__file__).parent / "reports" / "gap_analysis.json"


def collect_pools(searcher, cfg, dev: CodefestDev) -> dict[str, list[Candidate]]:
    """Each dev question's fused candidate pool under ``cfg`` (``Searcher.candidates``), scores
    final (second stage and boost applied). Returns ``{query_id: [Candidate, …]}``. Raises
    ``ValueError`` for a configuration with ``passage_ranking="dense"`` (its passages are not
    ordered by this pool)."""
    if cfg.passage_ranking != "fused":
        raise ValueError(f"{cfg.name}: passage_ranking={cfg.passage_ranking!r}; the analysis needs 'fused'")
    return {q.query_id: searcher.candidates(q.question, cfg)[0] for q in dev.questions}


def reorder_run(pools: Pool, reorder: Reorder, policy: PolicyConfig) -> list[dict]:
    """A Codefest run (the shape ``evals.scoring.score_codefest_run`` reads) from ``pools``
    re-scored by ``reorder`` and cut by ``policy`` (dedupe, per-document cap, top
    ``policy.k_passages`` passages, top ``policy.k_documents`` documents by mean of best passages)."""
    run = []
    for qid, pool in pools.items():
        cands = reorder(qid, pool)
        run.append(
            {
                "query_id": qid,
                "documents": [
                    {"rank": i, "doc_id": d.doc_id, "source_path": d.source_path}
                    for i, d in enumerate(rank_documents(cands, policy), 1)
                ],
                "passages": [
                    {
                        "rank": i,
                        "chunk_id": c.chunk_id,
                        "doc_id": c.doc_id,
                        "source_path": c.source_path,
                        "text": c.text,
                    }
                    for i, c in enumerate(rank_passages(cands, policy), 1)
                ],
            }
        )
    return run


def _rescore(c: Candidate, score: float) -> Candidate:
    return Candidate(c.row, c.chunk_id, c.doc_id, c.source_path, c.text, score)


def _unit(pool: Sequence[Candidate]) -> Callable[[Candidate], float]:
    """The pool's own score mapped onto [0, 1] (min–max over the pool)."""
    lo = min((c.score for c in pool), default=0.0)
    span = (max((c.score for c in pool), default=1.0) - lo) or 1.0
    return lambda c: (c.score - lo) / span


def oracle_grade(index: JudgedPassageIndex, depth: int | None = None) -> Reorder:
    """Order by judged grade (0/1/2 from ``index``), ties by the pool's own score; with ``depth``
    only the pool's first ``depth`` passages by score are re-ordered and stay ahead of the rest."""

    def reorder(qid: str, pool: Sequence[Candidate]) -> list[Candidate]:
        ranked = sorted(pool, key=lambda c: -c.score)
        head = ranked if depth is None else ranked[:depth]
        tail = [] if depth is None else ranked[depth:]
        unit = _unit(pool)  # the pool's own score: the tie-break, kept below 1

        out = [_rescore(c, 3.0 + index.grade(qid, c.text) + 0.999 * unit(c)) for c in head]
        return out + [_rescore(c, 0.999 * unit(c)) for c in tail]

    return reorder


def oracle_documents(relevant: Mapping[str, frozenset[str]]) -> Reorder:
    """Passages of the question's relevant documents (benchmark ids) ahead of all others, each
    group in the pool's own order."""

    def reorder(qid: str, pool: Sequence[Candidate]) -> list[Candidate]:
        rel, unit = relevant.get(qid, frozenset()), _unit(pool)
        return [_rescore(c, unit(c) + (2.0 if benchmark_doc_id(c.source_path) in rel else 0.0)) for c in pool]

    return reorder


def codefest_scope(_qid: str, pool: Sequence[Candidate]) -> list[Candidate]:
    """Only passages of Codefest files (those with a benchmark id, as the scorer maps them),
    order kept."""
    return [c for c in pool if benchmark_doc_id(c.source_path) is not None]


def keep(_qid: str, pool: Sequence[Candidate]) -> list[Candidate]:
    """The pool as it is."""
    return list(pool)


def _scores(run: list[dict], dev: CodefestDev, index: JudgedPassageIndex) -> dict:
    scores = score_codefest_run(run, dev=dev, index=index)
    agg, per_query = scores.aggregate, scores.per_query
    out = {k: round(float(v), 4) for k, v in agg["overall"].items() if k != "n"}
    out["repeat_matches"] = int(per_query["repeat_matches"].sum())
    out["ndcg_clipped"] = int(per_query["ndcg_clipped"].sum())
    out["per_phenomenon"] = {
        ph: {k: round(float(agg[ph][k]), 4) for k in ("ndcg@10", "f1@3")}
        for ph in ("F1", "F2", "F3")
        if agg.get(ph, {}).get("n")
    }
    return out


def candidate_recall(pools: Pool, dev: CodefestDev, index: JudgedPassageIndex) -> float:
    """Mean over the questions of ``pools`` of the share of their judged passages with grade ≥ 1
    that some pool passage matches (0–1; a question without positives counts 0.0)."""
    rec = []
    for qid, pool in pools.items():
        pos = {j.chunk_id for j in dev.qrels_chunks.get(qid, ()) if j.grade >= 1}
        found = {m.judged_id for c in pool for m in index.matches(qid, c.text) if m.grade >= 1}
        rec.append(len(found & pos) / len(pos) if pos else 0.0)
    return float(np.mean(rec)) if rec else 0.0


def analyse(
    pools: Pool,
    dev: CodefestDev,
    policy: PolicyConfig,
    depths: Sequence[int] = (10, 40, 100, 200),
    thresholds: Sequence[float] = (0.4, 0.3),
) -> dict:
    """Every counterfactual of the module docstring over ``pools``: ``{"rows": [{"name", "removes",
    "ndcg@10", "f1@3", "recall@10", "mrr@10", "repeat_matches", "ndcg_clipped", "per_phenomenon"},
    …], "recall@candidates", "pool_size_mean", "non_codefest_share_top10"}``. Metrics are means
    over all dev questions (a dev question missing from ``pools`` scores 0); raises
    ``ValueError`` for a pool question id that is not a dev question."""
    index = build_judged_index(dev)
    rows = []

    def add(name: str, removes: str, reorder: Reorder, idx: JudgedPassageIndex = index) -> None:
        rows.append({"name": name, "removes": removes, **_scores(reorder_run(pools, reorder, policy), dev, idx)})

    add("default", "nothing (the configuration as measured by radar eval)", keep)
    add("oracle_pool", "all ranking error within the candidate pool", oracle_grade(index))
    for k in depths:
        add(f"oracle_top{k}", f"ranking error within the first {k} candidates", oracle_grade(index, k))
    add("oracle_documents", "document-finding error (F1@3 target documents first)", oracle_documents(dev.relevant_docs))
    add(
        "oracle_positive_documents",
        "document-finding error (documents with a judged positive first)",
        oracle_documents(dev.docs_with_positive_chunk),
    )
    add("codefest_scope", "distractors from corpus/radar (finalist's corpus)", codefest_scope)
    for t in thresholds:
        add(
            f"containment>={t}",
            f"chunk misalignment up to a {t} match rule",
            keep,
            build_judged_index(dev, threshold=t),
        )
    default_run = reorder_run(pools, keep, policy)
    top = [p for r in default_run for p in r["passages"]]
    return {
        "rows": rows,
        "recall@candidates": round(candidate_recall(pools, dev, index), 4),
        "pool_size_mean": round(float(np.mean([len(p) for p in pools.values()])), 1),
        "non_codefest_share_top10": round(
            sum(benchmark_doc_id(p["source_path"]) is None for p in top) / max(1, len(top)), 4
        ),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """``[--config NAME]`` (default: the default configuration): build the searcher from settings,
    analyse, write ``REPORT``, print a table."""
    import argparse

    from evals.configs import CONFIGS, DEFAULT_NAME

    fused = sorted(n for n, c in CONFIGS.items() if c.passage_ranking == "fused")
    ap = argparse.ArgumentParser(description="Codefest dev gap analysis (counterfactual orderings)")
    ap.add_argument("--config", default=DEFAULT_NAME, choices=fused)
    cfg = CONFIGS[ap.parse_args(argv).config]

    from radar_pipeline.config import EncoderSpec, get_settings
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import Searcher

    settings = get_settings()
    encoder = build_encoder(EncoderSpec())
    searcher = Searcher(settings.index_dir / encoder.name, encoder, reranker=build_reranker())
    dev = load_codefest_dev()
    t0 = time.perf_counter()
    pools = collect_pools(searcher, cfg, dev)
    report = {
        "config": cfg.name,
        "index_passages": searcher.passages.height,
        "rerank_coverage": round(searcher.rerank_coverage, 4),
        **analyse(pools, dev, cfg.policy),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"{'ordering':26s} {'NDCG@10':>8s} {'F1@3':>6s} {'repeats':>7s}  removes")
    for r in report["rows"]:
        print(f"{r['name']:26s} {r['ndcg@10']:8.3f} {r['f1@3']:6.3f} {r['repeat_matches']:7d}  {r['removes']}")
    print(
        f"Recall@candidates {report['recall@candidates']}, pool {report['pool_size_mean']} passages, "
        f"non-Codefest share of top 10 {report['non_codefest_share_top10']}; wrote {REPORT}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
