"""Alias-cluster precision/recall on a sample labelled by official codes.

The sample (``alias_sample.jsonl``, rebuilt by ``--build``) is labelled by DIVIPOLA codes, not by a
person: every Colombian municipality of the gazetteer contributes its official name and each listed
alias, with its department (gold: its own code), and every Amazon Underworld presence record in
Colombia contributes the municipality name and department as the record writes them (gold: the
DIVIPOLA code in its ``b_ADM2_PCODE``). The resolver under test is the ``context_rule`` of
``radar_pipeline.claims.resolution.PlaceNameIndex`` — name plus department, never the code.

Reported, with and without the department as context:
- precision = resolved-``same`` items whose place is the gold code / items resolved ``same``;
- recall = resolved-``same`` items with the gold code / all items;
- unresolved share (left for review instead of merged);
- homonyms kept apart: of the pairs of distinct codes sharing a folded name, the share never merged
  into one cluster by the name alone (must be 1.0: no forced merge).

``python -m evals.claims.aliases --database-url URL [--build] [--json evals/reports/claims_aliases.json]``
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.claims.resolution import PlaceNameIndex
from radar_pipeline.textfold import fold_phrase

SAMPLE = Path(__file__).with_name("alias_sample.jsonl")


def build_sample(engine: sa.Engine) -> list[dict[str, Any]]:
    """The code-labelled items (module docstring), sorted and de-duplicated."""
    with engine.connect() as conn:
        gaz = [
            dict(r._mapping)
            for r in conn.execute(
                sa.text(
                    "SELECT place_id, level, code, name, department_code, department_name, aliases "
                    "FROM place_gazetteer_current WHERE level = 'municipality'"
                )
            )
        ]
        au = conn.execute(
            sa.text(
                "SELECT DISTINCT level2, level1, divipola_code FROM armed_presence_current "
                "WHERE divipola_code IS NOT NULL AND level2 IS NOT NULL"
            )
        ).all()
    items = {}
    for g in gaz:
        for name, src in [(g["name"], "gazetteer_name"), *[(a["text"], "gazetteer_alias") for a in g["aliases"] or []]]:
            items[(name, g["department_name"], g["place_id"])] = {
                "alias": name,
                "department": g["department_name"],
                "gold": g["place_id"],
                "source": src,
            }
    for r in au:
        items[(r.level2, r.level1, f"municipality:{r.divipola_code}")] = {
            "alias": r.level2,
            "department": r.level1,
            "gold": f"municipality:{r.divipola_code}",
            "source": "amazon_underworld_record",
        }
    return [items[k] for k in sorted(items, key=lambda k: (k[2], k[0]))]


def gazetteer_index(engine: sa.Engine) -> PlaceNameIndex:
    with engine.connect() as conn:
        rows = [
            dict(r._mapping)
            for r in conn.execute(
                sa.text("SELECT place_id, level, code, name, department_code, aliases FROM place_gazetteer_current")
            )
        ]
    return PlaceNameIndex.from_gazetteer(rows)


def score(items: list[dict[str, Any]], index: PlaceNameIndex) -> dict[str, Any]:
    """Precision/recall/unresolved with and without the department; homonyms kept apart."""
    out: dict[str, Any] = {"items": len(items), "by_source": defaultdict(int)}
    for it in items:
        out["by_source"][it["source"]] += 1
    for label, use_dept in (("with_department", True), ("name_only", False)):
        same = correct = unresolved = 0
        per_source: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        for it in items:
            decision, cands = index.resolve(it["alias"], it["department"] if use_dept else None)
            ps = per_source[it["source"]]
            ps[0] += 1
            if decision == "same":
                same += 1
                ps[1] += 1
                if cands[0] == it["gold"]:
                    correct += 1
                    ps[2] += 1
            else:
                unresolved += 1
        out[label] = {
            "resolved_same": same,
            "correct": correct,
            "precision": round(correct / same, 4) if same else None,
            "recall": round(correct / len(items), 4) if items else None,
            "unresolved_share": round(unresolved / len(items), 4) if items else None,
            "by_source": {
                s: {
                    "items": v[0],
                    "precision": round(v[2] / v[1], 4) if v[1] else None,
                    "recall": round(v[2] / v[0], 4),
                }
                for s, v in sorted(per_source.items())
            },
        }
    by_name: dict[str, set[str]] = defaultdict(set)
    for it in items:
        by_name[fold_phrase(it["alias"])].add(it["gold"])
    pairs = merged = 0
    for name, golds in by_name.items():
        if len(golds) < 2:
            continue
        decision, cands = index.resolve(name)
        n = len(golds) * (len(golds) - 1) // 2
        pairs += n
        if decision == "same":
            merged += n
    out["homonym_pairs"] = pairs
    out["homonym_pairs_kept_apart"] = round((pairs - merged) / pairs, 4) if pairs else None
    out["by_source"] = dict(out["by_source"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="Alias-cluster precision/recall against official codes.")
    ap.add_argument("--database-url", required=True)
    ap.add_argument("--build", action="store_true", help="rebuild alias_sample.jsonl from the database")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    engine = db.create_engine(db.normalize_url(args.database_url))
    if args.build or not SAMPLE.exists():
        items = build_sample(engine)
        SAMPLE.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    items = [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    report = score(items, gazetteer_index(engine))
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
