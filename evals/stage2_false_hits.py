"""False hits of a change to question reading, measured on corpus text: what the new place rules and
phenomenon phrases read in sentences where the base version read something else.

Corpus sentences are not questions, but they are the language the questions come from: a place rule
or a phenomenon phrase that fires on them where the base did not shows how often the new reading
would change a real text, and each change can be read and judged.

* ``places``: every sentence holding a word a new place rule needs (a department's adjective, a
  cardinal part "sur de", an apposition "municipio/capital/departamento", a list after "(" / ":" /
  "es decir") is resolved with the base resolver (``agent/reading/place_resolver.py`` at ``--base``) and the
  current one (same gazetteer, cue and case guards as a question); each difference is listed.
* ``phenomena``: each sentence's stated phenomena (``views.yaml: phenomena``) with the base file and
  the current one; a phenomenon the current file adds in a folder of another phenomenon is a false
  hit (Codefest folders: F1 ai_military, F2 space_security, F3 territorial).

``python evals/stage2_false_hits.py --base <git ref> [--max-sentences N] --out REPORT``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from radar_pipeline.agent.reading import place_resolver as current_resolver  # noqa: E402 - after the sys.path set-up
from radar_pipeline.agent.reading.understanding import QuestionReader  # noqa: E402
from radar_pipeline.agent.reading.views import load_view_vocabulary  # noqa: E402
from radar_pipeline.textfold import fold_question  # noqa: E402

FOLDERS = {"F1": "ai_military", "F2": "space_security", "F3": "territorial"}
_SENT = re.compile(r"(?<=[.!?])\s+|\n+")


def _git_show(ref: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def _base_resolver_module(ref: str):
    """``agent/reading/place_resolver.py`` (``agent/place_resolver.py`` before the reading package)
    at ``ref``, imported under another name (its own imports are the current package's: the
    resolver's dependencies are unchanged)."""
    tmp = Path(tempfile.mkdtemp(prefix="radar-base-")) / "base_place_resolver.py"
    try:
        text = _git_show(ref, "radar_pipeline/agent/reading/place_resolver.py")
    except subprocess.CalledProcessError:
        text = _git_show(ref, "radar_pipeline/agent/place_resolver.py")
    tmp.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("base_place_resolver", tmp)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["base_place_resolver"] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _trigger() -> re.Pattern:
    adjs = sorted(current_resolver.department_adjectives(), key=len, reverse=True)
    return re.compile(
        r"(?<!\w)(?:" + "|".join(adjs) + r"|(?:sur|norte|oriente|occidente|centro|este|oeste)\w* (?:de|del)"
        r"|municipio|capital|ciudad|cabecera|casco urbano|pueblo|departamento|depto|dpto|es decir|o sea)(?!\w)|[(:—]"
    )


def sentences(folder: Path, max_sentences: int) -> list[str]:
    """Up to ``max_sentences`` sentences (20-400 characters) of the folder's ``.txt`` files, files in name order."""
    out: list[str] = []
    for path in sorted(folder.glob("*.txt")):
        for s in _SENT.split(path.read_text(encoding="utf-8", errors="replace")):
            s = " ".join(s.split())
            if 20 <= len(s) <= 400:
                out.append(s)
                if len(out) >= max_sentences:
                    return out
    return out


def place_changes(sents: list[str], reader: QuestionReader, base_mod) -> dict:
    """Sentences whose resolved places differ between the base and the current resolver."""
    fuzzy = reader.places.fuzzy
    base = base_mod.PlaceResolver(
        reader.gazetteer, fuzzy=base_mod.FuzzyPlaces(fuzzy.names, fuzzy.not_typos, fuzzy.known)
    )
    trig = _trigger()
    checked, changes = 0, []
    for s in sents:
        if not trig.search(fold_question(s)):
            continue
        checked += 1
        old = [p.place_id for p, _ in base.resolve(s, [], case_known=True).places]
        new = [p.place_id for p, _ in reader.places.resolve(s, [], case_known=True).places]
        if old != new:
            changes.append({"sentence": s, "base": old, "current": new})
    return {"n_checked": checked, "n_changed": len(changes), "changes": changes}


def phenomenon_changes(sents: list[str], folder_phenomenon: str, base_vocab, vocab) -> dict:
    """Phenomena the current phrases add to sentences of a folder; those of another phenomenon are false hits."""
    added: Counter = Counter()
    examples: dict[str, list[str]] = {}
    for s in sents:
        f = fold_question(s)
        new = set(vocab.stated_phenomena(f)) - set(base_vocab.stated_phenomena(f))
        for p in new:
            added[p] += 1
            examples.setdefault(p, [])
            if len(examples[p]) < 8:
                examples[p].append(s)
    false = {p: n for p, n in added.items() if p != folder_phenomenon}
    return {
        "n_sentences": len(sents),
        "added": dict(added),
        "false_hits": sum(false.values()),
        "false_by_phenomenon": false,
        "examples": examples,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="git ref of the version to compare with")
    ap.add_argument(
        "--corpus", type=Path, default=None, help="Codefest corpus folder (default <shared>/corpus/codefest)"
    )
    ap.add_argument("--max-sentences", type=int, default=40_000, help="per folder")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "stage2_false_hits.json")
    args = ap.parse_args(argv)
    from radar_pipeline.config import get_settings

    shared = get_settings().shared_dir
    corpus = args.corpus or Path(shared) / "corpus" / "codefest"
    reader = QuestionReader.from_shared(shared, reference_year=2025)
    base_mod = _base_resolver_module(args.base)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False, encoding="utf-8") as fh:
        fh.write(_git_show(args.base, "radar_pipeline/precompute/data/views.yaml"))
    base_vocab, vocab = load_view_vocabulary(fh.name), load_view_vocabulary()
    report: dict = {"base": args.base, "max_sentences_per_folder": args.max_sentences, "folders": {}}
    for folder, phen in FOLDERS.items():
        sents = sentences(corpus / folder, args.max_sentences)
        report["folders"][folder] = {
            "phenomenon": phen,
            "places": place_changes(sents, reader, base_mod),
            "phenomena": phenomenon_changes(sents, phen, base_vocab, vocab),
        }
    report["totals"] = {
        "sentences": sum(f["phenomena"]["n_sentences"] for f in report["folders"].values()),
        "place_sentences_checked": sum(f["places"]["n_checked"] for f in report["folders"].values()),
        "place_changes": sum(f["places"]["n_changed"] for f in report["folders"].values()),
        "phenomenon_added": sum(sum(f["phenomena"]["added"].values()) for f in report["folders"].values()),
        "phenomenon_false_hits": sum(f["phenomena"]["false_hits"] for f in report["folders"].values()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(json.dumps(report["totals"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
