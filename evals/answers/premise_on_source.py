"""The offline premise judge with retrieval taken out: each question of the answer sets that has a
premise, judged on the indexed passage(s) holding its source quote.

False-premise questions measure what the judge catches when the refuting passage is in hand
(``falsa`` is right); every other question with a premise measures its false alarms (``falsa`` is
wrong there: those premises are true or unverifiable). The end-to-end figure (retrieval + reading +
judge) is the answer evaluation's; this one says which part lost a premise.

Needs the full-corpus home (``RADAR_HOME``; the passages are read from PostgreSQL's ``chunks``).
Usage: ``python evals/answers/premise_on_source.py [--sets dev blind1 blind2 blind3] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from radar_pipeline import db  # noqa: E402
from radar_pipeline.agent.roles import premise as premises  # noqa: E402
from radar_pipeline.config import get_settings  # noqa: E402

SETS_DIR = ROOT / "evals" / "answers" / "sets"
KEY_CHARS = 45  # the quote's first characters, whitespace-normalised, located with LIKE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--sets", nargs="+", default=["dev", "blind1", "blind2", "blind3"])
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "premise_on_source.json")
    args = ap.parse_args(argv)
    settings = get_settings()
    engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
    report: dict = {"sets": {}, "rows": []}
    with engine.connect() as conn:
        for name in args.sets:
            caught = total = alarms = with_premise = 0
            for line in (SETS_DIR / f"{name}.jsonl").open(encoding="utf-8"):
                item = json.loads(line)
                premise = premises.extract_premise(item["question"])
                false_premise = item["type"] == "false_premise"
                if not false_premise and premise is None:
                    continue
                quote = " ".join((item.get("source_quote") or "").split())[:KEY_CHARS].replace("%", "")
                rows = (
                    conn.execute(
                        sa.text("SELECT chunk_id, doc_id, text, language FROM chunks WHERE text LIKE :k LIMIT 3"),
                        {"k": f"%{quote}%"},
                    ).fetchall()
                    if quote
                    else []
                )
                read = {r[0]: {"chunk_id": r[0], "doc_id": r[1], "text": r[2], "language": r[3]} for r in rows}
                verdict = premises.assess(premise, read) if premise is not None and read else None
                estado = "sin_premisa" if premise is None else ("sin_pasaje" if not read else verdict.estado)
                if false_premise:
                    total += 1
                    caught += estado == "falsa"
                else:
                    with_premise += 1
                    alarms += estado == "falsa"
                report["rows"].append(
                    {
                        "set": name,
                        "id": item["id"],
                        "type": item["type"],
                        "premise": premise.text if premise else None,
                        "estado": estado,
                        "reason": verdict.reason if verdict else None,
                        "fragment": verdict.fragment if verdict else None,
                    }
                )
            report["sets"][name] = {
                "false_premises": total,
                "caught": caught,
                "other_questions_with_a_premise": with_premise,
                "false_alarms": alarms,
            }
            print(name, json.dumps(report["sets"][name]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
