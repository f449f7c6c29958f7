"""Counterfactual orderings of the gap analysis, on a hand-made dev set and pool."""

from __future__ import annotations

import pytest

from evals.datasets import CodefestDev, CodefestQuestion, JudgedChunk
from evals.gap_analysis import (
    analyse,
    candidate_recall,
    codefest_scope,
    collect_pools,
    keep,
    oracle_documents,
    oracle_grade,
    reorder_run,
)
from evals.scoring import build_judged_index
from radar_pipeline.retrieval.policy import Candidate, PolicyConfig
from tests.evals.support_text import words as W


@pytest.fixture()
def dev() -> CodefestDev:
    qs = (CodefestQuestion("qa", "¿a?", "F1"),)
    chunks = {
        "qa": (
            JudgedChunk("qa", "A-chunk-0", "F1-AAA-001", 2, W("a", 0, 50)),
            JudgedChunk("qa", "B-chunk-0", "F1-BBB-002", 1, W("b", 0, 50)),
            JudgedChunk("qa", "C-chunk-0", "F1-CCC-003", 0, W("c", 0, 50)),
            JudgedChunk("qa", "E-chunk-0", "F1-EEE-005", 2, W("e", 0, 50)),
        )
    }
    return CodefestDev(qs, chunks, {"qa": frozenset({"F1-AAA-001", "F1-EEE-005"})})


def _c(row: int, doc: str, path: str, text: str, score: float) -> Candidate:
    return Candidate(row, f"c{row}", doc, path, text, score)


@pytest.fixture()
def pools() -> dict[str, list[Candidate]]:
    # the pool's own order puts an unjudged distractor and the grade-0 chunk first
    return {
        "qa": [
            _c(0, "x", "radar/misc/x.pdf", W("z", 0, 50), 0.9),  # outside Codefest
            _c(1, "c", "codefest/F1/F1-CCC-003.txt", W("c", 0, 50), 0.8),  # grade 0
            _c(2, "b", "codefest/F1/F1-BBB-002.txt", W("b", 0, 50), 0.7),  # grade 1
            # straddles A and unjudged text: A is 22/46 inside it, it is 22/62 inside A -> no match at 0.55
            _c(3, "a", "codefest/F1/F1-AAA-001.txt", W("a", 0, 26) + " " + W("q", 0, 40), 0.6),
            _c(4, "a", "codefest/F1/F1-AAA-001.txt", W("a", 0, 50), 0.5),  # grade 2
        ]
    }


POLICY = PolicyConfig(k_passages=3, k_documents=2, max_per_doc=3)


def _passage_rows(run: list[dict]) -> list[str]:
    return [p["chunk_id"] for p in run[0]["passages"]]


def test_keep_is_the_pool_order(pools):
    assert _passage_rows(reorder_run(pools, keep, POLICY)) == ["c0", "c1", "c2"]


def test_oracle_grade_whole_pool_and_depth(pools, dev):
    index = build_judged_index(dev)
    # grade 2 first, then grade 1, then the best-scored grade 0
    assert _passage_rows(reorder_run(pools, oracle_grade(index), POLICY)) == ["c4", "c2", "c0"]
    # depth 2: only the first two by score are re-ordered (both grade 0: score order kept), rest behind
    assert _passage_rows(reorder_run(pools, oracle_grade(index, depth=2), POLICY)) == ["c0", "c1", "c2"]
    # depth 3: the grade-1 passage moves to the front
    assert _passage_rows(reorder_run(pools, oracle_grade(index, depth=3), POLICY)) == ["c2", "c0", "c1"]


def test_oracle_documents_and_scope(pools, dev):
    run = reorder_run(pools, oracle_documents(dev.relevant_docs), POLICY)
    # AAA's two passages first (own order), then the rest in pool order
    assert _passage_rows(run) == ["c3", "c4", "c0"]
    assert [d["source_path"] for d in run[0]["documents"]] == ["codefest/F1/F1-AAA-001.txt", "radar/misc/x.pdf"]
    # documents with any judged positive: AAA and BBB (grade 1) first
    run = reorder_run(pools, oracle_documents({"qa": frozenset({"F1-AAA-001", "F1-BBB-002"})}), POLICY)
    assert _passage_rows(run) == ["c2", "c3", "c4"]
    # the non-Codefest file has no benchmark id: out of scope
    assert _passage_rows(reorder_run(pools, codefest_scope, POLICY)) == ["c1", "c2", "c3"]


def test_candidate_recall(pools, dev):
    # judged positives: A (grade 2), B (grade 1), E (grade 2); the pool matches A and B
    assert candidate_recall(pools, dev, build_judged_index(dev)) == pytest.approx(2 / 3)


def test_analyse_rows(pools, dev):
    rep = analyse(pools, dev, POLICY, depths=(2,), thresholds=(0.4,))
    rows = {r["name"]: r for r in rep["rows"]}
    assert list(rows) == [
        "default",
        "oracle_pool",
        "oracle_top2",
        "oracle_documents",
        "oracle_positive_documents",
        "codefest_scope",
        "containment>=0.4",
    ]
    # default: grades [0, 0, 1] -> low; the oracle's [2, 1, 0] is the best possible
    assert rows["default"]["ndcg@10"] < rows["oracle_pool"]["ndcg@10"]
    # ideal = all judged grades [2, 2, 1, 0]; the oracle shows [2, 1, 0]
    assert rows["oracle_pool"]["ndcg@10"] == pytest.approx(
        (2 + 1 / 1.584962500721156) / (2 + 2 / 1.584962500721156 + 1 / 2), abs=1e-4
    )  # rounded to 4 places
    # default documents: x (no benchmark id), CCC -> no hit; oracle documents: AAA, x -> 1 hit of the
    # 3 slots F1@3 counts, relevant {AAA, EEE}: P = 1/3, R = 1/2 -> F1 = 0.4
    assert rows["default"]["f1@3"] == 0.0
    assert rows["oracle_documents"]["f1@3"] == pytest.approx(0.4)
    assert rows["default"]["repeat_matches"] == 0 and rows["default"]["ndcg_clipped"] == 0
    assert rows["containment>=0.4"]["ndcg@10"] == rows["default"]["ndcg@10"]  # c3 is not in the top 3
    assert rep["recall@candidates"] == pytest.approx(2 / 3, abs=1e-4)
    assert rep["non_codefest_share_top10"] == pytest.approx(1 / 3, abs=1e-4)
    assert rep["pool_size_mean"] == 5.0


def test_looser_rule_credits_a_misaligned_passage(pools, dev):
    rep = analyse({"qa": [pools["qa"][3]]}, dev, POLICY, depths=(), thresholds=(0.4,))
    rows = {r["name"]: r for r in rep["rows"]}
    assert rows["default"]["ndcg@10"] == 0.0  # 22/46 < 0.55: no credit
    assert rows["containment>=0.4"]["ndcg@10"] > 0.0  # 22/46 >= 0.4: credited as A (grade 2)


def test_collect_pools_refuses_dense_passage_ranking(dev):
    from evals.configs import CONFIGS

    with pytest.raises(ValueError, match="passage_ranking"):
        collect_pools(None, CONFIGS["dense"], dev)
