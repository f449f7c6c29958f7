"""What keeps Radar current without a manual step: the corpus sensor, the automation condition
sensor and the evaluation schedule (all default-on: ``radar ui``/``make ui`` start the daemon).

* ``corpus_sensor`` watches ``RADAR_CORPUS_DIR`` every ``CORPUS_SENSOR_INTERVAL_S`` seconds. Its
  cursor is the last snapshot (path → size, mtime, SHA-256); a file is hashed only when its size or
  mtime changed, so a touched file with the same bytes is no change. For every content bucket a new,
  changed or removed file touches it requests one run of the per-file stages of that partition
  (``source_files`` → ``documents``/``pages`` → ``chunks`` → ``embeddings``). Without a cursor (first
  tick, or a reset sensor) the snapshot it compares against is the materialized ``source_files``
  table, so a corpus that ``radar materialize`` already built is not rebuilt.
* ``radar_index_automation``, ``radar_automation``, ``radar_background_automation`` and
  ``radar_long_automation`` evaluate the assets' ``AutomationCondition`` (``assets.partitions``): the
  search indexes, the precomputes, the background work (claims, alias decisions, stale answers,
  the precomputes' evaluation) and the long work (re-ranker vectors, evaluations) run eagerly after
  the stages they read, the evaluations on their daily cron. Each sensor tags its runs with a lane
  (``radar/lane``): ``dagster.yaml``'s ``concurrency.runs.tag_concurrency_limits`` admits one
  precompute, one background and one long run at a time, so the corpus sensor's and the index runs
  always find a slot and hours of re-ranker encoding never queue the claims behind them, and
  ``dagster/priority`` orders the queue (corpus 20, indexes 10, precomputes 0, background -10, long -20).
* ``evaluation_schedule`` re-runs ``evaluation_job`` weekly whatever changed (drift of a
  dependency outside the graph, e.g. a judgment import).
* ``review_sensor`` (issue 25 §1) watches the reviewers' alias decisions (``alias_decisions``,
  signal ``reviewer``): a decision, a changed decision or an undo is recorded as a runless
  materialization of the external asset ``reviewer_decisions`` with who decided what and when in
  its metadata, so the mentions (``REVIEWED``, ``assets.partitions``) re-run and the aggregates and
  claims follow eagerly, with the decision in their lineage.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib

import dagster as dg
import sqlalchemy as sa

from assets.executor import BACKGROUND_LANE, EXECUTOR_TAG, LANE_TAG, LONG_LANE
from assets.partitions import CONTENT_PARTITIONS
from radar_pipeline import db
from radar_pipeline.corpus import CONTENT_BUCKETS, CorpusChanges, content_bucket, diff_corpus
from resources import CorpusResource, DatabaseResource

# Seconds between two ticks of the corpus sensor (a stat of every file; hashes only for changed
# ones) and of the automation sensors of the indexes and precomputes (a few seconds of pipeline wait
# each, measured in evals/bench_freshness.py, against the daemon's idle CPU, reported there too);
# background work is not urgent.
CORPUS_SENSOR_INTERVAL_S = 5
AUTOMATION_INTERVAL_S = 5
BACKGROUND_INTERVAL_S = 30
# The per-file stages one corpus change runs, in one run per touched bucket (the re-ranker
# vectors follow by automation, so a new file is searchable before they are encoded).
CORPUS_SENSOR_ASSETS = ("source_files", "documents", "pages", "chunks", "embeddings")
# ... and, in the same run after them, the search indexes (unpartitioned: they read every bucket):
# a change is searchable when that run ends, without waiting for an automation tick and a second
# run's process start (~20-35 s under load, bench_freshness). Two such runs never write the index
# directory at once: those assets hold its writer lock (stores.integrity.index_write_lock).
CORPUS_RUN_INDEXES = ("bm25_index", "faiss_index", "pgvector_index")
# A first build's first-light run (``corpus_run_requests``): one bucket made searchable by words
# before anything is encoded.
FIRST_LIGHT_ASSETS = ("source_files", "documents", "pages", "chunks", "bm25_index")
# The tag of the bulk runs of a build (first light, then the range), one at a time (dagster.yaml's
# tag_concurrency_limits): two runs must never ingest the same bucket at once.
BUILD_TAG = "radar/build"
EVALUATION_SCHEDULE_CRON = "0 4 * * 0"  # Sundays 04:00
# More touched buckets than this (a first build, a bulk copy) → one run over the whole range
# (single-run backfill policy) instead of one run per bucket: each run pays ~10–20 s of process
# start and model loading, and unchanged contents cost nothing in a run (every stage is incremental).
MAX_BUCKET_RUNS = 4
# The daemon's runs are small (one bucket's new files, an incremental index or precompute): their
# steps run in the run's own process (tag read by assets.executor.RunTagExecutor; automation runs
# cannot pass run config), not one subprocess per step (each pays ~5–10 s of imports here, measured
# in evals/bench_freshness.py). The corpus sensor's runs go first in the run queue, then the index
# runs (searchability), the precomputes (the aggregates), then background work (dagster/priority,
# QueuedRunCoordinator); lanes (radar/lane) are limited in dagster.yaml.
PRIORITY_TAG = "dagster/priority"
IN_PROCESS_TAGS = {EXECUTOR_TAG: "in_process"}
CORPUS_TAGS = {**IN_PROCESS_TAGS, LANE_TAG: "corpus", PRIORITY_TAG: "20"}
INDEX_TAGS = {**IN_PROCESS_TAGS, LANE_TAG: "index", PRIORITY_TAG: "10"}
PRECOMPUTE_TAGS = {**IN_PROCESS_TAGS, LANE_TAG: "precompute", PRIORITY_TAG: "0"}
BACKGROUND_TAGS = {**IN_PROCESS_TAGS, LANE_TAG: BACKGROUND_LANE, PRIORITY_TAG: "-10"}
LONG_TAGS = {**IN_PROCESS_TAGS, LANE_TAG: LONG_LANE, PRIORITY_TAG: "-20"}


def encode_cursor(snapshot: dict[str, list]) -> str:
    """A compact cursor (zlib + base64 JSON) of a corpus snapshot (see ``diff_corpus``)."""
    raw = json.dumps(snapshot, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def decode_cursor(cursor: str | None) -> dict[str, list] | None:
    """The snapshot stored by ``encode_cursor``; None for no cursor or one that cannot be read."""
    if not cursor:
        return None
    try:
        return json.loads(zlib.decompress(base64.b64decode(cursor)))
    except (ValueError, zlib.error):
        return None


def materialized_snapshot(engine: sa.Engine) -> dict[str, list]:
    """The snapshot the pipeline last materialized: ``source_files`` rows as path → [size, mtime, sha256]."""
    t = db.source_files
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(t.name):
            return {}
        return {
            r.path: [r.size_bytes, r.mtime, r.sha256]
            for r in conn.execute(sa.select(t.c.path, t.c.size_bytes, t.c.mtime, t.c.sha256))
        }


def _bucket_run_key(bucket: str, changes: CorpusChanges, previous: dict[str, list]) -> str:
    """A run key unique to this change of this bucket (same state on a re-evaluation → same key)."""
    entries = sorted([p, *v] for p, v in changes.snapshot.items() if content_bucket(v[2]) == bucket) + sorted(
        ["-", p] for p in changes.removed if content_bucket(previous[p][2]) == bucket
    )
    digest = hashlib.sha256(json.dumps(entries).encode("utf-8")).hexdigest()[:16]
    return f"corpus-{bucket}-{digest}"


def first_light_bucket(changes: CorpusChanges) -> str:
    """The touched bucket a first build makes searchable first: the one whose new files hold the
    fewest bytes (extraction and sentence splitting cost about in proportion to them, and every bucket
    holds about a sixteenth of the corpus, all three phenomena; ties: the lower bucket)."""
    size: dict[str, int] = {b: 0 for b in changes.buckets}
    for path in changes.new:
        nbytes, _mtime, sha = changes.snapshot[path]
        bucket = content_bucket(sha)
        if bucket in size:
            size[bucket] += int(nbytes)
    return min(sorted(size), key=lambda b: size[b])


def corpus_run_requests(changes: CorpusChanges, previous: dict[str, list]) -> list[dg.RunRequest]:
    """One ``RunRequest`` of ``CORPUS_SENSOR_ASSETS`` (then ``CORPUS_RUN_INDEXES``) per content bucket ``changes`` touches, or
    one over the whole bucket range when more than ``MAX_BUCKET_RUNS`` are touched.

    A first build (nothing materialized yet, ``previous`` empty) touching the whole range is
    preceded by a **first-light run**: one bucket (``first_light_bucket``) through the per-file
    stages up to ``chunks`` and then ``bm25_index``, no vectors, so the lexical search goes live on a
    sixteenth of the corpus within minutes instead of after every bucket is chunked (issue 24 §3: the
    first cited answer came 617 s after ``make up``: 115 s extraction + 279 s chunking of all 1,934
    files + the BM25 build). The range run waits for it (both carry ``BUILD_TAG``, limited to one
    run at a time in ``dagster.yaml``: two runs must not ingest one bucket at once), then does the
    rest; that bucket's stages are already current there and cost nothing. The full lexical index,
    the dense and re-ranked stages follow by automation without a restart."""
    keys = [dg.AssetKey(k) for k in (*CORPUS_SENSOR_ASSETS, *CORPUS_RUN_INDEXES)]
    if len(changes.buckets) > MAX_BUCKET_RUNS:
        digest = hashlib.sha256(json.dumps(sorted(changes.snapshot.items())).encode("utf-8")).hexdigest()[:16]
        out: list[dg.RunRequest] = []
        if not previous:
            bucket = first_light_bucket(changes)
            out.append(
                dg.RunRequest(
                    run_key=f"corpus-first-{bucket}-{digest}",
                    partition_key=bucket,
                    asset_selection=[dg.AssetKey(k) for k in FIRST_LIGHT_ASSETS],
                    tags={
                        "radar/trigger": "corpus_sensor",
                        "radar/new_files": str(len(changes.new)),
                        "radar/first_light": bucket,
                        **CORPUS_TAGS,
                        PRIORITY_TAG: "30",
                        BUILD_TAG: "bulk",
                    },
                )
            )
        tags = {
            "radar/trigger": "corpus_sensor",
            "radar/new_files": str(len(changes.new)),
            "radar/changed_files": str(len(changes.changed)),
            "radar/removed_files": str(len(changes.removed) + len(changes.changed)),
            "dagster/asset_partition_range_start": CONTENT_BUCKETS[0],
            "dagster/asset_partition_range_end": CONTENT_BUCKETS[-1],
        }
        # a bulk change: one subprocess per step (parallel steps, memory freed after each)
        tags.update({LANE_TAG: "corpus", PRIORITY_TAG: "20", BUILD_TAG: "bulk"})
        return [*out, dg.RunRequest(run_key=f"corpus-all-{digest}", asset_selection=keys, tags=tags)]
    out = []
    for bucket in changes.buckets:

        def mine(paths, state, bucket=bucket):
            return [p for p in paths if content_bucket(state[p][2]) == bucket]

        tags = {
            "radar/trigger": "corpus_sensor",
            "radar/new_files": str(len(mine(changes.new, changes.snapshot))),
            "radar/changed_files": str(len(mine(changes.changed, changes.snapshot))),
            "radar/removed_files": str(len(mine(changes.removed, previous)) + len(mine(changes.changed, previous))),
            **CORPUS_TAGS,
        }
        out.append(
            dg.RunRequest(
                run_key=_bucket_run_key(bucket, changes, previous),
                partition_key=bucket,
                asset_selection=keys,
                tags=tags,
            )
        )
    return out


@dg.sensor(
    name="corpus_sensor",
    target=dg.AssetSelection.assets(*CORPUS_SENSOR_ASSETS, *CORPUS_RUN_INDEXES),
    minimum_interval_seconds=CORPUS_SENSOR_INTERVAL_S,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="New, changed and removed files under RADAR_CORPUS_DIR (size/mtime, SHA-256 when they "
    "changed) → one run of the per-file stages per touched content bucket, then the search indexes.",
)
def corpus_sensor(
    context: dg.SensorEvaluationContext, corpus: CorpusResource, database: DatabaseResource
) -> dg.SensorResult:
    previous = decode_cursor(context.cursor)
    if previous is None:
        previous = materialized_snapshot(database.engine())
    changes = diff_corpus(corpus.root, previous)
    cursor = encode_cursor(changes.snapshot)
    if not changes.any:
        return dg.SensorResult(skip_reason=f"no change in {len(changes.snapshot)} files", cursor=cursor)
    context.log.info(
        f"corpus: {len(changes.new)} new, {len(changes.changed)} changed, {len(changes.removed)} removed "
        f"→ buckets {','.join(changes.buckets)}"
    )
    return dg.SensorResult(run_requests=corpus_run_requests(changes, previous), cursor=cursor)


# What makes a change searchable: evaluated by its own sensor, its runs ahead in the queue.
SEARCH_INDEXES = dg.AssetSelection.assets(
    "bm25_index", "faiss_index", "pgvector_index", "pg_bm25_index", "rerank_index"
)
# What does not gate a milestone of a corpus change (searchable, counted) but users see within
# minutes: claims, alias decisions, stale answers, the precomputes' evaluation. One run at a time,
# at low CPU priority.
# Hours of work (the re-ranker vectors: ~2 h on 2 cores for the full corpus, search encodes missing
# ones at query time; the evaluations) have a lane of their own: in the background lane, one such
# run held the lane's only slot and claims, alias decisions and precompute_evaluation stayed QUEUED
# behind it for over an hour (issue 24).
LONG = dg.AssetSelection.assets("rerank_vectors") | dg.AssetSelection.groups("evaluation")
BACKGROUND = (
    dg.AssetSelection.assets("precompute_evaluation") | dg.AssetSelection.groups("knowledge", "evaluation")
) - LONG

index_automation_sensor = dg.AutomationConditionSensorDefinition(
    "radar_index_automation",
    target=SEARCH_INDEXES,
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=AUTOMATION_INTERVAL_S,
    run_tags={"radar/trigger": "automation", **INDEX_TAGS},
    description="Evaluates the search indexes' automation conditions (eager): they follow the per-file "
    "stages, ahead of precomputes and background work in the run queue.",
)

automation_sensor = dg.AutomationConditionSensorDefinition(
    "radar_automation",
    target=dg.AssetSelection.all() - SEARCH_INDEXES - BACKGROUND - LONG,
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=AUTOMATION_INTERVAL_S,
    run_tags={"radar/trigger": "automation", **PRECOMPUTE_TAGS},
    description="Evaluates the precomputes' automation conditions (eager): entities, places, dates, alerts, "
    "presence and the dashboard aggregates follow the knowledge base.",
)

background_automation_sensor = dg.AutomationConditionSensorDefinition(
    "radar_background_automation",
    target=BACKGROUND,
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=BACKGROUND_INTERVAL_S,
    run_tags={"radar/trigger": "automation", **BACKGROUND_TAGS},
    description="Evaluates the background assets' automation conditions: claims, alias decisions, stale "
    "answers and the precomputes' evaluation, eagerly; one run at a time, at low CPU priority (lane background).",
)

long_automation_sensor = dg.AutomationConditionSensorDefinition(
    "radar_long_automation",
    target=LONG,
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=BACKGROUND_INTERVAL_S,
    run_tags={"radar/trigger": "automation", **LONG_TAGS},
    description="Evaluates the long assets' automation conditions: re-ranker vectors eagerly, evaluations on "
    "their daily cron; one run at a time, at low CPU priority, in a lane of their own (lane long) so they never "
    "hold back the background lane.",
)

reviewer_decisions = dg.AssetSpec(
    "reviewer_decisions",
    group_name="knowledge",
    kinds={"postgres"},
    description="Reviewers' alias decisions in force (alias_decisions, signal reviewer: `radar review decide`, "
    "POST /review/aliases/{key}, `radar review undo`). Recorded by review_sensor: each change is a "
    "materialization whose metadata says who decided what and when; the mentions follow it.",
)


def review_state(engine: sa.Engine) -> tuple[str, list[dict]]:
    """The reviewer decisions in force and the undone ones: ``(fingerprint, rows)`` — a SHA-256
    prefix over every reviewer row's id and closing time (a decision, a change and an undo each
    change it) and the rows (``key``, ``alias``, ``decision``, ``target``, ``by``, ``at``,
    ``undone_by``/``undone_at``, ``in_force``), newest first. Empty without the table."""
    with engine.connect() as conn:
        if not conn.execute(sa.text("SELECT to_regclass('alias_decisions') IS NOT NULL")).scalar():
            return "", []
        rows = conn.execute(
            sa.text(
                "SELECT id, decision_key, alias, decision, candidate_a, decided_by, decided_at, superseded_at, detail "
                "FROM alias_decisions WHERE signal = 'reviewer' ORDER BY id DESC"
            )
        ).all()
    digest = hashlib.sha256(
        json.dumps([[r.id, r.superseded_at.isoformat() if r.superseded_at else None] for r in rows]).encode()
    ).hexdigest()[:16]
    out = [
        {
            "key": r.decision_key,
            "alias": r.alias,
            "decision": r.decision,
            "target": r.candidate_a,
            "by": r.decided_by,
            "at": r.decided_at.isoformat(),
            "undone_by": (r.detail or {}).get("undone_by"),
            "undone_at": (r.detail or {}).get("undone_at"),
            "in_force": r.superseded_at is None,
        }
        for r in rows
    ]
    return (digest if rows else ""), out


@dg.sensor(
    name="review_sensor",
    minimum_interval_seconds=AUTOMATION_INTERVAL_S,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="A reviewer's alias decision or undo → a materialization of reviewer_decisions (who, what, "
    "when); the mentions, aggregates and claims follow by their automation conditions.",
)
def review_sensor(context: dg.SensorEvaluationContext, database: DatabaseResource) -> dg.SensorResult:
    digest, rows = review_state(database.engine())
    if digest == (context.cursor or ""):
        return dg.SensorResult(skip_reason=f"no new reviewer decision ({sum(r['in_force'] for r in rows)} in force)")
    latest = rows[0] if rows else None
    # the newest event: an undo is newer than the decision it closed
    undone = [r for r in rows if r["undone_at"]]
    if undone and (latest is None or max(u["undone_at"] for u in undone) > latest["at"]):
        u = max(undone, key=lambda r: r["undone_at"])
        change = {"event": "undo", "key": u["key"], "alias": u["alias"], "by": u["undone_by"], "at": u["undone_at"]}
    elif latest is not None:
        change = {"event": "decision", **{k: latest[k] for k in ("key", "alias", "decision", "target", "by", "at")}}
    else:
        change = {"event": "none"}
    event = dg.AssetMaterialization(
        asset_key="reviewer_decisions",
        description=f"{change['event']} by {change.get('by', '-')} at {change.get('at', '-')}",
        metadata={
            "latest_change": dg.MetadataValue.json(change),
            "decided_by": dg.MetadataValue.text(str(change.get("by") or "-")),
            "decided_at": dg.MetadataValue.text(str(change.get("at") or "-")),
            "in_force": dg.MetadataValue.int(sum(r["in_force"] for r in rows)),
            "decisions": dg.MetadataValue.json([r for r in rows if r["in_force"]][:50]),
            "fingerprint": dg.MetadataValue.text(digest or "-"),
        },
    )
    context.log.info(f"reviewer decisions: {change}")
    return dg.SensorResult(asset_events=[event], cursor=digest)


evaluation_schedule = dg.ScheduleDefinition(
    name="evaluation_schedule",
    job_name="evaluation_job",
    cron_schedule=EVALUATION_SCHEDULE_CRON,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-runs every evaluation weekly, whether or not its inputs changed.",
)

__all__ = [
    "CONTENT_PARTITIONS",
    "automation_sensor",
    "background_automation_sensor",
    "long_automation_sensor",
    "corpus_sensor",
    "evaluation_schedule",
    "index_automation_sensor",
    "review_sensor",
    "reviewer_decisions",
]
