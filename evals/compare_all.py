"""Every named configuration against the default: means and paired randomization p-values.

Writes ``evals/reports/configs.json`` and prints the markdown table pasted into evals/README.md.
Usage: ``python evals/compare_all.py [--datasets codefest_dev xquad_es_en_hard]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.configs import CONFIGS, DEFAULT_NAME  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.runner import run_codefest, run_xquad  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.scoring import compare  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.retrieval.search import Searcher  # noqa: E402 - after the sys.path set-up above (run as a script)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", nargs="+", default=["codefest_dev", "xquad_es_en", "xquad_es_en_hard"])
    args = ap.parse_args()
    settings = get_settings()
    enc = build_encoder(EncoderSpec())
    rr = build_reranker()
    reports: dict[str, dict] = {}
    for name, cfg in CONFIGS.items():
        # a fresh searcher per configuration: vectors one configuration encoded at query time must
        # not change what the next one sees
        searcher = (
            Searcher(settings.index_dir / enc.name, enc, reranker=rr) if "codefest_dev" in args.datasets else None
        )
        for ds in args.datasets:
            rep = (
                run_codefest(searcher, cfg)
                if ds == "codefest_dev"
                else run_xquad(ds, enc, cfg, settings.home / "eval_work", reranker=rr)
            )
            reports.setdefault(name, {})[ds] = rep
            print(f"{name} {ds} {rep.aggregate['overall']}", file=sys.stderr, flush=True)
    rows = []
    for name in CONFIGS:
        row = {"config": name}
        for ds in args.datasets:
            rep, base = reports[name][ds], reports[DEFAULT_NAME][ds]
            metrics = ["ndcg@10", "f1@3"] if ds == "codefest_dev" else ["ndcg@10", "recall@10"]
            for m in metrics:
                row[f"{ds} {m}"] = round(rep.aggregate["overall"][m], 4)
                if name != DEFAULT_NAME:
                    row[f"{ds} {m} p"] = round(compare(rep.per_query, base.per_query, m).p_value, 4)
            if ds == "codefest_dev":
                row["codefest recall@candidates"] = rep.aggregate["recall@candidates"]
                for ph in ("F1", "F2", "F3"):
                    row[f"{ph} ndcg@10/f1@3"] = f"{rep.aggregate[ph]['ndcg@10']:.3f}/{rep.aggregate[ph]['f1@3']:.3f}"
        rows.append(row)
    out = ROOT / "evals" / "reports" / "configs.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    cols = list(max(rows, key=len))  # the default's row has no p-value columns
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "—")) for c in cols) + " |")


if __name__ == "__main__":
    main()
