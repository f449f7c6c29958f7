"""Pure pieces of the pool re-scoring study, on hand-made data."""

from __future__ import annotations

import numpy as np
import pytest

from evals.pool_variants import doc_feature, fit_logistic, loo_logistic, roc_auc, second_stage
from radar_pipeline.retrieval.policy import Candidate


def _c(row: int, path: str, text: str, score: float) -> Candidate:
    return Candidate(row, f"c{row}", path, path, text, score)


def test_second_stage_rescores_top_k_distinct_texts_and_shares_duplicates():
    cands = [_c(0, "a", "t0", 0.9), _c(1, "b", "t0", 0.8), _c(2, "c", "t2", 0.7), _c(3, "d", "t3", 0.1)]
    sims = np.array([0.1, 0.1, 0.9, 0.5])
    s = second_stage(cands, sims, k=2, weight=1.0)
    # top 2 distinct texts: t0 (row 0) and t2 -> re-scored in [1, 2] by sims alone: t2 = 2, t0 = 1
    assert s[2] == pytest.approx(2.0) and s[0] == pytest.approx(1.0)
    assert s[1] == s[0]  # the duplicate of t0 shares its score
    assert s[3] < 1.0  # outside the top 2: below every re-scored one
    assert list(np.argsort(-s)) == [2, 0, 1, 3]


def test_doc_feature():
    cands = [_c(0, "a", "x", 0), _c(1, "a", "y", 0), _c(2, "b", "z", 0), _c(3, "a", "w", 0)]
    s = np.array([0.2, 0.9, 0.5, 0.4])
    assert list(doc_feature(cands, s, "max")) == [0.9, 0.9, 0.5, 0.9]
    assert doc_feature(cands, s, "top3mean")[0] == pytest.approx((0.9 + 0.4 + 0.2) / 3)
    assert doc_feature(cands, s, "count")[2] == pytest.approx(np.log(2))
    with pytest.raises(ValueError):
        doc_feature(cands, s, "median")


def test_roc_auc_hand_computed():
    s = np.array([0.9, 0.5, 0.5, 0.1])
    y = np.array([True, True, False, False])
    # pairs (pos, neg): (0.9,0.5) 1, (0.9,0.1) 1, (0.5,0.5) 0.5, (0.5,0.1) 1 -> 3.5 / 4
    assert roc_auc(s, y) == pytest.approx(0.875)
    assert roc_auc(s, np.zeros(4, bool)) is None


def test_fit_logistic_matches_the_closed_form_of_one_binary_feature():
    # one 0/1 feature, no penalty: the MLE reproduces the log-odds of each group exactly
    x = np.array([0] * 4 + [1] * 4, float)[:, None]
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0], float)  # P(y|x=0) = 1/4, P(y|x=1) = 3/4
    w = fit_logistic(x, y, l2=0.0)
    assert w[-1] == pytest.approx(np.log(1 / 3), abs=1e-6)  # intercept: logit(1/4)
    assert w[0] == pytest.approx(np.log(3) - np.log(1 / 3), abs=1e-6)  # slope: logit(3/4) - logit(1/4)
    # a penalty shrinks the slope, never the intercept's role
    assert 0 < fit_logistic(x, y, l2=5.0)[0] < w[0]


def test_loo_logistic_uses_only_the_other_questions():
    rng = np.random.default_rng(0)
    feats, labels = {}, {}
    for q in ("q1", "q2", "q3"):
        y = rng.random(40) < 0.3
        feats[q] = np.stack([y + 0.3 * rng.standard_normal(40), rng.standard_normal(40)], 1)
        labels[q] = y
    out = loo_logistic(feats, labels, l2=1.0)
    assert set(out) == {"q1", "q2", "q3"} and all(v.shape == (40,) for v in out.values())
    for q in out:  # the informative feature learned elsewhere ranks this question's positives first
        assert roc_auc(out[q], labels[q]) > 0.9
