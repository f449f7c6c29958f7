"""The chat-latency benchmark's bookkeeping: per-step totals, the slowest step, question lists and
the paired comparison of two reports (no timing is asserted: speed targets live in its JSON report)."""

from __future__ import annotations

import json

import pytest

from evals.bench_chat_latency import VISUAL_QUESTIONS, compare, load_questions, percentile, step_table


def test_step_table_names_the_largest_total_and_the_time_outside_steps():
    runs = [
        {"latency_ms": 1000.0, "steps": [("analista:retrieve:search_evidence", 600.0), ("analista:write", 300.0)]},
        {
            "latency_ms": 500.0,
            "steps": [("analista:retrieve:search_evidence", 100.0), ("analista:retrieve:search_evidence", 50.0)],
        },
    ]
    table, slowest = step_table(runs)
    assert slowest == "analista:retrieve:search_evidence"
    ev = table["analista:retrieve:search_evidence"]
    assert ev["total_ms"] == 750.0 and ev["calls"] == 3 and ev["runs"] == 2 and ev["mean_per_run_ms"] == 375.0
    assert ev["share"] == round(750 / 1500, 3)
    assert table["outside_steps"]["total_ms"] == 100.0 + 350.0  # latency no step accounts for
    assert table["analista:write"]["p95_per_run_ms"] == 300.0  # a run without the step counts as 0
    assert list(table)[0] == slowest  # sorted by total


def test_percentile_is_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 21)], 95) == 19.0


def test_questions_with_ids_then_the_visual_ones(tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text(
        '{"query_id": "q1", "question": "¿Qué es un dron merodeador?"}\n\n{"question": "What is ASAT?"}\n',
        encoding="utf-8",
    )
    assert load_questions(f, False, None) == [("q1", "¿Qué es un dron merodeador?"), (None, "What is ASAT?")]
    qs = load_questions(f, True, 1)
    assert qs[0] == ("q1", "¿Qué es un dron merodeador?") and [q for _, q in qs[1:]] == list(VISUAL_QUESTIONS)
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError):
        load_questions(tmp_path / "empty.jsonl", True, None)


def test_compare_pairs_reports_by_question(tmp_path):
    def report(name, rows):
        p = tmp_path / name
        p.write_text(json.dumps({"runs": rows}), encoding="utf-8")
        return p

    a = report(
        "a.json",
        [{"question": f"q{i}", "latency_ms": 1000.0 + i, "cpu_ms": 900.0, "read_gain": 2} for i in range(6)],
    )
    b = report(
        "b.json",
        [{"question": f"q{i}", "latency_ms": 100.0 + i, "cpu_ms": 90.0, "read_gain": 2} for i in range(1, 7)],
    )
    out = compare(a, b)
    assert out["questions"] == 5  # q1..q5 in both
    assert out["latency_ms"]["mean_a"] > out["latency_ms"]["mean_b"]
    assert out["read_gain"]["p"] == 1.0  # identical grades
    with pytest.raises(ValueError):
        compare(a, report("c.json", [{"question": "other", "latency_ms": 1.0}]))
