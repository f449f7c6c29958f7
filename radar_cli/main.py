"""The ``radar`` command line: materialize, ui, up, search, eval, judge, serve, keys, trace, doctor,
retract, impact, replay, claims, review, answers.

Orchestration commands run Dagster as a child process (``dagster asset materialize`` /
``dagster dev``) with ``DAGSTER_HOME`` at the project root, after starting the embedded
PostgreSQL (or using ``DATABASE_URL``), so runs show up in the Dagster UI with their lineage.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from radar_cli.lifecycle import start_child, stop_children, stop_errors, stop_on_signal, uninterrupted
from radar_pipeline.config import PROJECT_ROOT, EncoderSpec, RadarSettings, get_settings

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Radar: strategic-trends knowledge base.")


def dagster_env(settings: RadarSettings) -> dict[str, str]:
    """Environment for Dagster child processes: storage URL, DAGSTER_HOME, corpus and state paths."""
    from radar_pipeline import db

    url = db.resolve_database_url(settings.database_url, settings.pgdata)
    env = dict(os.environ)
    env.update(
        {
            "RADAR_PG_URL": url,
            "DAGSTER_HOME": str(PROJECT_ROOT),
            "RADAR_HOME": str(settings.home),
            "RADAR_CORPUS_DIR": str(settings.corpus),
            "PYTHONUNBUFFERED": "1",
        }
    )
    # The code servers of `dagster dev` shut themselves down when a heartbeat is late (issue 24:
    # under a load of 10-13 on 2 cores, one did). Dagster reads these at start-up
    # (dagster._cli.code_server, dagster._cli.proxy_server_manager): the gRPC server a code server
    # spawns waits 5 min (default 30 s) for its heartbeat, a proxy code server started without an
    # explicit timeout 5 min too (`dagster dev` passes its own 45 s), and `dagster dev` heartbeats
    # its code server every 5 s (the default, kept explicit) and restarts one that exited.
    for name, value in CODE_SERVER_HEARTBEATS.items():
        env.setdefault(name, value)
    return env


CODE_SERVER_HEARTBEATS = {
    "DAGSTER_GRPC_PROXY_HEARTBEAT_TTL_SECONDS": "300",
    "DAGSTER_PROXY_SERVER_HEARTBEAT_TIMEOUT": "300",
    "DAGSTER_CODE_SERVER_AUTO_RESTART_INTERVAL": "5",
}


def _dagster_bin() -> str:
    exe = Path(sys.executable).with_name("dagster")
    return str(exe) if exe.exists() else "dagster"


def partition_args(select: str) -> list[str]:
    """``--partition-range 0...f`` when ``select`` holds a partitioned (per-file) asset: the whole
    corpus in one run (every asset has a single-run backfill policy), as before partitions."""
    import dagster as dg

    from assets.definitions import defs
    from assets.partitions import FULL_RANGE

    graph = defs.resolve_asset_graph()
    keys = dg.AssetSelection.from_coercible(select.split(",")).resolve(graph)
    return ["--partition-range", FULL_RANGE] if any(graph.get(k).partitions_def for k in keys) else []


RUN_LINE = re.compile(r" - dagster - \w+ - [^ ]+ - ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}) - ")


def _stage_steps() -> set[str]:
    """Step keys of the asset steps (drawn as stages); the other steps are asset checks."""
    from assets.definitions import defs

    return {a.node_def.name for a in defs.resolve_asset_graph().assets_defs if a.is_executable and a.keys}


def _partitioned_steps() -> set[str]:
    """Step keys of the per-file (partitioned) asset steps."""
    from assets.definitions import defs

    graph = defs.resolve_asset_graph()
    return {
        a.node_def.name
        for a in graph.assets_defs
        if a.is_executable and a.keys and any(graph.get(k).partitions_def for k in a.keys)
    }


@app.command()
def materialize(
    select: str = typer.Option("*", help="Dagster asset selection, e.g. 'chunks+' or 'documents'"),
    corpus: Path | None = typer.Option(None, help="corpus root (default RADAR_CORPUS_DIR or ../shared/corpus)"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="print every Dagster event instead of progress bars"),
):
    """Materialize the assets (default: all of them, with their checks) into PostgreSQL and on-disk indexes.

    The terminal shows a progress bar per stage (counts, rates), warnings and a summary; every
    Dagster event goes to a log file under RADAR_HOME/logs and to the Dagster UI (`radar ui`).
    """
    settings = get_settings(**({"corpus_dir": corpus} if corpus else {}))
    env = dagster_env(settings)
    from assets.executor import executor_kind

    typer.echo(
        f"corpus: {settings.corpus}\nstate: {settings.home}\nexecutor: {executor_kind()}\n"
        "Dagster runs are stored in PostgreSQL; open them with `radar ui`."
    )
    cmd = [_dagster_bin(), "asset", "materialize", "-m", "assets.definitions", "--select", select]
    cmd += partition_args(select)
    if verbose:
        raise typer.Exit(subprocess.call(cmd, cwd=PROJECT_ROOT, env=env))
    raise typer.Exit(_materialize_with_progress(cmd, env, settings.home / "logs"))


def _materialize_with_progress(cmd: list[str], env: dict[str, str], log_dir: Path) -> int:
    """Run ``dagster asset materialize`` with its event stream sent to a log file, follow the run
    in its event log (radar_cli.progress) and print the summary; the child's exit status."""
    import threading
    import time

    from dagster import DagsterInstance
    from rich.console import Console

    from radar_cli.progress import follow, summary

    console = Console(highlight=False)
    if not console.is_terminal:  # a log file or CI: no wrapping at 80 columns
        console = Console(highlight=False, width=160)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"materialize-{time.strftime('%Y%m%d-%H%M%S')}.log"
    found: dict[str, str] = {}
    tail: list[str] = []
    proc = subprocess.Popen(
        cmd, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )

    def pump() -> None:
        with log_path.open("w", encoding="utf-8") as log:
            for line in proc.stdout:
                log.write(line)
                if "run_id" not in found and (m := RUN_LINE.search(line)):
                    found["run_id"] = m.group(1)
                tail.append(line)
                del tail[:-40]

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    stage_steps = _stage_steps()
    while "run_id" not in found and proc.poll() is None:
        time.sleep(0.2)
    reader.join(timeout=0.5 if proc.poll() is None else 10)
    if "run_id" not in found:
        proc.wait()
        reader.join(timeout=10)
        console.print("".join(tail[-30:]), markup=False)
        console.print(f"[red]no run was started[/] (exit {proc.returncode}); log: {log_path}")
        return proc.returncode or 1
    os.environ["RADAR_PG_URL"] = env["RADAR_PG_URL"]  # the instance's storage (dagster.yaml)
    with DagsterInstance.from_config(str(PROJECT_ROOT)) as instance:
        try:
            report = follow(instance, found["run_id"], stage_steps, lambda: proc.poll() is None, console)
        except KeyboardInterrupt:
            proc.terminate()
            proc.wait()
            console.print(f"[yellow]interrupted[/]; the run is marked in the Dagster UI; log: {log_path}")
            return 130
    reader.join(timeout=10)
    summary(report, console, str(log_path))
    return proc.returncode


@app.command()
def worker(
    name: str = typer.Option("radar", help="worker name; Celery's node name is <name>@<host>"),
    concurrency: int = typer.Option(1, min=1, help="steps this worker runs at once (processes)"),
    loglevel: str = typer.Option("INFO", help="Celery log level"),
):
    """Start a Celery worker that runs pipeline steps for runs made with RADAR_EXECUTOR=celery.

    It reads the same settings as the run: DATABASE_URL (tables and Dagster runs), RADAR_HOME
    (shared with the other workers: the FAISS/BM25 folders), RADAR_CELERY_BROKER_URL and
    RADAR_CELERY_BACKEND_URL (Redis). The process becomes the Celery worker (signals reach it).
    """
    env = dagster_env(get_settings())
    env["RADAR_EXECUTOR"] = "celery"
    cmd = [sys.executable, "-m", "celery", "-A", "assets.celery_app", "worker", "-Q", "dagster"]
    # threads, not prefork: a step starts its own processes (extraction, encoding) and a prefork
    # child is daemonic, which multiprocessing forbids to have children
    cmd += ["-P", "threads", "-c", str(concurrency), "-n", f"{name}@%h", "-l", loglevel]
    cmd += ["--without-gossip", "--without-mingle"]
    sys.stdout.flush()
    os.chdir(PROJECT_ROOT)
    os.execve(sys.executable, cmd, env)


@contextmanager
def stoppable_children() -> Iterator[None]:
    """While it is open, the processes this one starts inherit neither an ignored SIGINT nor an
    ignored SIGTERM: a child this process means to stop with ``terminate()`` stops.

    A background job of a non-interactive shell (``radar up &``) starts with SIGINT ignored, and an
    ignored disposition survives exec: ``dagster dev`` then also maps SIGTERM to it
    (``dagster._utils.interrupts.setup_interrupt_handlers``), ignores both, and ``up``'s
    ``terminate()`` would wait its 60 s and kill it outright, leaving the webserver and daemon it
    started running (the port held). An ignored disposition here becomes Python's handler for the
    block (reset to the default in a child at exec), and is ignored again after it."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s, handler in saved.items():
        if handler == signal.SIG_IGN:
            signal.signal(s, signal.default_int_handler)
    try:
        yield
    finally:
        for s, handler in saved.items():
            if handler == signal.SIG_IGN:
                signal.signal(s, handler)


def _dagster_dev_cmd(host: str, port: int) -> list[str]:
    return [_dagster_bin(), "dev", "-w", "workspace.yaml", "-h", host, "-p", str(port)]


@app.command()
def ui(port: int = 3000, host: str = "127.0.0.1"):
    """Start the Dagster UI and the daemon on the project's instance. The daemon runs the
    default-on corpus_sensor (new/changed/removed files → runs of the per-file stages), the
    radar_automation sensor (indexes, precomputes, evaluations follow) and the evaluation schedule."""
    env = dagster_env(get_settings())
    typer.echo(f"Dagster UI on http://{host}:{port} (daemon: corpus_sensor, radar_automation, evaluation_schedule)")
    raise typer.Exit(subprocess.call(_dagster_dev_cmd(host, port), cwd=PROJECT_ROOT, env=env))


@app.command()
def up(
    port: int = typer.Option(8000, help="API and dashboard port"),
    ui_port: int = typer.Option(3000, "--ui-port", help="Dagster UI port"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="stream the daemon's and the API's logs here instead"),
):
    """Keep Radar current and serve it: the Dagster daemon + UI and the API in the background (the
    corpus sensor builds whatever is not materialized, automation follows; the API answers
    lexical-only as soon as the BM25 index exists and picks up each new index version without a
    restart), and one status screen here: each stage's done/total, rate and time left, which search
    stages are live, the URLs, warnings. Their logs go to RADAR_HOME/logs/ (``--verbose``: here).
    Ctrl-C or SIGTERM stops everything (``radar_cli.lifecycle``): the runs in progress are canceled
    through the Dagster instance, then the webserver, daemon, code servers and API stop, and the
    embedded PostgreSQL if this command started it."""
    settings = get_settings()
    owns_postgres = not settings.database_url and db_embedded_pid(settings.pgdata) is None
    env = dagster_env(settings)
    with stop_on_signal():  # the first Ctrl-C / SIGTERM stops, the next ones are ignored
        if verbose:
            rc = _up_verbose(env, port, ui_port)
        else:
            rc = _up_with_status(settings, env, port, ui_port)
        if owns_postgres:
            from radar_pipeline import db

            with uninterrupted():
                db.stop_embedded_server(settings.pgdata)
    raise typer.Exit(rc)


def db_embedded_pid(pgdata: Path) -> int | None:
    """The embedded PostgreSQL's PID on ``pgdata``, ``None`` when none runs (``db.embedded_server_pid``)."""
    from radar_pipeline import db

    return db.embedded_server_pid(pgdata)


def _up_verbose(env: dict[str, str], port: int, ui_port: int) -> int:
    """``up --verbose``: ``dagster dev`` logs here, the API runs in this process."""
    typer.echo(f"Dagster UI on http://127.0.0.1:{ui_port}; API and dashboard on http://127.0.0.1:{port}/tablero/")
    import time

    from dagster import DagsterInstance

    from radar_cli.status import BuildPublisher
    from radar_pipeline.build_status import default_path

    since = time.time()
    with stoppable_children():
        dagster = start_child(_dagster_dev_cmd("127.0.0.1", ui_port), cwd=PROJECT_ROOT, env=env)
    os.environ["RADAR_PG_URL"] = env["RADAR_PG_URL"]  # the instance's storage (dagster.yaml)
    rc, publisher = 0, None
    try:
        instance = DagsterInstance.from_config(str(PROJECT_ROOT))
        # no status screen here: publish the build for the API all the same (what /chat says meanwhile)
        publisher = BuildPublisher(
            instance, _stage_steps(), default_path(), since=since, partitioned_steps=_partitioned_steps()
        ).start()
        from radar_cli.agent_commands import serve as _serve

        rc = _serve("127.0.0.1", port)
    except KeyboardInterrupt:
        pass
    finally:
        typer.echo("stopping: canceling the runs in progress, then the Dagster services…")
        if publisher is not None:
            publisher.stop()
        _stop_all([dagster], env)
    return rc


def _stop_all(children: list[subprocess.Popen], env: dict[str, str]) -> None:
    """The orderly stop of ``up``'s children (``lifecycle.stop_children``) with the project's
    Dagster instance, Ctrl-C and SIGTERM ignored meanwhile."""
    from dagster import DagsterInstance

    os.environ["RADAR_PG_URL"] = env["RADAR_PG_URL"]  # the instance's storage (dagster.yaml)
    with uninterrupted():
        try:
            instance = DagsterInstance.from_config(str(PROJECT_ROOT))
        except stop_errors():  # storage unreachable: stop the processes all the same
            instance = None
        try:
            report = stop_children(children, instance)
        finally:
            if instance is not None:
                instance.dispose()
    if report.canceled:
        typer.echo(f"canceled {len(report.canceled)} run(s) in progress")
    if report.left:
        typer.echo(f"warning: processes still alive: {report.left}", err=True)


def up_log_paths(log_dir: Path, stamp: str) -> dict[str, Path]:
    """The log files of one ``radar up``: ``dagster`` (daemon + webserver) and ``api``."""
    return {"dagster": log_dir / f"up-{stamp}-dagster.log", "api": log_dir / f"up-{stamp}-api.log"}


def _up_with_status(settings: RadarSettings, env: dict[str, str], port: int, ui_port: int) -> int:
    """``up`` without ``--verbose``: the children log to files; this process draws the status."""
    import time

    from dagster import DagsterInstance
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from radar_cli.status import ChangePrinter, UpWatcher, publish_build, render_lines
    from radar_pipeline.build_status import default_path

    console = Console(highlight=False)
    since = time.time()
    logs = up_log_paths(settings.home / "logs", time.strftime("%Y%m%d-%H%M%S"))
    api_cmd = [sys.executable, "-m", "radar_cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    children: dict[str, subprocess.Popen] = {}
    os.environ["RADAR_PG_URL"] = env["RADAR_PG_URL"]  # the instance's storage (dagster.yaml)
    urls = {
        "dashboard": f"http://127.0.0.1:{port}/tablero/",
        "API": f"http://127.0.0.1:{port}/docs",
        "Dagster": f"http://127.0.0.1:{ui_port}",
    }
    rc = 0
    build_path = default_path()
    try:
        # started inside the try: a stop signalled while they start still stops what did start
        with stoppable_children():
            children["Dagster (daemon + UI)"] = start_child(
                _dagster_dev_cmd("127.0.0.1", ui_port), logs["dagster"], cwd=PROJECT_ROOT, env=env
            )
            children["API"] = start_child(api_cmd, logs["api"], cwd=PROJECT_ROOT, env=env)
        with DagsterInstance.from_config(str(PROJECT_ROOT)) as instance:
            watcher = UpWatcher(
                instance,
                _stage_steps(),
                since=since,
                health_url=f"http://127.0.0.1:{port}/health",
                daemon_log=logs["dagster"],
                urls=urls,
                logs={k: str(v) for k, v in logs.items()},
                partitioned_steps=_partitioned_steps(),
            )
            printer = None if console.is_terminal else ChangePrinter()
            if printer:
                for line in render_lines(watcher.state):
                    console.print(line, markup=False, soft_wrap=True)
            with (
                Live(console=console, auto_refresh=False, transient=False)
                if printer is None
                else _nullcontext() as live
            ):
                while True:
                    state = watcher.poll()
                    publish_build(state, build_path)  # what the API says while it is being built
                    dead = {name: p.returncode for name, p in children.items() if p.poll() is not None}
                    for name, code in dead.items():
                        state.warnings.append(f"{name} exited with status {code}: see its log")
                    if printer:
                        for line in printer.changes(state):
                            console.print(line, markup=False, soft_wrap=True)
                    else:
                        live.update(Text("\n".join(render_lines(state))), refresh=True)
                    if dead:
                        rc = 1
                        break
                    time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        console.print("stopping: canceling the runs in progress, then the Dagster services and the API…")
        build_path.unlink(missing_ok=True)  # nothing is being built any more
        _stop_all(list(children.values()), env)
    console.print(f"logs: {logs['dagster']}, {logs['api']}", markup=False, soft_wrap=True)
    return rc


@contextmanager
def _nullcontext():
    yield None


def _searcher(settings: RadarSettings):
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import Searcher

    encoder = build_encoder(EncoderSpec())
    if settings.index_backend == "pgvector":  # RADAR_INDEX_BACKEND: the index in PostgreSQL alone
        from radar_pipeline import db
        from radar_pipeline.retrieval.pg_search import PgSearcher

        engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
        return PgSearcher(engine, encoder, reranker=build_reranker(), ef_search=settings.pgvector_ef_search)
    return Searcher(settings.index_dir / encoder.name, encoder, reranker=build_reranker())


def _print_result(res: dict) -> None:
    typer.echo(f"\nQ: {res['query']}   ({res['latency_ms']} ms)\n\nTop documents")
    for d in res["documents"]:
        typer.echo(f"  {d['rank']}. {d['score']:.4f}  {d['doc_id']}  {d['source_path']}")
    if res.get("identifiers"):
        typer.echo("\nIdentifiers: " + ", ".join(f"{i['text']} ({i['kind']})" for i in res["identifiers"]))
    typer.echo("\nTop passages")
    for p in res["passages"]:
        excerpt = " ".join(p["text"].split())[:240]
        boost = (p.get("score_components") or {}).get("identifier") or 0.0
        named = f"  (identificador +{boost:.2f}: {', '.join(p.get('identifiers') or [])})" if boost else ""
        typer.echo(
            f"  {p['rank']:>2}. {p['score']:.4f}  {p['chunk_id']}  {p['source_path']} p.{p['page']}{named}\n"
            f"      {excerpt}"
        )


@app.command()
def search(
    question: str | None = typer.Argument(None, help="a question, in Spanish or English"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    queries: Path | None = typer.Option(None, help="JSONL of {query_id, question}"),
    out: Path | None = typer.Option(None, help="JSONL output for --queries"),
):
    """Top 3 documents and top 10 passages, with doc_id, chunk_id, source path, page and score."""
    if not question and not queries:
        raise typer.BadParameter("give a question or --queries FILE")
    try:
        searcher = _searcher(get_settings())
    except FileNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if queries:
        from tqdm import tqdm

        lines = [json.loads(line) for line in queries.read_text(encoding="utf-8").splitlines() if line.strip()]
        sink = out.open("w", encoding="utf-8") if out else sys.stdout
        for q in tqdm(lines, desc="queries", disable=out is None):
            res = searcher.search(q["question"])
            keep_p = ("rank", "chunk_id", "doc_id", "source_path", "text", "score", "score_components", "identifiers")
            row = {
                "query_id": q["query_id"],
                "documents": res.documents,
                "passages": [{k: p[k] for k in keep_p} for p in res.passages],
                "identifiers": res.identifiers,
            }
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
        if out:
            sink.close()
            typer.echo(f"wrote {len(lines)} results to {out}")
        return
    res = searcher.search(question).as_dict()
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False, indent=1))
    else:
        _print_result(res)


def _judging_engine(settings: RadarSettings):
    """An engine on Radar's PostgreSQL (``DATABASE_URL`` or the embedded server) for the qrels
    tables, or ``None`` (with a note on stderr) when it cannot be reached."""
    from radar_pipeline import db

    try:
        engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
        with engine.connect():
            pass
        return engine
    except Exception as exc:  # noqa: BLE001 - any connection failure: fall back to the shared judgments
        typer.echo(f"note: PostgreSQL not reachable ({exc}); deepened judgments = shared file only", err=True)
        return None


def _eval_reports(config_name: str, datasets: list[str], deep_records=None):
    from evals.configs import get_config
    from evals.runner import run_codefest, run_xquad
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import Searcher

    settings = get_settings()
    cfg = get_config(config_name)
    encoder = build_encoder(EncoderSpec())
    reranker = build_reranker() if cfg.rerank_k else None
    out = {}
    for ds in datasets:
        if ds == "codefest_dev":
            out[ds] = run_codefest(
                Searcher(settings.index_dir / encoder.name, encoder, cfg, reranker=reranker),
                cfg,
                deep_records=deep_records,
            )
        else:
            out[ds] = run_xquad(ds, encoder, cfg, settings.home / "eval_work", reranker=reranker)
    return out


_DATASETS = ["codefest_dev", "xquad_es_en", "xquad_es_en_hard"]


@app.command("eval")
def eval_(
    config: str | None = typer.Option(None, help="configuration name (default: the default config)"),
    dataset: str = typer.Option("all", help="codefest_dev | xquad_es_en | xquad_es_en_hard | all"),
    compare: tuple[str, str] | None = typer.Option(None, help="two configuration names: paired test A vs B"),
    all_configs: bool = typer.Option(False, "--all-configs", help="every named configuration, one row each"),
    json_out: Path | None = typer.Option(None, "--json-out", help="write the numbers as JSON"),
):
    """Evaluate retrieval: NDCG@10, F1@3, Recall@10, MRR@10 (Codefest dev); NDCG@10, Recall@10 (XQuAD).

    Codefest dev is scored on the original judgments and on the deepened ones (shared + imported
    with `radar judge import`), separately, each with Judged@10 and the condensed NDCG'@10; a
    comparison on a judgment set where either side's Judged@10 < 0.9 is flagged "not measurable yet".
    """
    from evals.configs import CONFIGS, DEFAULT_NAME
    from evals.judging import read_merged
    from evals.scoring import compare as paired
    from evals.scoring import compare_codefest, holm_rows

    datasets = _DATASETS if dataset == "all" else [dataset]
    deep = read_merged(_judging_engine(get_settings())) if "codefest_dev" in datasets else None
    if compare:
        a, b = compare
        ra, rb = _eval_reports(a, datasets, deep), _eval_reports(b, datasets, deep)
        rows = []
        for ds in datasets:
            if ds == "codefest_dev":
                rows += [{"dataset": ds, **r} for r in compare_codefest(ra[ds].per_query, rb[ds].per_query)]
                continue
            for m in ["ndcg@10", "recall@10"]:
                t = paired(ra[ds].per_query, rb[ds].per_query, m)
                rows.append(
                    {"dataset": ds, "metric": m, "mean_a": t.mean_a, "mean_b": t.mean_b, "diff": t.diff, "p": t.p_value}
                )
        # several metrics/datasets compared at once: Holm (1979) over the rows shown
        holm_rows(rows)
        typer.echo(f"{'dataset':<18} {'metric':<16} {a:>22} {b:>22} {'diff':>8} {'p':>7} {'p holm':>7}  judged@10 A/B")
        for r in rows:
            judged = "" if r.get("judged_a") is None else f"{r['judged_a']:.3f}/{r['judged_b']:.3f}"
            typer.echo(
                f"{r['dataset']:<18} {r['metric']:<16} {r['mean_a']:>22.4f} {r['mean_b']:>22.4f} {r['diff']:>+8.4f} "
                f"{r['p']:>7.4f} {r['p_holm']:>7.4f}  {judged}  {r.get('flag') or ''}".rstrip()
            )
        typer.echo(f"p holm: Holm (1979) over the {len(rows)} comparisons above (family-wise error rate)")
        if json_out:
            json_out.write_text(json.dumps(rows, indent=1))
        return
    names = list(CONFIGS) if all_configs else [config or DEFAULT_NAME]
    rows = []
    per_query: dict[str, dict] = {}
    for name in names:
        for ds, rep in _eval_reports(name, datasets, deep).items():
            row = eval_row(name, ds, rep.aggregate)
            rows.append(row)
            per_query.setdefault(ds, {})[name] = rep.per_query
            typer.echo("  ".join(f"{k}={v}" for k, v in row.items()))
    if all_configs:
        _echo_against_default(rows, per_query, DEFAULT_NAME)
    if json_out:
        json_out.write_text(json.dumps(rows, indent=1))


def _echo_against_default(rows: list[dict], per_query: dict[str, dict], default: str) -> None:
    """`radar eval --all-configs`: every configuration against the default, raw and Holm-adjusted
    p-values side by side (``evals.scoring.against_default``; family = the configurations compared
    on that dataset and metric), added to each row (``<metric> p``, ``<metric> p holm``,
    ``verdict``) and printed as a table. The default changes only for a configuration whose
    verdict on deepened NDCG@10 is "wins after correction"."""
    from evals.scoring import DECISION_METRIC, against_default

    typer.echo(
        f"\nagainst the default {default} (paired randomization, Holm 1979 over the configurations; "
        "the default changes only for one that wins after correction)"
    )
    typer.echo(f"{'dataset':<18} {'config':<34} {'metric':<14} {'diff':>8} {'p':>7} {'p holm':>7}  verdict")
    for ds, tables in per_query.items():
        metrics = [DECISION_METRIC, "ndcg@10", "f1@3"] if ds == "codefest_dev" else ["ndcg@10"]
        metrics = [m for m in metrics if m in tables[default].columns]
        res = against_default(tables, default, metrics)
        for row in rows:
            if row["dataset"] != ds or row["config"] not in res:
                continue
            for m, r in res[row["config"]].items():
                row[f"{m} p"], row[f"{m} p holm"] = round(r["p"], 4), round(r["p_holm"], 4)
                if m == metrics[0]:
                    row["verdict"] = r["verdict"]
                typer.echo(
                    f"{ds:<18} {row['config']:<34} {m:<14} {r['diff']:>+8.4f} {r['p']:>7.4f} {r['p_holm']:>7.4f}"
                    f"  {r['verdict'] if m == metrics[0] else ''}".rstrip()
                )


PHENOMENON_METRICS = ("ndcg@10", "judged@10", "ndcg'@10", "deep_ndcg@10", "deep_judged@10", "deep_ndcg'@10", "f1@3")


def eval_row(name: str, dataset: str, aggregate: dict) -> dict:
    """One printed/JSON row of `radar eval`: overall means, then per phenomenon the passage metrics
    on both judgment sets (NDCG@10, Judged@10, NDCG'@10; ``deep_`` = deepened) and F1@3."""
    o = aggregate["overall"]
    row = {"config": name, "dataset": dataset, **{k: round(v, 4) for k, v in o.items() if isinstance(v, float)}}
    for ph in ("F1", "F2", "F3"):
        if isinstance(aggregate.get(ph), dict):
            for m in PHENOMENON_METRICS:
                if m in aggregate[ph]:
                    row[f"{ph} {m}"] = round(aggregate[ph][m], 4)
    if "recall@candidates" in aggregate:
        row["recall@cand"] = aggregate["recall@candidates"]
    return row


judge_app = typer.Typer(no_args_is_help=True, help="Blind judging of unjudged passages: export a batch, import grades.")
app.add_typer(judge_app, name="judge")


@judge_app.command("export")
def judge_export(
    config: list[str] = typer.Option(..., "--config", help="configuration name (repeat for several)"),
    k: int = typer.Option(10, "--k", min=1, help="top k passages of each configuration"),
    out: Path = typer.Option(..., "--out", help="JSONL batch for the judge"),
    seed: int | None = typer.Option(None, help="shuffle seed (default: random)"),
    encode_limit: int | None = typer.Option(
        None, "--encode-limit", help="override the re-ranker's query-time encoding limit (0: impute, never encode)"
    ),
    mapping: Path | None = typer.Option(
        None,
        "--mapping",
        help="also write the item → question/configuration mapping here (for the organiser, "
        "not the judge), so the grades can be imported into another Radar database",
    ),
):
    """Write a blind, shuffled batch of the unjudged top-k passages of the configurations on the
    Codefest dev questions: question + passage text + an opaque item id; the mapping stays in PostgreSQL."""
    from evals.configs import get_config
    from evals.datasets import load_codefest_dev
    from evals.judging import export_batch, read_merged, top_passages
    from evals.scoring import build_deep_index
    from radar_pipeline import db
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import Searcher

    settings = get_settings()
    engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
    dev = load_codefest_dev()
    encoder = build_encoder(EncoderSpec())
    cfgs = [get_config(c) for c in config]
    if encode_limit is not None:
        cfgs = [c.with_(rerank_encode_limit=encode_limit) for c in cfgs]
    reranker = build_reranker() if any(c.rerank_k for c in cfgs) else None
    try:
        searcher = Searcher(settings.index_dir / encoder.name, encoder, reranker=reranker)  # loaded once
        runs = {c.name: top_passages(searcher, c, dev, k) for c in cfgs}
    except FileNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    summary = export_batch(engine, runs, dev, build_deep_index(read_merged(engine)), out, k=k, seed=seed)
    if mapping is not None and summary.n_items:
        from evals.judging import write_mapping

        write_mapping(engine, summary.batch_id, mapping)
    typer.echo(
        f"batch {summary.batch_id}: {summary.n_items} passages to judge written to {out} "
        f"({summary.n_already_judged} already judged, {summary.n_repeated} repeated across configurations)"
    )
    n_top = k * len(dev.questions)
    for name, n in summary.per_config.items():  # Judged@10 once the batch is graded: 1.0 where k = 10
        typer.echo(f"  {name}: {n} unjudged of its top {k} (Judged@{k} now {1 - n / n_top:.3f})")


@judge_app.command("split")
def judge_split(
    batch: Path = typer.Argument(..., help="a blind batch written by `radar judge export`"),
    size: int = typer.Option(120, "--size", min=1, help="at most this many items per part"),
    overlap: int = typer.Option(
        0, "--overlap", min=0, help="items placed in two parts, so two judges grade them (Cohen's kappa at import)"
    ),
    out_dir: Path | None = typer.Option(None, "--out-dir", help="where the parts go (default: the batch's folder)"),
    seed: int | None = typer.Option(None, help="seed of the overlap draw and of each part's order (default: random)"),
):
    """Split a blind batch into parts <stem>_<k>.jsonl for parallel judges (one annotator name per
    part at import); the overlapping items give the inter-annotator agreement."""
    from evals.judging import split_batch

    try:
        s = split_batch(batch, max_items=size, overlap=overlap, out_dir=out_dir, seed=seed)
    except (ValueError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for path, n in zip(s.files, s.sizes, strict=True):
        typer.echo(f"{path}: {n} items")
    typer.echo(f"{s.n_distinct} distinct items in {len(s.files)} parts, {len(s.overlap)} of them in two parts")


@judge_app.command("import")
def judge_import(
    file: Path = typer.Argument(..., help="the judged batch: JSONL with item_id and grade 0/1/2"),
    annotator: str = typer.Option(..., "--annotator", help="who graded the batch"),
    mapping: Path | None = typer.Option(
        None, "--mapping", help="the batch's mapping file (`judge export --mapping`), when it was exported elsewhere"
    ),
):
    """Store the grades of a judged batch in the versioned qrels table (a new round for the annotator)."""
    from evals.judging import agreement, import_grades, latest_judgments
    from radar_pipeline import db

    settings = get_settings()
    engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
    try:
        if mapping is not None:
            from evals.judging import load_mapping

            typer.echo(f"{load_mapping(engine, mapping)} items of the mapping added")
        s = import_grades(engine, file, annotator)
    except (ValueError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"{s.annotator}, round {s.round}: {s.n_graded} grades stored, {s.n_ungraded} items without a grade")
    ag = agreement(latest_judgments(engine))
    for pair, st in ag["pairs"].items():
        typer.echo(
            f"agreement {pair}: n={st['n']} exact={st['exact']:.3f} kappa={st['kappa']:.3f} "
            f"kappa_linear={st['kappa_linear']:.3f} kappa_quadratic={st['kappa_quadratic']:.3f}"
        )
    if (st := ag["pooled"]) is not None and len(ag["pairs"]) > 1:  # all pairs' overlapping items together
        typer.echo(
            f"agreement pooled: n={st['n']} exact={st['exact']:.3f} binary={st['binary']:.3f} kappa={st['kappa']:.3f} "
            f"kappa_linear={st['kappa_linear']:.3f} kappa_quadratic={st['kappa_quadratic']:.3f}"
        )


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="bind address (loopback by default)"),
    port: int = typer.Option(8000, help="port"),
):
    """Start the agent API: POST /chat, /chat/stream, read endpoints; OpenAPI docs at /docs.

    Requires credentials when an API key exists or OIDC is configured; refuses (exit 2) a
    non-loopback --host without either.
    """
    from radar_cli.agent_commands import serve as _serve

    raise typer.Exit(_serve(host, port))


keys_app = typer.Typer(no_args_is_help=True, help="API keys: create (shown once), list, revoke.")
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    name: str = typer.Option(..., "--name", help="who or what uses the key"),
    scopes: str = typer.Option("read", "--scopes", help="comma-separated: read, chat, review, admin"),
    collections: str | None = typer.Option(None, "--collections", help="comma-separated collections (default all)"),
    expires_days: int | None = typer.Option(None, "--expires-days", min=1, help="valid for N days (default never)"),
    purpose: str | None = typer.Option(
        None,
        "--purpose",
        help="a purpose of the purpose policy (RADAR_PURPOSES_FILE): limits endpoints and collections",
    ),
):
    """Create an API key; its token is printed once (only a SHA-256 of it is stored)."""
    from radar_cli.agent_commands import keys_create as _create

    raise typer.Exit(_create(name, scopes, collections, expires_days, purpose))


@keys_app.command("list")
def keys_list(as_json: bool = typer.Option(False, "--json", help="print as JSON")):
    """List API keys (never their tokens): id, state, name, scopes, collections, purpose, last use."""
    from radar_cli.agent_commands import keys_list as _list

    raise typer.Exit(_list(as_json))


@keys_app.command("revoke")
def keys_revoke(key_id: str = typer.Argument(..., help="the key_id shown by `radar keys list`")):
    """Revoke an API key (effective on the next request)."""
    from radar_cli.agent_commands import keys_revoke as _revoke

    raise typer.Exit(_revoke(key_id))


@app.command()
def trace(
    run_id: str = typer.Argument(..., help="metadata.run_id of a /chat answer"),
    as_json: bool = typer.Option(False, "--json", help="print the stored trace as JSON"),
):
    """Print the stored trace of one /chat run: every step with role, tool, arguments, ms and tokens."""
    from radar_cli.agent_commands import trace as _trace

    raise typer.Exit(_trace(run_id, as_json))


@app.command()
def doctor(path: Path):
    """What Radar makes of one file: format, encoding, language, per-page text source, status, reason."""
    from radar_pipeline.ingest.doctor import doctor_report

    if not path.exists():
        typer.echo(f"error: no such file: {path}", err=True)
        raise typer.Exit(2)
    typer.echo(json.dumps(doctor_report(path), ensure_ascii=False, indent=1))


@app.command()
def retract(
    doc_id: str = typer.Argument(..., help="doc_id of the document to withdraw"),
    reason: str = typer.Option(..., "--reason", help="why (kept in the retractions table)"),
    by: str | None = typer.Option(None, "--by", help="who retracts (default cli:<OS user>)"),
    rebuild_index: bool = typer.Option(True, help="rebuild FAISS/BM25/re-ranker vectors without the document"),
    resume: bool = typer.Option(False, help="already retracted: only re-run the propagation"),
):
    """Retract a document: close its passages, pages and row (reason retracted), record who/when/why,
    re-materialize mentions, alerts, presence and aggregates, and rebuild the index."""
    from radar_cli.history_commands import retract as _retract

    raise typer.Exit(_retract(doc_id, reason, by, rebuild_index, resume))


@app.command()
def impact(
    target: str = typer.Argument(..., help="a doc_id or a corpus path (every version it held)"),
    as_json: bool = typer.Option(False, "--json", help="print the whole report as JSON"),
):
    """What depends on a source: passages, precompute rows and aggregate cells, and past answers
    (run ids) — with the cited passages that are now superseded or retracted."""
    from radar_cli.history_commands import impact as _impact

    raise typer.Exit(_impact(target, as_json))


@app.command()
def replay(
    run_id: str = typer.Argument(..., help="metadata.run_id of a past /chat answer"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
):
    """Re-run a past answer's searches against today's index: which cited passages are gone,
    changed (text hash differs) or the same, and their rank then and now."""
    from radar_cli.history_commands import replay as _replay

    raise typer.Exit(_replay(run_id, as_json))


@app.command()
def settings(
    markdown: bool = typer.Option(False, "--markdown", help="print README's table of every variable"),
    env_example: bool = typer.Option(False, "--env-example", help="print the text of .env.example"),
    write: bool = typer.Option(False, "--write", help="rewrite README's settings section and .env.example"),
):
    """Every environment variable Radar reads (radar_pipeline.config's registry): name, type,
    default, unit, who reads it, meaning. Without options: one line per variable with its current value
    when set (secrets hidden)."""
    from radar_pipeline import config

    if write:
        readme = PROJECT_ROOT / "README.md"
        readme.write_text(config.readme_with_settings(readme.read_text(encoding="utf-8")), encoding="utf-8")
        (PROJECT_ROOT / ".env.example").write_text(config.settings_env_example(), encoding="utf-8")
        typer.echo(f"wrote {readme} (settings section) and {PROJECT_ROOT / '.env.example'}")
    elif markdown:
        typer.echo(config.settings_markdown(), nl=False)
    elif env_example:
        typer.echo(config.settings_env_example(), nl=False)
    else:
        for s in config.settings_registry():
            value = os.environ.get(s.name)
            shown = "(set)" if value and s.type == "secret" else value
            typer.echo(f"{s.name:<36} {shown if shown is not None else '-':<30} default={s.default or '-'}")


from radar_cli.claims_commands import register as _register_claims  # noqa: E402 - after the app's own commands

_register_claims(app)

from radar_cli.answers_commands import register as _register_answers  # noqa: E402 - after the app's own commands

_register_answers(app)


if __name__ == "__main__":
    app()
