"""Pipeline benchmark: materialize the full corpus and write a JSON report.

Not a test: it measures. Steps:
1. mirror ``RADAR_CORPUS_DIR`` (default ``../shared/corpus``) as a tree of symlinks under
   ``<home>/bench_corpus`` plus one small file the benchmark owns (``bench/touched.txt``);
2. ``radar materialize`` everything (cold on a fresh ``--home``, warm otherwise), timed;
3. per-format files/s and pages/s, OCR pages/s, chunks, passages/s encoded, index build times
   from the tables and the Dagster materialization metadata the stages recorded;
4. search latency over 100 questions (``evals/bench_search.measure_search``);
5. rewrite ``touched.txt`` and re-materialize: the incremental re-run time;
6. peak RSS of the materialization processes (``RUSAGE_CHILDREN`` max RSS).

Usage: ``python evals/bench_pipeline.py [--home DIR] [--out evals/reports/bench_pipeline.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.bench_search import measure_search  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline import db  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.config import get_settings  # noqa: E402 - after the sys.path set-up above (run as a script)


def mirror(src: Path, dst: Path) -> int:
    """Symlink every file of ``src`` under ``dst`` (same relative paths). Returns the file count."""
    n = 0
    for p in sorted(src.rglob("*")):
        if p.is_file():
            target = dst / p.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.symlink_to(p.resolve())
            n += 1
    return n


KB_ASSETS = "source_files,documents,pages,chunks,embeddings,faiss_index,bm25_index,pgvector_index"


def run_materialize(env: dict) -> float:
    """``radar materialize`` of the knowledge-base assets (ingestion → indexes), timed in seconds."""
    t0 = time.perf_counter()
    rc = subprocess.call([sys.executable, "-m", "radar_cli", "materialize", "--select", KB_ASSETS], cwd=ROOT, env=env)
    if rc != 0:
        raise SystemExit(f"materialize failed with exit code {rc}")
    return time.perf_counter() - t0


WORK_KEYS = {
    "chunks": "chunks_made_now",
    "embeddings": "encoded_now",
    "faiss_index": "rows",
    "bm25_index": "rows",
    "pgvector_index": "build_seconds",
    "documents": "extracted_now",
}


def busiest_metadata(url: str, assets: list[str]) -> dict[str, dict]:
    """For each asset, the metadata of the recent materialization that did the most work (the
    cold run, not a no-op re-run), read from the Dagster instance in PostgreSQL."""
    import dagster as dg

    os.environ.setdefault("DAGSTER_HOME", str(ROOT))
    os.environ["RADAR_PG_URL"] = url
    out = {}
    with dg.DagsterInstance.get() as instance:
        for name in assets:
            best, best_work = None, -1.0
            for rec in instance.fetch_materializations(dg.AssetKey(name), limit=50).records:
                mat = rec.asset_materialization
                meta = {k: getattr(v, "value", v) for k, v in (mat.metadata if mat else {}).items()}
                work = meta.get(WORK_KEYS.get(name, ""), 0)
                work = float(work) if isinstance(work, (int, float)) else 0.0
                if work > best_work:
                    best, best_work = meta, work
            out[name] = best or {}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, default=None, help="RADAR_HOME for the run (default: the project's)")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "bench_pipeline.json")
    args = ap.parse_args()
    base = get_settings(**({"home": args.home} if args.home else {}))
    corpus = base.home / "bench_corpus"
    n_files = mirror(base.corpus, corpus)
    touched = corpus / "bench" / "touched.txt"
    touched.parent.mkdir(parents=True, exist_ok=True)
    touched.write_text("Benchmark file. Orbital debris from anti-satellite tests stays in orbit for decades.\n")
    env = dict(os.environ, RADAR_HOME=str(base.home), RADAR_CORPUS_DIR=str(corpus), PYTHONUNBUFFERED="1")
    settings = get_settings(home=base.home, corpus_dir=corpus)

    full_s = run_materialize(env)
    url = db.resolve_database_url(settings.database_url, settings.pgdata)
    engine = db.create_engine(url)
    with engine.begin() as conn:
        per_format = [
            dict(r._mapping)
            for r in conn.execute(
                sa.text(
                    "SELECT format, count(*) AS files, sum(n_pages) AS pages, sum(n_ocr_pages) AS ocr_pages, "
                    "sum(extract_seconds) AS seconds FROM documents GROUP BY format ORDER BY files DESC"
                )
            )
        ]
        ocr_pages, ocr_docs_s = conn.execute(
            sa.text(
                "SELECT coalesce(sum(n_ocr_pages),0), coalesce(sum(extract_seconds) FILTER (WHERE n_ocr_pages > 0),0) FROM documents"
            )
        ).one()
        n_chunks = conn.execute(sa.text("SELECT count(*) FROM chunks")).scalar()
        by_status = dict(conn.execute(sa.text("SELECT status, count(*) FROM documents GROUP BY status")).all())
    stage_meta = busiest_metadata(
        url, ["documents", "embeddings", "faiss_index", "bm25_index", "pgvector_index", "chunks"]
    )

    for f in per_format:
        s = float(f["seconds"] or 0)
        f["seconds"] = round(s, 2)
        f["files_per_s"] = round(f["files"] / s, 2) if s else None
        f["pages_per_s"] = round(float(f["pages"] or 0) / s, 2) if s else None

    # search latency (the same measurement as evals/bench_search.py)
    search = measure_search(settings)

    touched.write_text(touched.read_text() + f"Edited at {time.time()}: the re-run must only redo this file.\n")
    incr_s = run_materialize(env)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    report = {
        "corpus_files": n_files,
        "documents_by_status": by_status,
        "full_materialize_seconds": round(full_s, 1),
        "per_format": per_format,
        "ocr_pages": int(ocr_pages),
        "ocr_pages_per_s": round(int(ocr_pages) / float(ocr_docs_s), 3) if ocr_docs_s else None,
        "chunks": int(n_chunks),
        "chunks_stage": {k: stage_meta.get("chunks", {}).get(k) for k in ("chunks_made_now", "seconds")},
        "documents_stage": {k: stage_meta.get("documents", {}).get(k) for k in ("extracted_now", "seconds")},
        "note": "per-format seconds are summed per-file extraction times in worker processes (2 workers); "
        "stage timings come from the materialization of each asset that did the most work",
        "embeddings": {
            k: stage_meta.get("embeddings", {}).get(k) for k in ("passages_per_second", "encoded_now", "seconds")
        },
        "faiss_index": {k: stage_meta.get("faiss_index", {}).get(k) for k in ("build_seconds", "seconds", "rows")},
        "bm25_index": {k: stage_meta.get("bm25_index", {}).get(k) for k in ("seconds", "vocabulary")},
        "pgvector_index": {k: stage_meta.get("pgvector_index", {}).get(k) for k in ("build_seconds", "created_now")},
        "search": search,
        "incremental_rerun_seconds": round(incr_s, 1),
        "peak_rss_mb_children": round(peak_rss_mb, 1),
        "machine": {"cpus": os.cpu_count()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str))
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
