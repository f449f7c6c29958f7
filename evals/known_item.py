"""Known-item source recall: does retrieval put the passage an analyst's question was written from
in the top 10?

The answer sets (``evals/answers/sets/*.jsonl``) carry, per question, the file it was written from
(``source_file``) and a quote (``source_quote``). A passage of the index is the question's *source
passage* when it belongs to that file and holds one of the quote's sentences (≥ 60 % of the
sentence's word types in one of the passage's sentences: the index's chunking and the writer's
copy need not agree to the character). Unanswerable questions and questions whose quote no indexed
passage holds are left out (counted in the report).

Per configuration: source in the top 10 (the passages a search returns), MRR@10, and against the default (``DEFAULT_NAME``)
the per-question wins/losses at 10 with the exact two-sided sign test (ties dropped; Dixon & Mood
1946), Holm-adjusted over the configurations compared (Holm 1979). This is the yardstick behind the
default's BM25 weight and lexicon (evals/README.md, "Known-item misses"); it needs the full corpus
(``RADAR_HOME`` of a complete materialization), since a missing document is no retrieval miss.

Usage: ``python evals/known_item.py --sets dev blind2 --configs hybrid_rrf_gd_b05_rr200 ...
[--encode-limit 0] [--out evals/reports/known_item.json]``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.configs import CONFIGS, DEFAULT_NAME  # noqa: E402 - after the sys.path set-up (run as a script)
from evals.scoring import holm_rows  # noqa: E402
from radar_pipeline.sentences import split_sentences  # noqa: E402

SETS_DIR = ROOT / "evals" / "answers" / "sets"
MATCH = 0.6  # share of a quote sentence's word types found in one passage sentence
MIN_CHARS = 30  # quote sentences shorter than this (headings, fragments) locate nothing


def _types(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def holds(quote_sentence: str, passage: str) -> bool:
    """Whether ``passage`` holds ``quote_sentence``: ≥ ``MATCH`` of its word types in one sentence."""
    want = _types(quote_sentence)
    return any(len(want & _types(s)) / max(1, len(want)) >= MATCH for s in split_sentences(passage, "en"))


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test of ``wins`` against ``losses`` (ties dropped): 2 × P(X ≤ min) under
    Binomial(n, 1/2), capped at 1. Returns 1.0 when n = 0."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def locate(items: list[dict], texts: list[str], paths: list[str]) -> tuple[list[tuple[dict, set[int]]], int]:
    """``[(item, rows of its source passages)]`` for items whose quote an indexed passage holds,
    and how many answerable items with a source were left out (quote not found in the index)."""
    by_path: dict[str, list[int]] = {}
    for r, p in enumerate(paths):
        by_path.setdefault(p, []).append(r)
    located, missing = [], 0
    for it in items:
        if it.get("type") == "unanswerable" or not it.get("source_quote") or not it.get("source_file"):
            continue
        quote = [s for s in split_sentences(" ".join(it["source_quote"].split()), "en") if len(s) > MIN_CHARS]
        rows = [r for p, rs in by_path.items() if p.endswith(it["source_file"]) for r in rs]
        found = {r for r in rows if any(holds(s, texts[r]) for s in quote)}
        if found:
            located.append((it, found))
        else:
            missing += 1
    return located, missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--sets", nargs="+", default=["dev", "blind2"], help="answer sets (evals/answers/sets/NAME.jsonl)")
    ap.add_argument("--configs", nargs="+", default=[DEFAULT_NAME], help="configurations (evals/configs.py)")
    ap.add_argument("--encode-limit", type=int, default=None, help="override the re-ranker's query-time encodes")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "known_item.json")
    args = ap.parse_args(argv)
    unknown = set(args.configs) - set(CONFIGS)
    if unknown:
        ap.error(f"unknown configurations: {sorted(unknown)}")
    from evals.answers.runs import build_service

    items = [json.loads(line) for s in args.sets for line in (SETS_DIR / f"{s}.jsonl").open(encoding="utf-8")]
    corpus = build_service().runner()._corpus()
    searcher = corpus.searcher
    n_rows = searcher.passages.height
    paths = [corpus.record(r, text=False)["source_path"] for r in range(n_rows)]
    located, missing = locate(items, list(corpus.texts), paths)
    print(f"{len(located)} questions with a located source passage ({missing} not found in the index)", flush=True)
    names = list(dict.fromkeys([DEFAULT_NAME, *args.configs]))
    ranks: dict[str, list[int | None]] = {}
    rows = []
    for name in names:
        cfg = CONFIGS[name]
        if args.encode_limit is not None:
            cfg = cfg.with_(rerank_encode_limit=args.encode_limit)
        t0, got = time.time(), []
        for it, src in located:
            res = searcher.search(it["question"], cfg)
            got.append(
                next((i for i, p in enumerate(res.passages[:10], 1) if corpus.row_of[p["chunk_id"]] in src), None)
            )
        ranks[name] = got
        row = {
            "config": name,
            "n": len(got),
            "source_at_10": sum(1 for r in got if r and r <= 10),
            "mrr_at_10": round(sum(1 / r for r in got if r) / max(1, len(got)), 4),
            "seconds": round(time.time() - t0, 1),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    base = [r is not None and r <= 10 for r in ranks[DEFAULT_NAME]]
    for row in rows:
        if row["config"] == DEFAULT_NAME:
            row["p"] = None
            continue
        mine = [r is not None and r <= 10 for r in ranks[row["config"]]]
        row["wins"] = sum(1 for a, b in zip(mine, base, strict=True) if a and not b)
        row["losses"] = sum(1 for a, b in zip(mine, base, strict=True) if b and not a)
        row["p"] = sign_test(row["wins"], row["losses"])
    holm_rows(rows)
    report = {
        "sets": args.sets,
        "default": DEFAULT_NAME,
        "located": len(located),
        "not_located": missing,
        "encode_limit": args.encode_limit,
        "rows": rows,
        "per_question": {
            name: {it["id"]: r for (it, _), r in zip(located, rk, strict=True)} for name, rk in ranks.items()
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
