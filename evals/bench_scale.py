"""Scale by simulation: pgvector HNSW and FAISS (flat, IVF) on synthetic passage vectors.

Not a test: it writes ``evals/reports/bench_scale_<n>.json`` for each size asked, and the README
table is made from those files (``evals/README.md``, "One shared index: scale").

Data: ``n`` unit vectors of 512 dimensions (the USE encoder's size), float32, drawn from a
mixture of ``n // 200`` Gaussian clusters (centres uniform on the sphere, per-dimension noise
``sigma`` = 0.05, noise norm ≈ 1.1): a query's nearest passage has cosine ≈ 0.51 and its 10th
≈ 0.49, like the USE encoder's top hits on the real corpus (≈ 0.5), and the neighbours are close
together, so approximate indexes are not handed well-separated clusters (with ``sigma`` = 0.02
every index scored recall 1.0, which measures nothing); 200 query vectors drawn from the same
mixture. Ground truth: exact inner product (FAISS ``IndexFlatIP``).

Measured, per size:

* pgvector: load (binary ``COPY`` into an UNLOGGED table; the load is not what is compared), HNSW
  build time with ``m`` and ``ef_construction`` stated (``vector_cosine_ops``,
  ``maintenance_work_mem`` stated, no parallel workers), index size on disk, and per
  ``hnsw.ef_search``: recall@10 against the exact top 10 and per-query latency p50/p95 (one SQL
  round trip over a Unix socket, ``ORDER BY embedding <=> q LIMIT 10``); also the service's shape,
  the top 200 at ``ef_search`` = 400;
* FAISS flat (exact): memory (``n × 512 × 4`` bytes) and latency p50/p95 with one thread (as the
  service runs it), over the first ``--flat-queries`` queries;
* FAISS IVF-Flat (``nlist`` = √n, k-means of 10 iterations on 30·nlist sampled vectors): build
  time, recall@10 and latency per ``nprobe``.

Usage: ``nice -n 15 python evals/bench_scale.py --n 100000 [--m 16 --ef-construction 64]``
(a fresh embedded PostgreSQL under ``--pgdata``, default ``/tmp/radar-bench-scale``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import struct
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import faiss  # noqa: E402 - after the sys.path set-up above (run as a script)
import sqlalchemy as sa  # noqa: E402 - after the sys.path set-up above (run as a script)

from evals.bench_search import percentile  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline import db  # noqa: E402 - after the sys.path set-up above (run as a script)

DIM = 512
N_QUERIES = 200


def synthetic(n: int, n_queries: int, seed: int = 0, sigma: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """``(passages (n, DIM), queries (n_queries, DIM))``: unit float32 vectors from one Gaussian
    mixture of ``max(1, n // 200)`` clusters (module docstring). Generated in blocks (memory ≈ output)."""
    rng = np.random.default_rng(seed)
    k = max(1, n // 200)
    centres = rng.standard_normal((k, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def draw(m: int) -> np.ndarray:
        out = np.empty((m, DIM), dtype=np.float32)
        for s in range(0, m, 100_000):
            e = min(m, s + 100_000)
            x = centres[rng.integers(0, k, e - s)] + sigma * rng.standard_normal((e - s, DIM)).astype(np.float32)
            out[s:e] = x / np.linalg.norm(x, axis=1, keepdims=True)
        return out

    return draw(n), draw(n_queries)


def stats(ms: list[float]) -> dict:
    """p50 / p95 / max of per-query latencies (ms)."""
    return {
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(percentile(ms, 0.95), 2),
        "max_ms": round(max(ms), 2),
    }


def recall(found: list[list[int]], truth: np.ndarray, k: int = 10) -> float:
    """Mean over queries of |found top k ∩ exact top k| / k."""
    return float(np.mean([len(set(f[:k]) & set(t[:k].tolist())) / k for f, t in zip(found, truth, strict=True)]))


def _copy_binary(vectors: np.ndarray, start: int) -> io.BytesIO:
    """A PostgreSQL binary COPY stream of rows ``(id int4, embedding vector)`` (pgvector's binary
    format: int16 dim, int16 unused, dim × float4, big-endian)."""
    n = vectors.shape[0]
    row = np.dtype(
        [
            ("nf", ">i2"),
            ("l1", ">i4"),
            ("id", ">i4"),
            ("l2", ">i4"),
            ("dim", ">i2"),
            ("unused", ">i2"),
            ("v", ">f4", (DIM,)),
        ]
    )
    a = np.empty(n, dtype=row)
    a["nf"], a["l1"], a["l2"], a["dim"], a["unused"] = 2, 4, 4 + 4 * DIM, DIM, 0
    a["id"] = np.arange(start, start + n)
    a["v"] = vectors
    return io.BytesIO(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0) + a.tobytes() + struct.pack(">h", -1))


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def bench_pgvector(engine: sa.Engine, x: np.ndarray, q: np.ndarray, truth: np.ndarray, args) -> dict:
    """Load, build and query pgvector (module docstring)."""
    out: dict = {"m": args.m, "ef_construction": args.ef_construction, "maintenance_work_mem": args.mwm}
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
        conn.execute(sa.text("DROP TABLE IF EXISTS bench_vectors"))
        conn.execute(sa.text(f"CREATE UNLOGGED TABLE bench_vectors (id int4 PRIMARY KEY, embedding vector({DIM}))"))
    t0 = time.perf_counter()
    for s in range(0, x.shape[0], 50_000):
        with engine.begin() as conn:
            cur = conn.connection.cursor()
            cur.copy_expert(
                "COPY bench_vectors (id, embedding) FROM STDIN WITH (FORMAT binary)", _copy_binary(x[s : s + 50_000], s)
            )
    out["load_seconds"] = round(time.perf_counter() - t0, 1)
    with engine.begin() as conn:
        conn.execute(sa.text(f"SET maintenance_work_mem = '{args.mwm}'"))
        conn.execute(sa.text("SET max_parallel_maintenance_workers = 0"))
        conn.execute(sa.text(f"SET statement_timeout = '{int(args.build_timeout_min)}min'"))
        backend = int(conn.execute(sa.text("SELECT pg_backend_pid()")).scalar())
        cpu0 = _cpu_seconds(backend)
        t0 = time.perf_counter()
        try:
            conn.execute(
                sa.text(
                    "CREATE INDEX bench_hnsw ON bench_vectors USING hnsw (embedding vector_cosine_ops) "
                    f"WITH (m = {args.m}, ef_construction = {args.ef_construction})"
                )
            )
        except sa.exc.OperationalError:
            out["build_seconds"] = f"> {args.build_timeout_min * 60} (cancelled by statement_timeout)"
            return out
        out["build_seconds"] = round(time.perf_counter() - t0, 1)
        # CPU time of the building server process: comparable across runs on a shared machine,
        # where the wall time depends on what else runs (None when /proc is not readable)
        cpu1 = _cpu_seconds(backend)
        out["build_cpu_seconds"] = round(cpu1 - cpu0, 1) if cpu0 is not None and cpu1 is not None else None
    with engine.connect() as conn:
        out["table_bytes"] = int(conn.execute(sa.text("SELECT pg_table_size('bench_vectors')")).scalar())
        out["index_bytes"] = int(conn.execute(sa.text("SELECT pg_relation_size('bench_hnsw')")).scalar())
    out["index_bytes_per_vector"] = round(out["index_bytes"] / x.shape[0], 1)
    texts = ["[" + ",".join(f"{v:.7g}" for v in row) + "]" for row in q]
    sql = "SELECT id FROM bench_vectors ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k"
    out["queries"] = {}
    for ef, k in [(e, 10) for e in args.ef_search] + [(400, 200)]:
        found, ms = [], []
        with engine.connect() as conn:
            conn.execute(sa.text(f"SET hnsw.ef_search = {ef}"))
            conn.execute(sa.text(sql), {"q": texts[0], "k": k}).all()  # warm-up
            for t in texts:
                t1 = time.perf_counter()
                found.append([r[0] for r in conn.execute(sa.text(sql), {"q": t, "k": k})])
                ms.append((time.perf_counter() - t1) * 1000)
        key = f"ef_search={ef},k={k}"
        out["queries"][key] = {"recall@10": round(recall(found, truth), 4), **stats(ms)}
        if k == 200:  # the service's dense run: recall@200 against the exact top 200
            out["queries"][key]["recall@200"] = round(
                float(np.mean([len(set(f) & set(t.tolist())) / 200 for f, t in zip(found, truth, strict=True)])), 4
            )
        print(key, out["queries"][key], file=sys.stderr, flush=True)
    return out


def bench_faiss(x: np.ndarray, q: np.ndarray, truth: np.ndarray, args) -> dict:
    """FAISS flat (exact, one thread) and IVF-Flat (module docstring)."""
    faiss.omp_set_num_threads(1)
    out: dict = {}
    flat = faiss.IndexFlatIP(DIM)
    t0 = time.perf_counter()
    flat.add(x)
    out["flat"] = {
        "build_seconds": round(time.perf_counter() - t0, 1),
        "memory_bytes": int(x.nbytes),
        "latency_queries": min(args.flat_queries, len(q)),
    }
    ms = []
    for row in q[: args.flat_queries]:
        t1 = time.perf_counter()
        flat.search(row[None, :], 10)
        ms.append((time.perf_counter() - t1) * 1000)
    out["flat"].update(stats(ms))
    del flat
    n = x.shape[0]
    nlist = int(np.sqrt(n))
    quant = faiss.IndexFlatIP(DIM)
    ivf = faiss.IndexIVFFlat(quant, DIM, nlist, faiss.METRIC_INNER_PRODUCT)
    faiss.omp_set_num_threads(2)
    t0 = time.perf_counter()
    ivf.cp.niter = 10
    sample = x[np.random.default_rng(1).choice(n, min(n, 30 * nlist), replace=False)]
    ivf.train(sample)
    ivf.add(x)
    faiss.omp_set_num_threads(1)
    out["ivf_flat"] = {"nlist": nlist, "build_seconds": round(time.perf_counter() - t0, 1), "queries": {}}
    out["ivf_flat"]["memory_bytes"] = int(x.nbytes + n * 8 + nlist * DIM * 4)  # vectors + ids + centroids
    for nprobe in args.nprobe:
        ivf.nprobe = nprobe
        found, ms = [], []
        for row in q:
            t1 = time.perf_counter()
            _, ids = ivf.search(row[None, :], 10)
            ms.append((time.perf_counter() - t1) * 1000)
            found.append(ids[0].tolist())
        out["ivf_flat"]["queries"][f"nprobe={nprobe}"] = {"recall@10": round(recall(found, truth), 4), **stats(ms)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=64)
    ap.add_argument("--mwm", default="4GB", help="maintenance_work_mem of the HNSW build")
    ap.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 200])
    ap.add_argument("--nprobe", type=int, nargs="+", default=[8, 32, 64])
    ap.add_argument("--pgdata", type=Path, default=Path("/tmp/radar-bench-scale"))
    ap.add_argument("--skip-pgvector", action="store_true")
    ap.add_argument("--flat-queries", type=int, default=N_QUERIES, help="queries timed on the exact index")
    ap.add_argument("--build-timeout-min", type=int, default=25, help="statement_timeout of the HNSW build")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    x, q = synthetic(args.n, N_QUERIES)
    truth_index = faiss.IndexFlatIP(DIM)
    truth_index.add(x)
    faiss.omp_set_num_threads(2)
    _, truth = truth_index.search(q, 200)
    del truth_index
    report: dict = {
        "n": args.n,
        "dim": DIM,
        "queries": N_QUERIES,
        "clusters": max(1, args.n // 200),
        "sigma": 0.05,
        "data_seconds": round(time.perf_counter() - t0, 1),
        "cpu_count": os.cpu_count(),
        "faiss": bench_faiss(x, q, truth, args),
    }
    print("faiss", json.dumps(report["faiss"]), file=sys.stderr, flush=True)
    if not args.skip_pgvector:
        engine = db.create_engine(db.start_embedded_server(args.pgdata))
        report["pgvector"] = bench_pgvector(engine, x, q, truth, args)
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE bench_vectors"))
        engine.dispose()
    report["max_rss_bytes_client"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = args.out or ROOT / "evals" / "reports" / f"bench_scale_{args.n}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
