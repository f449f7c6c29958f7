"""The Dagster code location loads and every definition in it resolves, without materializing anything:
asset keys, asset checks and their targets, jobs and their selections, resources, schedules/sensors.
Loading evaluates no settings (they are read when a run uses a resource)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from assets.definitions import defs

ROOT = Path(__file__).resolve().parents[2]

INGESTION = {"source_files", "documents", "pages"}
KNOWLEDGE_BASE = {"chunks", "embeddings"}
INDEXES = {"faiss_index", "bm25_index", "pgvector_index", "pg_bm25_index", "rerank_vectors", "rerank_index"}
PRECOMPUTES = {
    "entity_dictionary",
    "place_gazetteer",
    "entity_mentions",
    "place_mentions",
    "publication_dates",
    "early_warnings",
    "armed_presence",
    "agg_documents_per_place",
    "agg_alerts_per_department",
    "agg_timeline",
    "agg_entity_heatmap",
    "agg_entity_network",
    "agg_entity_quadrant",
    "precompute_evaluation",
}
EVALUATION = {"qrels", "eval_codefest_dev", "eval_xquad", "eval_stage2", "answer_evaluation"}
KNOWLEDGE = {"claims", "alias_decisions", "claims_evaluation", "stale_answers"}
GROUPS = {
    "ingestion": INGESTION,
    "knowledge_base": KNOWLEDGE_BASE,
    "indexes": INDEXES,
    "precomputes": PRECOMPUTES,
    "evaluation": EVALUATION,
    "knowledge": KNOWLEDGE,
}
ALL_ASSETS = set().union(*GROUPS.values())
JOBS = {
    "knowledge_base_job": INGESTION | KNOWLEDGE_BASE | INDEXES,
    "precompute_job": PRECOMPUTES,
    "evaluation_job": EVALUATION,
    "claims_job": KNOWLEDGE,
}
RESOURCES = {"database", "corpus", "ocr", "chunking", "encoder", "reranker", "index_store", "precompute"}


def _names(keys) -> set[str]:
    return {k.to_user_string() for k in keys}


def test_definitions_are_loadable():
    """What ``dagster definitions validate`` checks: unique keys and names, every job resolves,
    every resource requirement is met, partition mappings valid."""
    dg.Definitions.validate_loadable(defs)


def test_every_asset_resolves_in_its_group():
    graph = defs.resolve_asset_graph()
    assert _names(graph.materializable_asset_keys) == ALL_ASSETS
    for group, names in GROUPS.items():
        assert {n for n in ALL_ASSETS if graph.get(dg.AssetKey(n)).group_name == group} == names


def test_every_check_targets_an_existing_asset():
    graph = defs.resolve_asset_graph()
    checks = graph.asset_check_keys
    assert (
        len(checks) == 39
    )  # + two current-version checks (documents, chunks); + three claims checks; + answers; + stale_answers_counted
    assert {c.asset_key for c in checks} <= graph.materializable_asset_keys
    names = {f"{c.asset_key.to_user_string()}:{c.name}" for c in checks}
    assert {
        "documents:documents_contract",
        "chunks:chunks_contract",
        "documents:documents_one_current_version",
        "chunks:chunks_one_current_version",
        "publication_dates:every_document_dated_or_counted",
        "eval_codefest_dev:eval_codefest_dev_ndcg_vs_baseline",
        "eval_codefest_dev:eval_codefest_dev_measurable",
        "eval_xquad:eval_xquad_ndcg_vs_baseline",
        "eval_stage2:eval_stage2_targets",
        "answer_evaluation:answer_evaluation_targets",
        "claims:every_claim_quotes_existing_evidence",
        "claims:one_current_version_per_claim",
        "alias_decisions:no_forced_merge",
    } <= names


def test_every_job_resolves_with_its_selection():
    jobs = {job.name: job for job in defs.resolve_all_job_defs()}
    assert set(JOBS) <= set(jobs)
    for name, selection in JOBS.items():
        assert _names(jobs[name].asset_layer.executable_asset_keys) == selection, name
    # the implicit job that the UI and `radar materialize` use holds every asset
    assert _names(defs.resolve_implicit_global_asset_job_def().asset_layer.executable_asset_keys) == ALL_ASSETS


def test_every_required_resource_is_provided():
    assert set(defs.resources) == RESOURCES
    graph = defs.resolve_asset_graph()
    required = set().union(*(a.required_resource_keys for a in graph.assets_defs))  # assets and checks
    assert required - {"io_manager"} == RESOURCES  # io_manager: Dagster's default, unused (MaterializeResult)


def test_schedules_and_sensors_resolve():
    repo = defs.get_repository_def()
    for schedule in repo.schedule_defs:
        assert schedule.job_name in {j.name for j in defs.resolve_all_job_defs()}
    for sensor in repo.sensor_defs:
        assert sensor.name
    # what keeps Radar current runs as soon as the daemon does (`radar ui`), nobody toggles it on
    assert {s.name: s.default_status for s in repo.sensor_defs} == {
        "corpus_sensor": dg.DefaultSensorStatus.RUNNING,
        "radar_index_automation": dg.DefaultSensorStatus.RUNNING,
        "radar_automation": dg.DefaultSensorStatus.RUNNING,
        "radar_background_automation": dg.DefaultSensorStatus.RUNNING,
        "radar_long_automation": dg.DefaultSensorStatus.RUNNING,
        "review_sensor": dg.DefaultSensorStatus.RUNNING,
    }
    assert {s.name: (s.job_name, s.default_status) for s in repo.schedule_defs} == {
        "evaluation_schedule": ("evaluation_job", dg.DefaultScheduleStatus.RUNNING)
    }


PER_FILE = {"source_files", "documents", "pages", "chunks", "embeddings", "rerank_vectors"}


def test_per_file_stages_are_partitioned_and_everything_else_follows():
    """Per-file stages share the content-bucket partitions; every asset downstream of them has an
    automation condition (eager, evaluations on cron); every asset runs a partition range in one run."""
    graph = defs.resolve_asset_graph()
    parts = {k.to_user_string(): graph.get(k).partitions_def for k in graph.materializable_asset_keys}
    assert {n for n, p in parts.items() if p is not None} == PER_FILE
    assert {parts[n] for n in PER_FILE} == {dg.StaticPartitionsDefinition(list("0123456789abcdef"))}
    for key in graph.materializable_asset_keys:
        node = graph.get(key)
        assert node.backfill_policy == dg.BackfillPolicy.single_run(), key
        name = key.to_user_string()
        label = node.automation_condition.get_label() if node.automation_condition else None
        if name == "source_files":
            assert label is None  # started by corpus_sensor
        elif name in EVALUATION:
            assert label.startswith("on_cron"), name
        elif name in ("entity_mentions", "place_mentions"):
            assert label == "eager, missing, or a reviewer decided", name  # assets.partitions.REVIEWED
        else:
            assert label == "eager or missing", name  # assets.partitions.EAGER


def test_resources_read_the_environment_when_used(monkeypatch, tmp_path):
    """The same Definitions object follows the environment: nothing was frozen at import."""
    monkeypatch.setenv("RADAR_HOME", str(tmp_path))
    monkeypatch.setenv("RADAR_WORKERS", "3")
    monkeypatch.setenv("RADAR_CHUNK_TOKENS", "123")
    monkeypatch.setenv("RADAR_RERANKER_MAX_WORDS", "64")
    r = defs.resources
    assert r["index_store"].for_encoder("x") == tmp_path / "indexes" / "x"
    assert r["index_store"].eval_work() == tmp_path / "eval_work"
    assert r["corpus"].worker_count() == 3 and r["precompute"].config().workers == 3
    assert r["chunking"].settings().chunk_tokens == 123
    assert r["reranker"].spec().max_words == 64 and r["encoder"].spec().kind == "usem3"


def test_loading_evaluates_no_settings():
    """Settings that would fail validation do not stop the code location from loading."""
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "RADAR_WORKERS": "not-a-number",
            "RADAR_RERANK_BUDGET_MINUTES": "soon",
            "RADAR_ENCODER_THREADS": "many",
            "RADAR_CHUNK_TOKENS": "lots",
        }
    )
    code = (
        "import dagster as dg; from assets.definitions import defs; dg.Definitions.validate_loadable(defs); "
        "print(len(defs.resolve_asset_graph().materializable_asset_keys))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == str(len(ALL_ASSETS))


def test_every_dependency_is_an_asset_of_the_project():
    """A dependency on a name that is no asset key (e.g. a multi-asset's function name instead of
    its outputs) silently becomes an external asset that never materializes: none may exist."""
    graph = defs.resolve_asset_graph()
    materializable = graph.materializable_asset_keys
    # the one declared external asset: recorded by review_sensor (assets.automation), read by the mentions
    review = dg.AssetKey("reviewer_decisions")
    assert review in graph.get_all_asset_keys() and review not in materializable
    phantom = {
        (key.to_user_string(), parent.to_user_string())
        for key in materializable
        for parent in graph.get(key).parent_keys
        if parent not in materializable and parent != review
    }
    assert phantom == set()
    assert {k.to_user_string() for k in graph.get(review).child_keys} == {"entity_mentions", "place_mentions"}
