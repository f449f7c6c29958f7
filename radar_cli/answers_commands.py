"""``radar answers run|export|import|score``: the answer evaluation (``evals.answers``).

``run`` asks every question of a set once through the offline agent (as ``radar serve`` builds it,
traces off, one question at a time) and stores the answers; ``export`` writes a blind batch for
judges; ``import`` stores a judge's graded batch; ``score`` writes ``evals/reports/answers_<set>.json``.
The judging guide is ``evals/answers/README.md``. ``--db-url`` puts the answer tables in another
PostgreSQL than Radar's (e.g. to measure a home read-only); the agent still reads its precomputes
from Radar's database (``DATABASE_URL`` or the home's embedded server).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

answers_app = typer.Typer(
    no_args_is_help=True, help="Answer evaluation: run a question set, export blind batches, import grades, score."
)

_DB = typer.Option(None, "--db-url", help="PostgreSQL of the answer tables (default: Radar's database)")


def _engine(db_url: str | None):
    from radar_pipeline import db
    from radar_pipeline.config import get_settings

    s = get_settings()
    return db.create_engine(db.normalize_url(db_url) if db_url else db.resolve_database_url(s.database_url, s.pgdata))


def _fail(exc: Exception) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


@answers_app.command("run")
def answers_run(
    set_name: str = typer.Option("dev", "--set", help="set name under evals/answers/sets, or a .jsonl path"),
    out: Path | None = typer.Option(None, "--out", help="also write the per-question records here (JSONL)"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="only the first N questions (a quick check)"),
    llm: bool = typer.Option(False, "--llm", help="use the model endpoint of RADAR_LLM_* (default: offline)"),
    warmup: bool = typer.Option(True, help="ask the first question once, unrecorded, before timing"),
    db_url: str | None = _DB,
):
    """Ask every question of a set once (one at a time: latency is measured) and store the answers."""
    from evals.answers.runs import build_service, run_meta, run_set, store_run
    from evals.answers.scoring import latency_summary
    from evals.answers.sets import load_set, set_path

    try:
        path = set_path(set_name)
        items = load_set(path)[:limit] if limit else load_set(path)
    except (ValueError, FileNotFoundError) as exc:
        raise _fail(exc) from None
    engine = _engine(db_url)
    service = build_service(offline=not llm)
    try:
        service.corpus()
    except Exception as exc:  # noqa: BLE001 - IndexUnavailable and what its loading raises
        raise _fail(exc) from None
    meta = run_meta(service, [])
    records = run_set(service.runner(), items, corpus=service.corpus, warmup=warmup, log=typer.echo)
    meta |= {"n": len(records), "set_file": str(path), "loadavg_1m_after": run_meta(service, records).get("loadavg_1m")}
    key = store_run(engine, path.stem, records, meta)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    lat = latency_summary(records)
    slow = lat["slowest_step"] or {}
    typer.echo(
        f"run {key}: {len(records)} questions of {path.stem}; latency p50 {lat['overall']['p50_ms']} ms, "
        f"p95 {lat['overall']['p95_ms']} ms; slowest step {slow.get('name')} (mean {slow.get('mean_ms')} ms; "
        f"slowest tool {(lat['slowest_step_tool'] or {}).get('name')})"
    )


@answers_app.command("export")
def answers_export(
    set_name: str = typer.Option("dev", "--set", help="the set whose newest run is exported"),
    run: str | None = typer.Option(None, "--run", help="a run key instead of the set's newest run"),
    out: Path = typer.Option(..., "--out", help="the blind batch for the judges (JSONL)"),
    mapping: Path | None = typer.Option(None, "--mapping", help="also write the private item → run mapping here"),
    include_judged: bool = typer.Option(False, "--all", help="also the answers some judge already graded"),
    seed: int | None = typer.Option(None, help="shuffle seed (default: random)"),
    db_url: str | None = _DB,
):
    """Write a blind, shuffled batch of a run's answers (question, key facts, answer, cited passages)."""
    from evals.answers.judging import export_batch, write_mapping
    from evals.answers.runs import latest_run_key

    engine = _engine(db_url)
    key = run or latest_run_key(engine, set_name)
    if key is None:
        raise _fail(KeyError(f"no stored run of set {set_name!r}: run `radar answers run --set {set_name}` first"))
    try:
        s = export_batch(engine, key, out, include_judged=include_judged, seed=seed)
    except KeyError as exc:
        raise _fail(exc) from None
    if mapping is not None and s.n_items:
        write_mapping(engine, s.batch_id, mapping)
    typer.echo(
        f"batch {s.batch_id}: {s.n_items} answers to judge written to {out} ({s.n_already_judged} already graded)"
    )


@answers_app.command("import")
def answers_import(
    file: Path = typer.Argument(..., help="a graded batch (the export with its grade fields filled)"),
    annotator: str = typer.Option(..., "--annotator", help="who graded it"),
    mapping: Path | None = typer.Option(None, "--mapping", help="the batch's mapping file, when exported elsewhere"),
    db_url: str | None = _DB,
):
    """Store a judge's grades (a new round for the annotator); prints the agreement between judges."""
    from evals.answers.judging import import_grades, latest_grades, load_mapping
    from evals.answers.scoring import agreement

    engine = _engine(db_url)
    try:
        if mapping is not None:
            typer.echo(f"{load_mapping(engine, mapping)} items of the mapping added")
        s = import_grades(engine, file, annotator)
    except (ValueError, FileNotFoundError) as exc:
        raise _fail(exc) from None
    typer.echo(f"{s.annotator}, round {s.round}: {s.n_graded} answers graded stored, {s.n_pending} pending")
    ag = agreement(latest_grades(engine))
    for pair, st in ag["pairs"].items():
        kf = st["key_facts"]
        if kf:
            typer.echo(f"agreement {pair} on key facts: n={kf['n']} exact={kf['exact']:.3f} kappa={kf['kappa']:.3f}")


@answers_app.command("score")
def answers_score(
    set_name: str = typer.Option("dev", "--set", help="the set whose newest run is scored"),
    run: str | None = typer.Option(None, "--run", help="a run key instead of the set's newest run"),
    out: Path | None = typer.Option(None, "--out", help="report path (default evals/reports/answers_<set>.json)"),
    db_url: str | None = _DB,
):
    """Score a run with every grade imported: metrics with 95 % intervals, agreement, latency."""
    from evals.answers import report_path, score_stored, write_report

    engine = _engine(db_url)
    try:
        report = score_stored(engine, set_name, run)
    except KeyError as exc:
        raise _fail(exc) from None
    path = write_report(report, out or report_path(report["set"]))
    o = report["overall"]
    typer.echo(f"{report['set']} (run {report['run_key']}): {o['judged']} judged, {o['pending']} pending -> {path}")
    for k in ("key_facts_stated", "citation_support", "false_premises_flagged"):
        typer.echo(f"  {k}: {o[k]['share']} (95 % CI {o[k]['ci95']})")
    typer.echo(f"  non_statement_sentences: {o['non_statement_sentences']['count']}")
    typer.echo(f"  unanswerable_answered: {o['unanswerable_answered']['count']} of {o['unanswerable_answered']['n']}")
    lat = report["latency"]
    typer.echo(
        f"  latency p50 {lat['overall']['p50_ms']} ms, p95 {lat['overall']['p95_ms']} ms; "
        f"slowest step {(lat['slowest_step'] or {}).get('name')}"
    )
    typer.echo("  targets: " + ", ".join(f"{k}={v}" for k, v in report["meets"].items()))


def register(app: typer.Typer) -> None:
    """Add the ``answers`` group to the ``radar`` application."""
    app.add_typer(answers_app, name="answers")
