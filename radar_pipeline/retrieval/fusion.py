"""Rank fusion of several rankers' candidate lists.

* Convex combination (CC) of per-query min–max normalised scores: Bruch, Gai & Ingber 2023,
  "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 42(1) — shown to beat RRF when
  a few queries tune the weight.
* Reciprocal rank fusion (RRF), k = 60: Cormack, Clarke & Büttcher 2009, SIGIR.

A ranker's candidates are ``{row: score}``; a row absent from one ranker's list scores 0 there
after normalisation (it was below that ranker's cut-off).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


def minmax(scores: Mapping[int, float]) -> dict[int, float]:
    """Scale scores to [0, 1] over this candidate list (all equal → all 1.0)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi - lo <= 1e-12:
        return {r: 1.0 for r in scores}
    return {r: (s - lo) / (hi - lo) for r, s in scores.items()}


def convex_fusion(runs: Sequence[Mapping[int, float]], weights: Sequence[float]) -> dict[int, float]:
    """Σ_i w_i · minmax(run_i)[row] over the union of rows. ``weights`` need not sum to 1."""
    if len(runs) != len(weights):
        raise ValueError("one weight per run")
    fused: dict[int, float] = {}
    for run, w in zip(runs, weights, strict=False):
        if w == 0:
            continue
        for r, s in minmax(run).items():
            fused[r] = fused.get(r, 0.0) + w * s
    return fused


def rrf(runs: Sequence[Mapping[int, float]], k: int = 60, weights: Sequence[float] | None = None) -> dict[int, float]:
    """Σ_i w_i / (k + rank_i(row)), ranks 1-based by descending score."""
    weights = weights or [1.0] * len(runs)
    fused: dict[int, float] = {}
    for run, w in zip(runs, weights, strict=False):
        for rank, (r, _) in enumerate(sorted(run.items(), key=lambda x: -x[1]), 1):
            fused[r] = fused.get(r, 0.0) + w / (k + rank)
    return fused


def top_distinct(scores: Mapping[int, float], key: Callable[[int], str], k: int) -> list[int]:
    """The ``k`` best-scored rows of ``scores``, best first, keeping only the first row of each
    ``key`` (e.g. passage text, so duplicate copies take one re-ranking slot)."""
    out: list[int] = []
    seen: set[str] = set()
    for r in sorted(scores, key=lambda r: -scores[r]):
        if len(out) == k:
            break
        if key(r) not in seen:
            seen.add(key(r))
            out.append(r)
    return out


def rerank(first: Mapping[int, float], second: Mapping[int, float], weight: float) -> dict[int, float]:
    """Second-stage re-ranking of the rows ``second`` scored (a top-K of ``first``).

    Re-ranked rows score ``1 + (1-weight)·minmax(first|K) + weight·minmax(second)`` ∈ [1, 2];
    every other row of ``first`` keeps ``0.999·minmax(first)`` ∈ [0, 1), so the re-ranked top K
    stays above the rest and the rest keeps its order (the usual retrieve-then-rerank cascade,
    e.g. Nogueira & Cho 2019, "Passage Re-ranking with BERT", with a convex interpolation of the
    first-stage score as in Bruch et al. 2023). ``weight`` ∈ [0, 1]; raises ``ValueError`` outside.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"rerank weight must be in [0, 1], got {weight}")
    base = minmax(first)
    out = {r: 0.999 * s for r, s in base.items()}
    top_first = minmax({r: first[r] for r in second if r in first})
    top_second = minmax(second)
    for r, s in top_second.items():
        out[r] = 1.0 + (1.0 - weight) * top_first.get(r, 0.0) + weight * s
    return out
