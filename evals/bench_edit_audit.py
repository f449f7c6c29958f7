"""Edit audit: one corpus file changes, the corpus is re-materialized, and every earlier answer stays
auditable (issue 13, "Done means": "editing one corpus file and re-materializing leaves every earlier
answer's citations resolvable and `radar impact` names what changed").

Not a test: an end-to-end audit of a materialized Radar home, through the real API and the real
command line, writing a JSON report. Steps:

1. **Before.** ``radar serve`` on a free loopback port of the home (a subprocess, as a user starts it);
   ``POST /chat`` for the questions (default: 8 Spanish questions over the three phenomena) so that
   traces exist; every trace in ``agent_runs`` (these and any earlier ones) is collected with its
   cited ``(doc_id, chunk_id)`` pairs (``citas`` and premise citations) and the passages it read
   (``provenance.passages``); every cited passage is resolved once through ``GET /chunks/{id}``.
2. **Edit.** The file: a text-based corpus file (txt/md/csv/json/jsonl; one path for its content) that
   the new answers cite, most-cited first. In one cited passage a figure (a number occurring once in
   the file; else a long word) is changed, and a paragraph (a CSV row for CSV; nothing for JSON) is
   appended. The original bytes and the edit are kept in ``--work-dir`` so ``--revert`` restores them.
3. **Re-materialize** as a user would: ``radar materialize`` (default selection ``*``, i.e. every
   asset with its checks, including the evaluations), timed; the Dagster run's steps and asset-check
   evaluations are read back from the instance. ``RADAR_RERANK_BUDGET_MINUTES`` is set to
   ``--rerank-budget-minutes`` when more than ``--rerank-missing-limit`` current passages lack a
   re-ranker vector and the variable is not set already (the asset would otherwise encode them all).
   The server keeps running, as under ``radar up``: it must swap in the new index version by itself.
4. **After.** Every cited passage of every earlier trace resolves through ``GET /chunks/{id}`` (current,
   or superseded with ``superseded_by``/``replaced_by``): counts resolvable / superseded / missing
   (missing must be 0); ``radar impact <file> --json`` and ``GET /impact/{doc_id}`` (old and new
   version) are compared with what step 1 recorded: the closed passages = the old version's passages,
   the passages whose text changed = the ones the edit touched (ground truth from the database), the
   past answers = exactly the traces that cited or read the file (every trace that cited it listed
   with those citations as no longer current), claims and aggregate cells = an independent SQL count;
   ``radar replay RUN_ID --json`` for the affected trace that cited the most of the file.
5. **Checks.** The asset checks evaluated by the materialization (every one listed; the version,
   claims and contract checks must pass) and the same invariants recomputed directly
   (``history.version_violations``, ``claims.store.check_evidence``/``check_single_current``).

The report goes to ``evals/reports/edit_audit_<name>.json`` (``--out``), a one-screen summary to stdout;
exit status 0 when every check passed, 1 otherwise. ``--revert`` restores the original bytes
(refusing when the file changed since the edit), re-materializes (unless ``--no-materialize``) and adds
a ``revert`` section to the report.

The materialization's ``claims_evaluation`` and ``precompute_evaluation`` assets write their reports
under the home (``<home>/reports``, ``StorageSettings.reports``), so the audit leaves the checkout's
``evals/reports`` as it was.

Refuses to start while a Dagster daemon heartbeats on the home's instance (``radar up`` / ``radar ui``:
its corpus sensor would race the edit) or a run is in progress, unless ``--allow-daemon``.

Usage::

    RADAR_SHARED_DIR=/work/shared python evals/bench_edit_audit.py --home /work/rh-full --name full
    python evals/bench_edit_audit.py --home /work/rh-audit --name mini
    python evals/bench_edit_audit.py --home /work/rh-full --name full --revert
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    # territorial dynamics / armed groups
    "¿Qué grupos armados tienen presencia en el Cauca y cómo afectan a la población civil?",
    "¿Cómo ha evolucionado el desplazamiento forzado en Colombia por la disputa territorial entre grupos armados?",
    "¿Qué advierten las alertas tempranas de la Defensoría del Pueblo sobre el reclutamiento de menores?",
    # space debris / low Earth orbit
    "¿Qué riesgos representa la basura espacial para los satélites en órbita baja?",
    "¿Qué medidas se proponen para mitigar la congestión de la órbita baja por las megaconstelaciones?",
    "¿Qué países han realizado pruebas de armas antisatélite y cuántos escombros generaron?",
    # military AI
    "¿Qué deben hacer los desarrolladores de modelos de IA de frontera según la ley de California?",
    "¿Cómo se está usando la inteligencia artificial en operaciones militares y sistemas de armas autónomos?",
]
EDITABLE = {".txt": "text", ".md": "text", ".csv": "csv", ".json": "json", ".jsonl": "jsonl"}
# asset checks that must pass after the run (by name); every other check is listed, not required
REQUIRED_CHECKS = (
    "documents_one_current_version",
    "chunks_one_current_version",
    "every_claim_quotes_existing_evidence",
    "one_current_version_per_claim",
    "no_forced_merge",
)
IN_PROCESS = {"execution": {"config": {"in_process": {}}}}  # every step in the run's process (radar_local config)
# a whole number token: not part of a word or of a longer figure ("3,5", "1.500"), may follow a
# CSV comma
_BEFORE, _AFTER = r"(?<!\w)(?<!\d[.,])", r"(?!\w)(?![.,]\d)"
NUMBER = re.compile(_BEFORE + r"\d+(?:[.,]\d+)*" + _AFTER)
WORD = re.compile(r"(?<!\w)[^\W\d_]{7,}(?!\w)")


def log(msg: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {msg}", flush=True)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- home and processes
class Home:
    """A materialized Radar home: environment for the ``radar`` subprocesses and an engine on its
    PostgreSQL (``DATABASE_URL`` when set, else the embedded server in ``HOME/pgdata``)."""

    def __init__(self, home: Path, corpus: Path, work: Path):
        self.home, self.corpus, self.work = home.resolve(), corpus.resolve(), work
        os.environ["RADAR_HOME"] = str(self.home)
        os.environ["RADAR_CORPUS_DIR"] = str(self.corpus)
        from radar_pipeline import db
        from radar_pipeline.config import get_settings

        settings = get_settings()
        self.url = db.resolve_database_url(settings.database_url, settings.pgdata)
        os.environ["RADAR_PG_URL"] = self.url
        self.engine = db.create_engine(self.url)
        self.env = {
            **os.environ,
            "RADAR_HOME": str(self.home),
            "RADAR_CORPUS_DIR": str(self.corpus),
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
        }

    def radar(self, args: list[str], log_name: str, timeout: float | None = None, env: dict | None = None):
        """Run ``radar ARGS`` (``python -m radar_cli.main``) in the checkout; stdout kept, stderr to
        ``work/<log_name>``. Returns ``(returncode, stdout, seconds)``."""
        t0 = time.perf_counter()
        with (self.work / log_name).open("w", encoding="utf-8") as err:
            p = subprocess.run(
                [sys.executable, "-m", "radar_cli.main", *args],
                cwd=ROOT,
                env=env or self.env,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                timeout=timeout,
            )
        return p.returncode, p.stdout, round(time.perf_counter() - t0, 2)

    def instance(self):
        from dagster import DagsterInstance

        return DagsterInstance.from_config(str(ROOT))


class Server:
    """``radar serve`` on a free loopback port of the home, stopped (SIGINT, then SIGKILL) on exit.
    When the home's API requires credentials, a temporary key (read, chat, review; 1 day) is
    created and revoked afterwards."""

    def __init__(self, home: Home, log_name: str, start_timeout: float):
        self.home, self.log_name, self.start_timeout = home, log_name, start_timeout
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.headers: dict[str, str] = {}
        self.key_id: str | None = None
        self.start_seconds: float | None = None

    def __enter__(self) -> Server:
        from radar_pipeline.access import KeyStore

        store = KeyStore(self.home.engine)
        if store.count_active() > 0:
            import datetime as dt

            token, info = store.create(
                "edit-audit", "read,chat,review", None, dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
            )
            self.key_id, self.headers = info.key_id, {"Authorization": f"Bearer {token}"}
        t0 = time.perf_counter()
        self._log = (self.home.work / self.log_name).open("w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "radar_cli.main", "serve", "--port", str(self.port)],
            cwd=ROOT,
            env=self.home.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        while time.perf_counter() - t0 < self.start_timeout:
            if self.proc.poll() is not None:
                raise SystemExit(f"radar serve exited with {self.proc.returncode}; see {self._log.name}")
            try:
                httpx.get(self.base + "/health", timeout=30).raise_for_status()
            except httpx.HTTPError:
                time.sleep(2)
                continue
            # the service loads its index on the first request that needs it: one search loads it
            r = self.get("/search", params={"q": "órbita baja", "k": 1}, timeout=self.start_timeout)
            if r.status_code != 200:
                self.__exit__(None, None, None)
                raise SystemExit(f"first /search answered {r.status_code}: {r.text[:500]}")
            self.start_seconds = round(time.perf_counter() - t0, 1)
            return self
        self.__exit__(None, None, None)
        raise SystemExit(f"radar serve did not load its index in {self.start_timeout:.0f} s")

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        if self.key_id:
            from radar_pipeline.access import KeyStore

            KeyStore(self.home.engine).revoke(self.key_id)

    def get(self, path: str, **kw) -> httpx.Response:
        return httpx.get(self.base + path, headers=self.headers, timeout=kw.pop("timeout", 120), **kw)

    def post(self, path: str, body: dict, timeout: float) -> httpx.Response:
        return httpx.post(self.base + path, json=body, headers=self.headers, timeout=timeout)

    def index_version(self) -> str | None:
        return httpx.get(self.base + "/health", timeout=30).json()["index"].get("index_version")


# --------------------------------------------------------------------------- traces and citations
def cited_pairs(response: dict | None) -> list[tuple[str, str]]:
    """``(doc_id, chunk_id)`` of an answer's citations: ``citas`` and the premises' ``cita``."""
    out = []
    for c in (response or {}).get("citas") or []:
        if c.get("chunk_id"):
            out.append((c.get("doc_id"), c["chunk_id"]))
    for p in (response or {}).get("premisas") or []:
        c = (p or {}).get("cita") or {}
        if c.get("chunk_id"):
            out.append((c.get("doc_id"), c["chunk_id"]))
    return list(dict.fromkeys(out))


def load_traces(engine: sa.Engine) -> dict[str, dict]:
    """Every stored ``/chat`` run: run_id → started_at, question, estado, cited and read pairs,
    whether it has provenance, and the index version it answered from."""
    from radar_pipeline.agent.trace import ensure_agent_schema

    ensure_agent_schema(engine)
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT run_id, started_at, pregunta, estado, response, provenance FROM agent_runs ORDER BY started_at"
            )
        ).all()
    out = {}
    for r in rows:
        prov = r.provenance or {}
        out[r.run_id] = {
            "started_at": r.started_at.isoformat(),
            "pregunta": (r.pregunta or "")[:200],
            "estado": r.estado,
            "cited": cited_pairs(r.response),
            "citas": [c["chunk_id"] for c in ((r.response or {}).get("citas") or []) if c.get("chunk_id")],
            "read": [(p.get("doc_id"), p["chunk_id"]) for p in prov.get("passages") or [] if p.get("chunk_id")],
            "provenance": bool(prov),
            "index_version": prov.get("index_version"),
        }
    return out


def ask(server: Server, questions: list[str], timeout: float) -> list[dict]:
    """``POST /chat`` each question in turn; run id, estado, citations and seconds per answer."""
    out = []
    for q in questions:
        t0 = time.perf_counter()
        try:
            r = server.post("/chat", {"pregunta": q}, timeout)
            body = r.json()
            meta = body.get("metadata") or {}
            out.append(
                {
                    "pregunta": q,
                    "http": r.status_code,
                    "run_id": meta.get("run_id"),
                    "estado": meta.get("estado"),
                    "cited": cited_pairs(body),
                    "seconds": round(time.perf_counter() - t0, 1),
                }
            )
        except (httpx.HTTPError, ValueError) as exc:
            out.append({"pregunta": q, "error": f"{type(exc).__name__}: {exc}"[:300]})
        log(f"chat {len(out)}/{len(questions)}: {out[-1].get('estado')} {len(out[-1].get('cited', []))} citas")
    return out


def resolve(server: Server, chunk_ids: list[str]) -> dict[str, dict]:
    """``GET /chunks/{id}`` for each id: HTTP status and, on 200, estado, doc, closing fields."""
    out = {}
    keep = ("doc_id", "estado", "supersede_reason", "superseded_by", "replaced_by", "source_path")
    for cid in chunk_ids:
        r = server.get(f"/chunks/{cid}")
        rec = {"http": r.status_code}
        if r.status_code == 200:
            body = r.json()
            rec.update({k: body.get(k) for k in keep})
            rec["estado"] = rec["estado"] or "vigente"
            rec["sha256"] = sha256_bytes(body.get("text", "").encode("utf-8"))
        out[cid] = rec
    return out


# --------------------------------------------------------------------------- the edit
def _doc_rows(engine: sa.Engine, doc_ids: list[str]) -> dict[str, dict]:
    with engine.connect() as conn:
        return {
            r.doc_id: r._asdict()
            for r in conn.execute(
                sa.text("SELECT doc_id, primary_path, source_paths, sha256 FROM documents WHERE doc_id = ANY(:d)"),
                {"d": doc_ids},
            )
        }


def chunk_texts(engine: sa.Engine, doc_id: str) -> dict[str, dict]:
    """Current passages of ``doc_id``: chunk_id → seq, text, text_sha."""
    with engine.connect() as conn:
        return {
            r.chunk_id: {"seq": r.seq, "text": r.text, "text_sha": r.text_sha}
            for r in conn.execute(
                sa.text("SELECT chunk_id, seq, text, text_sha FROM chunks WHERE doc_id = :d ORDER BY seq"),
                {"d": doc_id},
            )
        }


def _unique_in(raw: str, token: str) -> list[int]:
    pat = re.compile(_BEFORE + re.escape(token) + _AFTER)
    return [m.start() for m in pat.finditer(raw)]


def plan_edit(raw: str, passage: str) -> dict | None:
    """A change inside ``passage`` located in ``raw``: a number occurring exactly once in the file
    (its last digit changed), else a word of 7+ letters occurring once (followed by a bracketed
    correction). None when the passage shares no such token with the file."""
    for kind, pattern in (("figure", NUMBER), ("word", WORD)):
        tokens = sorted(set(pattern.findall(passage)), key=lambda t: (-len(t), t))
        for tok in tokens:
            if kind == "figure" and len(re.sub(r"\D", "", tok)) < 2:
                continue
            where = _unique_in(raw, tok)
            if len(where) != 1:
                continue
            if kind == "figure":
                new = tok[:-1] + str((int(tok[-1]) + 3) % 10)
            else:
                new = f"{tok} [corregido]"
            return {"kind": kind, "old": tok, "new": new, "offset": where[0]}
    return None


def apply_edit(path: Path, fmt: str, plan: dict) -> dict:
    """Write the edit: the planned replacement, then an appended paragraph (text), row (CSV) or
    nothing (JSON). Returns what was appended."""
    raw = path.read_bytes().decode("utf-8")
    o = plan["offset"]
    text = raw[:o] + plan["new"] + raw[o + len(plan["old"]) :]
    appended = ""
    if fmt == "text":
        appended = (
            f"\n\nNota de la redacción (corrección del {datetime.now(UTC):%d/%m/%Y}): una versión anterior de este "
            f"documento decía «{plan['old']}» donde corresponde «{plan['new']}». El dato se verificó de nuevo con la "
            "fuente original; el resto del texto no cambia.\n"
        )
    elif fmt == "csv":
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) >= 2:
            last = lines[-1]
            m = list(NUMBER.finditer(last))
            if m:
                x = m[-1]
                last = last[: x.start()] + x.group()[:-1] + str((int(x.group()[-1]) + 1) % 10) + last[x.end() :]
            appended = ("" if text.endswith("\n") else "\n") + last + "\n"
    text += appended
    path.write_bytes(text.encode("utf-8"))
    return {"appended": appended}


def pick_and_edit(home: Home, traces: dict[str, dict], new_runs: list[str]) -> dict:
    """Choose the file (see the module docstring), back it up, edit it. Returns the edit record."""
    counts: Counter = Counter()
    cited_chunks: dict[str, set[str]] = {}
    for rid in new_runs:
        for d, c in traces.get(rid, {}).get("cited", []):
            counts[d] += 1
            cited_chunks.setdefault(d, set()).add(c)
    if not counts:
        raise SystemExit("no new answer cited anything: nothing to edit (check the server log)")
    for rid, t in traces.items():  # earlier answers add weight to a file they cite too
        if rid not in new_runs:
            for d, _ in t["cited"]:
                if d in counts:
                    counts[d] += 1
    docs = _doc_rows(home.engine, list(counts))
    tried = []
    for d, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        row = docs.get(d)
        if row is None:
            tried.append({"doc_id": d, "why": "not current"})
            continue
        path = home.corpus / row["primary_path"]
        fmt = EDITABLE.get(path.suffix.lower())
        if fmt is None or len(row["source_paths"]) != 1 or not path.is_file():
            tried.append({"doc_id": d, "path": row["primary_path"], "why": "format, several paths or missing"})
            continue
        data = path.read_bytes()
        if sha256_bytes(data) != row["sha256"]:
            raise SystemExit(f"{path}: bytes differ from the home's source_files (wrong --corpus?)")
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError:
            tried.append({"doc_id": d, "path": row["primary_path"], "why": "not UTF-8"})
            continue
        passages = chunk_texts(home.engine, d)
        for cid in sorted(cited_chunks[d], key=lambda c: passages.get(c, {}).get("seq", 1 << 30)):
            if cid not in passages:
                continue
            plan = plan_edit(raw, passages[cid]["text"])
            if plan is None:
                continue
            backup = home.work / f"original{path.suffix.lower()}"
            backup.write_bytes(data)
            stat = path.stat()
            appended = apply_edit(path, fmt, plan)
            edited = path.read_bytes()
            touched = [c for c, p in passages.items() if _unique_in(p["text"], plan["old"])]
            rec = {
                "doc_id_before": d,
                "path": row["primary_path"],
                "format": fmt,
                "citation_weight": n,
                "cited_chunk": cid,
                "change": {k: plan[k] for k in ("kind", "old", "new", "offset")},
                **appended,
                "chunks_before": len(passages),
                "chunk_ids_before": sorted(passages),
                "chunks_holding_the_change": touched,
                "sha256_before": row["sha256"],
                "sha256_after": sha256_bytes(edited),
                "bytes_before": len(data),
                "bytes_after": len(edited),
                "mtime_before": stat.st_mtime,
                "backup": str(backup),
                "edited_at": datetime.now(UTC).isoformat(),
                "skipped": tried,
            }
            (home.work / "edit.json").write_text(json.dumps(rec, ensure_ascii=False, indent=1), encoding="utf-8")
            return rec
        tried.append({"doc_id": d, "path": row["primary_path"], "why": "no figure or word unique in the file"})
    raise SystemExit(f"no cited file could be edited: {json.dumps(tried, ensure_ascii=False)[:2000]}")


# --------------------------------------------------------------------------- materialization
def rerank_coverage(engine: sa.Engine) -> dict:
    """Distinct current passage texts, and how many have a vector per encoder (first stage, re-ranker)."""
    with engine.connect() as conn:
        total = conn.execute(sa.text("SELECT count(DISTINCT text_sha) FROM chunks")).scalar()
        per = dict(
            conn.execute(
                sa.text(
                    "SELECT e.encoder, count(*) FROM (SELECT DISTINCT text_sha FROM chunks) c "
                    "JOIN embeddings e USING (text_sha) GROUP BY 1"
                )
            ).all()
        )
    return {"distinct_texts": int(total), "vectors_per_encoder": {k: int(v) for k, v in per.items()}}


def daemon_alive(home: Home) -> list[str]:
    """Dagster daemons with a heartbeat in the last 90 s on the home's instance, and runs in progress."""
    from dagster import DagsterRunStatus, RunsFilter

    out = []
    with home.instance() as inst:
        try:
            beats = inst.get_daemon_heartbeats()
        except Exception:  # noqa: BLE001 - an instance without daemon storage: no daemon
            beats = {}
        now = time.time()
        out += [
            f"daemon {k} (heartbeat {now - b.timestamp:.0f} s ago)" for k, b in beats.items() if now - b.timestamp < 90
        ]
        busy = inst.get_runs(
            RunsFilter(statuses=[DagsterRunStatus.STARTED, DagsterRunStatus.QUEUED, DagsterRunStatus.STARTING])
        )
        out += [f"run {r.run_id} {r.status.value}" for r in busy]
    return out


def dagster_report(home: Home, since: float) -> dict:
    """The runs created after ``since`` (epoch s): status, wall time, steps (seconds, status) and
    every asset-check evaluation (asset, check, passed, severity)."""
    from dagster import DagsterEventType, RunsFilter

    runs, checks = [], []
    with home.instance() as inst:
        recs = inst.get_run_records(RunsFilter(created_after=datetime.fromtimestamp(since, UTC)))
        for rec in sorted(recs, key=lambda r: r.create_timestamp):
            run = rec.dagster_run
            steps = {
                s.step_key: {
                    "status": s.status.value if s.status else None,
                    "seconds": round(s.end_time - s.start_time, 2) if s.end_time and s.start_time else None,
                }
                for s in inst.get_run_step_stats(run.run_id)
            }
            start, end = rec.start_time, rec.end_time
            runs.append(
                {
                    "run_id": run.run_id,
                    "status": run.status.value,
                    "wall_seconds": round(end - start, 1) if start and end else None,
                    "assets": len(run.asset_selection or []),
                    "steps": steps,
                }
            )
            for ev in inst.all_logs(run.run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
                e = ev.dagster_event.event_specific_data
                checks.append(
                    {
                        "run_id": run.run_id,
                        "asset": e.asset_key.to_user_string(),
                        "check": e.check_name,
                        "passed": bool(e.passed),
                        "severity": getattr(e.severity, "value", str(e.severity)),
                        "metadata": {
                            k: getattr(v, "value", str(v))
                            for k, v in (e.metadata or {}).items()
                            if isinstance(getattr(v, "value", None), int | float | str)
                        },
                    }
                )
    return {"runs": runs, "checks": checks}


def without_evaluations() -> str:
    """The asset selection ``*`` minus the ``evaluation`` group, as an explicit comma-separated key
    list (``radar materialize --select`` takes keys; the listing runs in a child process because the
    evals layer does not import the assets layer)."""
    code = (
        "import dagster as dg; from assets.definitions import defs; g = defs.resolve_asset_graph(); "
        "keys = (dg.AssetSelection.all() - dg.AssetSelection.groups('evaluation')).resolve(g); "
        "print(','.join(sorted(k.to_user_string() for k in keys)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    if out.returncode != 0 or not out.stdout.strip():
        raise SystemExit(f"could not list the assets: {out.stderr[-2000:]}")
    return out.stdout.strip().splitlines()[-1]


def materialize(
    home: Home, select: str, budget_minutes: float, missing_limit: int, label: str, in_process: bool = False
) -> dict:
    """``radar materialize --select SELECT``, timed, with the Dagster run read back (the evaluation
    assets write their reports under the home, not into the checkout)."""
    cov = rerank_coverage(home.engine)
    missing = max(
        [cov["distinct_texts"] - v for v in cov["vectors_per_encoder"].values()] + [0]
        if len(cov["vectors_per_encoder"]) > 1
        else [cov["distinct_texts"]]
    )
    env = dict(home.env)
    budget = env.get("RADAR_RERANK_BUDGET_MINUTES")
    if budget is None and missing > missing_limit:
        env["RADAR_RERANK_BUDGET_MINUTES"] = str(budget_minutes)
        budget = str(budget_minutes)
    log(
        f"{'dagster asset materialize (in process)' if in_process else 'radar materialize'} --select '{select}' (re-ranker budget {budget or 'none'} min; {missing} texts lack a vector)"
    )
    t0 = time.time()
    if in_process:  # the same run, every step in one process (what the corpus sensor's runs do)
        t1 = time.perf_counter()
        with (home.work / f"materialize-{label}.err").open("w", encoding="utf-8") as err:
            p = subprocess.run(
                [str(Path(sys.executable).with_name("dagster")), "asset", "materialize", "-m", "assets.definitions"]
                + ["--select", select, "--partition-range", "0...f", "--config-json", json.dumps(IN_PROCESS)],
                cwd=ROOT,
                env={**env, "DAGSTER_HOME": str(ROOT), "RADAR_PG_URL": home.url},
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
        rc, out, seconds = p.returncode, p.stdout, round(time.perf_counter() - t1, 2)
    else:
        rc, out, seconds = home.radar(["materialize", "--select", select], f"materialize-{label}.err", env=env)
    (home.work / f"materialize-{label}.out").write_text(out, encoding="utf-8")
    log(f"materialize exit {rc} in {seconds:.0f} s")
    return {
        "select": select,
        "in_process": in_process,
        "returncode": rc,
        "seconds": seconds,
        "rerank_budget_minutes": budget,
        "rerank_texts_missing_before": missing,
        "coverage_before": cov,
        "dagster": dagster_report(home, t0 - 1),
    }


# --------------------------------------------------------------------------- after
def direct_checks(engine: sa.Engine) -> dict:
    """The asset checks' invariants recomputed here: one current version per document/passage/claim,
    every claim's evidence exists and quotes its span."""
    from radar_pipeline.claims.store import check_evidence, check_single_current, provenance_coverage
    from radar_pipeline.history import version_violations

    out: dict[str, Any] = {"version_violations": version_violations(engine)}
    with engine.connect() as conn:
        has_claims = conn.execute(sa.text("SELECT to_regclass('claim_evidence') IS NOT NULL")).scalar()
    if has_claims:
        out["claims_evidence"] = _jsonable(check_evidence(engine))
        out["claims_single_current"] = _jsonable(check_single_current(engine))
        out["claims_provenance_coverage"] = _jsonable(provenance_coverage(engine))
    return out


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def _passed(result: Any) -> bool:
    """A check result of ``claims.store`` (dict with ``passed``/``ok`` or a list of violations)."""
    if isinstance(result, dict):
        for k in ("passed", "ok"):
            if k in result:
                return bool(result[k])
        return not any(v for k, v in result.items() if isinstance(v, list))
    return not result


def independent_dependents(engine: sa.Engine, doc_ids: list[str]) -> dict:
    """Claims and aggregate/precompute cells citing ``doc_ids``, counted with jsonb_array_elements
    (not the containment queries ``provenance.impact`` uses)."""
    from radar_pipeline.provenance import EVIDENCE_TABLES

    out: dict[str, Any] = {"cells": {}}
    with engine.connect() as conn:
        for table in EVIDENCE_TABLES:
            if not conn.execute(sa.text("SELECT to_regclass(:t) IS NOT NULL"), {"t": table}).scalar():
                continue
            ids = conn.execute(
                sa.text(
                    f"SELECT DISTINCT t.id FROM {table} t, jsonb_array_elements(t.evidence) e "
                    "WHERE t.valid_to IS NULL AND e->>'doc_id' = ANY(:d) ORDER BY 1"
                ),
                {"d": doc_ids},
            ).scalars()
            out["cells"][table] = sorted(ids)
        if conn.execute(sa.text("SELECT to_regclass('claim_evidence') IS NOT NULL")).scalar():
            out["claims_current"] = sorted(
                conn.execute(
                    sa.text(
                        "SELECT DISTINCT c.claim_id FROM claims c JOIN claim_evidence e ON e.claim_version = c.id "
                        "WHERE c.superseded_at IS NULL AND e.doc_id = ANY(:d)"
                    ),
                    {"d": doc_ids},
                ).scalars()
            )
        else:
            out["claims_current"] = []
    return out


def closed_chunks(engine: sa.Engine, doc_id: str) -> dict[str, dict]:
    with engine.connect() as conn:
        return {
            r.chunk_id: {"text_sha": r.text_sha, "reason": r.supersede_reason, "superseded_by": r.superseded_by}
            for r in conn.execute(
                sa.text(
                    "SELECT DISTINCT ON (chunk_id) chunk_id, text_sha, supersede_reason, superseded_by "
                    "FROM chunks_history WHERE doc_id = :d ORDER BY chunk_id, superseded_at DESC"
                ),
                {"d": doc_id},
            )
        }


def audit_after(
    home: Home, server: Server, traces: dict, before_res: dict, edit: dict, before_impact: dict, before_dep: dict
) -> dict:
    """Step 4 (see the module docstring): resolution, impact (CLI and API), replay, checks."""
    old = edit["doc_id_before"]
    with home.engine.connect() as conn:
        new = conn.execute(
            sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": edit["path"]}
        ).scalar()
    checks: dict[str, bool] = {}
    res: dict[str, Any] = {"doc_id_after": new}
    checks["new_version_current"] = new is not None and new != old

    # ---- every earlier citation resolves
    all_cited = sorted({c for t in traces.values() for _, c in t["cited"]})
    after_res = resolve(server, all_cited)
    states = Counter(r.get("estado") if r["http"] == 200 else f"http_{r['http']}" for r in after_res.values())
    missing = [c for c, r in after_res.items() if r["http"] != 200]
    old_cited = [c for c in all_cited if before_res.get(c, {}).get("doc_id") == old or c.startswith(old + "-")]
    bad_old = [
        c
        for c in old_cited
        if not (
            after_res[c].get("estado") == "reemplazado"
            and after_res[c].get("supersede_reason") == "source_changed"
            and after_res[c].get("superseded_by") == new
            and (after_res[c].get("replaced_by") or "").startswith(f"{new}-")
        )
    ]
    others_changed = [
        c
        for c in all_cited
        if c not in old_cited
        and before_res.get(c, {}).get("http") == 200
        and (after_res[c].get("estado"), after_res[c].get("sha256"))
        != (before_res[c].get("estado"), before_res[c].get("sha256"))
    ]
    res["citations"] = {
        "traces": len(traces),
        "traces_with_citations": sum(1 for t in traces.values() if t["cited"]),
        "distinct_cited_passages": len(all_cited),
        "resolvable": len(all_cited) - len(missing),
        "by_estado": dict(states),
        "superseded": states.get("reemplazado", 0),
        "missing": len(missing),
        "missing_ids": missing[:50],
        "missing_before_edit": sorted(c for c, r in before_res.items() if r["http"] != 200)[:50],
        "cited_passages_of_edited_file": len(old_cited),
        "edited_file_citations_not_marked_superseded": bad_old,
        "other_citations_whose_state_or_text_changed": others_changed[:50],
    }
    checks["every_citation_resolves"] = not missing
    checks["edited_file_citations_superseded_with_successor"] = bool(old_cited) and not bad_old
    checks["other_citations_unchanged"] = not others_changed

    # ---- ground truth of what changed, from the database
    closed = closed_chunks(home.engine, old)
    new_passages = chunk_texts(home.engine, new) if new else {}
    new_shas = {p["text_sha"] for p in new_passages.values()}
    text_changed = sorted(c for c, r in closed.items() if r["text_sha"] not in new_shas)
    old_shas = {r["text_sha"] for r in closed.values()}
    res["ground_truth"] = {
        "old_passages_closed": len(closed),
        "closed_reasons": dict(Counter(r["reason"] for r in closed.values())),
        "new_passages": len(new_passages),
        "old_passages_whose_text_changed": text_changed,
        "new_passages_with_new_text": sorted(c for c, p in new_passages.items() if p["text_sha"] not in old_shas),
    }
    checks["edited_passages_among_text_changed"] = bool(edit["chunks_holding_the_change"]) and set(
        edit["chunks_holding_the_change"]
    ) <= set(text_changed)
    checks["old_version_fully_closed"] = all(
        closed.get(c, {}).get("reason") == "source_changed" and closed[c]["superseded_by"] == new
        for c in edit["chunk_ids_before"]
    )

    # ---- radar impact <file> (CLI) and GET /impact/{doc_id} (API)
    rc, out, secs = home.radar(["impact", edit["path"], "--json"], "impact.err")
    imp = json.loads(out) if rc == 0 else {}
    res["impact_cli"] = {
        "returncode": rc,
        "seconds": secs,
        "summary": imp.get("summary"),
        "doc_ids": imp.get("doc_ids"),
    }
    (home.work / "impact.json").write_text(out, encoding="utf-8")
    # the path may have held other versions before (an earlier edit, a revert): impact names them all
    with home.engine.connect() as conn:
        versions = set(
            conn.execute(
                sa.text(
                    "SELECT doc_id FROM documents WHERE primary_path = :p "
                    "UNION SELECT doc_id FROM documents_history WHERE primary_path = :p"
                ),
                {"p": edit["path"]},
            ).scalars()
        )
    closed_all: dict[str, dict] = {}
    for d in sorted(versions):
        closed_all.update({c: r for c, r in closed_chunks(home.engine, d).items() if c not in new_passages})
    text_changed_all = sorted(
        c
        for c, r in closed_all.items()
        if r["reason"] in ("source_changed", "extractor_changed") and r["text_sha"] not in new_shas
    )
    res["path_versions"] = sorted(versions)
    checks["impact_names_every_version_of_the_path"] = (
        set(imp.get("doc_ids") or []) == versions and {old, new} <= versions
    )  # ordered by first closing: a content the path held before (an edit reverted, then redone) is not last
    checks["impact_closed_passages_exact"] = set((imp.get("chunks") or {}).get("closed") or {}) == set(closed_all)
    checks["impact_current_passages_exact"] = set((imp.get("chunks") or {}).get("current") or []) == set(new_passages)
    named_changed = (imp.get("chunks") or {}).get("text_changed")
    if named_changed is not None:
        checks["impact_text_changed_exact"] = set(named_changed) == set(text_changed_all)
    expected_answers = {
        rid
        for rid, t in traces.items()
        if any(d in versions or c.rsplit("-", 1)[0] in versions for d, c in t["cited"] + t["read"])
    }
    cited_old_by_run = {
        rid: sorted({c for d, c in t["cited"] if c in old_cited and c in t["citas"]}) for rid, t in traces.items()
    }
    must_list = {rid for rid, cs in cited_old_by_run.items() if cs}
    listed = {a["run_id"]: a for a in imp.get("answers") or []}
    res["impact_answers"] = {
        "listed": len(listed),
        "expected_cited_or_read": len(expected_answers),
        "that_cited_the_old_version": len(must_list),
        "unexpected": sorted(set(listed) - expected_answers),
        "not_listed": sorted(expected_answers - set(listed)),
        "stale_citations_mismatch": {
            rid: {"expected": cited_old_by_run[rid], "listed": sorted(listed[rid]["citas_no_vigentes"])}
            for rid in must_list & set(listed)
            if sorted(listed[rid]["citas_no_vigentes"]) != cited_old_by_run[rid]
        },
    }
    checks["impact_lists_every_answer_that_cited_it"] = must_list <= set(listed)
    checks["impact_lists_no_unrelated_answer"] = set(listed) <= expected_answers
    checks["impact_lists_exactly_the_answers_that_read_or_cited_it"] = set(listed) == expected_answers
    checks["impact_stale_citations_exact"] = not res["impact_answers"]["stale_citations_mismatch"]
    dep = independent_dependents(home.engine, [old, new])
    imp_cells = {
        t: sorted(x["id"] for x in v["current"])
        for t, v in (imp.get("derived") or {}).items()
        if isinstance(v.get("current"), list)
    }
    imp_claims = sorted(c["claim_id"] for c in ((imp.get("claims") or {}).get("current") or []))
    res["impact_dependents"] = {
        "claims_current": len(imp_claims),
        "claims_closed_versions": (imp.get("claims") or {}).get("closed"),
        "claims_current_before_edit": len(before_dep.get("claims_current", [])),
        "cells_current": {t: len(v) for t, v in imp_cells.items()},
        "cells_current_before_edit": {t: len(v) for t, v in before_dep["cells"].items()},
        "document_rows": {
            t: v for t, v in (imp.get("derived") or {}).items() if not isinstance(v.get("current"), list)
        },
    }
    checks["impact_claims_match_independent_count"] = (imp.get("claims") or {}).get("n_current") == len(
        dep["claims_current"]
    ) and set(imp_claims) <= set(dep["claims_current"])
    checks["impact_cells_match_independent_count"] = all(imp_cells.get(t, []) == ids for t, ids in dep["cells"].items())
    api = {}
    for label, d in (("old", old), ("new", new)):
        r = server.get(f"/impact/{d}")
        body = r.json() if r.status_code == 200 else {}
        api[label] = {
            "http": r.status_code,
            "answers": len(body.get("answers") or []),
            "closed": len((body.get("chunks") or {}).get("closed") or {}),
            "current": len((body.get("chunks") or {}).get("current") or []),
            "text_changed": (body.get("chunks") or {}).get("text_changed"),
        }
        if label == "old":
            api_old = {a["run_id"] for a in body.get("answers") or []}
    # the headline: the old version's impact names exactly the passages whose text the edit changed
    checks["api_impact_of_old_version_names_exactly_the_changed_passages"] = api["old"]["text_changed"] == text_changed
    res["impact_api"] = api
    exp_old = {
        rid for rid, t in traces.items() if any(d == old or c.startswith(old + "-") for d, c in t["cited"] + t["read"])
    }
    checks["api_impact_of_old_version_lists_its_answers"] = api["old"]["http"] == 200 and api_old == exp_old
    checks["api_impact_of_old_version_closed_passages"] = (
        api["old"]["closed"] == len(closed) and api["old"]["current"] == 0
    )
    res["impact_before_edit_summary"] = before_impact.get("summary")

    # ---- radar replay for the affected trace citing most of the file
    affected = sorted(  # prefer an answer that cited a passage whose text changed
        must_list,
        key=lambda rid: (-sum(c in text_changed for c in cited_old_by_run[rid]), -len(cited_old_by_run[rid]), rid),
    )
    affected = [rid for rid in affected if traces[rid]["provenance"]]
    if affected:
        rid = affected[0]
        rc, out, secs = home.radar(["replay", rid, "--json"], "replay.err")
        rep = json.loads(out) if rc == 0 else {}
        (home.work / "replay.json").write_text(out, encoding="utf-8")
        by = {p["chunk_id"]: p for p in rep.get("passages") or []}
        res["replay"] = {
            "run_id": rid,
            "returncode": rc,
            "seconds": secs,
            "summary": rep.get("summary"),
            "still_first": sum(1 for p in by.values() if p.get("still_first")),
            "same_index": rep.get("same_index"),
            "passages_of_edited_file": {
                c: {k: by[c].get(k) for k in ("estado", "chunk_id_now", "rank_then", "rank_now")}
                for c in cited_old_by_run[rid]
                if c in by
            },
        }
        checks["replay_ran"] = rc == 0
        checks["replay_no_cited_passage_gone"] = rc == 0 and not any(
            by[c]["estado"] == "gone" for c in cited_old_by_run[rid] if c in by
        )
        checks["replay_text_changed_reported_changed"] = rc == 0 and all(
            by[c]["estado"] == ("changed" if c in text_changed else "same") for c in cited_old_by_run[rid] if c in by
        )
    else:
        res["replay"] = {"run_id": None, "why": "no trace with provenance cited the edited file"}

    # ---- the edit is searchable
    probe = (edit.get("appended") or "").strip().split(":")[-1].strip()[:120] or edit["change"]["new"]
    r = server.get("/search", params={"q": probe, "k": 10})
    hits = r.json().get("passages", []) if r.status_code == 200 else []
    res["search_probe"] = {
        "q": probe,
        "http": r.status_code,
        "new_version_rank": next((i for i, h in enumerate(hits, 1) if h["doc_id"] == new), None),
    }
    res["checks"] = checks
    return res


# --------------------------------------------------------------------------- main flows
def run_audit(args, report: dict[str, Any]) -> dict:
    home = Home(args.home, args.corpus or args.home / "corpus", args.work_dir)
    if (args.work_dir / "edit.json").exists() and not args.force:
        raise SystemExit(f"{args.work_dir}/edit.json exists: revert it first (--revert) or pass --force")
    busy = daemon_alive(home)
    if busy and not args.allow_daemon:
        raise SystemExit(
            "a Dagster daemon or run is active on this home (stop `radar up`/`radar ui`): " + "; ".join(busy)
        )
    report |= {
        "home": str(home.home),
        "corpus": str(home.corpus),
        "started_at": datetime.now(UTC).isoformat(),
        "machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()},
        "daemon_or_runs_active_at_start": busy,
    }
    t_all = time.perf_counter()
    with Server(home, "serve.log", args.start_timeout) as server:
        report["serve_start_seconds"] = server.start_seconds
        version_before = server.index_version()
        earlier = load_traces(home.engine)
        log(f"server up in {server.start_seconds} s (index {version_before}); {len(earlier)} earlier traces")
        answers = ask(server, args.questions, args.chat_timeout)
        traces = load_traces(home.engine)
        new_runs = [a["run_id"] for a in answers if a.get("run_id") in traces]
        all_cited = sorted({c for t in traces.values() for _, c in t["cited"]})
        before_res = resolve(server, all_cited)
        report["before"] = {
            "index_version": version_before,
            "earlier_traces": len(earlier),
            "new_traces": len(new_runs),
            "answers": [
                {k: a.get(k) for k in ("pregunta", "estado", "seconds", "run_id")} | {"citas": len(a.get("cited", []))}
                for a in answers
            ],
            "chat_seconds_total": round(sum(a.get("seconds", 0) for a in answers), 1),
            "traces": len(traces),
            "distinct_cited_passages": len(all_cited),
            "unresolvable_before_edit": sum(1 for r in before_res.values() if r["http"] != 200),
        }
        edit = pick_and_edit(home, traces, new_runs)
        report["edit"] = edit
        log(f"edited {edit['path']} ({edit['change']['kind']} {edit['change']['old']!r} → {edit['change']['new']!r})")
        from radar_pipeline.provenance import impact

        before_impact = impact(home.engine, edit["doc_id_before"])
        before_dep = independent_dependents(home.engine, [edit["doc_id_before"]])
        mat = materialize(
            home, args.select, args.rerank_budget_minutes, args.rerank_missing_limit, "edit", args.in_process
        )
        report["materialize"] = mat
        t0 = time.perf_counter()
        version_after = server.index_version()
        while version_after == version_before and time.perf_counter() - t0 < args.swap_timeout:
            time.sleep(2)
            version_after = server.index_version()
        report["hot_swap"] = {
            "index_version_after": version_after,
            "swapped": version_after != version_before,
            "seconds_after_materialize": round(time.perf_counter() - t0, 1),
        }
        if report["hot_swap"]["swapped"]:
            after = audit_after(home, server, traces, before_res, edit, before_impact, before_dep)
    if not report["hot_swap"]["swapped"]:  # audit through a fresh server; the check below fails
        with Server(home, "serve-after.log", args.start_timeout) as fresh:
            after = audit_after(home, fresh, traces, before_res, edit, before_impact, before_dep)
    report.update(after)
    checks = report["checks"]
    checks["materialize_succeeded"] = mat["returncode"] == 0 and all(
        r["status"] == "SUCCESS" for r in mat["dagster"]["runs"]
    )
    checks["server_swapped_to_new_index"] = report["hot_swap"]["swapped"]
    by_name = {c["check"]: c for c in mat["dagster"]["checks"]}
    report["asset_checks"] = {
        "evaluated": len(mat["dagster"]["checks"]),
        "failed": [f"{c['asset']}:{c['check']} ({c['severity']})" for c in mat["dagster"]["checks"] if not c["passed"]],
        "required": {n: (by_name[n]["passed"] if n in by_name else None) for n in REQUIRED_CHECKS},
    }
    checks["required_asset_checks_passed"] = all(v is True for v in report["asset_checks"]["required"].values())
    checks["contract_checks_passed"] = all(
        c["passed"] for c in mat["dagster"]["checks"] if c["check"].endswith("_contract")
    )
    direct = direct_checks(home.engine)
    report["direct_checks"] = direct
    checks["no_second_current_version"] = not any(direct["version_violations"].values())
    for k in ("claims_evidence", "claims_single_current"):
        if k in direct:
            checks[k] = _passed(direct[k])
    if "claims_provenance_coverage" in direct:
        checks["claims_provenance_coverage_is_1"] = direct["claims_provenance_coverage"]["coverage"] == 1.0
    report["total_seconds"] = round(time.perf_counter() - t_all, 1)
    report["machine"]["load_avg_end"] = os.getloadavg()
    report["passed"] = all(checks.values())
    return report


def run_revert(args) -> dict:
    home = Home(args.home, args.corpus or args.home / "corpus", args.work_dir)
    rec = json.loads((args.work_dir / "edit.json").read_text(encoding="utf-8"))
    path = home.corpus / rec["path"]
    now = sha256_bytes(path.read_bytes())
    if now != rec["sha256_after"] and not args.force:
        raise SystemExit(f"{path} changed since the edit (sha256 {now[:12]}); --force to restore anyway")
    data = Path(rec["backup"]).read_bytes()
    assert sha256_bytes(data) == rec["sha256_before"], "backup does not match the recorded original"
    path.write_bytes(data)
    log(f"restored {rec['path']} ({len(data)} bytes)")
    out: dict[str, Any] = {"restored_at": datetime.now(UTC).isoformat(), "path": rec["path"]}
    if not args.no_materialize:
        busy = daemon_alive(home)
        if busy and not args.allow_daemon:
            raise SystemExit("a Dagster daemon or run is active on this home: " + "; ".join(busy))
        mat = materialize(
            home, args.select, args.rerank_budget_minutes, args.rerank_missing_limit, "revert", args.in_process
        )
        with home.engine.connect() as conn:
            doc = conn.execute(
                sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": rec["path"]}
            ).scalar()
        direct = direct_checks(home.engine)
        out.update(
            {
                "materialize": {k: mat[k] for k in ("returncode", "seconds", "rerank_budget_minutes")},
                "failed_asset_checks": [
                    f"{c['asset']}:{c['check']}" for c in mat["dagster"]["checks"] if not c["passed"]
                ],
                "doc_id_now": doc,
                "original_doc_id_current_again": doc == rec["doc_id_before"],
                "version_violations": direct["version_violations"],
            }
        )
    (args.work_dir / "edit.json").rename(args.work_dir / f"edit.reverted-{datetime.now(UTC):%Y%m%dT%H%M%S}.json")
    return out


def summary(rep: dict) -> str:
    """One screen: what changed, the counts and every check."""
    e, c, m = rep["edit"], rep["citations"], rep["materialize"]
    lines = [
        f"edit audit of {rep['home']} ({rep['total_seconds']:.0f} s in all)",
        f"  edited {e['path']}: {e['change']['kind']} «{e['change']['old']}» → «{e['change']['new']}»"
        + (" + appended text" if e.get("appended") else ""),
        f"  doc {e['doc_id_before']} → {rep['doc_id_after']}; citation weight {e['citation_weight']}",
        f"  answers asked {rep['before']['new_traces']} ({rep['before']['chat_seconds_total']:.0f} s), traces audited {c['traces']}",
        f"  materialize --select '{m['select'][:40]}{'…' if len(m['select']) > 40 else ''}': exit {m['returncode']} in {m['seconds']:.0f} s "
        f"(re-ranker budget {m['rerank_budget_minutes'] or 'none'}); new index served: {rep['hot_swap']['swapped']}",
        f"  citations: {c['distinct_cited_passages']} passages, {c['resolvable']} resolvable, {c['superseded']} superseded, "
        f"{c['missing']} missing",
        f"  passages of the file: {rep['ground_truth']['old_passages_closed']} closed, "
        f"{len(rep['ground_truth']['old_passages_whose_text_changed'])} with changed text, "
        f"{rep['ground_truth']['new_passages']} current",
        f"  impact: {rep['impact_answers']['listed']} answers listed ({rep['impact_answers']['that_cited_the_old_version']} cited "
        f"the old version), {rep['impact_dependents']['claims_current']} claims, "
        f"{sum(rep['impact_dependents']['cells_current'].values())} cells",
    ]
    if rep["replay"].get("run_id"):
        lines.append(
            f"  replay {rep['replay']['run_id']}: {rep['replay']['summary']} still first {rep['replay']['still_first']}"
        )
    lines.append(
        f"  asset checks: {rep['asset_checks']['evaluated']} evaluated, failed: {rep['asset_checks']['failed'] or 'none'}"
    )
    for k, v in rep["checks"].items():
        lines.append(f"  [{'ok' if v else 'FAIL'}] {k}")
    lines.append("PASSED" if rep["passed"] else "FAILED")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="a materialized RADAR_HOME")
    ap.add_argument("--corpus", type=Path, help="its corpus (default HOME/corpus)")
    ap.add_argument("--name", help="report name: edit_audit_<name>.json (default: the home's folder name)")
    ap.add_argument("--out", type=Path, help="report path (default evals/reports/edit_audit_<name>.json)")
    ap.add_argument(
        "--work-dir", type=Path, help="backup, logs, impact/replay JSON (default evals/reports/edit_audit_<name>/)"
    )
    ap.add_argument("--questions-file", type=Path, help="JSONL with 'question' (default: 8 built-in Spanish questions)")
    ap.add_argument("--n-questions", type=int, default=len(QUESTIONS))
    ap.add_argument("--select", default="*", help="radar materialize selection (default '*', as a user runs it)")
    ap.add_argument(
        "--no-evaluations",
        action="store_true",
        help="select every asset but the evaluation group (their cron runs them under `radar up`)",
    )
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="run `dagster asset materialize` (the command `radar materialize` wraps) with every step in one "
        "process: the same assets and checks without a process start-up per step (a loaded machine)",
    )
    ap.add_argument("--rerank-budget-minutes", type=float, default=3.0)
    ap.add_argument(
        "--rerank-missing-limit", type=int, default=200, help="more texts without a re-ranker vector → budget"
    )
    ap.add_argument("--chat-timeout", type=float, default=600.0)
    ap.add_argument("--start-timeout", type=float, default=900.0)
    ap.add_argument("--swap-timeout", type=float, default=300.0, help="seconds to wait for the server's index swap")
    ap.add_argument("--allow-daemon", action="store_true", help="run even though a Dagster daemon/run is active")
    ap.add_argument("--revert", action="store_true", help="restore the edited file and re-materialize")
    ap.add_argument("--no-materialize", action="store_true", help="with --revert: only restore the bytes")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    name = args.name or args.home.resolve().name.removeprefix("rh-")
    args.out = args.out or ROOT / "evals" / "reports" / f"edit_audit_{name}.json"
    args.work_dir = (args.work_dir or ROOT / "evals" / "reports" / f"edit_audit_{name}").resolve()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    if args.no_evaluations:
        args.select = without_evaluations()
    if args.revert:
        out = run_revert(args)
        rep = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
        rep["revert"] = out
        args.out.write_text(json.dumps(rep, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
        print(json.dumps(out, ensure_ascii=False, indent=1, default=str))
        return 0 if out.get("original_doc_id_current_again", True) else 1
    if args.questions_file:
        args.questions = [json.loads(x)["question"] for x in args.questions_file.read_text().splitlines() if x.strip()]
    else:
        args.questions = QUESTIONS
    args.questions = args.questions[: args.n_questions]
    rep: dict[str, Any] = {}
    try:
        run_audit(args, rep)
    except BaseException as exc:  # keep what was measured, and say where the edit stands
        rep["error"] = f"{type(exc).__name__}: {exc}"[:2000]
        rep["edit_pending_revert"] = (args.work_dir / "edit.json").exists()
        if "edit" in rep:  # the corpus was touched: never lose that record (a refusal writes nothing)
            args.out.write_text(json.dumps(rep, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
        raise
    args.out.write_text(json.dumps(rep, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    print(summary(rep))
    print(f"report: {args.out}")
    return 0 if rep["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
