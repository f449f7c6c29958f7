"""Where an answer set's key facts are lost, without judges: per answerable question with a source
quote, is the source document cited, is a passage holding the quote cited, and is a quote sentence in
the answer's words (≥ 60 % of its word types in one sentence of the answer)?

A proxy for the judges' key facts (evals/answers/README.md): it tells retrieval and reading losses
(source passage never cited) from selection losses (cited, but another sentence quoted). Input: a
set (``evals/answers/sets/NAME.jsonl``) and the per-question records ``radar answers run --set NAME
--out FILE`` writes. Usage: ``python evals/answers/source_proxy.py SET RUNS.jsonl [RUNS2.jsonl]``
(with two runs: wins and losses of the second against the first, per question).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from radar_pipeline.sentences import split_sentences  # noqa: E402

MATCH = 0.6  # share of a quote sentence's word types found in one sentence
MIN_CHARS = 30


def _types(s: str) -> set[str]:
    return set(re.findall(r"\w+", s.lower()))


def _holds(quote: str, text: str) -> bool:
    want = _types(quote)
    return any(len(want & _types(x)) / max(1, len(want)) >= MATCH for x in split_sentences(text, "en"))


def flags(set_path: Path, runs_path: Path) -> dict[str, tuple[bool, bool, bool]]:
    """Question id → (source document cited, source passage cited, source sentence in the answer)."""
    items = {json.loads(line)["id"]: json.loads(line) for line in set_path.open(encoding="utf-8")}
    out = {}
    for line in runs_path.open(encoding="utf-8"):
        rec = json.loads(line)
        item = items[rec["question_id"]]
        if item["type"] == "unanswerable" or not item.get("source_quote"):
            continue
        quote = [s for s in split_sentences(" ".join(item["source_quote"].split()), "en") if len(s) > MIN_CHARS]
        cites = rec.get("citas") or []
        name = item["source_file"].split("/")[-1]
        doc = any((c.get("fuente") or "").endswith(name) for c in cites)
        passage = any(any(_holds(q, c["text"]) for q in quote) for c in cites if c.get("text"))
        said = any(_holds(q, rec["respuesta"]) for q in quote)
        out[rec["question_id"]] = (doc, passage, said)
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    sets_dir = ROOT / "evals" / "answers" / "sets"
    set_path = Path(args[0]) if args[0].endswith(".jsonl") else sets_dir / f"{args[0]}.jsonl"
    runs = [flags(set_path, Path(p)) for p in args[1:]]
    for path, f in zip(args[1:], runs, strict=True):
        n = len(f)
        doc, passage, said = (sum(v[i] for v in f.values()) for i in range(3))
        print(
            f"{path}: n={n} source document cited {doc}, source passage cited {passage}, source sentence quoted {said}"
        )
    if len(runs) == 2:
        a, b = runs
        for i, what in ((1, "source passage cited"), (2, "source sentence quoted")):
            wins = sum(1 for q in a if q in b and b[q][i] and not a[q][i])
            losses = sum(1 for q in a if q in b and a[q][i] and not b[q][i])
            print(f"{what}: second run better in {wins}, worse in {losses}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
