"""The ``radar`` command line: materialize, ui, search, eval, serve, keys, trace, doctor.

Orchestration commands run Dagster as a child process (``dagster asset materialize`` /
``dagster dev``) with ``DAGSTER_HOME`` at the project root, after starting the embedded
PostgreSQL (or using ``DATABASE_URL``), so runs show up in the Dagster UI with their lineage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import typer

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
    return env


def _dagster_bin() -> str:
    exe = Path(sys.executable).with_name("dagster")
    return str(exe) if exe.exists() else "dagster"


@app.command()
def materialize(
    select: str = typer.Option("*", help="Dagster asset selection, e.g. 'chunks+' or 'documents'"),
    corpus: Path | None = typer.Option(None, help="corpus root (default RADAR_CORPUS_DIR or ../shared/corpus)"),
):
    """Materialize the assets (default: all of them, with their checks) into PostgreSQL and on-disk indexes."""
    settings = get_settings(**({"corpus_dir": corpus} if corpus else {}))
    env = dagster_env(settings)
    typer.echo(
        f"corpus: {settings.corpus}\nstate: {settings.home}\nDagster runs are stored in PostgreSQL; open them with `radar ui`."
    )
    cmd = [_dagster_bin(), "asset", "materialize", "-m", "assets.definitions", "--select", select]
    rc = subprocess.call(cmd, cwd=PROJECT_ROOT, env=env)
    raise typer.Exit(rc)


@app.command()
def ui(port: int = 3000, host: str = "127.0.0.1"):
    """Start the Dagster UI (webserver + daemon) on the project's instance."""
    env = dagster_env(get_settings())
    typer.echo(f"Dagster UI on http://{host}:{port}")
    raise typer.Exit(
        subprocess.call(
            [_dagster_bin(), "dev", "-w", "workspace.yaml", "-h", host, "-p", str(port)], cwd=PROJECT_ROOT, env=env
        )
    )


def _searcher(settings: RadarSettings):
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import Searcher

    encoder = build_encoder(EncoderSpec())
    return Searcher(settings.index_dir / encoder.name, encoder, reranker=build_reranker())


def _print_result(res: dict) -> None:
    typer.echo(f"\nQ: {res['query']}   ({res['latency_ms']} ms)\n\nTop documents")
    for d in res["documents"]:
        typer.echo(f"  {d['rank']}. {d['score']:.4f}  {d['doc_id']}  {d['source_path']}")
    typer.echo("\nTop passages")
    for p in res["passages"]:
        excerpt = " ".join(p["text"].split())[:240]
        typer.echo(
            f"  {p['rank']:>2}. {p['score']:.4f}  {p['chunk_id']}  {p['source_path']} p.{p['page']}\n      {excerpt}"
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
            keep_p = ("rank", "chunk_id", "doc_id", "source_path", "text", "score")
            row = {
                "query_id": q["query_id"],
                "documents": res.documents,
                "passages": [{k: p[k] for k in keep_p} for p in res.passages],
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


def _eval_reports(config_name: str, datasets: list[str]):
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
            out[ds] = run_codefest(Searcher(settings.index_dir / encoder.name, encoder, cfg, reranker=reranker), cfg)
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
    """Evaluate retrieval: NDCG@10, F1@3, Recall@10, MRR@10 (Codefest dev); NDCG@10, Recall@10 (XQuAD)."""
    from evals.configs import CONFIGS, DEFAULT_NAME
    from evals.scoring import compare as paired

    datasets = _DATASETS if dataset == "all" else [dataset]
    if compare:
        a, b = compare
        ra, rb = _eval_reports(a, datasets), _eval_reports(b, datasets)
        typer.echo(f"{'dataset':<18} {'metric':<10} {a:>22} {b:>22} {'diff':>8} {'p':>7}")
        for ds in datasets:
            metrics = ["ndcg@10", "f1@3"] if ds == "codefest_dev" else ["ndcg@10", "recall@10"]
            for m in metrics:
                t = paired(ra[ds].per_query, rb[ds].per_query, m)
                typer.echo(f"{ds:<18} {m:<10} {t.mean_a:>22.4f} {t.mean_b:>22.4f} {t.diff:>+8.4f} {t.p_value:>7.4f}")
        return
    names = list(CONFIGS) if all_configs else [config or DEFAULT_NAME]
    rows = []
    for name in names:
        for ds, rep in _eval_reports(name, datasets).items():
            o = rep.aggregate["overall"]
            row = {"config": name, "dataset": ds, **{k: round(v, 4) for k, v in o.items() if isinstance(v, float)}}
            for ph in ("F1", "F2", "F3"):
                if isinstance(rep.aggregate.get(ph), dict):
                    row[f"{ph} ndcg@10"] = round(rep.aggregate[ph]["ndcg@10"], 4)
                    row[f"{ph} f1@3"] = round(rep.aggregate[ph]["f1@3"], 4)
            if "recall@candidates" in rep.aggregate:
                row["recall@cand"] = rep.aggregate["recall@candidates"]
            rows.append(row)
            typer.echo("  ".join(f"{k}={v}" for k, v in row.items()))
    if json_out:
        json_out.write_text(json.dumps(rows, indent=1))


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
):
    """Create an API key; its token is printed once (only a SHA-256 of it is stored)."""
    from radar_cli.agent_commands import keys_create as _create

    raise typer.Exit(_create(name, scopes, collections, expires_days))


@keys_app.command("list")
def keys_list(as_json: bool = typer.Option(False, "--json", help="print as JSON")):
    """List API keys (never their tokens): id, state, name, scopes, collections, last use."""
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


if __name__ == "__main__":
    app()
