"""The corpus sensor and declarative automation, evaluated against a real Dagster instance and a real
PostgreSQL: a dropped, changed or removed file yields a run of its content bucket, an unchanged
(or merely touched) corpus none; materializing an upstream asset makes the automation request
what reads it, partition by partition."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from assets.automation import (
    BUILD_TAG,
    CORPUS_RUN_INDEXES,
    CORPUS_SENSOR_ASSETS,
    FIRST_LIGHT_ASSETS,
    MAX_BUCKET_RUNS,
    corpus_sensor,
    decode_cursor,
)
from assets.definitions import defs
from assets.partitions import EAGER
from radar_pipeline.corpus import CONTENT_BUCKETS, content_bucket, sha256_file
from radar_pipeline.stages import sync_source_files
from resources import CorpusResource, DatabaseResource


@pytest.fixture()
def corpus(tmp_path) -> Path:
    root = tmp_path / "corpus"
    (root / "F1").mkdir(parents=True)
    (root / "F1" / "a.txt").write_text("Primer informe sobre drones armados.\n", encoding="utf-8")
    (root / "F1" / "b.txt").write_text("Segundo informe sobre minería ilegal.\n", encoding="utf-8")
    return root


def _tick(instance, corpus: Path, pg_url: str, tmp_path: Path, cursor: str | None):
    resources = {
        "corpus": CorpusResource(corpus_dir=str(corpus)),
        "database": DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused")),
    }
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources, definitions=defs) as ctx:
        return corpus_sensor(ctx)


def _bucket(path: Path) -> str:
    return content_bucket(sha256_file(path))


def test_sensor_requests_the_buckets_of_new_changed_and_removed_files(engine, pg_url, corpus, tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    # first tick, nothing materialized: every file is new
    first = _tick(instance, corpus, pg_url, tmp_path, None)
    expected = sorted({_bucket(corpus / "F1" / "a.txt"), _bucket(corpus / "F1" / "b.txt")})
    assert sorted(r.partition_key for r in first.run_requests) == expected
    for r in first.run_requests:
        # the per-file stages of the bucket, then the search indexes in the same run
        assert r.asset_selection == [dg.AssetKey(k) for k in (*CORPUS_SENSOR_ASSETS, *CORPUS_RUN_INDEXES)]
        assert r.tags["radar/trigger"] == "corpus_sensor"
        # steps in the run's process, by tag (no run config: it works on any executor, Celery too)
        assert r.tags["radar/executor"] == "in_process" and r.tags["radar/lane"] == "corpus"
        assert not r.run_config
    assert set(decode_cursor(first.cursor)) == {"F1/a.txt", "F1/b.txt"}

    # unchanged corpus: no run, and a touched file (same bytes, new mtime) is no change either
    same = _tick(instance, corpus, pg_url, tmp_path, first.cursor)
    assert not same.run_requests and same.skip_reason
    st = (corpus / "F1" / "a.txt").stat()
    os.utime(corpus / "F1" / "a.txt", (st.st_atime + 10, st.st_mtime + 10))
    touched = _tick(instance, corpus, pg_url, tmp_path, same.cursor)
    assert not touched.run_requests

    # a dropped file: one run of its bucket, counted as new
    dropped = corpus / "F1" / "nuevo.txt"
    dropped.write_text("Un informe nuevo sobre deforestación en la Amazonía.\n", encoding="utf-8")
    new = _tick(instance, corpus, pg_url, tmp_path, touched.cursor)
    assert [r.partition_key for r in new.run_requests] == [_bucket(dropped)]
    assert new.run_requests[0].tags["radar/new_files"] == "1"

    # a changed file: the buckets of its old and its new bytes
    old_bucket = _bucket(corpus / "F1" / "b.txt")
    (corpus / "F1" / "b.txt").write_text("Segundo informe, revisado: minería ilegal de oro.\n", encoding="utf-8")
    changed = _tick(instance, corpus, pg_url, tmp_path, new.cursor)
    assert sorted(r.partition_key for r in changed.run_requests) == sorted(
        {old_bucket, _bucket(corpus / "F1" / "b.txt")}
    )

    # a removed file is seen: its bucket runs (and removes its rows there)
    gone_bucket = _bucket(corpus / "F1" / "a.txt")
    (corpus / "F1" / "a.txt").unlink()
    removed = _tick(instance, corpus, pg_url, tmp_path, changed.cursor)
    assert [r.partition_key for r in removed.run_requests] == [gone_bucket]
    assert removed.run_requests[0].tags["radar/removed_files"] == "1"
    assert "F1/a.txt" not in decode_cursor(removed.cursor)


def test_sensor_batches_many_buckets_into_one_range_run(engine, pg_url, tmp_path):
    """A bulk copy onto a built corpus touching more than MAX_BUCKET_RUNS buckets is one run over the
    whole bucket range, not one run per bucket."""
    root = tmp_path / "many"
    root.mkdir()
    (root / "built.txt").write_text("Un informe ya materializado.\n", encoding="utf-8")
    sync_source_files(engine, root)  # something is built: not a first build
    for i in range(40):
        (root / f"informe_{i:02d}.txt").write_text(f"Informe número {i} sobre minería ilegal.\n", encoding="utf-8")
    res = _tick(dg.DagsterInstance.ephemeral(), root, pg_url, tmp_path, None)
    assert len({_bucket(p) for p in root.iterdir()}) > MAX_BUCKET_RUNS
    [req] = res.run_requests
    assert req.partition_key is None and req.tags["radar/new_files"] == "40"
    assert (req.tags["dagster/asset_partition_range_start"], req.tags["dagster/asset_partition_range_end"]) == (
        "0",
        "f",
    )


def test_a_first_build_makes_one_bucket_searchable_first(engine, pg_url, tmp_path):
    """Issue 24 §3: on a first build the range run is preceded by a first-light run of one bucket
    (the one with the fewest new bytes) through the per-file stages to ``chunks`` and then the BM25
    index, no vectors; both runs carry the build tag that dagster.yaml admits once at a time, the
    first light ahead in the queue."""
    import yaml

    root = tmp_path / "first"
    root.mkdir()
    for i in range(40):  # one file in each bucket much longer than the others: never the first light
        body = "Informe sobre minería ilegal en la cuenca del río. " * (200 if i % 3 == 0 else 1)
        (root / f"informe_{i:02d}.txt").write_text(f"Informe {i}. {body}\n", encoding="utf-8")
    res = _tick(dg.DagsterInstance.ephemeral(), root, pg_url, tmp_path, None)
    first, bulk = res.run_requests
    size: dict[str, int] = {}
    for p in root.iterdir():
        size[_bucket(p)] = size.get(_bucket(p), 0) + p.stat().st_size
    assert first.partition_key == min(sorted(size), key=lambda b: size[b]) == first.tags["radar/first_light"]
    assert (
        {k.to_user_string() for k in first.asset_selection}
        == {*FIRST_LIGHT_ASSETS}
        == {
            "source_files",
            "documents",
            "pages",
            "chunks",
            "bm25_index",
        }
    )
    assert bulk.partition_key is None and {k.to_user_string() for k in bulk.asset_selection} == {
        *CORPUS_SENSOR_ASSETS,
        *CORPUS_RUN_INDEXES,
    }
    assert int(first.tags["dagster/priority"]) > int(bulk.tags["dagster/priority"])
    assert first.tags[BUILD_TAG] == bulk.tags[BUILD_TAG] == "bulk"
    limits = yaml.safe_load((Path(__file__).resolve().parents[2] / "dagster.yaml").read_text())["concurrency"]["runs"]
    assert {"key": BUILD_TAG, "value": "bulk", "limit": 1} in limits["tag_concurrency_limits"]


def test_sensor_without_cursor_compares_with_what_was_materialized(engine, pg_url, corpus, tmp_path):
    """A corpus `radar materialize` already built is not rebuilt when the sensor first starts."""
    sync_source_files(engine, corpus)
    instance = dg.DagsterInstance.ephemeral()
    first = _tick(instance, corpus, pg_url, tmp_path, None)
    assert not first.run_requests
    (corpus / "F1" / "c.txt").write_text("Tercer informe.\n", encoding="utf-8")
    assert [r.partition_key for r in _tick(instance, corpus, pg_url, tmp_path, None).run_requests] == [
        _bucket(corpus / "F1" / "c.txt")
    ]


def _report(instance, key: str, partitions=None) -> None:
    for p in partitions or [None]:
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=key, partition=p))


def _requested(result) -> dict[str, set]:
    out: dict[str, set] = {}
    for r in result.results:
        key = r.key.to_user_string() if hasattr(r.key, "to_user_string") else str(r.key)
        if r.true_subset.size:
            parts = r.true_subset.expensively_compute_partition_keys() if r.true_subset.is_partitioned else {None}
            out[key] = set(parts)
    return out


def test_daemon_runs_carry_the_lanes_dagster_yaml_limits():
    """Every automation sensor tags its runs with a lane, a priority and in-process steps; the run
    queue admits one precompute, one background and one long run at a time, so the corpus and index
    lanes always find a slot and the re-ranker vectors (hours) never hold the claims' lane; every
    asset is evaluated by exactly one sensor."""
    import yaml

    from assets.automation import (
        automation_sensor,
        background_automation_sensor,
        index_automation_sensor,
        long_automation_sensor,
    )

    queue = yaml.safe_load((Path(__file__).resolve().parents[2] / "dagster.yaml").read_text())["concurrency"]["runs"]
    limits = {(x["key"], x["value"]): x["limit"] for x in queue["tag_concurrency_limits"]}
    lanes = {k: v for k, v in limits.items() if k[0] == "radar/lane"}
    assert lanes == {("radar/lane", "background"): 1, ("radar/lane", "precompute"): 1, ("radar/lane", "long"): 1}
    # (the bulk build runs, one at a time, are corpus-lane runs: test_a_first_build_makes_one_bucket_searchable_first)
    assert set(limits) - set(lanes) == {("radar/build", "bulk")}
    assert queue["max_concurrent_runs"] >= sum(lanes.values()) + 2
    sensors = (index_automation_sensor, automation_sensor, background_automation_sensor, long_automation_sensor)
    tags = {s.name: s.run_tags for s in sensors}
    assert {t["radar/lane"] for t in tags.values()} == {"index", "precompute", "background", "long"}
    assert all(t["radar/executor"] == "in_process" for t in tags.values())
    prio = {t["radar/lane"]: int(t["dagster/priority"]) for t in tags.values()}
    assert prio["index"] > prio["precompute"] > prio["background"] > prio["long"]
    graph = defs.resolve_asset_graph()
    targets = [s.asset_selection.resolve(graph) for s in sensors]
    assert sum(len(t) for t in targets) == len(set().union(*targets))  # disjoint
    assert dg.AssetKey("rerank_vectors") in targets[3] and dg.AssetKey("pg_bm25_index") in targets[0]
    assert {dg.AssetKey(k) for k in ("claims", "alias_decisions", "precompute_evaluation")} <= targets[2]
    assert dg.AssetKey("agg_timeline") in targets[1]


def test_automation_follows_upstream_materializations():
    with dg.instance_for_test() as instance:
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        # nothing upstream exists: nothing downstream may run (eager waits for missing deps)
        assert "faiss_index" not in _requested(first)

        # the per-file stages of every bucket materialized (as `radar materialize` or the sensor's runs do)
        for key in CORPUS_SENSOR_ASSETS:
            _report(instance, key, CONTENT_BUCKETS)
        second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        req = _requested(second)
        assert {"faiss_index", "bm25_index", "pgvector_index", "armed_presence"} <= set(req)
        assert req["rerank_vectors"] == set(CONTENT_BUCKETS)  # reads chunks, partition by partition
        assert "eval_codefest_dev" not in req  # evaluations wait for their cron tick

        # those runs happened; one bucket's chunks change: only that bucket's embeddings follow
        for key in ("faiss_index", "bm25_index", "pgvector_index"):
            _report(instance, key)
        _report(instance, "rerank_vectors", CONTENT_BUCKETS)
        third = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=second.cursor)
        _report(instance, "chunks", ["7"])
        fourth = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=third.cursor)
        req = _requested(fourth)
        assert req["embeddings"] == {"7"} and req["rerank_vectors"] == {"7"}
        assert "documents" not in req and "source_files" not in req
        assert "bm25_index" in req  # reads chunks (all partitions)


def _dependency_free_precomputes() -> set[str]:
    graph = defs.resolve_asset_graph()
    return {
        k.to_user_string()
        for k in graph.get_all_asset_keys()
        if graph.get(k).automation_condition == EAGER and not graph.get(k).parent_keys
    }


def test_an_empty_home_builds_what_nothing_upstream_gates():
    """``make up`` on a fresh clone: eager() alone never starts an asset that was already missing on
    the first evaluation, which left the entity dictionary and the gazetteer (and so mentions, alerts,
    aggregates and claims) unbuilt; a missing asset whose inputs all exist is built once."""
    roots = _dependency_free_precomputes()
    assert {"entity_dictionary", "place_gazetteer"} <= roots
    with dg.instance_for_test() as instance:
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        req = _requested(first)
        assert roots <= set(req)
        assert "entity_mentions" not in req and "claims" not in req  # their inputs are missing
        # requested but not yet run: asked again on the next tick only while not in progress is
        # Dagster's business; once built, what reads them follows as soon as the chunks exist
        for key in roots:
            _report(instance, key)
        for key in CORPUS_SENSOR_ASSETS:
            _report(instance, key, CONTENT_BUCKETS)
        second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        req = _requested(second)
        assert not roots & set(req)  # present now: not rebuilt
        assert {"entity_mentions", "place_mentions", "publication_dates"} <= set(req)


def test_a_failed_build_of_a_missing_asset_is_not_retried_every_tick():
    @dg.asset(name="entity_dictionary")
    def broken():
        raise RuntimeError("the dictionary file is unreadable")

    with dg.instance_for_test() as instance:
        result = dg.materialize([broken], instance=instance, raise_on_error=False)
        assert not result.success
        req = _requested(dg.evaluate_automation_conditions(defs=defs, instance=instance))
        assert "entity_dictionary" not in req  # waits for an upstream update or a manual run
        assert "place_gazetteer" in req


def test_stale_answers_follow_every_change_of_the_passages():
    """The stale-answer flagging (issue 25 §2) runs eagerly after any bucket's chunks changed, in the
    background lane, so a superseded or retracted passage marks its answers without a manual step."""
    from assets.automation import background_automation_sensor

    graph = defs.resolve_asset_graph()
    assert dg.AssetKey("stale_answers") in background_automation_sensor.asset_selection.resolve(graph)
    with dg.instance_for_test() as instance:
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        assert "stale_answers" not in _requested(first)  # nothing to read yet
        for key in CORPUS_SENSOR_ASSETS:
            _report(instance, key, CONTENT_BUCKETS)
        second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        assert "stale_answers" in _requested(second)
        _report(instance, "stale_answers")
        third = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=second.cursor)
        assert "stale_answers" not in _requested(third)
        _report(instance, "chunks", ["c"])  # one bucket re-chunked: passages may have closed
        fourth = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=third.cursor)
        assert "stale_answers" in _requested(fourth)
