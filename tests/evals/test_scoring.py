"""evals.datasets loaders (on the real files in <shared>/eval) and evals.scoring."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from evals.datasets import (
    CodefestDev,
    CodefestQuestion,
    JudgedChunk,
    benchmark_doc_id,
    load_codefest_dev,
    load_xquad,
    resolve_shared_dir,
)
from evals.relevance import JudgedPassageIndex
from evals.scoring import (
    NOT_MEASURABLE,
    against_default,
    build_deep_index,
    build_judged_index,
    compare,
    compare_codefest,
    holm_rows,
    load_run,
    measurability,
    score_beir_run,
    score_codefest_run,
    verdict,
)
from tests.evals.support_text import words as W


@pytest.fixture(scope="module")
def shared() -> Path:
    try:
        return resolve_shared_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def dev(shared) -> CodefestDev:
    return load_codefest_dev(shared)


@pytest.fixture(scope="module")
def judged_index(dev):
    return build_judged_index(dev)


# -- loaders -------------------------------------------------------------------------------------
def test_resolve_shared_dir(monkeypatch, tmp_path, shared):
    monkeypatch.setenv("RADAR_SHARED_DIR", str(tmp_path))
    assert resolve_shared_dir() == tmp_path.resolve()
    assert resolve_shared_dir(shared) == shared  # the argument wins over the variable
    monkeypatch.setenv("RADAR_SHARED_DIR", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError):
        resolve_shared_dir()


def test_load_codefest_dev_counts(dev):
    assert len(dev.questions) == 25
    assert Counter(q.phenomenon for q in dev.questions) == {"F1": 8, "F2": 8, "F3": 9}
    assert all(isinstance(q, CodefestQuestion) and q.question.startswith("¿") for q in dev.questions)
    judged = dev.all_judged()
    assert len(judged) == 682 and all(isinstance(c, JudgedChunk) for c in judged)
    assert Counter(c.grade for c in judged) == {0: 230, 1: 194, 2: 258}
    assert len({c.chunk_id for c in judged}) == 545  # some passages are judged for several questions
    assert set(dev.qrels_chunks) == set(dev.relevant_docs) == set(dev.query_ids)
    sizes = [len(v) for v in dev.qrels_chunks.values()]
    assert min(sizes) == 23 and max(sizes) == 30  # 23..30 judged passages per question
    assert len({d for v in dev.relevant_docs.values() for d in v}) == 118
    for q in dev.query_ids:  # relevant docs all have a positively judged passage
        assert dev.relevant_docs[q] <= dev.docs_with_positive_chunk[q]
        assert all(c.chunk_id.startswith(c.doc_id + "-chunk-") for c in dev.qrels_chunks[q])


def test_codefest_relevant_docs_exist_in_corpus(dev, shared):
    root = shared / "corpus" / "codefest"
    if not root.is_dir():
        pytest.skip("corpus/codefest not available")
    stems = {benchmark_doc_id(str(p)) for p in root.rglob("*.txt")}
    relevant = {d for v in dev.relevant_docs.values() for d in v}
    assert relevant <= stems  # all 118 relevant documents have a corpus file
    assert len(stems) == 1776


def test_load_xquad_counts(shared):
    easy = load_xquad("xquad_es_en", shared)
    hard = load_xquad("xquad_es_en_hard", shared)
    assert len(easy.queries) == len(hard.queries) == 1190
    assert len(easy.corpus) == 240 and len(hard.corpus) == 2067
    for ds in (easy, hard):
        assert len(ds.qrels) == 1190
        assert all(len(v) == 1 and set(v.values()) == {1} for v in ds.qrels.values())
        assert all(d in ds.doc_by_id for v in ds.qrels.values() for d in v)
    assert {d.doc_id for d in easy.corpus} <= set(hard.doc_by_id)  # the hard corpus extends the easy one
    assert easy.doc_by_id["Super_Bowl_50#0"].title == "Super_Bowl_50"
    assert easy.queries[0].query_id == "56beb4343aeaaa14008c925b"
    assert easy.query_text["56beb4343aeaaa14008c925b"].startswith("¿Cuántos puntos")
    with pytest.raises(ValueError):
        load_xquad("xquad_fr", shared)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "path, expected",
    [
        ("corpus/codefest/F1/F1-CSET-005.txt", "F1-CSET-005"),
        ("/work/shared/corpus/codefest/F3/F3-ALERTAS-399.txt", "F3-ALERTAS-399"),
        ("codefest/F2/F2-SWF-034.txt", "F2-SWF-034"),
        ("eval/codefest_mini_corpus/F2-CSIS-132.txt", "F2-CSIS-132"),
        ("F1-ILIA-008.txt", "F1-ILIA-008"),
        (r"C:\data\codefest\F1\F1-DAIO-029.txt", "F1-DAIO-029"),
        ("corpus/radar/ai_military/report.pdf", None),
        ("corpus/radar/territorial/alertas.csv", None),
        ("corpus/codefest/F1/F1-CSET-005.pdf", None),
        ("notes/F1-CSET-5.txt", None),
        ("", None),
    ],
)
def test_benchmark_doc_id(path, expected):
    assert benchmark_doc_id(path) == expected


# -- Codefest scoring: hand-made dev set -----------------------------------------------------------


@pytest.fixture()
def toy_dev() -> CodefestDev:
    qs = (CodefestQuestion("qa", "¿a?", "F1"), CodefestQuestion("qb", "¿b?", "F3"))
    chunks = {
        "qa": (
            JudgedChunk("qa", "D1-chunk-0", "F1-AAA-001", 2, W("a", 0, 50)),
            JudgedChunk("qa", "D1-chunk-1", "F1-AAA-001", 1, W("a", 50, 100)),
            JudgedChunk("qa", "D2-chunk-0", "F1-BBB-002", 0, W("b", 0, 50)),
        ),
        "qb": (JudgedChunk("qb", "D3-chunk-0", "F3-CCC-003", 1, W("c", 0, 50)),),
    }
    rel = {"qa": frozenset({"F1-AAA-001", "F1-DDD-004"}), "qb": frozenset({"F3-CCC-003"})}
    return CodefestDev(qs, chunks, rel)


def _p(rank: int, text: str) -> dict:
    return {"rank": rank, "chunk_id": f"r{rank}", "doc_id": "x", "source_path": "p", "text": text, "score": 1.0 / rank}


def _d(rank: int, path: str) -> dict:
    return {"rank": rank, "doc_id": f"h{rank}", "source_path": path, "score": 1.0 / rank}


def test_score_codefest_hand_computed(toy_dev):
    run = [
        {
            "query_id": "qa",
            # given out of order on purpose: scoring sorts by rank
            "passages": [
                _p(2, W("z", 0, 30)),  # unjudged -> 0
                _p(1, W("a", 60, 90)),  # inside the grade-1 chunk -> 1
                _p(3, W("a", 10, 40)),
            ],  # inside the grade-2 chunk -> 2
            "documents": [
                _d(1, "corpus/codefest/F1/F1-AAA-001.txt"),
                _d(2, "eval/codefest_mini_corpus/F1-AAA-001.txt"),  # same benchmark id again
                _d(3, "corpus/codefest/F1/F1-DDD-004.txt"),
            ],
        }
    ]
    df, agg = score_codefest_run(run, toy_dev)
    qa = df.filter(pl.col("query_id") == "qa").row(0, named=True)
    # NDCG@10: grades [1, 0, 2] -> DCG = 1 + 0 + 2/2 = 2 ; ideal [2, 1, 0] -> 2 + 1/log2 3
    assert qa["grades"] == [1, 0, 2]
    assert qa["ndcg@10"] == pytest.approx(2 / (2 + 1 / math.log2(3)))
    # Recall@10: both judged relevant passages (grades 2 and 1) are covered -> 2/2
    assert qa["recall@10"] == 1.0
    # MRR@10: first passage with grade >= 1 is at rank 1
    assert qa["mrr@10"] == 1.0
    # F1@3: [AAA, AAA(repeat: a wasted slot), DDD] -> hits 2, P = 2/3, R = 2/min(2,3) = 1 -> 0.8
    assert qa["top_doc_ids"] == ["F1-AAA-001", "F1-AAA-001", "F1-DDD-004"]
    assert qa["f1@3"] == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    # qb is missing from the run: zeros, listed
    qb = df.filter(pl.col("query_id") == "qb").row(0, named=True)
    assert qb["missing"] and qb["ndcg@10"] == qb["f1@3"] == qb["recall@10"] == qb["mrr@10"] == 0.0
    assert agg["missing_query_ids"] == ["qb"]
    assert agg["overall"]["n"] == 2
    assert agg["overall"]["f1@3"] == pytest.approx((0.8 + 0.0) / 2)
    assert agg["F1"]["n"] == 1 and agg["F1"]["ndcg@10"] == pytest.approx(qa["ndcg@10"])
    assert agg["F3"]["ndcg@10"] == 0.0 and agg["F2"]["n"] == 0


def test_score_codefest_partial_recall_mrr_and_nonbenchmark_docs(toy_dev):
    run = {
        "qa": {
            "passages": [
                _p(1, W("b", 0, 50)),  # the grade-0 chunk itself -> 0
                _p(2, W("a", 0, 50)),
            ],  # the grade-2 chunk -> 2
            "documents": [
                _d(1, "corpus/radar/ai_military/x.pdf"),  # no benchmark id: a miss
                _d(2, "corpus/codefest/F1/F1-DDD-004.txt"),
            ],
        },
        "qb": {"query_id": "qb", "passages": [], "documents": []},
    }
    df, agg = score_codefest_run(run, toy_dev)
    qa = df.row(0, named=True)
    assert qa["grades"] == [0, 2]
    assert qa["recall@10"] == pytest.approx(1 / 2)  # grade-2 chunk covered, grade-1 not
    assert qa["mrr@10"] == pytest.approx(1 / 2)
    # NDCG: DCG = 2/log2 3 ; IDCG = 2 + 1/log2 3
    assert qa["ndcg@10"] == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    # F1@3: [miss, DDD] -> hits 1, P = 1/3, R = 1/2 -> 0.4
    assert qa["f1@3"] == pytest.approx(0.4)
    assert qa["top_doc_ids"] == [None, "F1-DDD-004"]
    qb = df.row(1, named=True)
    assert not qb["missing"] and qb["ndcg@10"] == 0.0 and qb["n_passages"] == 0
    assert agg["missing_query_ids"] == []


def test_score_codefest_repeats_and_errors(toy_dev):
    # two small Radar chunks inside the one grade-2 judged chunk: both graded 2, the second
    # counts as a repeat match; DCG 2 + 2/log2 3 > IDCG 2 + 1/log2 3 -> clipped to 1
    run = [{"query_id": "qa", "passages": [_p(1, W("a", 0, 25)), _p(2, W("a", 25, 50))], "documents": []}]
    df, _ = score_codefest_run(run, toy_dev)
    qa = df.row(0, named=True)
    assert qa["grades"] == [2, 2] and qa["repeat_matches"] == 1
    assert qa["ndcg@10"] == 1.0 and qa["ndcg_clipped"]
    with pytest.raises(ValueError):
        score_codefest_run([{"query_id": "zz", "passages": []}], toy_dev)
    df2, agg2 = score_codefest_run([{"query_id": "zz", "passages": []}], toy_dev, strict=False)
    assert agg2["unknown_query_ids"] == ["zz"] and df2.height == 2
    with pytest.raises(ValueError):
        score_codefest_run([{"query_id": "qa"}, {"query_id": "qa"}], toy_dev)
    with pytest.raises(ValueError):
        score_codefest_run([{"passages": []}], toy_dev)


def _deep_index(records: list[tuple[str, int, str]]) -> JudgedPassageIndex:
    return JudgedPassageIndex.from_records(
        [{"query_id": q, "chunk_id": f"h{i}", "text": t, "grade": g} for i, (q, g, t) in enumerate(records)]
    )


def test_score_codefest_two_judgment_sets_judged_and_condensed(toy_dev):
    # deepened set for qa: the passage the original pool never saw (z0-30) is relevant, and the
    # original grade-2 chunk a0-50 is only partial
    deep = _deep_index([("qa", 2, W("z", 0, 30)), ("qa", 1, W("a", 0, 50))])
    top = [_p(1, W("a", 60, 90)), _p(2, W("z", 0, 30)), _p(3, W("a", 10, 40))]
    run = [
        {
            "query_id": "qa",
            "passages": top,
            # the same ranking deeper: the condensed NDCG' reads it
            "passages_deep": [*top, _p(4, W("b", 0, 50)), _p(5, W("w", 0, 30))],
            "documents": [],
        }
    ]
    df, agg = score_codefest_run(run, toy_dev, deep_index=deep)
    qa = df.row(0, named=True)
    idcg = 2 + 1 / math.log2(3)  # both sets: ideal [2, 1, ...]
    # original: grades [1, unjudged, 2]; Judged@10 = 2/10
    assert qa["grades"] == [1, 0, 2] and qa["judged@10"] == pytest.approx(0.2)
    assert qa["ndcg@10"] == pytest.approx(2 / idcg)
    # condensed over the deep list [1, -, 2, 0, -] -> [1, 2, 0]: DCG = 1 + 2/log2 3
    assert qa["ndcg'@10"] == pytest.approx((1 + 2 / math.log2(3)) / idcg)
    # deepened: grades [unjudged, 2, 1] -> DCG = 2/log2 3 + 1/2 ; Judged@10 = 2/10
    assert qa["deep_grades"] == [0, 2, 1] and qa["deep_judged@10"] == pytest.approx(0.2)
    assert qa["deep_ndcg@10"] == pytest.approx((2 / math.log2(3) + 0.5) / idcg)
    # condensed [-, 2, 1, -, -] -> [2, 1]: the ideal itself
    assert qa["deep_ndcg'@10"] == pytest.approx(1.0)
    # qb is missing: zeros on both sets; means per phenomenon carry the new metrics
    qb = df.row(1, named=True)
    assert qb["deep_ndcg@10"] == qb["deep_judged@10"] == qb["ndcg'@10"] == 0.0
    assert agg["F1"]["deep_ndcg@10"] == pytest.approx(qa["deep_ndcg@10"])
    assert agg["overall"]["judged@10"] == pytest.approx(0.1)
    # without a deepened set the deep columns are absent, the original ones unchanged
    df0, _ = score_codefest_run(run, toy_dev)
    assert "deep_ndcg@10" not in df0.columns and df0["ndcg'@10"][0] == pytest.approx(qa["ndcg'@10"])


def test_measurability_flag():
    assert measurability(0.95, 0.9) is None
    flag = measurability(0.95, 0.3)
    assert flag.startswith(NOT_MEASURABLE) and "0.300" in flag
    assert measurability(float("nan"), 1.0).startswith(NOT_MEASURABLE)


def test_compare_codefest_flags_unjudged_side(toy_dev):
    deep = _deep_index([("qa", 2, W("z", 0, 30)), ("qa", 1, W("a", 0, 50)), ("qb", 1, W("c", 0, 50))])
    judged_run = [  # every top-3 passage carries a judgment in both sets
        {"query_id": "qa", "passages": [_p(1, W("a", 0, 50)), _p(2, W("a", 5, 45)), _p(3, W("a", 10, 40))]},
        {"query_id": "qb", "passages": [_p(1, W("c", 0, 50)), _p(2, W("c", 5, 45)), _p(3, W("c", 10, 40))]},
    ]
    unjudged_run = [  # qa's passages are judged only in the deepened set
        {"query_id": "qa", "passages": [_p(1, W("z", 0, 30)), _p(2, W("a", 0, 50)), _p(3, W("a", 10, 40))]},
        {"query_id": "qb", "passages": [_p(1, W("c", 0, 50)), _p(2, W("c", 5, 45)), _p(3, W("c", 10, 40))]},
    ]
    a, _ = score_codefest_run(judged_run, toy_dev, deep_index=deep, k_passages=3)
    b, _ = score_codefest_run(unjudged_run, toy_dev, deep_index=deep, k_passages=3)
    rows = {r["metric"]: r for r in compare_codefest(a, b, k=3, n_resamples=100)}
    assert set(rows) == {"ndcg@3", "ndcg'@3", "deep_ndcg@3", "deep_ndcg'@3", "f1@3"}
    # original set: B's Judged@3 = (2/3 + 1) / 2 = 0.833 < 0.9 -> flagged
    assert rows["ndcg@3"]["judged_b"] == pytest.approx((2 / 3 + 1) / 2)
    assert rows["ndcg@3"]["flag"].startswith(NOT_MEASURABLE) and rows["ndcg'@3"]["flag"] == rows["ndcg@3"]["flag"]
    # deepened set: both fully judged -> measurable
    assert rows["deep_ndcg@3"]["judged_a"] == rows["deep_ndcg@3"]["judged_b"] == 1.0
    assert rows["deep_ndcg@3"]["flag"] is None and rows["f1@3"]["flag"] is None


def test_deepened_judgments_on_the_shared_file(dev):
    deep = build_deep_index()
    assert len(deep.query_ids) == 25 and sum(len(deep.judged(q)) for q in deep.query_ids) == 615
    # a run made of each question's deepened grade-2 texts is fully judged on that set
    run = [
        {"query_id": q, "passages": [_p(i, j.text) for i, j in enumerate(deep.judged(q), 1) if j.grade == 2][:10]}
        for q in dev.query_ids
    ]
    df, agg = score_codefest_run(run, dev, deep_index=deep)
    full = df.filter(pl.col("n_passages") == 10)
    assert full.height > 0 and full["deep_judged@10"].min() == 1.0
    assert (df["deep_ndcg'@10"] >= df["deep_ndcg@10"] - 1e-12).all()


def test_load_run_roundtrip(tmp_path, toy_dev):
    rows = [{"query_id": "qa", "passages": [_p(1, W("a", 0, 50))], "documents": []}]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    assert load_run(path) == rows
    df, _ = score_codefest_run(load_run(path), toy_dev)
    assert df["ndcg@10"][0] == pytest.approx(2 / (2 + 1 / math.log2(3)))


# -- Codefest scoring: sanity checks on the real judgments -------------------------------------------
def _oracle_run(dev: CodefestDev, grades: tuple[int, ...], shuffle_seed: int | None = None) -> list[dict]:
    rng = random.Random(shuffle_seed)
    run = []
    for q in dev.questions:
        cs = [c for g in grades for c in dev.qrels_chunks[q.query_id] if c.grade == g]
        if shuffle_seed is not None:
            rng.shuffle(cs)
        run.append(
            {
                "query_id": q.query_id,
                "passages": [_p(i, c.text) for i, c in enumerate(cs[:10], 1)],
                "documents": [
                    _d(i, f"corpus/codefest/{d[:2]}/{d}.txt")
                    for i, d in enumerate(sorted(dev.relevant_docs[q.query_id])[:3], 1)
                ],
            }
        )
    return run


def test_sanity_grade2_passages_score_high(dev, judged_index):
    df, agg = score_codefest_run(_oracle_run(dev, (2,)), dev, judged_index)
    assert df.height == 25 and not df["missing"].any()
    # every top passage is graded 2; NDCG < 1 only where a question has < 10 grade-2 passages
    assert all(all(g == 2 for g in gs) for gs in df["grades"].to_list())
    assert agg["overall"]["ndcg@10"] > 0.9  # 0.918 measured
    assert df["ndcg@10"].min() > 0.7
    assert agg["overall"]["mrr@10"] == 1.0
    assert agg["overall"]["f1@3"] == 1.0  # relevant docs in the top 3
    # the ideal ranking (grade 2 then grade 1) reaches 1 on every question
    df_ideal, _ = score_codefest_run(_oracle_run(dev, (2, 1)), dev, judged_index)
    assert df_ideal["ndcg@10"].min() == pytest.approx(1.0)


def test_sanity_grade0_passages_score_zero(dev, judged_index):
    run = _oracle_run(dev, (0,), shuffle_seed=0)
    for r in run:
        r["documents"] = []
    df, agg = score_codefest_run(run, dev, judged_index)
    assert agg["overall"]["ndcg@10"] == 0.0
    assert agg["overall"]["recall@10"] == 0.0 and agg["overall"]["mrr@10"] == 0.0
    assert all(set(gs) == {0} for gs in df["grades"].to_list())


def test_judgments_self_consistent(dev, judged_index):
    # every judged text, graded against its own question's judgments, gets its own grade back,
    # except one near-duplicate (F1-ILIA-005 chunk 14, grade 1, overlaps 87% with a grade-2 chunk)
    changed = [(c.query_id, c.chunk_id) for c in dev.all_judged() if judged_index.grade(c.query_id, c.text) != c.grade]
    assert changed == [("q005", "F1-ILIA-005-chunk-0014")]


# -- BEIR scoring ----------------------------------------------------------------------------------
def test_score_beir_hand_computed():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}, "q3": {"d9": 1}}
    run = {
        "q1": [("d5", 0.2), ("d1", 0.9)],  # d1 first after sorting
        "q2": [("d7", 0.9), ("d3", 0.5), ("d4", 0.5)],  # tie 0.5: d4 before d3 (id descending)
        "q4": [("d1", 1.0)],  # no qrels: ignored
    }
    df, agg = score_beir_run(run, qrels, k=10)
    r1, r2, r3 = df.rows(named=True)
    assert (r1["ndcg@10"], r1["recall@10"], r1["mrr@10"]) == (1.0, 1.0, 1.0)
    # q2 ranking [d7, d4, d3]: DCG = 1/log2 4 = 0.5 ; IDCG = 1 + 1/log2 3 ; recall 1/2 ; RR 1/3
    assert r2["ndcg@10"] == pytest.approx(0.5 / (1 + 1 / math.log2(3)))
    assert r2["recall@10"] == 0.5 and r2["mrr@10"] == pytest.approx(1 / 3)
    assert r3["missing"] and r3["ndcg@10"] == 0.0
    assert agg["missing_query_ids"] == ["q3"] and agg["unknown_query_ids"] == ["q4"]
    assert agg["overall"]["mrr@10"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    # k=1 on q2: nothing relevant at rank 1
    df1, _ = score_beir_run(run, qrels, k=1)
    assert df1.filter(pl.col("query_id") == "q2")["recall@1"][0] == 0.0


def test_score_beir_xquad_oracle_and_random(shared):
    ds = load_xquad("xquad_es_en", shared)
    ids = [d.doc_id for d in ds.corpus]
    oracle = {q: [(d, 1.0) for d in rel] + [(x, 0.0) for x in ids[:9]] for q, rel in ds.qrels.items()}
    df, agg = score_beir_run(oracle, ds)
    assert df.height == 1190 and agg["overall"]["ndcg@10"] == pytest.approx(1.0)
    assert agg["overall"]["mrr@10"] == 1.0 and agg["overall"]["recall@10"] == 1.0
    rng = random.Random(0)
    rand = {q: [(d, rng.random()) for d in rng.sample(ids, 10)] for q in ds.qrels}
    _, agg_r = score_beir_run(rand, ds)
    # 10 of 240 passages at random: recall ~ 10/240 = 0.042
    assert agg_r["overall"]["recall@10"] < 0.1
    # the gap is significant; identical runs are not
    res = compare(df, score_beir_run(rand, ds).per_query, "ndcg@10", n_resamples=2000)
    assert res.diff > 0.9 and res.p_value < 0.001
    assert compare(df, df, "ndcg@10", n_resamples=500).p_value == 1.0


def test_compare_requires_same_queries(toy_dev):
    a = {"q1": 0.5, "q2": 0.7}
    assert compare(a, {"q2": 0.7, "q1": 0.5}, "ndcg@10").p_value == 1.0
    with pytest.raises(ValueError):
        compare(a, {"q1": 0.5}, "ndcg@10")
    df, _ = score_codefest_run([], toy_dev)
    with pytest.raises(ValueError):
        compare(df, df, "no-such-metric")


# -- every configuration against the default, Holm-corrected (issue 26 §5) ----------------------
def _pq(values: dict[str, float], judged: float = 1.0) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": list(values),
            "deep_ndcg@10": list(values.values()),
            "deep_judged@10": [judged] * len(values),
        }
    )


def test_against_default_holm_and_the_rule_for_changing_the_default():
    qids = [f"q{i:02d}" for i in range(25)]
    base = {q: 0.5 for q in qids}
    tables = {
        "default": _pq(base),
        # ahead on every question by 0.1: sign-flip p at the resampling floor (1/10001)
        "clear_win": _pq({q: 0.6 for q in qids}),
        # ahead on 18 of 25 questions, behind on 7: raw p ~0.04, which does not survive m = 4
        "marginal_win": _pq({q: 0.5 + (0.1 if i < 18 else -0.1) for i, q in enumerate(qids)}),
        "clear_loss": _pq({q: 0.3 for q in qids}),
        "same": _pq(base),  # p = 1: the marginal one is then 4th of 5, Holm factor 2
        "unjudged": _pq({q: 0.9 for q in qids}, judged=0.5),
    }
    res = against_default(tables, "default", n_resamples=10000)
    assert set(res) == {"clear_win", "marginal_win", "clear_loss", "unjudged", "same"}
    raw = {n: r["deep_ndcg@10"]["p"] for n, r in res.items()}
    adj = {n: r["deep_ndcg@10"]["p_holm"] for n, r in res.items()}
    # the family is the five configurations; each adjusted p is Holm's of the raw ones
    order = sorted(raw, key=raw.get)
    assert adj[order[0]] == pytest.approx(min(1.0, 5 * raw[order[0]]))
    assert adj["marginal_win"] == pytest.approx(2 * raw["marginal_win"])
    assert adj["same"] == raw["same"] == 1.0
    assert all(adj[n] >= raw[n] for n in raw)
    assert all(r["deep_ndcg@10"]["m"] == 5 for r in res.values())
    assert raw["marginal_win"] < 0.05 < adj["marginal_win"]
    assert res["clear_win"]["deep_ndcg@10"]["verdict"] == "wins after correction"
    assert res["clear_loss"]["deep_ndcg@10"]["verdict"] == "loses after correction"
    assert res["marginal_win"]["deep_ndcg@10"]["verdict"] == "within noise after correction"
    assert res["unjudged"]["deep_ndcg@10"]["verdict"] == NOT_MEASURABLE
    assert res["same"]["deep_ndcg@10"]["verdict"] == "within noise after correction"
    with pytest.raises(KeyError):
        against_default(tables, "no-such-config")


def test_verdict_and_holm_rows():
    assert verdict(0.02, 0.01) == "wins after correction"
    assert verdict(-0.02, 0.01) == "loses after correction"
    assert verdict(0.02, 0.2) == "within noise after correction"
    assert verdict(0.02, 0.0001, flag="not measurable yet (…)") == NOT_MEASURABLE
    rows = holm_rows([{"p": 0.01}, {"p": None}, {"p": 0.04}])
    assert rows[0]["p_holm"] == pytest.approx(0.02) and rows[1]["p_holm"] is None and rows[2]["p_holm"] == 0.04


def test_compare_all_with_holm_adds_adjusted_columns_next_to_raw_ones():
    from evals.compare_all import with_holm

    rows = [
        {
            "config": "a",
            "codefest deep_ndcg@10": 0.40,
            "codefest deep_ndcg@10 p": 0.01,
            "codefest deep_vs default": "ok",
        },
        {"config": "d", "codefest deep_ndcg@10": 0.55},
        {
            "config": "b",
            "codefest deep_ndcg@10": 0.60,
            "codefest deep_ndcg@10 p": 0.03,
            "codefest deep_vs default": "ok",
        },
        {
            "config": "c",
            "codefest deep_ndcg@10": 0.57,
            "codefest deep_ndcg@10 p": 0.3,
            "codefest deep_vs default": "ok",
        },
    ]
    out = with_holm(rows)
    assert [list(r)[:4] for r in out][0] == [
        "config",
        "codefest deep_ndcg@10",
        "codefest deep_ndcg@10 p",
        "codefest deep_ndcg@10 p holm",
    ]
    by = {r["config"]: r for r in out}
    assert by["a"]["codefest deep_ndcg@10 p holm"] == pytest.approx(0.03)
    assert by["b"]["codefest deep_ndcg@10 p holm"] == pytest.approx(0.06)
    assert by["c"]["codefest deep_ndcg@10 p holm"] == pytest.approx(0.3)
    assert by["a"]["codefest deep verdict"] == "loses after correction"
    assert by["b"]["codefest deep verdict"] == "within noise after correction"  # raw 0.03 won; corrected it does not
    assert "codefest deep verdict" not in by["d"]
