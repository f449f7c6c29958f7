"""Precision and recall of the precompute matchers on the labelled sample, per language.

The sample (``evals/labelled/precompute_mentions.jsonl``) holds 150 real passages of the corpus
(en 57, es 55, pt 38; the three phenomena), each with its gold mentions::

    {"id", "source", "lang", "phenomenon", "text",
     "mentions": [{"start", "end", "text", "kind": "entity"|"place", "id"}]}

``id`` is a dictionary entity id or a gazetteer ``place_id`` (``country:COL``,
``department:19``, ``municipality:11001``). Labelling rules are in ``evals/labelled/README.md``
(a decoy such as "Autodefensas Gaitanistas de Colombia" holds no place; addresses, rivers,
veredas, and names of organizations named after a place are not places).

The matchers run exactly as in the ``entity_mentions`` / ``place_mentions`` assets (boilerplate
blanked, entity spans as place decoys, the passage's phenomenon for alias restrictions). A place
prediction is a *resolved* mention (``unresolved`` makes no claim). Two scores:

- **strict**: same kind, same id, same span;
- **lenient**: same kind, same id, overlapping spans (boundary conventions differ, e.g. "ASAT" vs
  "Direct-Ascent ASAT").

``evaluate()`` returns ``{"by_language": {lang: {kind: {tp, fp, fn, precision, recall, f1, ...}}},
"overall": ..., "errors": [...]}``; ``evaluate_with_evidence(engine)`` adds the share of aggregate
rows whose cited passages contain the counted mention (``radar_pipeline.precompute.evidence``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from radar_pipeline.precompute.boilerplate import Boilerplate, load_boilerplate
from radar_pipeline.precompute.entities import EntityDictionary, load_entity_dictionary
from radar_pipeline.precompute.places import Gazetteer, build_gazetteer
from radar_pipeline.textfold import fold_spans

__all__ = ["LABELLED_PATH", "load_labelled", "predict", "evaluate", "evaluate_with_evidence"]

LABELLED_PATH = Path(__file__).resolve().parent / "labelled" / "precompute_mentions.jsonl"
KINDS = ("entity", "place")


def load_labelled(path: str | Path = LABELLED_PATH) -> list[dict[str, Any]]:
    """The labelled passages (raises ``ValueError`` when a gold span does not hold its text)."""
    rows = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            r = json.loads(line)
            for m in r["mentions"]:
                if r["text"][m["start"] : m["end"]] != m["text"]:
                    raise ValueError(f"{r['id']}: gold span {m} does not match its text")
            rows.append(r)
    return rows


def predict(
    passage: dict[str, Any], dictionary: EntityDictionary, gazetteer: Gazetteer, boilerplate: Boilerplate
) -> list[dict[str, Any]]:
    """Mentions the matchers produce for one passage: ``[{start, end, text, kind, id, resolution?}]``."""
    text = passage["text"]
    masked, mfolded, _ = boilerplate.mask(text, fold_spans(text))
    ehits = dictionary.find(masked, phenomenon=passage.get("phenomenon"), folded=mfolded)
    phits = gazetteer.find(masked, folded=mfolded, decoy_spans=[(h.start, h.end) for h in ehits])
    out = [
        {"start": h.start, "end": h.end, "text": text[h.start : h.end], "kind": "entity", "id": h.entity_id}
        for h in ehits
    ]
    out += [
        {
            "start": h.start,
            "end": h.end,
            "text": text[h.start : h.end],
            "kind": "place",
            "id": h.place.place_id,
            "resolution": h.resolution,
        }
        for h in phits
        if h.place is not None
    ]
    return out


def _prf(tp: int, fp: int, fn: int) -> dict[str, Any]:
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    f = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": None if p is None else round(p, 4),
        "recall": None if r is None else round(r, 4),
        "f1": None if f is None else round(f, 4),
    }


def _match(gold: list[dict], pred: list[dict], lenient: bool) -> tuple[int, list[dict], list[dict]]:
    used: set[int] = set()
    tp = 0
    fps = []
    for p in pred:
        hit = None
        for i, g in enumerate(gold):
            if i in used or g["kind"] != p["kind"] or g["id"] != p["id"]:
                continue
            same = (g["start"], g["end"]) == (p["start"], p["end"])
            overlap = g["start"] < p["end"] and p["start"] < g["end"]
            if same or (lenient and overlap):
                hit = i
                break
        if hit is None:
            fps.append(p)
        else:
            used.add(hit)
            tp += 1
    fns = [g for i, g in enumerate(gold) if i not in used]
    return tp, fps, fns


def evaluate(
    passages: Iterable[dict[str, Any]] | None = None,
    *,
    dictionary: EntityDictionary | None = None,
    gazetteer: Gazetteer | None = None,
    boilerplate: Boilerplate | None = None,
    geo_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Score the matchers on the labelled passages (default: the shipped sample).

    Either pass ``gazetteer`` or ``geo_dir`` (``../shared/geo``). Returns strict and lenient
    precision/recall/F1 per language and kind, overall figures, and the list of errors.
    """
    passages = list(passages if passages is not None else load_labelled())
    dictionary = dictionary or load_entity_dictionary()
    if gazetteer is None:
        if geo_dir is None:
            raise ValueError("pass gazetteer or geo_dir")
        gazetteer = build_gazetteer(geo_dir).with_decoys(dictionary.alias_phrases())
    boilerplate = boilerplate or load_boilerplate()
    counts = {mode: defaultdict(lambda: [0, 0, 0]) for mode in ("strict", "lenient")}
    errors = []
    for psg in passages:
        pred = predict(psg, dictionary, gazetteer, boilerplate)
        for kind in KINDS:
            gold = [g for g in psg["mentions"] if g["kind"] == kind]
            pk = [p for p in pred if p["kind"] == kind]
            for mode in ("strict", "lenient"):
                tp, fps, fns = _match(gold, pk, mode == "lenient")
                for key in ((psg["lang"], kind), ("all", kind), (psg["lang"], "all"), ("all", "all")):
                    c = counts[mode][key]
                    c[0] += tp
                    c[1] += len(fps)
                    c[2] += len(fns)
                if mode == "lenient":
                    errors += [{"passage": psg["id"], "type": "false_positive", **f} for f in fps]
                    errors += [{"passage": psg["id"], "type": "false_negative", **f} for f in fns]
    report: dict[str, Any] = {
        "passages": len(passages),
        "gold_mentions": sum(len(p["mentions"]) for p in passages),
        "dictionary": dictionary.label,
        "gazetteer": gazetteer.label,
        "by_language": {},
        "overall": {},
    }
    langs = sorted({p["lang"] for p in passages})
    for lang in langs + ["all"]:
        for kind in KINDS + ("all",):
            entry = {mode: _prf(*counts[mode][(lang, kind)]) for mode in ("strict", "lenient")}
            (report["overall"] if lang == "all" else report["by_language"].setdefault(lang, {}))[kind] = entry
    report["errors"] = errors
    return report


def evaluate_with_evidence(engine, **kwargs) -> dict[str, Any]:
    """``evaluate()`` plus ``evidence``: the share of aggregate rows whose cited passages contain
    the counted mention (must be 1.0), read from the materialized tables."""
    from radar_pipeline.precompute.evidence import verify_evidence

    report = evaluate(**kwargs)
    ev = verify_evidence(engine)
    report["evidence"] = {
        "share_rows_ok": ev["share_rows_ok"],
        "rows": ev["rows"],
        "rows_ok": ev["rows_ok"],
        "mentions_bad_span": ev["mentions_bad_span"],
        "by_table": {t: r["share_rows_ok"] for t, r in ev["tables"].items()},
    }
    return report
