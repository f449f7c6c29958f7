"""Freshness benchmark: a PDF dropped into a running Radar → searchable and counted in the aggregates.

Not a test: it measures, on a copy of a corpus (default the Codefest mini corpus) in a fresh home:

1. a cold one-shot build of every asset but the evaluations (``dagster asset materialize
   --partition-range 0...f``, what ``radar materialize`` runs), timed;
2. ``dagster dev`` (webserver + daemon: ``corpus_sensor``, ``radar_automation``) and ``radar serve``
   started on that home, as ``radar up`` does; the sensor's first tick must start nothing;
3. a PDF (default a 20-page report of the shared corpus, not in the mini corpus) copied into the
   corpus at T0 (the load average recorded then); every second: does ``GET /search`` return a
   passage of it (the service swapped in the new index version by itself), and does
   ``agg_timeline`` count one document more;
4. from the Dagster instance: the runs the change started (who started them, wall time, steps),
   the pipeline time up to each milestone (union of run wall times, without the sensor's polling
   and the queue's wait; also without the background lane, outside the target), and the
   incremental steps (``bm25_index``, ``faiss_index``, mentions);
5. with ``--full-index DIR`` (default ``/work/radar_home/indexes/usem3``, read only): what a full
   BM25 and FAISS rebuild of the full-corpus passage table costs on this machine.

Usage: ``python evals/bench_freshness.py [--home DIR] [--corpus DIR] [--pdf FILE] [--out
evals/reports/bench_freshness.json]``. Re-ranker vectors are excluded from the target (their budget
is set to 1 minute per run here; search encodes missing ones at query time).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import polars as pl
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from radar_pipeline import db  # noqa: E402 - after the sys.path set-up above (run as a script)

BUILD = (
    "source_files,documents,pages,chunks,embeddings,bm25_index,faiss_index,pgvector_index,rerank_vectors,"
    "rerank_index,entity_dictionary,place_gazetteer,entity_mentions,place_mentions,publication_dates,"
    "early_warnings,armed_presence,agg_documents_per_place,agg_alerts_per_department,agg_timeline,"
    "agg_entity_heatmap,agg_entity_network,agg_entity_quadrant"
)
DEFAULT_CORPUS = Path("/work/shared/eval/codefest_mini_corpus")
# the target: a 20-page PDF (a report of the shared corpus, not in the mini corpus)
DEFAULT_PDF = Path("/work/shared/corpus/radar/space_security/esa_environment2025_pages_1_to_20.pdf")
AGG_DOCS = (
    "SELECT coalesce(sum(n_documents), 0) FROM agg_timeline_current "
    "WHERE phenomenon = 'all' AND entity_id IS NULL AND granularity = 'year'"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            if httpx.get(url, timeout=5).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise SystemExit(f"{url} did not answer in {timeout:.0f} s")


def query_phrase(pdf: Path) -> str:
    """A distinctive query: 12 words from the middle of the PDF's second page."""
    import pymupdf

    with pymupdf.open(pdf) as doc:
        words = doc[min(1, doc.page_count - 1)].get_text().split()
    mid = len(words) // 2
    return " ".join(words[mid : mid + 12])


def full_index_rebuild(index_dir: Path) -> dict:
    """Seconds to rebuild BM25 and FAISS (flat, exact) over a materialized passage table (read only)."""
    from radar_pipeline.stores import faiss_store
    from radar_pipeline.stores.bm25_store import Bm25Index
    from radar_pipeline.stores.passages import load_passages

    t0 = time.perf_counter()
    texts = load_passages(index_dir)["text"].to_list()
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    Bm25Index.build(texts)
    bm25_s = time.perf_counter() - t0
    vectors = faiss_store.load_index(index_dir)
    vectors = vectors.reconstruct_n(0, vectors.ntotal)
    t0 = time.perf_counter()
    index = faiss_store.build_flat_ip(vectors)
    data = faiss_store.faiss.serialize_index(index)
    faiss_s = time.perf_counter() - t0
    return {
        "passages": len(texts),
        "dim": int(vectors.shape[1]),
        "read_passage_table_seconds": round(load_s, 2),
        "bm25_build_seconds": round(bm25_s, 2),
        "faiss_flat_build_and_serialize_seconds": round(faiss_s, 2),
        "faiss_bytes": int(data.size),
    }


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by ``pid`` and its live descendants."""
    import psutil

    total = 0.0
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
    except psutil.NoSuchProcess:
        pass
    return total


def runs_since(instance, t0: float) -> list[dict]:
    """Runs created after ``t0`` (epoch s), oldest first: trigger, assets, partition, status, times, steps."""
    out = []
    for rec in instance.get_run_records():
        if rec.create_timestamp.timestamp() < t0:
            continue
        run = rec.dagster_run
        stats = {
            s.step_key: round((s.end_time or 0) - (s.start_time or 0), 2)
            for s in instance.get_run_step_stats(run.run_id)
        }
        out.append(
            {
                "run_id": run.run_id[:8],
                "trigger": run.tags.get("radar/trigger") or run.tags.get("dagster/sensor_name") or "manual",
                "lane": run.tags.get("radar/lane"),
                "executor": run.tags.get("radar/executor", "config"),
                "partition": run.tags.get("dagster/partition")
                or (
                    f"{run.tags['dagster/asset_partition_range_start']}...{run.tags['dagster/asset_partition_range_end']}"
                    if "dagster/asset_partition_range_start" in run.tags
                    else None
                ),
                "assets": sorted(k.to_user_string() for k in (run.asset_selection or [])),
                "status": run.status.value,
                "created_s": round(rec.create_timestamp.timestamp() - t0, 1),
                "start_s": round(rec.start_time - t0, 1) if rec.start_time else None,
                "end_s": round(rec.end_time - t0, 1) if rec.end_time else None,
                "wall_s": round(rec.end_time - rec.start_time, 1) if rec.start_time and rec.end_time else None,
                "steps_s": stats,
            }
        )
    return sorted(out, key=lambda r: r["created_s"])


def pipeline_seconds(runs: list[dict], until_s: float | None, *, background: bool = True) -> float | None:
    """Wall time during which at least one run was executing, from T0 to ``until_s`` (union of run
    intervals): the pipeline's time, without the sensor's and the queue's idle polling. With
    ``background=False`` the runs of the background lane (re-ranker vectors, claims, evaluations:
    outside the target) are left out."""
    if until_s is None:
        return None
    spans = sorted(
        (r["start_s"], min(r["end_s"] or until_s, until_s))
        for r in runs
        if r["start_s"] is not None and (background or r.get("lane") != "background")
    )
    total, cur_a, cur_b = 0.0, None, None
    for a, b in spans:
        if a >= until_s:
            break
        if cur_b is None or a > cur_b:
            total += (cur_b - cur_a) if cur_b is not None else 0.0
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    total += (cur_b - cur_a) if cur_b is not None else 0.0
    return round(total, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, default=None, help="fresh state folder (default: a new temporary one)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--pdf", type=Path, default=DEFAULT_PDF)
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "bench_freshness.json")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for each milestone")
    ap.add_argument("--full-index", type=Path, default=Path("/work/radar_home/indexes/usem3"))
    ap.add_argument(
        "--skip-build", action="store_true", help="reuse the build already in --home (measure another drop only)"
    )
    args = ap.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="radar-fresh-"))
    corpus = home / "corpus"
    if not corpus.exists():
        shutil.copytree(args.corpus, corpus)
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    url = db.resolve_database_url(None, home / "pgdata")
    env = {
        **os.environ,
        "RADAR_HOME": str(home),
        "RADAR_CORPUS_DIR": str(corpus),
        "RADAR_PG_URL": url,
        "DATABASE_URL": url,
        "DAGSTER_HOME": str(dagster_home),
        "RADAR_RERANK_BUDGET_MINUTES": "1",
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    os.environ.update({k: env[k] for k in ("DAGSTER_HOME", "RADAR_PG_URL")})
    dagster = str(Path(sys.executable).with_name("dagster"))
    report: dict = {
        "corpus": str(args.corpus),
        "pdf": str(args.pdf),
        "home": str(home),
        "started": datetime.now(UTC).isoformat(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }

    if not args.skip_build:
        t = time.perf_counter()
        rc = subprocess.call(
            [
                dagster,
                "asset",
                "materialize",
                "-m",
                "assets.definitions",
                "--select",
                BUILD,
                "--partition-range",
                "0...f",
            ],
            cwd=ROOT,
            env=env,
            stdout=(home / "build.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        report["cold_build_seconds"] = round(time.perf_counter() - t, 1)
        if rc != 0:
            raise SystemExit(f"cold build failed (rc={rc}), see {home / 'build.log'}")
    engine = db.create_engine(url)
    with engine.connect() as conn:
        chunk_rows = [
            tuple(r) for r in conn.execute(sa.text("SELECT chunk_id, text_sha FROM chunks ORDER BY chunk_id"))
        ]
        report["documents_before"] = conn.execute(sa.text("SELECT count(*) FROM documents")).scalar()
        docs_before = conn.execute(sa.text(AGG_DOCS)).scalar()
    # fingerprints to compare a build with another code version's (same corpus → same chunks, same rows)
    report["chunks_before"] = len(chunk_rows)
    report["chunks_fingerprint"] = hashlib.sha256(repr(chunk_rows).encode()).hexdigest()[:16]
    passages = pl.read_parquet(home / "indexes" / "usem3" / "passages.parquet")
    report["passages_fingerprint"] = hashlib.sha256(
        repr(passages.select("chunk_id", "text").rows()).encode()
    ).hexdigest()[:16]
    report["aggregated_documents_before"] = int(docs_before)

    ui_port, api_port = free_port(), free_port()
    procs = [
        subprocess.Popen(
            [dagster, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(ui_port)],
            cwd=ROOT,
            env=env,
            stdout=(home / f"dagster_dev{'_again' if args.skip_build else ''}.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "radar_cli", "serve", "--port", str(api_port)],
            cwd=ROOT,
            env=env,
            stdout=(home / f"serve{'_again' if args.skip_build else ''}.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ),
    ]
    try:
        import dagster as dg

        api = f"http://127.0.0.1:{api_port}"
        wait_http(f"http://127.0.0.1:{ui_port}/server_info", 300)
        wait_http(f"{api}/health", 300)
        httpx.get(f"{api}/search", params={"q": "satélites", "k": 1}, timeout=120)  # load the index
        instance = dg.DagsterInstance.get()
        idle_from = time.time()
        cpu_before = tree_cpu_seconds(procs[0].pid)
        time.sleep(45)  # ≥ 2 sensor ticks: the first compares with source_files and must start nothing
        report["runs_started_by_an_unchanged_corpus"] = len(runs_since(instance, idle_from))
        # what polling costs (sensors, automation evaluation, queue, webserver) with nothing to do
        report["idle_dagster_cpu_share"] = round((tree_cpu_seconds(procs[0].pid) - cpu_before) / 45, 3)
        version_before = httpx.get(f"{api}/health", timeout=30).json()["index"]["index_version"]

        phrase = query_phrase(args.pdf)
        new_doc = hashlib.sha256(args.pdf.read_bytes()).hexdigest()[:16]
        target = corpus / "F2" / args.pdf.name
        target.parent.mkdir(parents=True, exist_ok=True)
        load_at_drop = [round(x, 2) for x in os.getloadavg()]
        t0 = time.time()
        shutil.copy(args.pdf, target)
        searchable_s = counted_s = None
        while time.time() - t0 < args.timeout and (searchable_s is None or counted_s is None):
            if searchable_s is None:
                r = httpx.get(f"{api}/search", params={"q": phrase, "k": 10}, timeout=120)
                if r.status_code == 200 and any(p["doc_id"] == new_doc for p in r.json()["passages"]):
                    searchable_s = round(time.time() - t0, 1)
            if counted_s is None:
                with engine.connect() as conn:
                    try:
                        if conn.execute(sa.text(AGG_DOCS)).scalar() > docs_before:
                            counted_s = round(time.time() - t0, 1)
                    except sa.exc.DBAPIError:
                        pass
            time.sleep(1)
        time.sleep(5)
        runs = runs_since(instance, t0)
        health = httpx.get(f"{api}/health", timeout=30).json()["index"]
        report.update(
            {
                "query": phrase,
                "new_doc_id": new_doc,
                "searchable_wall_seconds": searchable_s,
                "counted_in_aggregates_wall_seconds": counted_s,
                "searchable_pipeline_seconds": pipeline_seconds(runs, searchable_s),
                "counted_pipeline_seconds": pipeline_seconds(runs, counted_s),
                "searchable_pipeline_seconds_without_background": pipeline_seconds(
                    runs, searchable_s, background=False
                ),
                "counted_pipeline_seconds_without_background": pipeline_seconds(runs, counted_s, background=False),
                "load_average_at_drop": load_at_drop,
                "first_run_created_seconds": runs[0]["created_s"] if runs else None,
                "index_version_before": version_before,
                "index_version_after": health["index_version"],
                "stages_after": health["stages"],
                "runs": runs,
            }
        )
        for name in ("bm25_index", "faiss_index"):
            ev = instance.get_latest_materialization_event(dg.AssetKey(name))
            if ev is not None and ev.timestamp >= t0:  # this drop's, not an earlier build's
                meta = ev.asset_materialization.metadata
                report[f"incremental_{name}_seconds"] = meta["seconds"].value if "seconds" in meta else None
        ev = instance.get_latest_materialization_event(dg.AssetKey("entity_mentions"))
        if ev is not None and ev.timestamp >= t0:
            meta = ev.asset_materialization.metadata
            report["incremental_mentions"] = {
                k: meta[k].value for k in ("documents_matched", "documents_reused", "seconds") if k in meta
            }
        with engine.connect() as conn:
            report["chunks_after"] = conn.execute(sa.text("SELECT count(*) FROM chunks")).scalar()
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, 15)
                p.wait(60)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(p.pid, 9)
        engine.dispose()
    if args.full_index and (args.full_index / "passages.parquet").exists():
        report["full_corpus_index_rebuild"] = full_index_rebuild(args.full_index)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
