"""Draw the blind labelling sample of claims (``sample_to_label.jsonl``) from a materialized database.

How it was made (also in LABELLING.md): the current claims of the full-corpus materialization are
stratified by predicate and by the language of the evidence passage; within each stratum claims are
drawn at random (seed ``SEED``) and for each drawn claim one of its evidence rows of that language
is drawn at random. Each item shows the claim in words (subject, predicate, object, valid period),
the system's stance for that passage, the passage text and the quoted span — never a status,
score or confidence.

Usage: ``python -m evals.claims.make_sample --database-url URL [--out evals/claims/sample_to_label.jsonl]``
(default database: ``DATABASE_URL`` or the embedded server of ``RADAR_HOME``).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.claims.model import PREDICATES

SEED = 20261201
# (predicate, evidence language) → items; language None = the passage has no detected language
STRATA: dict[tuple[str, str | None], int] = {
    ("present_in", "es"): 20,
    ("present_in", "pt"): 15,
    ("present_in", None): 5,
    ("early_warning_for", "es"): 35,
    ("alert_names_group", "es"): 30,
    ("alert_risk_type", "es"): 12,
    ("figures_in_phenomenon", "en"): 25,
    ("figures_in_phenomenon", "es"): 25,
    ("figures_in_phenomenon", "pt"): 13,
}
OUT = Path(__file__).with_name("sample_to_label.jsonl")


def _period(vf, vt) -> str:
    if vf is None:
        return "no indicado por la fuente"
    if vt is None:
        return f"desde {vf.isoformat()}"
    return f"{vf.isoformat()} a {vt.isoformat()}"


def draw(engine: sa.Engine, strata: dict[tuple[str, str | None], int] = STRATA, seed: int = SEED) -> list[dict]:
    """The sample items (see module docstring), in stratum order."""
    rng = random.Random(seed)
    items = []
    with engine.connect() as conn:
        for (pred, lang), n in strata.items():
            rows = conn.execute(
                sa.text(
                    "SELECT c.claim_id, c.subject, c.predicate, c.object, c.statement, c.valid_from, c.valid_to, "
                    "e.id AS evidence_id, e.doc_id, e.chunk_id, e.stance, e.span, e.span_start, e.span_end, "
                    "e.language, k.text FROM claims c JOIN claim_evidence e ON e.claim_version = c.id "
                    "JOIN chunks k ON k.chunk_id = e.chunk_id "
                    "WHERE c.superseded_at IS NULL AND c.predicate = :p AND e.language IS NOT DISTINCT FROM :l "
                    "ORDER BY c.claim_id, e.id"
                ),
                {"p": pred, "l": lang},
            ).all()
            by_claim: dict[str, list] = {}
            for r in rows:
                by_claim.setdefault(r.claim_id, []).append(r)
            ids = sorted(by_claim)
            for cid in rng.sample(ids, min(n, len(ids))):
                r = rng.choice(by_claim[cid])
                items.append(
                    {
                        "item_id": f"cl-{len(items) + 1:03d}",
                        "claim_id": r.claim_id,
                        "evidence_id": r.evidence_id,
                        "predicate": r.predicate,
                        "predicate_es": PREDICATES[r.predicate],
                        "language": r.language or "unknown",
                        "claim": {
                            "subject": r.subject,
                            "predicate": r.predicate,
                            "object": r.object,
                            "period": _period(r.valid_from, r.valid_to),
                            "in_words": r.statement,
                        },
                        "stance": r.stance,
                        "doc_id": r.doc_id,
                        "chunk_id": r.chunk_id,
                        "quoted_span": r.span,
                        "passage": r.text,
                    }
                )
    return items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.database_url:
        url = db.normalize_url(args.database_url)
    else:
        from radar_pipeline.config import get_settings

        s = get_settings()
        url = db.resolve_database_url(s.database_url, s.pgdata)
    items = draw(db.create_engine(url))
    with args.out.open("w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    print(f"{len(items)} items → {args.out}")


if __name__ == "__main__":
    main()
