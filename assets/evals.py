"""Evaluation assets: the merged qrels, Codefest dev and XQuAD es→en, downstream of the indexes.

Each materialization records overall and per-phenomenon numbers as float metadata (plotted by the
Dagster UI across materializations), writes its per-query table to PostgreSQL
(``eval_per_query``), and names the configuration measured. A check compares NDCG@10 with the
last accepted baseline in ``evals/baselines.json``; another says whether the configuration is
measurable at all (Judged@10 >= 0.9 on the judgment set).

Codefest dev is scored on two judgment sets, separately: the original pooled judgments and the
deepened ones that the ``qrels`` asset merges (shared ``qrels_deepened.jsonl`` + grades imported
with ``radar judge import``), each with NDCG@10, Judged@10 and the condensed NDCG'@10.
"""

import json
from pathlib import Path

import dagster as dg
import polars as pl
import sqlalchemy as sa

from assets.precompute import AGGREGATE_KEYS
from evals.configs import DEFAULT_NAME, get_config
from evals.judging import agreement, latest_judgments, merged_qrels, read_merged, write_merged
from evals.runner import EvalReport, run_codefest, run_xquad
from evals.scoring import MIN_JUDGED, NOT_MEASURABLE
from radar_pipeline.retrieval.search import Searcher
from resources import DatabaseResource, EncoderResource, IndexStoreResource, PrecomputeResource, RerankerResource

BASELINES = Path(__file__).resolve().parents[1] / "evals" / "baselines.json"
TOLERANCE = 0.02


class EvalConfig(dg.Config):
    retrieval_config: str = DEFAULT_NAME


def _store_per_query(engine: sa.Engine, run_id: str, report: EvalReport) -> None:
    frame = report.per_query.select(
        [
            c
            for c in report.per_query.columns
            if report.per_query[c].dtype in (pl.Float64, pl.Float32, pl.Utf8, pl.Int64)
        ]
    )
    rows = [
        {
            "run_id": run_id,
            "dataset": report.dataset,
            "config": report.config,
            "query_id": r.get("query_id"),
            "metrics": json.dumps({k: v for k, v in r.items() if k != "query_id"}),
        }
        for r in frame.to_dicts()
    ]
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "CREATE TABLE IF NOT EXISTS eval_per_query (run_id text, dataset text, config text, "
                "query_id text, metrics jsonb, created_at timestamptz DEFAULT now())"
            )
        )
        conn.execute(
            sa.text("DELETE FROM eval_per_query WHERE run_id = :r AND dataset = :d"), {"r": run_id, "d": report.dataset}
        )
        if rows:
            conn.execute(
                sa.text(
                    "INSERT INTO eval_per_query (run_id, dataset, config, query_id, metrics) "
                    "VALUES (:run_id, :dataset, :config, :query_id, CAST(:metrics AS jsonb))"
                ),
                rows,
            )


def _metadata(report: EvalReport, cfg) -> dict:
    meta: dict = {
        "config": report.config,
        "config_detail": dg.MetadataValue.json(_cfg_dict(cfg)),
        "seconds": round(report.seconds, 2),
    }
    for group, values in report.aggregate.items():
        if isinstance(values, dict):
            for metric, v in values.items():
                if isinstance(v, (int, float)):
                    meta[f"{group}/{metric}"] = float(v)
        elif isinstance(values, (int, float)):
            meta[group] = float(values)
    return meta


def _cfg_dict(cfg) -> dict:
    from dataclasses import asdict

    return json.loads(json.dumps(asdict(cfg), default=str))


@dg.asset(
    group_name="evaluation",
    kinds={"python", "postgres"},
    description="The deepened Codefest dev judgments the evaluation reads (table qrels_merged): the shared "
    "blind judgments (qrels_deepened.jsonl) + the grades imported with `radar judge import` (per passage the "
    "lower median of its annotators' latest grades), with inter-annotator agreement (Cohen's kappa, "
    "linear and quadratic weighted kappa) as metadata. The original pooled judgments are kept apart.",
)
def qrels(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
    engine = database.engine()
    latest = latest_judgments(engine)
    records = merged_qrels(engine)
    n = write_merged(engine, records, {k: len(v) for k, v in latest.items()})
    ag = agreement(latest)
    meta: dict = {
        "passages": n,
        "shared": sum(1 for r in records if r.doc_id != "imported"),
        "imported": sum(1 for r in records if r.doc_id == "imported"),
        "annotators": len(ag["annotators"]),
        "overlap_passages": ag["n_overlap"],
        "agreement": dg.MetadataValue.json(ag),
    }
    for g in (0, 1, 2):
        meta[f"grade_{g}"] = sum(1 for r in records if r.grade == g)
    if ag["pooled"]:
        for key in ("n", "exact", "kappa", "kappa_linear", "kappa_quadratic"):
            meta[f"agreement/{key}"] = float(ag["pooled"][key])
    context.log.info(f"qrels: {n} passages, {meta['imported']} imported, agreement {ag['pooled']}")
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    group_name="evaluation",
    deps=["faiss_index", "bm25_index", "rerank_index", "qrels"],
    kinds={"python"},
    description="25 Codefest dev questions (graded passages, relevant documents) on the full index: "
    "NDCG@10, F1@3, Recall@10, MRR@10, Recall@candidates, overall and per phenomenon; NDCG@10, Judged@10 "
    "and condensed NDCG'@10 on the original judgments and (deep_*) on the merged deepened ones, separately.",
)
def eval_codefest_dev(
    context: dg.AssetExecutionContext,
    config: EvalConfig,
    database: DatabaseResource,
    encoder: EncoderResource,
    reranker: RerankerResource,
    index_store: IndexStoreResource,
) -> dg.MaterializeResult:
    enc = encoder.get_encoder()
    cfg = get_config(config.retrieval_config)
    searcher = Searcher(
        index_store.for_encoder(enc.name), enc, cfg, reranker=reranker.get_reranker() if cfg.rerank_k else None
    )
    engine = database.engine()
    report = run_codefest(searcher, cfg, deep_records=read_merged(engine))
    _store_per_query(engine, context.run_id, report)
    context.log.info(f"codefest_dev[{cfg.name}]: {report.aggregate['overall']}")
    return dg.MaterializeResult(metadata=_metadata(report, cfg))


@dg.asset(
    group_name="evaluation",
    deps=["faiss_index"],
    kinds={"python"},
    description="XQuAD es→en (240 and 2,067 English paragraphs, 1,190 Spanish questions each), each over "
    "its own small index with the same encoder and retrieval code: NDCG@10, Recall@10, MRR@10.",
)
def eval_xquad(
    context: dg.AssetExecutionContext,
    config: EvalConfig,
    database: DatabaseResource,
    encoder: EncoderResource,
    reranker: RerankerResource,
    index_store: IndexStoreResource,
) -> dg.MaterializeResult:
    enc = encoder.get_encoder()
    cfg = get_config(config.retrieval_config)
    rr = reranker.get_reranker() if cfg.rerank_k else None
    work = index_store.eval_work()
    meta: dict = {"config": cfg.name, "config_detail": dg.MetadataValue.json(_cfg_dict(cfg))}
    for name in ("xquad_es_en", "xquad_es_en_hard"):
        report = run_xquad(name, enc, cfg, work, reranker=rr)
        _store_per_query(database.engine(), context.run_id, report)
        for k, v in _metadata(report, cfg).items():
            if k not in ("config", "config_detail"):
                meta[f"{name}/{k}"] = v
        context.log.info(f"{name}[{cfg.name}]: {report.aggregate['overall']}")
    return dg.MaterializeResult(metadata=meta)


def _baseline_check(asset: str, datasets: list[str]) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=asset,
        name=f"{asset}_ndcg_vs_baseline",
        description=f"NDCG@10 no more than {TOLERANCE} below the accepted baseline in evals/baselines.json",
    )
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        ev = context.instance.get_latest_materialization_event(dg.AssetKey(asset))
        meta = ev.asset_materialization.metadata if ev and ev.asset_materialization else {}
        config = getattr(meta.get("config"), "value", None) or meta.get("config")
        baselines = json.loads(BASELINES.read_text())
        out, passed = {}, True
        for ds in datasets:
            prefix = "" if ds == asset.removeprefix("eval_") else f"{ds}/"
            value = getattr(meta.get(f"{prefix}overall/ndcg@10"), "value", None)
            base = baselines.get(ds, {}).get(str(config))
            out[f"{ds}/ndcg@10"] = value
            out[f"{ds}/baseline"] = base
            judged = getattr(meta.get(f"{prefix}overall/judged@10"), "value", None)
            if judged is not None:  # passage judgments with holes: say so beside the comparison
                out[f"{ds}/judged@10"] = judged
                if judged < MIN_JUDGED:
                    out[f"{ds}/comparison"] = f"{NOT_MEASURABLE} (Judged@10 {judged:.3f} < {MIN_JUDGED})"
            if value is not None and base is not None and value < base - TOLERANCE:
                passed = False
        return dg.AssetCheckResult(
            passed=passed, metadata={k: v for k, v in out.items() if v is not None} | {"config": str(config)}
        )

    return _check


@dg.asset_check(
    asset="eval_codefest_dev",
    name="eval_codefest_dev_measurable",
    description=f"Judged@10 >= {MIN_JUDGED} on the judgment sets: below it, comparing this configuration with "
    f"another is '{NOT_MEASURABLE}' (judge its passages: `radar judge export` / `radar judge import`). "
    "Fails (warning) when the deepened set does not reach it; the original set is reported beside it.",
)
def eval_codefest_dev_measurable(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    ev = context.instance.get_latest_materialization_event(dg.AssetKey("eval_codefest_dev"))
    meta = ev.asset_materialization.metadata if ev and ev.asset_materialization else {}
    config = getattr(meta.get("config"), "value", None) or meta.get("config")
    out: dict = {"config": str(config), "min_judged@10": MIN_JUDGED}
    measurable: dict[str, bool] = {}
    for prefix, label in (("", "original"), ("deep_", "deepened")):
        for group in ("overall", "F1", "F2", "F3"):
            v = getattr(meta.get(f"{group}/{prefix}judged@10"), "value", None)
            if v is not None:
                out[f"{label}/{group}/judged@10"] = float(v)
        v = out.get(f"{label}/overall/judged@10")
        measurable[label] = v is not None and v >= MIN_JUDGED
        out[f"{label}/status"] = "measurable" if measurable[label] else NOT_MEASURABLE
    return dg.AssetCheckResult(passed=measurable["deepened"], severity=dg.AssetCheckSeverity.WARN, metadata=out)


eval_checks = [
    _baseline_check("eval_codefest_dev", ["codefest_dev"]),
    _baseline_check("eval_xquad", ["xquad_es_en", "xquad_es_en_hard"]),
    eval_codefest_dev_measurable,
]


@dg.asset(
    group_name="evaluation",
    # the dashboard aggregates are the assets of the ``dashboard_aggregates`` multi-asset (agg_*), not its name
    deps=["faiss_index", "bm25_index", "rerank_index", "publication_dates", "armed_presence", *AGGREGATE_KEYS],
    kinds={"python"},
    description="Stage-2 evaluation of the agent on two Spanish question sets written by people who did not "
    "see the system (evals/stage2/: dev, on which the question-reading rules were written, and held-out): "
    "route, component and filter accuracy (each filter), premise handling, share of answers whose every "
    "sentence cites a passage read in the run, p50/p95 latency and model calls per route, and runs against "
    "the local fake model server failing in each role (runs ending 'error': target 0).",
)
def eval_stage2(
    context: dg.AssetExecutionContext,
    database: DatabaseResource,
    encoder: EncoderResource,
    index_store: IndexStoreResource,
    precompute: PrecomputeResource,
) -> dg.MaterializeResult:
    from evals.stage2 import flat_metrics, run_stage2
    from radar_pipeline.agent.service import AgentService, ServiceSettings

    enc = encoder.get_encoder()
    service = AgentService(
        ServiceSettings(index_dir=index_store.for_encoder(enc.name), trace=False),
        encoder=enc,
        engine=database.engine(),
    )
    report = run_stage2(service, precompute.config().shared_dir, log=context.log.info)
    summary = {
        name: {part: {k: v for k, v in rep.items() if k != "rows"} for part, rep in block.items()}
        if name != "degraded"
        else {k: v for k, v in block.items() if k != "rows"}
        for name, block in report.items()
    }
    meta: dict = {k: v for k, v in flat_metrics(report).items()}
    meta["summary"] = dg.MetadataValue.json(summary)
    return dg.MaterializeResult(metadata=meta)


@dg.asset_check(
    asset="eval_stage2",
    name="eval_stage2_targets",
    description="Held-out set: ≥ 95 % of visual questions get the right component and filters; no run ends "
    "'error' when only the model endpoint fails; every answered text sentence cites a passage read.",
)
def eval_stage2_targets(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    ev = context.instance.get_latest_materialization_event(dg.AssetKey("eval_stage2"))
    meta = ev.asset_materialization.metadata if ev and ev.asset_materialization else {}

    def num(key: str) -> float | None:
        v = meta.get(key)
        return getattr(v, "value", v)

    acc = num("heldout/reading/component_and_filters_accuracy")
    errors = num("degraded/errors")
    cited = num("heldout/runs/cited_and_read_share")
    passed = acc is not None and acc >= 0.95 and errors == 0 and (cited is None or cited >= 0.999)
    return dg.AssetCheckResult(
        passed=bool(passed),
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"component_and_filters_heldout": acc, "degraded_errors": errors, "cited_and_read": cited},
    )


eval_checks.append(eval_stage2_targets)


class AnswerEvalConfig(dg.Config):
    """Which answer sets to run: names under ``sets_dir`` (default ``evals/answers/sets``; empty
    list = every set there); ``limit`` > 0 asks only the first N questions of each (a quick check)."""

    sets: list[str] = []
    sets_dir: str = ""
    limit: int = 0
    warmup: bool = True


@dg.asset(
    group_name="evaluation",
    deps=["faiss_index", "bm25_index", "rerank_index", "publication_dates", "armed_presence", *AGGREGATE_KEYS],
    kinds={"python", "postgres"},
    description="Answer evaluation (evals/answers/): every question of the analysts' answer sets (Spanish, written "
    "blind, each with 1-3 key facts and its source) asked once through the offline agent on the materialized index, "
    "one at a time; the answers stored (answer_runs, answer_results) and scored with the blind judges' grades "
    "imported so far (`radar answers import`; an answer nobody graded is pending, never scored): key facts "
    "stated, citation support, non-statement sentences, false premises flagged, unanswerable questions answered, "
    "with 95 % bootstrap intervals, per set, phenomenon and type; latency p50/p95 and the slowest step.",
)
def answer_evaluation(
    context: dg.AssetExecutionContext,
    config: AnswerEvalConfig,
    database: DatabaseResource,
    encoder: EncoderResource,
    index_store: IndexStoreResource,
) -> dg.MaterializeResult:
    from evals.answers.judging import latest_grades
    from evals.answers.runs import run_meta, run_set, store_run
    from evals.answers.scoring import flat_metrics, score_run
    from evals.answers.sets import available_sets, load_set, set_path
    from radar_pipeline.agent.llm import LLMSettings
    from radar_pipeline.agent.service import AgentService, ServiceSettings

    enc = encoder.get_encoder()
    engine = database.engine()
    offline = LLMSettings(base_url=None, api_key=None, model_large=None, model_small=None)
    service = AgentService(
        ServiceSettings(index_dir=index_store.for_encoder(enc.name), trace=False, llm=offline),
        encoder=enc,
        engine=engine,
    )
    sets_dir = config.sets_dir or None
    names = list(config.sets) or available_sets(sets_dir)
    if not names:
        raise dg.Failure(f"no answer sets in {sets_dir or 'evals/answers/sets'}")
    runner = service.runner()
    meta: dict = {"sets": ", ".join(names), "mode": service.mode}
    summaries: dict = {}
    for i, name in enumerate(names):
        items = load_set(set_path(name, sets_dir))
        items = items[: config.limit] if config.limit > 0 else items
        records = run_set(runner, items, corpus=service.corpus, warmup=config.warmup and i == 0, log=context.log.debug)
        info = run_meta(service, records) | {"dagster_run_id": context.run.run_id}
        key = store_run(engine, name, records, info)
        report = score_run(records, latest_grades(engine), set_name=name, run_key=key, run_meta=info)
        meta |= flat_metrics(report, prefix=f"{name}/")
        slow = report["latency"]["slowest_step"] or {}
        meta[f"{name}/slowest_step"] = str(slow.get("name"))
        meta[f"{name}/run_key"] = key
        summaries[name] = {k: v for k, v in report.items() if k not in ("items", "latency")} | {
            "latency": {k: v for k, v in report["latency"].items() if k != "by_step_tool"}
        }
        o = report["overall"]
        context.log.info(
            f"answers[{name}]: {o['judged']} judged, {o['pending']} pending; key facts {o['key_facts_stated']['share']}, "
            f"citations {o['citation_support']['share']}; p50 {report['latency']['overall']['p50_ms']} ms, "
            f"slowest step {slow.get('name')}"
        )
    meta["summary"] = dg.MetadataValue.json(summaries)
    return dg.MaterializeResult(metadata=meta)


def _answer_target_status(meta: dict, name: str) -> tuple[bool, dict]:
    """Per target of ``evals.answers.scoring.TARGETS`` (quality targets; latency is reported, not
    checked: a materialization shares the machine): the value, ``met`` / ``missed`` / ``not measured``."""
    from evals.answers.scoring import TARGETS

    def num(key: str) -> float | None:
        v = meta.get(f"{name}/{key}")
        return getattr(v, "value", v)

    out: dict = {f"{name}/judged": num("judged"), f"{name}/pending": num("pending")}
    ok = True
    for target, (op, want) in TARGETS.items():
        v = num(target)
        if target.startswith("latency"):
            out[f"{name}/{target}"] = v
            continue
        if v is None:
            status, ok = "not measured (no judged answer of this kind yet)", False
        else:
            met = v >= want if op == ">=" else v <= want if op == "<=" else v == want
            status = "met" if met else "missed"
            ok = ok and met
        out[f"{name}/{target}"] = v
        out[f"{name}/{target}/status"] = f"{status} (target {op} {want})"
    return ok, out


@dg.asset_check(
    asset="answer_evaluation",
    name="answer_evaluation_targets",
    description="Every answer set, offline mode: >= 60 % of key facts stated, >= 95 % of citations support their "
    "sentence, 0 non-statement sentences, >= 3 of 4 false premises flagged with the contradicting passage, 0 "
    "unanswerable questions answered as if answered. A target with no judged answer is 'not measured' (fails, "
    "warning); latency p50/p95 are reported beside it (their target is checked by evals/bench_answer.py).",
)
def answer_evaluation_targets(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    ev = context.instance.get_latest_materialization_event(dg.AssetKey("answer_evaluation"))
    meta = ev.asset_materialization.metadata if ev and ev.asset_materialization else {}
    sets = getattr(meta.get("sets"), "value", None) or ""
    passed, out = bool(sets), {}
    for name in [s.strip() for s in str(sets).split(",") if s.strip()]:
        ok, part = _answer_target_status(meta, name)
        passed = passed and ok
        out |= part
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={k: v for k, v in out.items() if v is not None},
    )


eval_checks.append(answer_evaluation_targets)
