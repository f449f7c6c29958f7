"""Load test of POST /chat on loopback: N concurrent clients for a fixed duration, JSON report.

    .venv/bin/python evals/load_chat.py                       # starts its own server (offline mode)
    .venv/bin/python evals/load_chat.py --url http://127.0.0.1:8000 --clients 20 --duration 120

Without ``--url`` the script starts ``uvicorn api.main:app`` on a free loopback port (with
``--index-dir`` passed as ``RADAR_AGENT_INDEX_DIR``) and stops it at the end. Only loopback hosts
are accepted (127.0.0.0/8, ::1, localhost): this is not a tool for loading someone else's server.
Bounded: exactly ``--clients`` requests in flight at most, each with ``--timeout`` seconds, no
new request after ``--duration`` seconds.

Questions cycle through ``--questions`` (JSONL with ``question``; default: the 25 dev questions).
The report (stdout and ``--out``) has: requests, errors (transport failures, HTTP ≠ 200, estado
``error``), client latency p50/p95/p99/mean/max in ms, throughput, the server-side
``metadata.latencia_ms`` p50/p95, and counts per ``estado``.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx

from radar_pipeline.config import env

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_QUESTIONS = ROOT.parent / "shared" / "eval" / "codefest_dev" / "questions.jsonl"


def is_loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in [0, 100]); None for no values."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return round(s[k], 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(index_dir: str | None, log_path: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = dict(os.environ)
    if index_dir:
        env["RADAR_AGENT_INDEX_DIR"] = index_dir
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "api.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log_path}")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("server did not become healthy in 120 s")


async def run_load(
    url: str,
    questions: list[str],
    clients: int,
    duration: float,
    timeout: float,
    warmup: bool,
    api_key: str | None = None,
) -> dict:
    """``clients`` concurrent clients posting ``questions`` to ``/chat`` for ``duration`` seconds;
    ``api_key`` is sent as ``Authorization: Bearer`` (a server with authentication on)."""
    results: list[dict] = []
    counter = {"i": 0}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits, headers=headers) as http:
        if warmup:  # load the encoder and index once, outside the measurement
            await http.post("/chat", json={"pregunta": questions[0]})
        start = time.perf_counter()
        end = start + duration

        async def client(cid: int) -> None:
            while time.perf_counter() < end:
                q = questions[counter["i"] % len(questions)]
                counter["i"] += 1
                t0 = time.perf_counter()
                rec = {"client": cid, "t": round(t0 - start, 3)}
                try:
                    r = await http.post("/chat", json={"pregunta": q})
                    rec["status"] = r.status_code
                    if r.status_code == 200:
                        body = r.json()
                        rec["estado"] = body["metadata"]["estado"]
                        rec["server_ms"] = body["metadata"]["latencia_ms"]
                except (httpx.HTTPError, ValueError, KeyError) as exc:
                    rec["status"] = None
                    rec["exception"] = type(exc).__name__
                rec["ms"] = (time.perf_counter() - t0) * 1000
                results.append(rec)

        await asyncio.gather(*(client(i) for i in range(clients)))
        wall = time.perf_counter() - start
    lat = [r["ms"] for r in results]
    ok = [r for r in results if r.get("status") == 200 and r.get("estado") != "error"]
    errors = len(results) - len(ok)
    estados: dict[str, int] = {}
    for r in results:
        key = r.get("estado") or (f"http_{r['status']}" if r.get("status") else r.get("exception", "exception"))
        estados[key] = estados.get(key, 0) + 1
    server = [r["server_ms"] for r in results if "server_ms" in r]
    return {
        "url": url,
        "clients": clients,
        "duration_s": duration,
        "wall_s": round(wall, 1),
        "requests": len(results),
        "errors": errors,
        "error_rate": round(errors / len(results), 4) if results else None,
        "throughput_rps": round(len(results) / wall, 2) if wall else None,
        "latency_ms": {
            "p50": percentile(lat, 50),
            "p95": percentile(lat, 95),
            "p99": percentile(lat, 99),
            "mean": round(statistics.fmean(lat), 1) if lat else None,
            "max": round(max(lat), 1) if lat else None,
        },
        "server_latency_ms": {"p50": percentile(server, 50), "p95": percentile(server, 95)},
        "estados": dict(sorted(estados.items())),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="a running server on loopback (default: start one)")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--duration", type=float, default=120.0, help="seconds")
    ap.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    ap.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    ap.add_argument("--index-dir", help="RADAR_AGENT_INDEX_DIR for the server this script starts")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "load_chat.json")
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument(
        "--api-key",
        default=env("RADAR_API_KEY"),
        help="key for a server with authentication on (RADAR_API_KEY)",
    )
    args = ap.parse_args(argv)
    if not 1 <= args.clients <= 200 or not 1 <= args.duration <= 3600:
        ap.error("--clients must be 1..200 and --duration 1..3600")
    if args.url and not is_loopback(args.url):
        ap.error(f"refusing a non-loopback target: {args.url}")
    questions = [
        json.loads(line)["question"] for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    proc = None
    url = args.url
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not url:
        proc, url = start_server(args.index_dir, args.out.with_suffix(".server.log"))
    try:
        report = asyncio.run(
            run_load(
                url.rstrip("/"), questions, args.clients, args.duration, args.timeout, not args.no_warmup, args.api_key
            )
        )
        report["health"] = httpx.get(url.rstrip("/") + "/health", timeout=10).json()
    finally:
        if proc:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    report["questions"] = str(args.questions)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
