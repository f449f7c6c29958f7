"""Evaluation assets: Codefest dev and XQuAD es→en, downstream of the indexes.

Each materialization records overall and per-phenomenon numbers as float metadata (plotted by the
Dagster UI across materializations), writes its per-query table to PostgreSQL
(``eval_per_query``), and names the configuration measured. A check compares NDCG@10 with the
last accepted baseline in ``evals/baselines.json``.
"""

import json
from pathlib import Path

import dagster as dg
import polars as pl
import sqlalchemy as sa

from evals.configs import DEFAULT_NAME, get_config
from evals.runner import EvalReport, run_codefest, run_xquad
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
    deps=["faiss_index", "bm25_index", "rerank_vectors"],
    kinds={"python"},
    description="25 Codefest dev questions (graded passages, relevant documents) on the full index: "
    "NDCG@10, F1@3, Recall@10, MRR@10, Recall@candidates, overall and per phenomenon.",
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
    report = run_codefest(searcher, cfg)
    _store_per_query(database.engine(), context.run_id, report)
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
            if value is not None and base is not None and value < base - TOLERANCE:
                passed = False
        return dg.AssetCheckResult(
            passed=passed, metadata={k: v for k, v in out.items() if v is not None} | {"config": str(config)}
        )

    return _check


eval_checks = [
    _baseline_check("eval_codefest_dev", ["codefest_dev"]),
    _baseline_check("eval_xquad", ["xquad_es_en", "xquad_es_en_hard"]),
]


@dg.asset(
    group_name="evaluation",
    deps=["faiss_index", "bm25_index", "rerank_vectors", "dashboard_aggregates", "publication_dates"],
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
