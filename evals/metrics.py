"""Ranking metrics and a paired significance test, as pure functions.

Everything here takes plain Python sequences (ranked lists, relevance judgments) and returns plain
floats, so the same code scores Codefest passages, Codefest documents and BEIR-style benchmarks.
Conventions shared by all functions:

- Ranks are 1-based; ``k`` is a cut-off (the first ``k`` items of the ranking) and must be >= 1.
- Id-based metrics (precision, recall, MRR, F1) de-duplicate the ranked ids in rank order before
  cutting at ``k``: a repeated id is neither a second hit nor a second miss.
- A query with no relevant item scores 0.0; callers decide whether such queries belong in a mean.

Sources: Järvelin & Kekäläinen (2002), "Cumulated gain-based evaluation of IR techniques", ACM
TOIS 20(4); Voorhees (1999), "The TREC-8 question answering track report" (reciprocal rank);
Smucker, Allan & Carterette (2007), "A comparison of statistical significance tests for
information retrieval evaluation", CIKM; Phipson & Smyth (2010), "Permutation p-values should
never be zero", Stat. Appl. Genet. Mol. Biol. 9(1); NIST ``trec_eval`` (``ndcg``, ``P``,
``recall``, ``recip_rank`` measures); Sakai (2007), "Alternatives to Bpref", SIGIR (condensed
lists, NDCG'); Buckley & Voorhees (2004), "Retrieval evaluation with incomplete information",
SIGIR, and ``ir_measures``' ``Judged@k`` (share of judged items); Cohen (1960), "A coefficient of
agreement for nominal scales", Educ. Psychol. Meas. 20(1), and Cohen (1968), "Weighted kappa",
Psychol. Bull. 70(4).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PairedTestResult",
    "cohen_kappa",
    "condensed_ndcg_at_k",
    "dcg_at_k",
    "f1_at_k",
    "holm_adjust",
    "judged_at_k",
    "mrr_at_k",
    "ndcg_at_k",
    "paired_randomization_test",
    "precision_at_k",
    "recall_at_k",
]


def _check_k(k: int) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _dedup_cut(ranked_ids: Iterable[Hashable], k: int) -> list[Hashable]:
    """The first ``k`` distinct ids of ``ranked_ids``, in rank order."""
    seen: set[Hashable] = set()
    out: list[Hashable] = []
    for x in ranked_ids:
        if x in seen:
            continue
        seen.add(x)
        out.append(x)
        if len(out) == k:
            break
    return out


def dcg_at_k(gains: Sequence[float], k: int = 10) -> float:
    """Discounted cumulative gain of the first ``k`` gains: ``sum_i gain_i / log2(i + 1)``, i 1-based.

    Linear gain (the gain *is* the relevance grade), the formulation of Järvelin & Kekäläinen
    (2002) with a log2(rank + 1) discount from rank 1, as computed by NIST ``trec_eval`` 9.x
    (``m_ndcg.c``: ``gain / log2(i + 2)`` for 0-based ``i``, default gain = relevance level;
    ``ndcg_cut.k`` cuts at ``k``). The "exponential" gain ``2^grade - 1`` (Burges et al. 2005)
    is *not* used.

    Raises ``ValueError`` for ``k < 1`` or a negative or non-finite gain.
    """
    _check_k(k)
    total = 0.0
    for i, g in enumerate(gains[:k], start=1):
        g = float(g)
        if not math.isfinite(g) or g < 0:
            raise ValueError(f"gains must be finite and >= 0, got {g!r} at rank {i}")
        total += g / math.log2(i + 1)
    return total


def ndcg_at_k(ranked_gains: Sequence[float], ideal_gains: Sequence[float], k: int = 10) -> float:
    """Normalised DCG at ``k`` with graded relevance and linear gain (``trec_eval``'s ``ndcg_cut.k``).

    ``ranked_gains[i]`` is the relevance grade (e.g. 0/1/2) of the item at rank ``i + 1`` of the
    run; unjudged items count as 0. ``ideal_gains`` is the multiset of *all* judged grades of the
    query (any order; zeros allowed): the ideal ranking sorts them in decreasing order, so
    ``NDCG@k = DCG@k(run) / DCG@k(ideal)`` with ``DCG@k = sum_{i<=k} gain_i / log2(i + 1)``
    (Järvelin & Kekäläinen 2002, linear gain = grade, log2 discount from rank 1).

    Returns a float in [0, 1]; 0.0 when the query has no relevant judged item (ideal DCG = 0).
    The value is clipped at 1.0: when relevance is transferred across chunkings (see
    ``evals.relevance``) several retrieved passages can overlap the same judged passage,
    so the run's DCG can exceed the ideal built from the judged passages; ``evals.scoring`` counts
    such repeats per query so that the clip is visible.

    Raises ``ValueError`` for ``k < 1`` or a negative/non-finite gain.
    """
    _check_k(k)
    ideal = sorted((float(g) for g in ideal_gains), reverse=True)
    idcg = dcg_at_k(ideal, k)
    dcg = dcg_at_k(list(ranked_gains), k)
    if idcg <= 0.0:
        return 0.0
    return min(1.0, dcg / idcg)


def judged_at_k(ranked_grades: Sequence[float | None], k: int = 10) -> float:
    """Judged@k: share of the first ``k`` ranks that hold an item carrying a judgment.

    ``ranked_grades[i]`` is the grade of the item at rank ``i + 1`` in the judgment set used, or
    ``None`` when no judgment covers it (a judged 0 is a judgment). The denominator is ``k`` even
    when the run returned fewer items (as ``ir_measures``' ``Judged@k``; Buckley & Voorhees 2004
    call the complement the unjudged share). Returns a float in [0, 1]. A low value means the
    run's NDCG is mostly a statement about the pool, not the ranking.
    """
    _check_k(k)
    return sum(1 for g in list(ranked_grades)[:k] if g is not None) / k


def condensed_ndcg_at_k(ranked_grades: Sequence[float | None], ideal_gains: Sequence[float], k: int = 10) -> float:
    """NDCG'@k, the condensed-list NDCG of Sakai (2007): drop unjudged items, then NDCG@k.

    ``ranked_grades`` is the run's ranking (as deep as available) with ``None`` for an item no
    judgment covers; those are removed *before* the cut, so judged items from below rank ``k``
    move up into the top ``k`` (Sakai 2007, "Alternatives to Bpref", SIGIR: condensed lists make
    NDCG robust to incomplete judgments). The rest is :func:`ndcg_at_k` on what remains, with the
    same ideal (all judged grades of the query). Example: ``[None, 2, None, 0, 1]`` condenses to
    ``[2, 0, 1]``. Returns a float in [0, 1]; raises as :func:`ndcg_at_k`.
    """
    return ndcg_at_k([g for g in ranked_grades if g is not None], ideal_gains, k)


def cohen_kappa(
    a: Sequence[int], b: Sequence[int], weights: str | None = None, labels: Sequence[int] = (0, 1, 2)
) -> float:
    """Cohen's kappa between two annotators' grades of the same items, unweighted or weighted.

    ``a[i]`` and ``b[i]`` are the two grades of item ``i`` (values in ``labels``). With the
    observed joint proportions ``p_ij``, the marginals ``p_i.``, ``p_.j`` and disagreement weights
    ``w_ij``::

        kappa_w = 1 - sum_ij w_ij p_ij / sum_ij w_ij p_i. p_.j

    ``weights=None``: ``w_ij = 0`` if ``i == j`` else 1, i.e. Cohen's (1960) ``(p_o - p_e) /
    (1 - p_e)``; ``"linear"``: ``w_ij = |i - j| / (L - 1)``; ``"quadratic"``: ``w_ij = ((i - j) /
    (L - 1))^2`` (Cohen 1968; the same definitions as scikit-learn's ``cohen_kappa_score``), with
    ``L`` the number of labels and ``i, j`` label positions. Returns a float in [-1, 1]; 1.0 when
    both annotators give one and the same label to every item (chance agreement is then 1 and the
    ratio undefined: agreement is perfect). Raises ``ValueError`` for different lengths, no
    items, a grade outside ``labels`` or an unknown ``weights``.
    """
    if len(a) != len(b):
        raise ValueError(f"a and b must have the same length, got {len(a)} and {len(b)}")
    if not a:
        raise ValueError("no items to compare")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    pos = {lab: i for i, lab in enumerate(labels)}
    L = len(labels)
    m = np.zeros((L, L), dtype=np.float64)
    for x, y in zip(a, b, strict=True):
        if x not in pos or y not in pos:
            raise ValueError(f"grade outside {tuple(labels)}: {x!r}, {y!r}")
        m[pos[x], pos[y]] += 1
    p = m / m.sum()
    expected = np.outer(p.sum(axis=1), p.sum(axis=0))
    i, j = np.indices((L, L))
    if weights is None:
        w = (i != j).astype(np.float64)
    elif weights == "linear":
        w = np.abs(i - j) / max(L - 1, 1)
    else:
        w = ((i - j) / max(L - 1, 1)) ** 2
    denom = float((w * expected).sum())
    if denom <= 1e-15:
        return 1.0
    return 1.0 - float((w * p).sum()) / denom


def precision_at_k(ranked_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable], k: int = 10) -> float:
    """Precision at ``k``: ``|top-k ∩ relevant| / k`` (``trec_eval`` ``P_k``).

    The denominator is always ``k``, also when the run returned fewer than ``k`` items.
    Ranked ids are de-duplicated in rank order before the cut. Returns a float in [0, 1].
    """
    _check_k(k)
    rel = set(relevant_ids)
    top = _dedup_cut(ranked_ids, k)
    return sum(1 for x in top if x in rel) / k


def recall_at_k(ranked_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable], k: int = 10) -> float:
    """Recall at ``k``: ``|top-k ∩ relevant| / |relevant|`` (``trec_eval`` ``recall_k``).

    Ranked ids are de-duplicated in rank order before the cut. Returns a float in [0, 1];
    0.0 when ``relevant_ids`` is empty.
    """
    _check_k(k)
    rel = set(relevant_ids)
    if not rel:
        return 0.0
    top = _dedup_cut(ranked_ids, k)
    return sum(1 for x in top if x in rel) / len(rel)


def mrr_at_k(ranked_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable], k: int = 10) -> float:
    """Reciprocal rank at ``k`` of one query: ``1 / rank`` of the first relevant id in the top ``k``.

    Returns 0.0 when none of the first ``k`` (de-duplicated) ids is relevant. Averaging this over
    queries gives MRR@k (Voorhees 1999; ``trec_eval`` ``recip_rank`` without the cut-off).
    """
    _check_k(k)
    rel = set(relevant_ids)
    for rank, x in enumerate(_dedup_cut(ranked_ids, k), start=1):
        if x in rel:
            return 1.0 / rank
    return 0.0


def f1_at_k(ranked_doc_ids: Sequence[Hashable], relevant_doc_ids: Iterable[Hashable], k: int = 3) -> float:
    """F1 at ``k`` with the Codefest Ad Astra 2026 challenge's recall normalisation (documents).

    With ``hits = |top-k ∩ relevant|`` over the first ``k`` *distinct* document ids:

    - precision = ``hits / k`` (denominator ``k`` even if fewer than ``k`` documents were returned);
    - recall = ``hits / min(|relevant|, k)`` (normalised so that a perfect top-``k`` scores 1 even
      when a question has more than ``k`` relevant documents — the challenge's definition, not the
      plain ``hits / |relevant|``);
    - F1 = ``2 * P * R / (P + R)``, 0.0 when there is no hit.

    Returns a float in [0, 1]; 0.0 when ``relevant_doc_ids`` is empty.
    """
    _check_k(k)
    rel = set(relevant_doc_ids)
    if not rel:
        return 0.0
    top = _dedup_cut(ranked_doc_ids, k)
    hits = sum(1 for d in top if d in rel)
    if hits == 0:
        return 0.0
    p = hits / k
    r = hits / min(len(rel), k)
    return 2 * p * r / (p + r)


@dataclass(frozen=True)
class PairedTestResult:
    """Outcome of a paired test of system A against system B over the same queries.

    ``mean_a``/``mean_b`` are the per-query means, ``diff = mean_a - mean_b``, ``p_value`` the
    two-sided p-value, ``n`` the number of paired queries, ``n_resamples`` the number of sign
    vectors used (``2**n`` when the test enumerated them all) and ``exact`` whether it did.
    """

    mean_a: float
    mean_b: float
    diff: float
    p_value: float
    n: int = 0
    n_resamples: int = 0
    exact: bool = False


def paired_randomization_test(
    a: Sequence[float], b: Sequence[float], n_resamples: int = 10000, seed: int = 0
) -> PairedTestResult:
    """Two-sided paired randomization (sign-flip permutation) test on per-query differences.

    Under H0 the labels A/B of each query are exchangeable, so each per-query difference
    ``d_i = a_i - b_i`` is equally likely to have either sign. The test statistic is
    ``|mean(d)|``; the p-value is the share of sign-flipped vectors ``s`` (``s_i ∈ {-1, +1}``)
    with ``|mean(s * d)| >= |mean(d)|`` (Fisher's randomization test as recommended for IR by
    Smucker, Allan & Carterette 2007, CIKM).

    - When ``2**n <= n_resamples`` every sign vector is enumerated and the p-value is exact.
    - Otherwise ``n_resamples`` random sign vectors are drawn with ``numpy.random.default_rng(seed)``
      (deterministic for a given seed) and ``p = (1 + #{extreme}) / (1 + n_resamples)``, which
      counts the observed assignment and never returns 0 (Phipson & Smyth 2010).

    Identical inputs give ``p_value == 1.0``; swapping ``a`` and ``b`` gives the same p-value and
    the opposite ``diff``. Vectorised in batches (memory ~ 8 MB per batch whatever ``n``).

    Shapes: ``a`` and ``b`` are 1-D, same length ``n >= 1``, paired by position (query).
    Raises ``ValueError`` on different lengths, empty input, non-finite values or
    ``n_resamples < 1``.
    """
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.ndim != 1 or xb.ndim != 1:
        raise ValueError("a and b must be 1-D sequences of per-query scores")
    if xa.shape != xb.shape:
        raise ValueError(f"a and b must be paired (same length), got {xa.size} and {xb.size}")
    if xa.size == 0:
        raise ValueError("a and b are empty")
    if not (np.isfinite(xa).all() and np.isfinite(xb).all()):
        raise ValueError("a and b must contain only finite values")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    n = xa.size
    d = xa - xb
    observed = abs(d.mean())
    # Tolerance so that sign vectors giving the same |mean| up to float rounding count as extreme.
    tol = 1e-12 * max(1.0, float(np.abs(d).max()))
    mean_a, mean_b = float(xa.mean()), float(xb.mean())

    if n < 63 and 2**n <= n_resamples:
        # Exact: all 2**n sign vectors, from the bits of 0 .. 2**n - 1.
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        signs = 1.0 - 2.0 * ((codes >> np.arange(n, dtype=np.int64)) & 1)
        stats = np.abs(signs @ d) / n
        p = float(np.count_nonzero(stats >= observed - tol)) / 2**n
        return PairedTestResult(mean_a, mean_b, mean_a - mean_b, min(1.0, p), n, 2**n, True)

    rng = np.random.default_rng(seed)
    batch = max(1, min(n_resamples, 1_000_000 // n))
    extreme = 0
    done = 0
    while done < n_resamples:
        m = min(batch, n_resamples - done)
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        stats = np.abs(signs @ d) / n
        extreme += int(np.count_nonzero(stats >= observed - tol))
        done += m
    p = (1 + extreme) / (1 + n_resamples)
    return PairedTestResult(mean_a, mean_b, mean_a - mean_b, min(1.0, p), n, n_resamples, False)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values for a family of ``m`` tests, in the input order.

    Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple test
    procedure", Scand. J. Statist. 6:65–70) controls the family-wise error rate at level α under
    any dependence between the tests (here: every configuration compared against one default on
    the same questions). With the raw p-values sorted ascending, ``p_(1) <= … <= p_(m)``, the
    adjusted value of the ``i``-th is ``max_{j <= i} min(1, (m - j + 1) · p_(j))`` (the running
    maximum keeps the order); a hypothesis is rejected at level α iff its adjusted p <= α, which
    is exactly Holm's rule "reject H_(1) … H_(i-1), stop at the first ``p_(i) > α / (m - i + 1)``".
    Equal to statsmodels' ``multipletests(p, method="holm")[1]`` (statsmodels is not a dependency).
    Ties keep their input order in the sort; they get equal adjusted values either way.

    Shape: ``m >= 0`` p-values in [0, 1] → ``m`` adjusted p-values in [0, 1], each >= its raw value.
    ``m = 0`` gives ``[]``; ``m = 1`` gives the raw value. Raises ``ValueError`` for a value
    outside [0, 1] or NaN.
    """
    ps = [float(p) for p in p_values]
    for p in ps:
        if not (0.0 <= p <= 1.0):  # also false for NaN
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):  # rank 0 → factor m, rank m-1 → factor 1
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted
