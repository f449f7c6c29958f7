"""The reading snapshot gate (evals/stage2_snapshot.py): every labelled Stage-2 question read by the
rules reader must give the route, phenomenon, components, filters (and carried filters, for a
follow-up turn) committed in evals/stage2/reading_snapshot.jsonl. An intended change is recorded with
``python -m evals.stage2_snapshot --update``; the failure message shows what changed, item by item."""

from __future__ import annotations

import json

import pytest

from evals import stage2, stage2_snapshot
from radar_pipeline.agent.reading.understanding import QuestionReader


@pytest.fixture(scope="module")
def reader(shared_dir):
    return QuestionReader.from_shared(shared_dir, reference_year=stage2_snapshot.REFERENCE_YEAR)


def test_every_labelled_question_reads_as_the_snapshot_says(reader):
    committed = stage2_snapshot.load()
    assert committed, f"no snapshot at {stage2_snapshot.SNAPSHOT}: python -m evals.stage2_snapshot --update"
    rows = stage2_snapshot.snapshot_rows(reader)
    n_items = sum(
        len(it.get("turns") or []) if it.get("kind") == "followup" else 1
        for p in stage2_snapshot.question_files()
        for it in stage2.load_questions(p)
    )
    assert len(rows) == n_items  # every item and every follow-up turn has its row
    blocks = stage2_snapshot.diff(committed, rows, limit=60)
    assert not blocks, (
        f"{len(blocks)} item(s) read otherwise than the committed snapshot; if intended, run "
        "`python -m evals.stage2_snapshot --update` and commit the snapshot:\n" + "\n".join(blocks)
    )


def test_the_snapshot_file_is_sorted_one_item_a_line():
    text = stage2_snapshot.SNAPSHOT.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    keys = [r["key"] for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert stage2_snapshot.dumps(rows) == text  # the writer's own format, so an update diffs line by line


def test_the_diff_names_each_changed_field_and_item():
    old = [
        {"key": "s/1", "question": "mapa de alertas", "route": "visualization", "components": ["mapa_alertas"]},
        {"key": "s/2", "question": "hola", "route": "text", "components": []},
        {"key": "s/3", "question": "red de actores", "route": "visualization", "components": ["red"]},
    ]
    new = [
        {"key": "s/1", "question": "mapa de alertas", "route": "both", "components": ["mapa_lugares"]},
        {"key": "s/2", "question": "hola", "route": "text", "components": []},
        {"key": "s/4", "question": "línea de tiempo", "route": "visualization", "components": ["linea_tiempo"]},
    ]
    blocks = stage2_snapshot.diff(old, new)
    assert len(blocks) == 3  # s/1 changed, s/3 gone, s/4 new; s/2 the same
    changed = next(b for b in blocks if b.startswith("~ s/1"))
    assert 'route: "visualization" → "both"' in changed
    assert 'components: ["mapa_alertas"] → ["mapa_lugares"]' in changed
    assert any(b.startswith("- s/3") for b in blocks) and any(b.startswith("+ s/4") for b in blocks)
    assert stage2_snapshot.diff(old, old) == []
    assert stage2_snapshot.diff(old, new, limit=1)[-1] == "… and 2 more changed items"
