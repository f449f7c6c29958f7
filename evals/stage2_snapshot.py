"""The reading snapshot: what the rules reader makes of every labelled Stage-2 question, frozen in a
committed file so that any edit to the reading rules shows, item by item, what it changes.

Every item of ``evals/stage2/questions_*.jsonl`` is read the way ``evals/stage2.score_reading``
reads it (``stage2.read_item``: ``QuestionReader.read`` → ``router.plan`` → ``visualizer.propose`` /
``validate``; a follow-up conversation turn by turn through ``stage2.score_followup``, the runner's own
merge), with the rules alone and reference year 2025. One row per item (per turn of a conversation):

``{"key": "<set>/<id>[#turn]", "question", "kind", "route", "phenomenon", "components", "filters"
[, "carried"]}``

``kind``: the plan's kind (``question``, ``greeting``, …); ``phenomenon``: the plan's phenomenon
(``router.classify_phenomenon``); ``filters``: the validated view's filters (None values dropped).
Rows are sorted by key and written as JSON lines (``SNAPSHOT``), one per item.

The learned reader is left out: it needs the USE encoder (a model load and 3,700 encodings), too
slow for a gate that runs in ``make test``; ``evals/stage2.py --reader combined`` scores it.

Commands::

    python -m evals.stage2_snapshot            # compare with the committed snapshot, print the diff
    python -m evals.stage2_snapshot --update   # rewrite the snapshot (review its diff, commit it)

The gate is ``tests/evals/test_stage2_snapshot.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evals import stage2  # noqa: E402 - after the sys.path set-up above (run as a script)

SNAPSHOT = ROOT / "evals" / "stage2" / "reading_snapshot.jsonl"
QUESTIONS_GLOB = "questions_*.jsonl"
REFERENCE_YEAR = 2025
FIELDS = ("kind", "route", "phenomenon", "components", "filters", "carried")


def question_files(root: Path = ROOT) -> list[Path]:
    """Every labelled question set, sorted by file name."""
    return sorted((root / "evals" / "stage2").glob(QUESTIONS_GLOB))


def _filters(f: dict | None) -> dict:
    return {k: v for k, v in sorted((f or {}).items()) if v is not None}


def snapshot_rows(reader, files: list[Path] | None = None) -> list[dict]:
    """The snapshot rows (module doc) of every item of ``files`` (default: every set) read by
    ``reader`` (an ``understanding.QuestionReader``), sorted by key. Raises ``ValueError`` on a
    malformed question file (``stage2.load_questions``)."""
    rows = []
    for path in files if files is not None else question_files():
        name = path.stem.removeprefix("questions_")
        for item in stage2.load_questions(path):
            if item.get("kind") == "followup":
                conv = stage2.score_followup(item, reader)
                for n, (turn, row) in enumerate(zip(item.get("turns") or [], conv["turns"], strict=True)):
                    rows.append(
                        {
                            "key": f"{name}/{item['id']}#{n}",
                            "question": turn["question"],
                            "kind": "followup",
                            "route": row["got_route"],
                            "phenomenon": None,
                            "components": list(row["got_components"]),
                            "filters": _filters(row["got_filters"]),
                            "carried": list(row["got_carried"]),
                        }
                    )
                continue
            got = stage2.read_item(item, reader)
            rows.append(
                {
                    "key": f"{name}/{item['id']}",
                    "question": item["question"],
                    "kind": got["kind"],
                    "route": got["route"],
                    "phenomenon": got["phenomenon"],
                    "components": list(got["components"]),
                    "filters": _filters(got["filters"]),
                }
            )
    return sorted(rows, key=lambda r: r["key"])


def dumps(rows: list[dict]) -> str:
    """The snapshot file's text: one sorted-keys JSON object per line."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def load(path: Path = SNAPSHOT) -> list[dict]:
    """The committed snapshot rows ([] when the file is missing)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def diff(old: list[dict], new: list[dict], *, limit: int = 200) -> list[str]:
    """A readable diff, one block per changed item (``key: question`` then ``field: old → new``),
    added and removed items listed; at most ``limit`` blocks, then a count. [] when equal."""
    before = {r["key"]: r for r in old}
    after = {r["key"]: r for r in new}
    blocks: list[str] = []
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        if a is None:
            blocks.append(
                f"+ {key}: {b['question']}\n    (new item) {json.dumps({k: b.get(k) for k in FIELDS if k in b}, ensure_ascii=False)}"
            )
            continue
        if b is None:
            blocks.append(f"- {key}: {a['question']}\n    (item gone)")
            continue
        lines = [f"~ {key}: {b['question']}"]
        for f in ("question", *FIELDS):
            if a.get(f) != b.get(f):
                lines.append(
                    f"    {f}: {json.dumps(a.get(f), ensure_ascii=False)} → {json.dumps(b.get(f), ensure_ascii=False)}"
                )
        blocks.append("\n".join(lines))
    if len(blocks) > limit:
        blocks = blocks[:limit] + [f"… and {len(blocks) - limit} more changed items"]
    return blocks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the committed snapshot")
    ap.add_argument("--out", type=Path, default=SNAPSHOT)
    args = ap.parse_args(argv)
    from radar_pipeline.agent.reading.understanding import QuestionReader
    from radar_pipeline.config import get_settings

    reader = QuestionReader.from_shared(get_settings().shared_dir, reference_year=REFERENCE_YEAR)
    rows = snapshot_rows(reader)
    blocks = diff(load(args.out), rows)
    for b in blocks:
        print(b)
    if args.update:
        args.out.write_text(dumps(rows), encoding="utf-8")
        print(f"{len(rows)} rows -> {args.out} ({len(blocks)} changed)")
        return 0
    print(f"{len(rows)} rows, {len(blocks)} changed against {args.out}")
    return 1 if blocks else 0


if __name__ == "__main__":
    raise SystemExit(main())
