"""`radar up`'s status screen, drawn from real state: Dagster runs of the per-file stages on a real
PostgreSQL (the instance `up` reads), the API's /health over HTTP, and the children's logs in files."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import dagster as dg
import pytest
import sqlalchemy as sa

from assets import ingestion, knowledge_base
from radar_cli.main import _partitioned_steps, _stage_steps, up_log_paths
from radar_cli.status import ChangePrinter, UpWatcher, fetch_search_stages, render_lines, start_logged
from radar_pipeline.config import PROJECT_ROOT
from radar_pipeline.corpus import content_bucket, sha256_file
from resources import ChunkingResource, CorpusResource, DatabaseResource, OcrResource

TEXTS = {
    "drones.txt": "Los drones armados se usan en la frontera. " * 40,
    "mining.txt": "Illegal mining spreads along the river basin. " * 40,
    "space.txt": "La basura espacial crece tras las pruebas antisatélite. " * 40,
}


@pytest.fixture()
def instance(pg_url, monkeypatch):
    monkeypatch.setenv("RADAR_PG_URL", pg_url)  # dagster.yaml: the instance's storage, as `up` sets it
    with dg.DagsterInstance.from_config(str(PROJECT_ROOT)) as inst:
        yield inst


def _materialize(instance, engine, pg_url, tmp_path, texts=TEXTS, partition_key=None):
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for name, text in texts.items():
        (corpus / name).write_text(text, encoding="utf-8")
    assets = [
        a
        for a in dg.load_assets_from_modules(
            [ingestion, knowledge_base], backfill_policy=dg.BackfillPolicy.single_run()
        )
        if "embeddings" not in {k.to_user_string() for k in a.keys}
    ]
    resources = {
        "database": DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused")),
        "corpus": CorpusResource(corpus_dir=str(corpus), workers=1),
        "ocr": OcrResource(),
        "chunking": ChunkingResource(workers=1),
    }
    tags = (
        None
        if partition_key
        else {"dagster/asset_partition_range_start": "0", "dagster/asset_partition_range_end": "f"}
    )
    result = dg.materialize(assets, resources=resources, instance=instance, tags=tags, partition_key=partition_key)
    assert result.success
    with engine.connect() as conn:
        n_chunks = conn.execute(sa.text("SELECT count(*) FROM chunks")).scalar()
    return result.run_id, n_chunks


class _Health(BaseHTTPRequestHandler):
    stages = {"lexical": True, "dense": False, "rerank": False}
    on_disk = {"lexical": True, "dense": True, "rerank": False}

    def do_GET(self):
        index = {"backend": "faiss", "present": True, "stages": self.stages, "stages_on_disk": self.on_disk}
        body = json.dumps({"status": "ok", "index": index})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture()
def health_url():
    server = HTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/health"
    server.shutdown()


def test_the_screen_shows_each_stage_of_a_real_run_the_live_search_stages_and_the_logs(
    instance, engine, pg_url, tmp_path, health_url
):
    since = time.time() - 1
    run_id, n_chunks = _materialize(instance, engine, pg_url, tmp_path)
    watcher = UpWatcher(
        instance,
        _stage_steps(),
        since=since,
        health_url=health_url,
        urls={"dashboard": "http://127.0.0.1:8000/tablero/"},
        logs={"dagster": str(tmp_path / "logs" / "up-dagster.log")},
        partitioned_steps=_partitioned_steps(),
    )
    state = watcher.poll()
    assert run_id in state.runs and state.runs[run_id][0] == "SUCCESS"
    lines = render_lines(state, now=since + 75)
    text = "\n".join(lines)

    def row(stage: str) -> str:
        hits = [ln for ln in lines if ln.startswith(f"✓ {stage} ")]
        assert len(hits) == 1, (stage, text)
        return hits[0]

    assert "runs since start: 1 success" in lines[0] and "1 min 15 s" in lines[0]
    assert f"{len(TEXTS)} rows" in row("source_files")
    assert f"{n_chunks:,} rows" in row("chunks")
    assert f"{len(TEXTS)} documents" in row("documents_and_pages")
    assert "done" in row("chunks")
    assert "search: live: lexical · built (loaded at the next question): dense · not built yet: rerank" in lines, [
        ln for ln in lines if "search" in ln
    ]
    assert "  dashboard  http://127.0.0.1:8000/tablero/" in lines
    assert f"log dagster: {tmp_path / 'logs' / 'up-dagster.log'}" in lines
    # no Dagster event stream on the screen
    for noise in ("DEBUG", "STEP_START", "AssetDaemon", "Checking"):
        assert noise not in text

    # a non-terminal gets one line per change, then nothing until something changes
    printer = ChangePrinter()
    first = printer.changes(state)
    assert (
        any(ln.startswith("✓ chunks ") for ln in first)
        and "search: live: lexical · built (loaded at the next question): dense · not built yet: rerank" in first
    )
    assert printer.changes(watcher.poll()) == []
    _Health.stages = {"lexical": True, "dense": True, "rerank": False}
    try:
        assert printer.changes(watcher.poll()) == ["search: live: lexical, dense · not built yet: rerank"]
    finally:
        _Health.stages = {"lexical": True, "dense": False, "rerank": False}
    state.warnings.append("chunks: 1 file had no text layer")
    assert printer.changes(state) == ["! chunks: 1 file had no text layer"]

    # the corpus sensor's way: one more run over the bucket of a new file; per-file stages add up
    # over the buckets, the whole-corpus assets (bm25_index) count their newest run only
    new = {"cyber.txt": "Los ciberataques contra la red eléctrica aumentaron. " * 40}
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "cyber.txt").write_text(new["cyber.txt"], encoding="utf-8")
    bucket = content_bucket(sha256_file(tmp_path / "probe" / "cyber.txt"))
    _materialize(instance, engine, pg_url, tmp_path, texts=new, partition_key=bucket)
    state = watcher.poll()
    lines = render_lines(state)
    assert "runs since start: 2 success" in lines[0]
    assert f"{len(TEXTS) + 1} rows" in row("source_files") and row("source_files").endswith("2 runs")
    assert row("chunks").endswith("2 runs")
    # a step not partitioned (an index: the whole corpus in every run) counts its newest run only
    whole = UpWatcher(instance, _stage_steps(), since=since, partitioned_steps=_partitioned_steps() - {"chunks"})
    lines = render_lines(whole.poll())
    assert not row("chunks").endswith("runs") and row("source_files").endswith("2 runs")


def test_runs_finished_before_up_started_are_not_shown_and_a_silent_api_says_so(instance, engine, pg_url, tmp_path):
    _materialize(instance, engine, pg_url, tmp_path)
    watcher = UpWatcher(instance, _stage_steps(), since=time.time() + 1, health_url="http://127.0.0.1:9/health")
    state = watcher.poll()
    assert state.runs == {}
    lines = render_lines(state)
    assert "runs since start: none yet" in lines[0]
    assert any(ln.startswith("  no run yet") for ln in lines)
    assert "search: API not answering yet" in lines


def test_fetch_search_stages_reads_index_stages(health_url):
    assert fetch_search_stages(health_url) == {"lexical": "live", "dense": "built", "rerank": "missing"}
    assert fetch_search_stages("http://127.0.0.1:9/health") is None


def test_the_childrens_output_goes_to_the_log_file_not_the_terminal(tmp_path, capfd):
    logs = up_log_paths(tmp_path / "home" / "logs", "20260101-000000")
    assert logs["dagster"].parent == tmp_path / "home" / "logs"
    code = "import sys; print('AssetDaemon - Checking 17 assets/checks'); print('Traceback x', file=sys.stderr)"
    proc = start_logged([sys.executable, "-c", code], logs["dagster"])
    assert proc.wait(60) == 0
    text = logs["dagster"].read_text(encoding="utf-8")
    assert "AssetDaemon - Checking 17 assets/checks" in text and "Traceback x" in text
    out, err = capfd.readouterr()
    assert "AssetDaemon" not in out + err and "Traceback" not in out + err
    # a second start appends: the log of an earlier child is kept
    proc = start_logged([sys.executable, "-c", "print('second')"], logs["dagster"])
    assert proc.wait(60) == 0
    assert logs["dagster"].read_text(encoding="utf-8").startswith(text)


def test_daemon_error_lines_become_warnings(instance, tmp_path):
    log = tmp_path / "dagster.log"
    log.write_text(
        "2026-12-07 01:00:00 +0000 - dagster.daemon.SensorDaemon - INFO - Checking for new runs for sensor: corpus_sensor\n"
        "2026-12-07 01:00:05 +0000 - dagster.daemon.SensorDaemon - ERROR - Sensor corpus_sensor failed: boom\n",
        encoding="utf-8",
    )
    watcher = UpWatcher(instance, set(), since=time.time() + 1, daemon_log=log)
    assert watcher.poll().warnings == [
        "daemon: 2026-12-07 01:00:05 +0000 - dagster.daemon.SensorDaemon - ERROR - Sensor corpus_sensor failed: boom"
    ]
    with log.open("a", encoding="utf-8") as f:
        f.write("2026-12-07 01:00:10 +0000 - dagster - CRITICAL - daemon died\n")
    assert watcher.poll().warnings[-1].endswith("CRITICAL - daemon died")
    assert len(watcher.state.warnings) == 2


def test_time_left_is_what_remains_at_the_measured_rate():
    from radar_cli.progress import Stage

    s = Stage("embeddings", status="running", started=0.0, done=300, total=1000, unit="texts encoded")
    s.first, s.last = (10.0, 100), (30.0, 300)  # 200 texts in 20 s: 10 texts/s
    assert s.rate == 10.0 and s.eta == 70.0
    s.status = "done"
    assert s.eta is None  # an ended stage has nothing left
    one_line = Stage("chunks", status="running", started=0.0, done=5, total=9)
    one_line.first = one_line.last = (1.0, 5)
    assert one_line.eta is None  # one progress line: no rate yet, no guess


def test_the_build_is_published_for_the_api_from_the_same_runs(instance, engine, pg_url, tmp_path, monkeypatch):
    """What the API reads while Radar builds (issue 24 §4): the stages of the runs `up` follows, in
    RADAR_HOME/status/build.json, from the screen's loop or (``--verbose``) the publisher thread."""
    from radar_cli.status import BuildPublisher, build_stages, publish_build
    from radar_pipeline.build_status import read_build_status

    since = time.time() - 1
    _materialize(instance, engine, pg_url, tmp_path)
    path = tmp_path / "home" / "status" / "build.json"
    publisher = BuildPublisher(instance, _stage_steps(), path, since=since, partitioned_steps=_partitioned_steps())
    publisher.publish_once()
    published = read_build_status(path)
    assert published is not None
    by_key = {s.key: s for s in published.stages}
    assert (
        by_key["chunks"].status == "done" and by_key["chunks"].total and by_key["chunks"].done == by_key["chunks"].total
    )
    assert published.building is False  # the run is over: nothing is being built
    assert [s.key for s in build_stages(publisher.watcher.state)] == [s.key for s in published.stages]
    publish_build(publisher.watcher.state, path)  # the screen's loop writes the same file
    assert read_build_status(path).stages == published.stages
    publisher.start()
    publisher.stop()
    assert not path.exists()  # `up` stopped: nothing is being built any more
