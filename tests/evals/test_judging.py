"""Judging as a feature, on real PostgreSQL: blind export → grades → versioned import → agreement →
merged qrels → the evaluation reads them; plus the evaluation on a small real index."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from evals.datasets import CodefestDev, CodefestQuestion, JudgedChunk, load_deepened_qrels, text_hash
from evals.judging import (
    agreement,
    ensure_judging_schema,
    export_batch,
    import_grades,
    judging_metadata,
    latest_judgments,
    load_mapping,
    merged_qrels,
    read_merged,
    top_passages,
    write_mapping,
    write_merged,
)
from evals.relevance import JudgedPassageIndex
from evals.runner import run_codefest
from evals.scoring import build_deep_index
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher
from tests.evals.support_text import words as W


@pytest.fixture()
def jengine(engine):
    """A real PostgreSQL engine with empty judging tables."""
    judging_metadata.drop_all(engine)
    ensure_judging_schema(engine)
    return engine


@pytest.fixture()
def dev() -> CodefestDev:
    qs = (CodefestQuestion("qa", "¿Qué pasa con a?", "F1"), CodefestQuestion("qb", "¿Y con b?", "F2"))
    return CodefestDev(qs, {"qa": (), "qb": ()}, {"qa": frozenset(), "qb": frozenset()})


def _p(rank: int, text: str) -> dict:
    return {"rank": rank, "text": text, "chunk_id": f"c{rank}", "score": 1.0 / rank}


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _grade_file(batch, tmp_path, name: str, grade_of) -> object:
    """The batch with ``grade`` filled by ``grade_of(text)`` (None leaves an item ungraded)."""
    rows = [json.loads(line) for line in batch.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["grade"] = grade_of(r["text"])
    out = tmp_path / name
    _write(out, rows)
    return out


def test_export_import_round_trip(jengine, dev, tmp_path):
    judged = JudgedPassageIndex.from_records([{"query_id": "qa", "chunk_id": "j", "text": W("a", 0, 50), "grade": 2}])
    runs = {
        "A": {
            "qa": [_p(1, W("a", 5, 45)), _p(2, W("x", 0, 40)), _p(3, W("y", 0, 40))],  # rank 1 already judged
            "qb": [_p(1, W("z", 0, 40))],
        },
        "B": {"qa": [_p(1, W("x", 0, 40)), _p(2, W("w", 0, 40))]},  # x again: one item
    }
    batch = tmp_path / "batch.jsonl"
    s = export_batch(jengine, runs, dev, judged, batch, k=10, seed=1)
    assert (s.n_items, s.n_already_judged, s.n_repeated) == (4, 1, 1)
    assert s.per_config == {"A": 3, "B": 2}
    rows = [json.loads(line) for line in batch.read_text(encoding="utf-8").splitlines()]
    # blind: question and passage only, an opaque id, nothing about query, system or rank
    assert all(set(r) == {"item_id", "question", "text", "grade"} and r["grade"] is None for r in rows)
    assert {r["text"] for r in rows} == {W("x", 0, 40), W("y", 0, 40), W("z", 0, 40), W("w", 0, 40)}
    assert {r["question"] for r in rows if r["text"] == W("z", 0, 40)} == {"¿Y con b?"}
    assert len({r["item_id"] for r in rows}) == 4 and not any("q" in r["item_id"] for r in rows)
    # the mapping stays server-side
    with jengine.connect() as conn:
        mapping = {r.text_hash: r for r in conn.execute(sa.text("SELECT * FROM judge_items"))}
    assert mapping[text_hash(W("x", 0, 40))].configs == {"A": 2, "B": 1}
    assert mapping[text_hash(W("z", 0, 40))].query_id == "qb"

    grades = {W("x", 0, 40): 2, W("y", 0, 40): 0, W("z", 0, 40): 1, W("w", 0, 40): None}
    ana = _grade_file(batch, tmp_path, "ana.jsonl", grades.get)
    r1 = import_grades(jengine, ana, "ana")
    assert (r1.round, r1.n_graded, r1.n_ungraded) == (1, 3, 1)
    latest = latest_judgments(jengine)
    assert latest[("qa", text_hash(W("x", 0, 40)))] == {"ana": 2}
    # a re-grade is a new round; the latest round wins, the history stays
    regrade = _grade_file(batch, tmp_path, "ana2.jsonl", lambda t: 1 if t == W("x", 0, 40) else None)
    r2 = import_grades(jengine, regrade, "ana")
    assert (r2.round, r2.n_graded) == (2, 1)
    assert latest_judgments(jengine)[("qa", text_hash(W("x", 0, 40)))] == {"ana": 1}
    with jengine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM qrels_judgments")).scalar() == 4

    # merged = shared deepened + imported; the evaluation's deep index now judges them
    shared_n = sum(len(v) for v in load_deepened_qrels().values())
    merged = merged_qrels(jengine)
    imported = {(c.query_id, c.text): c.grade for c in merged if c.doc_id == "imported"}
    assert len(merged) == shared_n + 3
    assert imported == {("qa", W("x", 0, 40)): 1, ("qa", W("y", 0, 40)): 0, ("qb", W("z", 0, 40)): 1}
    n = write_merged(jengine, merged, {k: len(v) for k, v in latest_judgments(jengine).items()})
    assert n == shared_n + 3 and len(read_merged(jengine)) == n
    deep = build_deep_index(read_merged(jengine))
    assert deep.grade("qa", W("x", 0, 40)) == 1 and deep.matches("qa", W("y", 0, 40))
    # a second export of the same runs against the merged set leaves the ungraded passage and the
    # one the first export skipped only because of the other index it was given
    s2 = export_batch(jengine, runs, dev, deep, tmp_path / "batch2.jsonl", k=10, seed=2)
    assert (s2.n_items, s2.n_already_judged) == (2, 4)
    left = {json.loads(line)["text"] for line in (tmp_path / "batch2.jsonl").read_text(encoding="utf-8").splitlines()}
    assert left == {W("w", 0, 40), W("a", 5, 45)}


def test_kappa_on_a_hand_made_overlap(jengine, dev, tmp_path):
    texts = [W(f"t{i}x", 0, 30) for i in range(7)]
    runs = {"A": {"qa": [_p(i + 1, t) for i, t in enumerate(texts)]}}
    batch = tmp_path / "batch.jsonl"
    export_batch(jengine, runs, dev, JudgedPassageIndex(), batch, seed=0)
    ana = dict(zip(texts, [0, 0, 1, 1, 2, 2, 2], strict=True))
    beto = dict(zip(texts, [0, 1, 1, 2, 2, 2, None], strict=True))  # beto skips the 7th passage
    import_grades(jengine, _grade_file(batch, tmp_path, "ana.jsonl", ana.get), "ana")
    import_grades(jengine, _grade_file(batch, tmp_path, "beto.jsonl", beto.get), "beto")
    ag = agreement(latest_judgments(jengine))
    assert ag["annotators"] == ["ana", "beto"] and ag["n_overlap"] == 6
    st = ag["pairs"]["ana|beto"]
    # the hand computation of tests/evals/test_metrics.py::test_cohen_kappa_hand_computed
    assert st["n"] == 6 and st["exact"] == pytest.approx(4 / 6)
    assert st["binary"] == pytest.approx(5 / 6)  # only (0, 1) crosses relevant/not
    assert st["kappa"] == pytest.approx(0.5)
    assert st["kappa_linear"] == pytest.approx(0.625) and st["kappa_quadratic"] == pytest.approx(0.75)
    assert ag["pooled"]["kappa"] == pytest.approx(0.5)
    # merged grade of a passage two annotators graded 1 and 2: the lower median, 1
    merged = {c.text: c.grade for c in merged_qrels(jengine) if c.doc_id == "imported"}
    assert merged[texts[3]] == 1 and merged[texts[6]] == 2 and len(merged) == 7


def test_import_is_all_or_nothing(jengine, dev, tmp_path):
    batch = tmp_path / "batch.jsonl"
    export_batch(jengine, {"A": {"qa": [_p(1, W("x", 0, 40))]}}, dev, JudgedPassageIndex(), batch)
    item = json.loads(batch.read_text(encoding="utf-8"))["item_id"]
    cases = {
        "unknown.jsonl": [{"item_id": item, "grade": 1}, {"item_id": "nope", "grade": 1}],
        "bad_grade.jsonl": [{"item_id": item, "grade": 3}],
        "twice.jsonl": [{"item_id": item, "grade": 1}, {"item_id": item, "grade": 2}],
        "bool.jsonl": [{"item_id": item, "grade": True}],
    }
    for name, rows in cases.items():
        _write(tmp_path / name, rows)
        with pytest.raises(ValueError):
            import_grades(jengine, tmp_path / name, "ana")
    with pytest.raises(ValueError):
        import_grades(jengine, batch, "  ")
    assert latest_judgments(jengine) == {}
    _write(tmp_path / "ok.jsonl", [{"item_id": item, "grade": "2"}])  # a digit string is accepted
    assert import_grades(jengine, tmp_path / "ok.jsonl", "ana", round=5).round == 5
    with pytest.raises(ValueError):  # a round is used once per annotator
        import_grades(jengine, tmp_path / "ok.jsonl", "ana", round=5)
    assert import_grades(jengine, tmp_path / "ok.jsonl", "ana").round == 6


def test_cli_judge_import(jengine, dev, tmp_path, pg_url, monkeypatch):
    from typer.testing import CliRunner

    from radar_cli.main import app

    batch = tmp_path / "batch.jsonl"
    export_batch(jengine, {"A": {"qa": [_p(1, W("x", 0, 40)), _p(2, W("y", 0, 40))]}}, dev, JudgedPassageIndex(), batch)
    graded = _grade_file(batch, tmp_path, "g.jsonl", lambda t: 2 if t == W("x", 0, 40) else 0)
    monkeypatch.setenv("DATABASE_URL", pg_url)
    res = CliRunner().invoke(app, ["judge", "import", str(graded), "--annotator", "ana"])
    assert res.exit_code == 0, res.output
    assert "ana, round 1: 2 grades stored" in res.output
    res = CliRunner().invoke(app, ["judge", "import", str(graded), "--annotator", "beto"])
    assert res.exit_code == 0 and "agreement ana|beto: n=2 exact=1.000 kappa=1.000" in res.output
    assert "agreement pooled" not in res.output  # one pair: the pooled figures are the pair's
    res = CliRunner().invoke(app, ["judge", "import", str(graded), "--annotator", "carla"])
    assert "agreement ana|carla: n=2" in res.output and "agreement beto|carla: n=2" in res.output
    assert "agreement pooled: n=6 exact=1.000 binary=1.000 kappa=1.000" in res.output
    _write(tmp_path / "bad.jsonl", [{"item_id": "nope", "grade": 1}])
    res = CliRunner().invoke(app, ["judge", "import", str(tmp_path / "bad.jsonl"), "--annotator", "ana"])
    assert res.exit_code == 2
    assert {"export", "import"} <= {c.name for c in __import__("radar_cli.main").main.judge_app.registered_commands}


# -- the evaluation and the export on a small real index (real USE vectors, FAISS, BM25) ----------
CFG = RetrievalConfig(name="test_rrf", fusion="rrf", bm25_weight=0.5, passage_ranking="fused", rerank_k=0)


def test_run_codefest_and_export_on_a_small_index(agent_index, use_encoder, jengine, tmp_path):
    index_dir, rows = agent_index
    searcher = Searcher(index_dir, use_encoder, CFG)
    question = "¿Qué pruebas antisatélite generaron desechos orbitales?"
    dev = CodefestDev((CodefestQuestion("qa", question, "F1"),), {"qa": ()}, {"qa": frozenset()})
    top = searcher.search(question, CFG).passages
    assert len(top) >= 3
    # original judgments: the first passage (grade 2); deepened: the first three (2, 1, 0)
    original = {"qa": (JudgedChunk("qa", "o1", "F1-AAA-001", 2, top[0]["text"]),)}
    dev = CodefestDev(dev.questions, original, dev.relevant_docs)
    deep = [JudgedChunk("qa", text_hash(p["text"]), "", g, p["text"]) for p, g in zip(top[:3], (2, 1, 0), strict=True)]
    rep = run_codefest(searcher, CFG, dev=dev, deep_records=deep)
    row = rep.per_query.row(0, named=True)
    k = len(top[:10])
    assert row["judged@10"] == pytest.approx(1 / 10) and row["deep_judged@10"] == pytest.approx(3 / 10)
    assert row["ndcg@10"] == 1.0 and row["ndcg'@10"] == 1.0  # the one judged passage is first
    assert row["deep_ndcg@10"] == pytest.approx(1.0) and row["deep_ndcg'@10"] == pytest.approx(1.0)
    assert rep.aggregate["F1"]["deep_judged@10"] == pytest.approx(3 / 10)
    # export the rest of the top 10 for judging: every passage not judged in the deepened set
    runs = {CFG.name: top_passages(searcher, CFG, dev, k=10)}
    assert [p["text"] for p in runs[CFG.name]["qa"]] == [p["text"] for p in top[:10]]
    s = export_batch(jengine, runs, dev, build_deep_index(deep), tmp_path / "b.jsonl", seed=0)
    assert s.n_items == k - 3 and s.n_already_judged == 3


def test_qrels_asset_materializes_merged_judgments_with_agreement(jengine, dev, pg_url, tmp_path):
    import dagster as dg

    from assets.evals import qrels
    from resources import DatabaseResource

    texts = [W(f"k{i}x", 0, 30) for i in range(6)]
    batch = tmp_path / "batch.jsonl"
    export_batch(jengine, {"A": {"qa": [_p(i + 1, t) for i, t in enumerate(texts)]}}, dev, JudgedPassageIndex(), batch)
    for name, grades in (("ana", [0, 0, 1, 1, 2, 2]), ("beto", [0, 1, 1, 2, 2, 2])):
        import_grades(
            jengine, _grade_file(batch, tmp_path, f"{name}.jsonl", dict(zip(texts, grades, strict=True)).get), name
        )
    res = dg.materialize(
        [qrels], resources={"database": DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused"))}
    )
    assert res.success
    meta = res.asset_materializations_for_node("qrels")[0].metadata
    shared_n = sum(len(v) for v in load_deepened_qrels().values())
    assert meta["imported"].value == 6 and meta["shared"].value == shared_n
    assert meta["passages"].value == shared_n + 6
    assert meta["agreement/kappa"].value == pytest.approx(0.5)
    assert meta["agreement/kappa_quadratic"].value == pytest.approx(0.75)
    # the evaluation reads what the asset wrote
    merged = read_merged(jengine)
    assert len(merged) == shared_n + 6
    with jengine.connect() as conn:
        assert conn.execute(sa.text("SELECT max(n_annotators) FROM qrels_merged")).scalar() == 2


@pytest.mark.parametrize(("deep_judged", "passed"), [(0.95, True), (0.62, False)])
def test_measurable_check_reads_judged_at_10(deep_judged, passed):
    import dagster as dg

    from assets.evals import eval_codefest_dev_measurable

    @dg.asset(name="eval_codefest_dev")
    def stub():  # the real asset's metadata keys, without an index
        meta = {"config": "x", "overall/judged@10": 0.3, "overall/deep_judged@10": deep_judged}
        return dg.MaterializeResult(metadata=meta | {"F1/deep_judged@10": deep_judged})

    res = dg.materialize([stub, eval_codefest_dev_measurable])
    ev = res.get_asset_check_evaluations()[0]
    assert ev.passed is passed
    meta = {k: v.value for k, v in ev.metadata.items()}
    assert meta["original/status"] == "not measurable yet"  # 0.3 < 0.9
    assert meta["deepened/status"] == ("measurable" if passed else "not measurable yet")
    assert meta["deepened/F1/judged@10"] == pytest.approx(deep_judged)


def test_cli_eval_compare_flags_unmeasurable(agent_index, jengine, pg_url, monkeypatch, tmp_path):
    """`radar eval --compare` over the 25 real dev questions on the small test index: none of its
    passages is in the Codefest judgments, so both sets are flagged "not measurable yet"."""
    from typer.testing import CliRunner

    from radar_cli.main import app

    (tmp_path / "indexes").mkdir()
    (tmp_path / "indexes" / agent_index[0].name).symlink_to(agent_index[0], target_is_directory=True)
    monkeypatch.setenv("RADAR_HOME", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", pg_url)
    out = tmp_path / "cmp.json"
    res = CliRunner().invoke(
        app, ["eval", "--compare", "dense", "bm25", "--dataset", "codefest_dev", "--json-out", str(out)]
    )
    assert res.exit_code == 0, res.output
    rows = {r["metric"]: r for r in json.loads(out.read_text())}
    assert set(rows) == {"ndcg@10", "ndcg'@10", "deep_ndcg@10", "deep_ndcg'@10", "f1@3"}
    for m in ("ndcg@10", "deep_ndcg'@10"):
        assert rows[m]["judged_a"] < 0.9 and rows[m]["flag"].startswith("not measurable yet")
    assert "not measurable yet" in res.output


def test_a_batch_exported_elsewhere_imports_with_its_mapping(jengine, dev, tmp_path):
    runs = {"A": {"qa": [_p(1, W("m", 0, 40)), _p(2, W("n", 0, 40))]}}
    batch = tmp_path / "batch.jsonl"
    s = export_batch(jengine, runs, dev, JudgedPassageIndex(), batch, seed=0)
    side = tmp_path / "mapping.jsonl"
    assert write_mapping(jengine, s.batch_id, side) == 2
    # the judge's file stays blind; the mapping names query ids and configurations
    assert "qa" not in batch.read_text(encoding="utf-8") and '"qa"' in side.read_text(encoding="utf-8")
    # another database: without the mapping the import is refused, with it the grades land
    judging_metadata.drop_all(jengine)
    ensure_judging_schema(jengine)
    graded = _grade_file(batch, tmp_path, "ana.jsonl", lambda t: 2 if t == W("m", 0, 40) else 0)
    with pytest.raises(ValueError, match="not exported"):
        import_grades(jengine, graded, "ana")
    assert load_mapping(jengine, side) == 2 and load_mapping(jengine, side) == 0  # idempotent
    assert import_grades(jengine, graded, "ana").n_graded == 2
    assert latest_judgments(jengine)[("qa", text_hash(W("m", 0, 40)))] == {"ana": 2}
    with jengine.connect() as conn:
        assert conn.execute(sa.text("SELECT question FROM judge_questions")).scalars().all() == ["¿Qué pasa con a?"]


def test_split_batch_for_parallel_judges_with_overlap(jengine, dev, tmp_path):
    """A batch split into parts of ≤ 4 items, 3 items in two parts: every item is in some part,
    the 3 in exactly two different ones, the lines stay blind and unchanged; each part imported
    under its own annotator gives agreement on exactly those 3 passages."""
    from typer.testing import CliRunner

    from evals.judging import split_batch
    from radar_cli.main import app

    texts = [W(f"s{i}x", 0, 30) for i in range(11)]
    batch = tmp_path / "batch_all.jsonl"
    runs = {"A": {"qa": [_p(i + 1, t) for i, t in enumerate(texts)]}}
    assert export_batch(jengine, runs, dev, JudgedPassageIndex(), batch, k=20).n_items == 11
    lines = {json.loads(x)["item_id"]: json.loads(x) for x in batch.read_text(encoding="utf-8").splitlines()}
    s = split_batch(batch, max_items=4, overlap=3, out_dir=tmp_path / "parts", seed=7)
    assert [p.name for p in s.files] == [f"batch_all_{k}.jsonl" for k in (1, 2, 3, 4)]  # ceil((11 + 3) / 4)
    assert s.n_distinct == 11 and sorted(s.sizes) == [3, 3, 4, 4] and len(s.overlap) == 3
    parts = [[json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()] for p in s.files]
    assert [len(p) for p in parts] == s.sizes
    where: dict[str, list[int]] = {}
    for k, part in enumerate(parts):
        for row in part:
            assert row == lines[row["item_id"]]  # blind lines, copied as exported
            where.setdefault(row["item_id"], []).append(k)
    assert set(where) == set(lines)
    assert {i for i, ks in where.items() if len(ks) == 2} == set(s.overlap)
    assert all(len(set(ks)) == len(ks) for ks in where.values())  # never twice in one part
    # one annotator per part: the overlap is exactly the passages graded twice
    for k, part in enumerate(s.files):
        graded = _grade_file(part, tmp_path, f"g{k}.jsonl", lambda t: 2 if t in texts[:5] else 0)
        assert import_grades(jengine, graded, f"judge{k + 1}").n_graded == s.sizes[k]
    ag = agreement(latest_judgments(jengine))
    assert ag["n_overlap"] == 3 and ag["pooled"]["n"] == 3 and ag["pooled"]["exact"] == 1.0
    assert len(merged_qrels(jengine)) == sum(len(v) for v in load_deepened_qrels().values()) + 11
    # the same split as a command; errors are refused with exit 2
    res = CliRunner().invoke(
        app, ["judge", "split", str(batch), "--size", "6", "--overlap", "2", "--out-dir", str(tmp_path / "cli")]
    )
    assert res.exit_code == 0, res.output
    assert "11 distinct items in 3 parts, 2 of them in two parts" in res.output
    assert sorted(p.name for p in (tmp_path / "cli").iterdir()) == [f"batch_all_{k}.jsonl" for k in (1, 2, 3)]
    with pytest.raises(ValueError, match="overlap"):
        split_batch(batch, max_items=4, overlap=12, out_dir=tmp_path / "x")
    res = CliRunner().invoke(app, ["judge", "split", str(batch), "--size", "4", "--overlap", "12"])
    assert res.exit_code == 2


def test_merged_qrels_from_files_equals_the_database_merge_rule(tmp_path):
    """The file merge (for a read-only home): lower median per passage, shared grades kept, nulls skipped."""
    from evals.judging import merged_qrels_from_files

    shared = load_deepened_qrels()
    q0, c0 = next((q, cs[0]) for q, cs in shared.items() if cs)
    mapping = tmp_path / "m.mapping.jsonl"
    rows = [
        {"kind": "question", "batch_id": "b", "query_id": "q001", "question": "¿…?"},
        {"kind": "item", "item_id": "i1", "batch_id": "b", "query_id": "q001", "text_hash": "h1", "text": "uno"},
        {"kind": "item", "item_id": "i2", "batch_id": "b", "query_id": "q001", "text_hash": "h2", "text": "dos"},
        # a passage the shared set already grades keeps the shared grade
        {"kind": "item", "item_id": "i3", "batch_id": "b", "query_id": q0, "text_hash": c0.chunk_id, "text": c0.text},
    ]
    mapping.write_text("\n".join(json.dumps(r) for r in rows))
    a, b = tmp_path / "ana.jsonl", tmp_path / "beto.jsonl"
    a.write_text('{"item_id": "i1", "grade": 1}\n{"item_id": "i2", "grade": 2}\n{"item_id": "i3", "grade": 2}\n')
    b.write_text('{"item_id": "i1", "grade": 2}\n{"item_id": "i2", "grade": null}\n')
    merged = merged_qrels_from_files(mapping, {"ana": a, "beto": b})
    imported = {(c.query_id, c.chunk_id): c for c in merged if c.doc_id == "imported"}
    assert {k: c.grade for k, c in imported.items()} == {("q001", "h1"): 1, ("q001", "h2"): 2}
    assert imported[("q001", "h1")].text == "uno"
    assert len(merged) == sum(len(v) for v in shared.values()) + 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "nope", "grade": 1}\n')
    with pytest.raises(ValueError, match="not in the mapping"):
        merged_qrels_from_files(mapping, {"x": bad})
