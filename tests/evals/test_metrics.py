"""evals.metrics on hand-computed cases (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evals.metrics import (
    PairedTestResult,
    cohen_kappa,
    condensed_ndcg_at_k,
    dcg_at_k,
    f1_at_k,
    holm_adjust,
    judged_at_k,
    mrr_at_k,
    ndcg_at_k,
    paired_randomization_test,
    precision_at_k,
    recall_at_k,
)

L3 = math.log2(3)  # discount of rank 2
L5 = math.log2(5)  # discount of rank 4


# -- NDCG ----------------------------------------------------------------------------------------
def test_dcg_linear_gain_log2_discount():
    # 2/log2(2) + 0/log2(3) + 1/log2(4) = 2 + 0 + 0.5
    assert dcg_at_k([2, 0, 1], k=10) == pytest.approx(2.5)
    # cut at k=1: only the first gain
    assert dcg_at_k([2, 0, 1], k=1) == pytest.approx(2.0)


def test_ndcg_graded_hand_computed():
    # run gains [2, 0, 1]: DCG = 2 + 0 + 1/2 = 2.5
    # judged grades {2, 1, 1, 0} -> ideal [2, 1, 1, 0]: IDCG = 2 + 1/log2(3) + 1/2 = 3.130930
    expected = 2.5 / (2 + 1 / L3 + 0.5)
    assert ndcg_at_k([2, 0, 1], [1, 0, 2, 1], k=10) == pytest.approx(expected)
    assert expected == pytest.approx(0.798485, abs=1e-6)


def test_ndcg_linear_not_exponential_gain():
    # run [1, 2], ideal [2, 1]. Linear: (1 + 2/log2 3) / (2 + 1/log2 3) = 2.2619 / 2.6309 = 0.85974
    # (exponential 2^g-1 would give (1 + 3/log2 3) / (3 + 1/log2 3) = 0.81..., a different number)
    assert ndcg_at_k([1, 2], [2, 1], k=10) == pytest.approx((1 + 2 / L3) / (2 + 1 / L3))


def test_ndcg_cutoff_ideal_also_cut():
    # k=2: run [0, 0, 2] -> DCG@2 = 0 ; ideal [2, 2, 2] -> IDCG@2 = 2 + 2/log2 3
    assert ndcg_at_k([0, 0, 2], [2, 2, 2], k=2) == 0.0
    # k=2: run [2, 2, 0] -> DCG@2 = IDCG@2 -> 1 even though a third relevant item exists
    assert ndcg_at_k([2, 2, 0], [2, 2, 2], k=2) == pytest.approx(1.0)
    # k=3: run [0, 2] (only two retrieved) -> 2/log2 3 ; IDCG@3 = 2 + 2/log2 3 + 2/2
    assert ndcg_at_k([0, 2], [2, 2, 2], k=3) == pytest.approx((2 / L3) / (2 + 2 / L3 + 1))


def test_ndcg_no_relevant_is_zero_and_perfect_is_one():
    assert ndcg_at_k([0, 0], [0, 0, 0], k=10) == 0.0
    assert ndcg_at_k([], [], k=10) == 0.0
    assert ndcg_at_k([2, 1, 0], [0, 1, 2], k=10) == pytest.approx(1.0)


def test_ndcg_clipped_when_run_beats_ideal():
    # run [2, 2] but only one judged grade-2 item: DCG 2 + 2/log2 3 > IDCG 2 -> clipped to 1
    assert ndcg_at_k([2, 2], [2, 0], k=10) == 1.0


def test_ndcg_rejects_bad_input():
    with pytest.raises(ValueError):
        ndcg_at_k([1], [1], k=0)
    with pytest.raises(ValueError):
        ndcg_at_k([-1], [1], k=10)
    with pytest.raises(ValueError):
        ndcg_at_k([float("nan")], [1], k=10)


# -- precision / recall / MRR --------------------------------------------------------------------
def test_precision_at_k_denominator_is_k():
    # top-5 of [a, x, b] holds 2 relevant -> 2/5 even though only 3 were returned
    assert precision_at_k(["a", "x", "b"], {"a", "b"}, k=5) == pytest.approx(0.4)
    # duplicates removed before the cut: [a, a, b] -> [a, b] -> 2/2
    assert precision_at_k(["a", "a", "b"], {"a", "b"}, k=2) == pytest.approx(1.0)


def test_recall_at_k():
    # [a, x, b, a] -> first 3 distinct [a, x, b]; relevant {a, b, c} -> 2/3
    assert recall_at_k(["a", "x", "b", "a"], {"a", "b", "c"}, k=3) == pytest.approx(2 / 3)
    # cut at 1: [a] -> 1/3
    assert recall_at_k(["a", "x", "b"], {"a", "b", "c"}, k=1) == pytest.approx(1 / 3)
    assert recall_at_k(["a"], set(), k=3) == 0.0


def test_mrr_at_k():
    assert mrr_at_k(["x", "y", "a"], {"a"}, k=10) == pytest.approx(1 / 3)  # first hit at rank 3
    assert mrr_at_k(["x", "y", "a"], {"a"}, k=2) == 0.0  # beyond the cut
    assert mrr_at_k(["x", "x", "a"], {"a"}, k=10) == pytest.approx(1 / 2)  # [x, a] after dedup
    assert mrr_at_k([], {"a"}, k=10) == 0.0


# -- F1@k (Codefest) -----------------------------------------------------------------------------
def test_f1_at_3_codefest_definition():
    # [a, b, a, c] -> distinct [a, b, c]; relevant {a, c, d, e}: hits 2
    # P = 2/3, R = 2 / min(4, 3) = 2/3, F1 = 2/3
    assert f1_at_k(["a", "b", "a", "c"], {"a", "c", "d", "e"}, k=3) == pytest.approx(2 / 3)
    # one relevant doc found at rank 2: P = 1/3, R = 1/min(1, 3) = 1 -> F1 = 2*(1/3)/(4/3) = 0.5
    assert f1_at_k(["b", "a", "c"], {"a"}, k=3) == pytest.approx(0.5)
    # perfect top 3 with 5 relevant: P = 1, R = 3/min(5, 3) = 1 -> 1 (plain recall would be 3/5)
    assert f1_at_k(["a", "b", "c"], {"a", "b", "c", "d", "e"}, k=3) == pytest.approx(1.0)
    # only 1 returned, relevant: P = 1/3 (denominator k), R = 1/min(2,3) = 1/2 -> F1 = 0.4
    assert f1_at_k(["a"], {"a", "b"}, k=3) == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))
    assert f1_at_k(["x", "y", "z"], {"a"}, k=3) == 0.0
    assert f1_at_k([], {"a"}, k=3) == 0.0
    assert f1_at_k(["a"], set(), k=3) == 0.0


# -- paired randomization test -------------------------------------------------------------------
def test_permutation_identical_lists_p_is_one():
    a = [0.1, 0.5, 0.9, 0.3] * 10
    res = paired_randomization_test(a, list(a), n_resamples=2000, seed=1)
    assert isinstance(res, PairedTestResult)
    assert res.p_value == 1.0
    assert res.diff == 0.0
    assert res.mean_a == res.mean_b == pytest.approx(np.mean(a))


def test_permutation_clearly_better_system_small_p():
    rng = np.random.default_rng(42)
    b = rng.uniform(0.2, 0.6, size=40)
    a = b + 0.15 + rng.normal(0, 0.05, size=40)  # better on (almost) every query
    res = paired_randomization_test(a, b, n_resamples=10000, seed=0)
    assert res.diff == pytest.approx(a.mean() - b.mean())
    assert res.p_value < 0.001
    # with the +1 correction the smallest possible p is 1/(n_resamples + 1), never 0
    assert res.p_value >= 1 / 10001


def test_permutation_symmetric_and_deterministic():
    rng = np.random.default_rng(7)
    a, b = rng.uniform(size=30), rng.uniform(size=30)
    ab = paired_randomization_test(a, b, seed=3)
    ba = paired_randomization_test(b, a, seed=3)
    assert ab.p_value == ba.p_value
    assert ab.diff == pytest.approx(-ba.diff)
    assert paired_randomization_test(a, b, seed=3) == ab  # same seed, same answer
    assert 0.0 < ab.p_value <= 1.0


def test_permutation_exact_enumeration_small_n():
    # d = [1, 1, 1]: of the 2^3 = 8 sign vectors only (+,+,+) and (-,-,-) reach |mean| = 1
    # -> exact two-sided p = 2/8 = 0.25
    res = paired_randomization_test([1, 1, 1], [0, 0, 0], n_resamples=10000)
    assert res.exact and res.n_resamples == 8
    assert res.p_value == pytest.approx(0.25)
    # d = [1, -1]: observed |mean| = 0, every sign vector is as extreme -> p = 1
    assert paired_randomization_test([1, 0], [0, 1]).p_value == 1.0


def test_permutation_monte_carlo_close_to_exact():
    rng = np.random.default_rng(11)
    a, b = rng.uniform(size=12), rng.uniform(size=12)
    exact = paired_randomization_test(a, b, n_resamples=4096)  # 2^12 -> enumerated
    mc = paired_randomization_test(a, b, n_resamples=4000, seed=5)  # sampled
    assert exact.exact and not mc.exact
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.03)


def test_permutation_rejects_bad_input():
    with pytest.raises(ValueError):
        paired_randomization_test([1, 2], [1])
    with pytest.raises(ValueError):
        paired_randomization_test([], [])
    with pytest.raises(ValueError):
        paired_randomization_test([1, float("nan")], [1, 2])
    with pytest.raises(ValueError):
        paired_randomization_test([1, 2], [1, 2], n_resamples=0)


# -- incomplete judgments: Judged@k and the condensed NDCG' (Sakai 2007) --------------------------
def test_judged_at_k_counts_judged_zeros_and_divides_by_k():
    ranked = [None, 2, None, 0, 1]  # rank 4 is judged non-relevant: still a judgment
    assert judged_at_k(ranked, 5) == pytest.approx(3 / 5)
    assert judged_at_k(ranked, 10) == pytest.approx(3 / 10)  # denominator k, as P@k
    assert judged_at_k(ranked, 2) == pytest.approx(1 / 2)
    assert judged_at_k([], 10) == 0.0
    with pytest.raises(ValueError):
        judged_at_k(ranked, 0)


def test_condensed_ndcg_drops_unjudged_before_the_cut():
    ranked, ideal = [None, 2, None, 0, 1], [2, 1, 0]
    # condensed list [2, 0, 1]: DCG = 2 + 0 + 1/log2 4 = 2.5 ; IDCG = 2 + 1/log2 3
    assert condensed_ndcg_at_k(ranked, ideal, 10) == pytest.approx(2.5 / (2 + 1 / L3))
    # the plain NDCG counts the unjudged as 0: [0, 2, 0, 0, 1] -> 2/log2 3 + 1/log2 6
    plain = ndcg_at_k([g or 0 for g in ranked], ideal, 10)
    assert plain == pytest.approx((2 / L3 + 1 / math.log2(6)) / (2 + 1 / L3))
    # at k = 2 the judged 0 of rank 4 moves into the top 2 of the condensed list: [2, 0] -> 2 / IDCG@2
    assert condensed_ndcg_at_k(ranked, ideal, 2) == pytest.approx(2 / (2 + 1 / L3))
    # nothing judged: 0 ; a fully judged list: the plain NDCG
    assert condensed_ndcg_at_k([None, None], ideal, 10) == 0.0
    assert condensed_ndcg_at_k([1, 2, 0], ideal, 10) == pytest.approx(ndcg_at_k([1, 2, 0], ideal, 10))


# -- Cohen's kappa --------------------------------------------------------------------------------
def test_cohen_kappa_hand_computed():
    a = [0, 0, 1, 1, 2, 2]
    b = [0, 1, 1, 2, 2, 2]
    # p_o = 4/6 ; marginals a (1/3, 1/3, 1/3), b (1/6, 1/3, 1/2) -> p_e = (1/18 + 1/9 + 1/6) = 1/3
    # kappa = (2/3 - 1/3) / (1 - 1/3) = 0.5
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    # linear weights |i-j|/2: observed disagreement 2 * (1/6 * 1/2) = 1/6 ; expected 16/36 = 4/9
    # -> 1 - (1/6) / (4/9) = 0.625
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(0.625)
    # quadratic weights ((i-j)/2)^2: observed 2 * (1/6 * 1/4) = 1/12 ; expected 24/72 = 1/3 -> 0.75
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(0.75)
    # symmetric in the two annotators; perfect agreement 1; systematic opposite below 0
    assert cohen_kappa(b, a) == pytest.approx(0.5)
    assert cohen_kappa(a, a) == 1.0
    assert cohen_kappa([0, 2, 0, 2], [2, 0, 2, 0]) == pytest.approx(-1.0)
    assert cohen_kappa([1, 1], [1, 1]) == 1.0  # one label for everything: agreement is perfect


def test_cohen_kappa_rejects_bad_input():
    with pytest.raises(ValueError):
        cohen_kappa([0, 1], [0])
    with pytest.raises(ValueError):
        cohen_kappa([], [])
    with pytest.raises(ValueError):
        cohen_kappa([0, 3], [0, 1])
    with pytest.raises(ValueError):
        cohen_kappa([0, 1], [0, 1], weights="cubic")


# -- Holm–Bonferroni (Holm 1979) ---------------------------------------------------------------
def test_holm_adjust_worked_example():
    # sorted: 0.005 (×4 = 0.02), 0.01 (×3 = 0.03), 0.03 (×2 = 0.06), 0.04 (×1 = 0.04 → running max 0.06)
    adj = holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_adjust_caps_at_one_and_keeps_order_and_edge_sizes():
    assert holm_adjust([]) == []
    assert holm_adjust([0.037]) == [0.037]
    adj = holm_adjust([0.5, 0.9, 0.0001, 0.2])
    assert adj == pytest.approx([1.0, 1.0, 0.0004, 0.6])
    assert all(a >= p for a, p in zip(adj, [0.5, 0.9, 0.0001, 0.2], strict=True))
    # ties get equal adjusted values whatever their position
    assert holm_adjust([0.02, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


def _holm_rejects(ps, alpha):
    """Holm's rule as he states it: step down the sorted p-values, reject while p_(i) <= alpha/(m-i+1)."""
    m = len(ps)
    rejected = set()
    for i, j in enumerate(sorted(range(m), key=lambda k: ps[k])):
        if ps[j] > alpha / (m - i):
            break
        rejected.add(j)
    return rejected


@pytest.mark.parametrize("seed", range(20))
def test_holm_adjust_rejects_exactly_what_the_step_down_rule_rejects(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 33))
    # a mix of tiny and null-like p-values, rounded like the reports' 4 decimals (ties happen)
    ps = np.round(np.where(rng.random(m) < 0.3, rng.random(m) * 0.01, rng.random(m)), 4).tolist()
    adj = holm_adjust(ps)
    for alpha in (0.01, 0.05, 0.1):
        assert {i for i, a in enumerate(adj) if a <= alpha} == _holm_rejects(ps, alpha)


@pytest.mark.parametrize("bad", [[-0.1], [1.2], [float("nan")], [0.3, 2.0]])
def test_holm_adjust_rejects_values_outside_unit_interval(bad):
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm_adjust(bad)
