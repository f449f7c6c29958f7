"""Draw the blind labelling sample of claims (``sample_to_label.jsonl``) from a materialized database.

How it was made (also in LABELLING.md): the current claims of the full-corpus materialization are
stratified by predicate and by the language of the evidence passage; within each stratum claims are
drawn at random (seed ``SEED``) and for each drawn claim one of its evidence rows of that language
is drawn at random. Each item shows the claim in words (subject, predicate, object, valid period),
the system's stance for that passage, the passage text and the quoted span — never a status,
score or confidence.

Usage: ``python -m evals.claims.make_sample --database-url URL [--out evals/claims/sample_to_label.jsonl]``
(default database: ``DATABASE_URL`` or the embedded server of ``RADAR_HOME``).

Round 2 (after the fixes of the round-1 error kinds): ``--round 2`` draws ``STRATA_R2`` with seed
``SEED_R2``, excluding every claim_id of the round-1 sample (``--exclude``, default
``sample_to_label.jsonl``), items numbered ``r2-NNN``, into ``sample_round2_to_label.jsonl``.
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
SEED_R2 = 20261202
# round 2 (~120 items): weighted towards the predicates whose round-1 error kinds were fixed
STRATA_R2: dict[tuple[str, str | None], int] = {
    ("present_in", "es"): 8,
    ("present_in", "pt"): 5,
    ("present_in", None): 2,
    ("early_warning_for", "es"): 45,
    ("alert_names_group", "es"): 25,
    ("alert_risk_type", "es"): 5,  # all 12 were in round 1: none left to draw
    ("figures_in_phenomenon", "en"): 15,
    ("figures_in_phenomenon", "es"): 15,
    ("figures_in_phenomenon", "pt"): 5,
}
OUT_R2 = Path(__file__).with_name("sample_round2_to_label.jsonl")


def _period(vf, vt) -> str:
    if vf is None:
        return "no indicado por la fuente"
    if vt is None:
        return f"desde {vf.isoformat()}"
    return f"{vf.isoformat()} a {vt.isoformat()}"


def draw(
    engine: sa.Engine,
    strata: dict[tuple[str, str | None], int] = STRATA,
    seed: int = SEED,
    exclude: frozenset[str] | set[str] = frozenset(),
    prefix: str = "cl",
    unique: bool = False,
) -> list[dict]:
    """The sample items (see module docstring), in stratum order; claims whose ``claim_id`` is in
    ``exclude`` (an earlier round's) are never drawn; item ids are ``<prefix>-NNN``; ``unique``: a
    claim drawn in one stratum is not drawn again in another (round 1 was drawn without it and
    holds 2 claims twice, under two evidence languages)."""
    rng = random.Random(seed)
    items = []
    drawn: set[str] = set()  # a claim with evidence in two languages is drawn once
    with engine.connect() as conn:
        for (pred, lang), n in strata.items():
            rows = conn.execute(
                sa.text(
                    "SELECT c.claim_id, c.subject, c.predicate, c.object, c.statement, c.valid_from, c.valid_to, "
                    "e.id AS evidence_id, e.doc_id, e.chunk_id, e.stance, e.span, e.span_start, e.span_end, "
                    "e.language, k.text FROM claims c JOIN claim_evidence e ON e.claim_version = c.id "
                    "JOIN chunks k ON k.chunk_id = e.chunk_id "
                    "WHERE c.superseded_at IS NULL AND c.status IN ('asserted', 'contested') "
                    "AND c.predicate = :p AND e.language IS NOT DISTINCT FROM :l "
                    "ORDER BY c.claim_id, e.id"
                ),
                {"p": pred, "l": lang},
            ).all()
            by_claim: dict[str, list] = {}
            for r in rows:
                by_claim.setdefault(r.claim_id, []).append(r)
            ids = sorted(c for c in by_claim if c not in exclude and not (unique and c in drawn))
            for cid in rng.sample(ids, min(n, len(ids))):
                r = rng.choice(by_claim[cid])
                drawn.add(cid)
                items.append(
                    {
                        "item_id": f"{prefix}-{len(items) + 1:03d}",
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
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--round", type=int, choices=(1, 2), default=1)
    ap.add_argument("--exclude", type=Path, nargs="*", default=None, help="samples whose claim_ids are not drawn")
    args = ap.parse_args()
    if args.database_url:
        url = db.normalize_url(args.database_url)
    else:
        from radar_pipeline.config import get_settings

        s = get_settings()
        url = db.resolve_database_url(s.database_url, s.pgdata)
    if args.round == 2:
        excl_files = args.exclude if args.exclude is not None else [OUT]
        exclude = {
            json.loads(line)["claim_id"] for f in excl_files for line in f.open(encoding="utf-8") if line.strip()
        }
        items = draw(db.create_engine(url), STRATA_R2, SEED_R2, exclude, "r2", unique=True)
        args.out = args.out or OUT_R2
    else:
        items = draw(db.create_engine(url))
        args.out = args.out or OUT
    with args.out.open("w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    print(f"{len(items)} items → {args.out}")


if __name__ == "__main__":
    main()
