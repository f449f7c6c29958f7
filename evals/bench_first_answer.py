"""First-answer benchmark: how long after ``radar up`` starts on an empty home is Radar useful?

Not a test: it measures what a person running ``make up`` on a fresh clone waits for (issue 15,
target: a first cited answer within 15 minutes on this machine). On a fresh ``--home`` (its own
embedded PostgreSQL, an empty knowledge base) it starts ``radar up`` exactly as ``make up`` does
(Dagster daemon + UI in the background, the API in the foreground) against ``--corpus`` and, every
``--every`` seconds, records the first time that:

* ``/health`` answers, and each search stage (``lexical``, ``dense``, ``rerank``) is live (loaded:
  the service loads the index on its first question, so the stages go live once one was asked);
* ``POST /chat`` with ``--question`` (asked as soon as ``/health`` lists the lexical stage on disk)
  returns an answer with at least one citation (``citas``) —
  the milestone of the target, with the stages it was answered on;
* the precomputes count documents (``agg_timeline_current``) and the claims exist
  (current ``claims`` rows), i.e. the dashboard and the claims panel have something to show.

It stops when every milestone in ``--until`` is reached or after ``--deadline`` minutes, and
writes a JSON report (milestones in seconds since start, the Dagster runs with their steps). With
``--keep`` the home stays as it is (``radar up`` is stopped; the materialized tables remain) so it
can be reused, e.g. for issue 13's edit-one-file run.

Usage: ``python evals/bench_first_answer.py --home /work/rh-full [--corpus ../shared/corpus]
[--out evals/reports/bench_first_answer.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.bench_freshness import free_port, runs_since  # noqa: E402 - after the sys.path set-up
from radar_pipeline import db  # noqa: E402

DEFAULT_QUESTION = "¿Qué riesgos plantea la basura espacial para los satélites en órbita baja?"
MILESTONES = ("health", "lexical", "first_cited_answer", "dense", "aggregates", "claims", "rerank")
PROBES = {
    "aggregates": "SELECT coalesce(sum(n_documents), 0) FROM agg_timeline_current "
    "WHERE phenomenon = 'all' AND entity_id IS NULL AND granularity = 'year'",
    "claims": "SELECT count(*) FROM claims WHERE superseded_at IS NULL",
}


def probe_table(engine: sa.Engine, sql: str) -> int:
    """The probe's count, 0 while its table or view does not exist yet."""
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(sql)).scalar() or 0)
    except sa.exc.DBAPIError:
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="a fresh (empty or absent) state folder")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--copy-corpus", action="store_true", help="copy the corpus into HOME/corpus first")
    ap.add_argument("--question", default=DEFAULT_QUESTION)
    ap.add_argument("--every", type=float, default=10.0, help="seconds between probes")
    ap.add_argument("--deadline", type=float, default=120.0, help="minutes before giving up")
    ap.add_argument("--until", default="first_cited_answer,dense,aggregates,claims", help="milestones to wait for")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "bench_first_answer.json")
    args = ap.parse_args()

    home = args.home.resolve()
    if (home / "pgdata").exists():
        raise SystemExit(f"{home} already holds a database: the benchmark needs an empty home")
    home.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus.resolve()
    if args.copy_corpus:
        shutil.copytree(corpus, home / "corpus", dirs_exist_ok=True)
        corpus = home / "corpus"
    api_port, ui_port = free_port(), free_port()
    env = {
        **os.environ,
        "RADAR_HOME": str(home),
        "RADAR_CORPUS_DIR": str(corpus),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    until = [m.strip() for m in args.until.split(",") if m.strip()]
    report: dict = {
        "corpus": str(corpus),
        "corpus_files": sum(1 for p in corpus.rglob("*") if p.is_file()),
        "home": str(home),
        "question": args.question,
        "started": datetime.now(UTC).isoformat(),
        "cpus": os.cpu_count(),
        "milestones_s": {},
    }
    marks: dict[str, float] = report["milestones_s"]
    t0 = time.time()
    up = subprocess.Popen(
        [sys.executable, "-m", "radar_cli", "up", "--port", str(api_port), "--ui-port", str(ui_port)],
        cwd=ROOT,
        env=env,
        stdout=(home / "up.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    api = f"http://127.0.0.1:{api_port}"
    engine = None
    answers = []

    def mark(name: str) -> None:
        if name not in marks:
            marks[name] = round(time.time() - t0, 1)
            print(f"[{marks[name]:7.1f} s] {name}", flush=True)

    try:
        while time.time() - t0 < args.deadline * 60 and not all(m in marks for m in until):
            if up.poll() is not None:
                report["error"] = f"radar up exited with {up.returncode} (see {home / 'up.log'})"
                break
            try:
                health = httpx.get(f"{api}/health", timeout=30).json()
            except (httpx.HTTPError, ValueError):
                time.sleep(args.every)
                continue
            mark("health")
            index = health.get("index") or {}
            stages = index.get("stages") or {}
            for stage in ("lexical", "dense", "rerank"):
                if stages.get(stage):
                    mark(stage)
            # the service loads an index on the first question, as a person would ask it: ask as soon
            # as the lexical stage is on disk (its /health ``stages`` say what is loaded)
            on_disk = index.get("stages_on_disk") or {}
            if (on_disk.get("lexical") or stages.get("lexical")) and (
                "first_cited_answer" not in marks or ("dense" in marks and len(answers) < 2)
            ):
                try:
                    r = httpx.post(f"{api}/chat", json={"pregunta": args.question}, timeout=300)
                    body = r.json()
                    answers.append(
                        {
                            "at_s": round(time.time() - t0, 1),
                            "status_code": r.status_code,
                            "citations": len(body.get("citas") or []),
                            "search_stages": (body.get("metadata") or {}).get("etapas_busqueda"),
                            "answer": (body.get("respuesta") or "")[:400],
                        }
                    )
                    if r.status_code == 200 and body.get("citas"):
                        mark("first_cited_answer")
                except (httpx.HTTPError, ValueError) as exc:
                    answers.append({"at_s": round(time.time() - t0, 1), "error": repr(exc)[:200]})
            if engine is None and (home / "pgdata").exists():
                engine = db.create_engine(db.resolve_database_url(None, home / "pgdata"))
            if engine is not None:
                for name, sql in PROBES.items():
                    if name not in marks and probe_table(engine, sql) > 0:
                        mark(name)
            time.sleep(args.every)
    finally:
        report["ended_s"] = round(time.time() - t0, 1)
        report["answers"] = answers
        try:
            import dagster as dg

            os.environ["DAGSTER_HOME"] = str(ROOT)
            os.environ["RADAR_PG_URL"] = db.resolve_database_url(None, home / "pgdata")
            report["runs"] = runs_since(dg.DagsterInstance.get(), t0)
        except Exception as exc:  # noqa: BLE001 - the report is still worth writing without the runs
            report["runs_error"] = repr(exc)[:300]
        os.killpg(up.pid, 2)
        try:
            up.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, 9)
        report["missing"] = [m for m in until if m not in marks]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(json.dumps({k: report[k] for k in ("milestones_s", "missing", "ended_s")}, indent=1))


if __name__ == "__main__":
    main()
