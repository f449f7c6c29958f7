"""Every named configuration against the default: means and paired randomization p-values.

Codefest dev columns, per configuration and per phenomenon: NDCG@10, Judged@10 and condensed
NDCG'@10 on the original judgments, the same (``deep_``) on the merged deepened judgments (read
from PostgreSQL's ``qrels_merged`` when reachable, else the shared file alone), F1@3; each p-value
column of a judgment set is followed by a ``vs default`` column that says "not measurable yet"
when either side's Judged@10 on that set is below 0.9 (``evals.scoring.measurability``).

Every p-value column is followed by its Holm–Bonferroni adjustment (Holm 1979) over the
configurations compared with the default in that column (``... p holm``), and each row gets the
rule's reading on deepened NDCG@10 (``codefest deep verdict``): the default changes only for a
configuration that still wins after the correction.

Writes ``evals/reports/configs.json`` and prints the markdown table pasted into evals/README.md.
Usage: ``python evals/compare_all.py [--datasets codefest_dev xquad_es_en_hard] [--configs NAME ...] [--out FILE]``;
``--adjust evals/reports/FILE.json`` adds the adjusted columns to a report written before.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.configs import CONFIGS, DEFAULT_NAME  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.judging import merged_qrels_from_files, read_merged  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.runner import run_codefest, run_xquad  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.scoring import (  # noqa: E402 - after the sys.path set-up above (run as a script)
    DECISION_METRIC,
    compare,
    holm_rows,
    measurability,
    verdict,
)
from radar_pipeline import db  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.retrieval.search import Searcher  # noqa: E402 - after the sys.path set-up above (run as a script)


def codefest_columns(rep, base, is_default: bool) -> dict:
    """The Codefest dev cells of one configuration's row: per judgment set (original, ``deep_``)
    NDCG@10, Judged@10 and NDCG'@10, each NDCG with its p against the default and a ``vs default``
    flag ("not measurable yet" when either side's Judged@10 < 0.9, else "ok"); F1@3 (p);
    Recall@candidates; per phenomenon the same three passage metrics on both sets."""
    agg, row = rep.aggregate, {}
    for prefix in ("", "deep_"):
        for m in ("ndcg@10", "judged@10", "ndcg'@10"):
            row[f"codefest {prefix}{m}"] = round(agg["overall"][prefix + m], 4)
            if not is_default and m != "judged@10":
                row[f"codefest {prefix}{m} p"] = round(compare(rep.per_query, base.per_query, prefix + m).p_value, 4)
        if not is_default:
            flag = measurability(agg["overall"][f"{prefix}judged@10"], base.aggregate["overall"][f"{prefix}judged@10"])
            row[f"codefest {prefix or 'original '}vs default"] = flag or "ok"
    row["codefest f1@3"] = round(agg["overall"]["f1@3"], 4)
    if not is_default:
        row["codefest f1@3 p"] = round(compare(rep.per_query, base.per_query, "f1@3").p_value, 4)
    row["codefest recall@candidates"] = agg["recall@candidates"]
    for ph in ("F1", "F2", "F3"):
        for prefix in ("", "deep_"):
            cells = [agg[ph][prefix + m] for m in ("ndcg@10", "judged@10", "ndcg'@10")]
            row[f"{ph} {prefix}ndcg@10/judged@10/ndcg'@10"] = "/".join(f"{v:.3f}" for v in cells)
    return row


class SavedReport:
    """A Codefest run's ``per_query`` table and ``aggregate`` saved to / loaded from a folder
    (``<dir>/<config>.parquet`` + ``.json``), so runs made at different times assemble into one table."""

    def __init__(self, per_query, aggregate: dict):
        self.per_query, self.aggregate = per_query, aggregate

    @staticmethod
    def save(folder: Path, name: str, rep) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        rep.per_query.write_parquet(folder / f"{name}.parquet")
        (folder / f"{name}.json").write_text(json.dumps(rep.aggregate, indent=1))

    @classmethod
    def load(cls, folder: Path, name: str) -> SavedReport:
        import polars as pl

        return cls(pl.read_parquet(folder / f"{name}.parquet"), json.loads((folder / f"{name}.json").read_text()))


def with_holm(rows: list[dict]) -> list[dict]:
    """Each ``"<column> p"`` followed by ``"<column> p holm"``: the Holm (1979) adjustment over the
    family of every configuration compared with the default in that column (``holm_rows``), and
    ``"codefest deep verdict"``: the rule for changing the default (``evals.scoring.verdict`` on
    deepened NDCG@10, adjusted p, measurability). The default's row has neither. Returns new rows
    (same order, columns re-ordered so each adjusted p sits next to its raw p)."""
    p_cols = [c for c in dict.fromkeys(k for r in rows for k in r) if c.endswith(" p")]
    adjusted: dict[str, dict[str, float]] = {}
    for c in p_cols:
        fam = holm_rows([{"config": r["config"], "p": r[c]} for r in rows if r.get(c) is not None])
        adjusted[c] = {f["config"]: round(f["p_holm"], 4) for f in fam}
    out = []
    for r in rows:
        new: dict = {}
        for k, v in r.items():
            new[k] = v
            if k in adjusted:
                new[f"{k} holm"] = adjusted[k][r["config"]]
        dcol = f"codefest {DECISION_METRIC}"
        if f"{dcol} p" in r:
            flag = r.get("codefest deep_vs default")
            new["codefest deep verdict"] = verdict(
                r[dcol] - next(x[dcol] for x in rows if f"{dcol} p" not in x),
                new[f"{dcol} p holm"],
                None if flag in (None, "ok") else flag,
            )
        out.append(new)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", nargs="+", default=["codefest_dev", "xquad_es_en", "xquad_es_en_hard"])
    ap.add_argument("--configs", nargs="+", default=None, help="a subset of evals/configs.py (default all)")
    ap.add_argument("--out", default="configs.json", help="report file name under evals/reports/")
    ap.add_argument(
        "--encode-limit",
        type=int,
        default=None,
        help="override rerank_encode_limit (0: never encode at query time, impute as the product does past its "
        "limit; then one searcher serves every configuration)",
    )
    ap.add_argument("--per-query-dir", type=Path, default=None, help="save each run's per-query scores here")
    ap.add_argument(
        "--assemble", action="store_true", help="no searching: build the table from --per-query-dir (codefest_dev)"
    )
    ap.add_argument(
        "--adjust",
        type=Path,
        default=None,
        help="no searching: read a report this script wrote, add the Holm-adjusted p-values and the "
        "verdicts to it (raw p-values unchanged) and write it back",
    )
    ap.add_argument(
        "--judgments-from",
        type=Path,
        default=None,
        help="deepened judgments from a judging folder's files (organiser/*.mapping.jsonl + graded/<annotator>.jsonl) "
        "instead of PostgreSQL: for a read-only home that never imported the round",
    )
    args = ap.parse_args()
    if args.adjust is not None:
        rows = [
            {k: v for k, v in r.items() if not k.endswith(" p holm") and k != "codefest deep verdict"}
            for r in json.loads(args.adjust.read_text())
        ]
        rows = with_holm(rows)
        args.adjust.write_text(json.dumps(rows, indent=1))
        print_table(rows)
        return
    wanted = set(args.configs or CONFIGS) | {DEFAULT_NAME}  # the default: every p-value is against it
    unknown = wanted - set(CONFIGS)
    if unknown:
        ap.error(f"unknown configurations: {sorted(unknown)}")
    names = [n for n in CONFIGS if n in wanted]
    if args.assemble:
        args.datasets = ["codefest_dev"]
    settings = get_settings()
    enc = build_encoder(EncoderSpec()) if not args.assemble else None
    rr = build_reranker() if not args.assemble else None
    deep = None
    if "codefest_dev" in args.datasets and not args.assemble and args.judgments_from is not None:
        (mapping,) = sorted((args.judgments_from / "organiser").glob("*.mapping.jsonl"))
        graded = {p.stem: p for p in sorted((args.judgments_from / "graded").glob("*.jsonl"))}
        deep = merged_qrels_from_files(mapping, graded)
        print(f"deepened judgments from files: {len(deep)} ({', '.join(graded)})", file=sys.stderr)
    elif "codefest_dev" in args.datasets and not args.assemble:
        try:
            engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
            deep = read_merged(engine)
        except Exception as exc:  # noqa: BLE001 - no database: the shared deepened judgments alone
            print(f"PostgreSQL not reachable ({exc}); deepened judgments = shared file only", file=sys.stderr)
            deep = read_merged(None)
    reports: dict[str, dict] = {}
    shared_searcher = None
    for name in names:
        if args.assemble:
            reports[name] = {"codefest_dev": SavedReport.load(args.per_query_dir, name)}
            continue
        cfg = CONFIGS[name]
        if args.encode_limit is not None:
            cfg = cfg.with_(rerank_encode_limit=args.encode_limit)
        # a fresh searcher per configuration: vectors one configuration encoded at query time must
        # not change what the next one sees (with no encoding at query time one searcher serves all)
        if "codefest_dev" not in args.datasets:
            searcher = None
        elif args.encode_limit == 0:
            shared_searcher = shared_searcher or Searcher(settings.index_dir / enc.name, enc, reranker=rr)
            searcher = shared_searcher
        else:
            searcher = Searcher(settings.index_dir / enc.name, enc, reranker=rr)
        for ds in args.datasets:
            rep = (
                run_codefest(searcher, cfg, deep_records=deep)
                if ds == "codefest_dev"
                else run_xquad(ds, enc, cfg, settings.home / "eval_work", reranker=rr)
            )
            reports.setdefault(name, {})[ds] = rep
            if ds == "codefest_dev" and args.per_query_dir is not None:
                SavedReport.save(args.per_query_dir, name, rep)
            print(f"{name} {ds} {rep.aggregate['overall']}", file=sys.stderr, flush=True)
    rows = []
    for name in names:
        row = {"config": name}
        for ds in args.datasets:
            rep, base = reports[name][ds], reports[DEFAULT_NAME][ds]
            if ds == "codefest_dev":
                row.update(codefest_columns(rep, base, name == DEFAULT_NAME))
                continue
            for m in ["ndcg@10", "recall@10"]:
                row[f"{ds} {m}"] = round(rep.aggregate["overall"][m], 4)
                if name != DEFAULT_NAME:
                    row[f"{ds} {m} p"] = round(compare(rep.per_query, base.per_query, m).p_value, 4)
        rows.append(row)
    rows = with_holm(rows)
    out = ROOT / "evals" / "reports" / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """The rows as a markdown table (columns of the widest row; "—" where a row has none)."""
    cols = list(max(rows, key=len))  # the default's row has no p-value columns
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "—")) for c in cols) + " |")


if __name__ == "__main__":
    main()
