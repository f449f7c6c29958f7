"""``radar claims`` (bitemporal claim queries) and ``radar review`` (the alias review queue).

``radar claims --object municipality:52835 --predicate present_in --valid-at 2023-06-30 --as-of
2026-11-01`` prints what Radar knew at the end of 1 Nov 2026 about who was present in Tumaco in
mid-2023, each claim with its supporting and contradicting passages. ``radar review`` lists the
unresolved aliases; ``radar review decide KEY same --target municipality:52835 --by NAME`` records
a reviewer's decision (who and when), superseding the automatic one.
"""

from __future__ import annotations

import datetime as dt
import json

import typer


def _engine():
    from radar_pipeline import db
    from radar_pipeline.config import get_settings

    s = get_settings()
    return db.create_engine(db.resolve_database_url(s.database_url, s.pgdata))


def _date(value: str | None, name: str) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        typer.echo(f"error: {name} debe ser una fecha AAAA-MM-DD (recibí {value!r})", err=True)
        raise typer.Exit(2) from None


def _period(r: dict) -> str:
    if r["valid_from"] is None:
        return "validez no indicada"
    return f"{r['valid_from']}..{r['valid_to'] or ''}"


def _print_claims(rows: list[dict]) -> None:
    if not rows:
        typer.echo("(ninguna afirmación)")
    for r in rows:
        typer.echo(
            f"{r['claim_id']}  {r['status']:<10} {_period(r):<24} {r['statement']}"
            f"  [registrada {r['recorded_at']:%Y-%m-%d %H:%M}"
            + (f", reemplazada {r['superseded_at']:%Y-%m-%d %H:%M}" if r["superseded_at"] else "")
            + (f" por {r['superseded_by']}" if r["superseded_by"] else "")
            + "]"
        )
        if r["status"] == "contested":
            typer.echo(f"    disputada: prevalece {r['prevailing_stance'] or 'ninguna'} (regla {r['policy']})")
        for e in r["evidence"]:
            mark = "+" if e["stance"] == "supports" else "-"
            ret = " (retirado)" if e["retracted"] else ""
            span = " ".join(e["span"].split())
            typer.echo(f"    {mark} {e['doc_id']}:{e['chunk_id']}{ret}  «{span[:160]}»")


def register(app: typer.Typer) -> None:
    """Add ``claims`` and the ``review`` group to the ``radar`` application."""

    @app.command("claims")
    def claims(
        subject: str | None = typer.Option(None, "--subject", help="entity:eln, alert:045-23, group:others"),
        predicate: str | None = typer.Option(None, "--predicate", help="present_in, early_warning_for, ..."),
        obj: str | None = typer.Option(None, "--object", help="municipality:52835, phenomenon:territorial, ..."),
        valid_at: str | None = typer.Option(None, "--valid-at", help="valid time: held on this date (AAAA-MM-DD)"),
        as_of: str | None = typer.Option(None, "--as-of", help="transaction time: known by the end of this date"),
        status: list[str] = typer.Option([], "--status", help="asserted, contested, superseded, retracted"),
        include_superseded: bool = typer.Option(False, "--include-superseded"),
        include_undated: bool = typer.Option(False, "--include-undated", help="with --valid-at: undated claims too"),
        history: str | None = typer.Option(None, "--history", help="every version of this claim_id"),
        limit: int = typer.Option(50, "--limit", min=1, max=5000),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
    ):
        """Claims as Radar knew them (--as-of) that held at a date (--valid-at), with their evidence."""
        from radar_pipeline.claims.model import PREDICATES
        from radar_pipeline.claims.store import claim_history, jsonable, query_claims

        if predicate is not None and predicate not in PREDICATES:
            typer.echo(f"error: predicado desconocido {predicate!r}; use uno de: {', '.join(PREDICATES)}", err=True)
            raise typer.Exit(2)
        engine = _engine()
        if history:
            rows = claim_history(engine, history)
        else:
            rows = query_claims(
                engine,
                subject=subject,
                predicate=predicate,
                obj=obj,
                valid_at=_date(valid_at, "--valid-at"),
                as_of=_date(as_of, "--as-of"),
                status=status or None,
                include_superseded=include_superseded,
                include_undated=include_undated,
                limit=limit,
            )
        if as_json:
            typer.echo(json.dumps(jsonable(rows), ensure_ascii=False, indent=1, default=str))
        else:
            _print_claims(rows)

    review_app = typer.Typer(
        no_args_is_help=False,
        invoke_without_command=True,
        help="Aliases left unresolved by entity resolution: list them, record a reviewer's decision.",
    )
    app.add_typer(review_app, name="review")

    @review_app.callback()
    def review(
        ctx: typer.Context,
        all_items: bool = typer.Option(False, "--all", help="also the items already decided"),
        kind: str | None = typer.Option(None, "--kind", help="place, entity or group"),
        limit: int = typer.Option(100, "--limit", min=1, max=10000),
        as_json: bool = typer.Option(False, "--json"),
    ):
        """List the review queue (oldest first): key, alias, candidates, where it occurs."""
        if ctx.invoked_subcommand is not None:
            return
        from radar_pipeline.claims.resolution import review_items
        from radar_pipeline.claims.store import jsonable

        items = review_items(_engine(), open_only=not all_items, kind=kind, limit=limit)
        if as_json:
            typer.echo(json.dumps(jsonable(items), ensure_ascii=False, indent=1, default=str))
            return
        if not items:
            typer.echo("(nada pendiente de revisión)")
        for it in items:
            state = f"decidido por {it['closed_by']}" if it["closed_at"] else "pendiente"
            where = ", ".join(f"{e['doc_id']}:{e['chunk_id']}" for e in it["examples"][:2])
            typer.echo(f"{it['decision_key']}  {it['kind']:<6} {it['alias']!r:<28} {state}")
            typer.echo(f"    candidatos: {', '.join(it['candidates'])}" + (f"   ej.: {where}" if where else ""))

    @review_app.command("undo")
    def undo(
        key: str = typer.Argument(..., help="the key of a reviewer's decision"),
        by: str = typer.Option(..., "--by", help="who undoes it (recorded with the time)"),
    ):
        """Undo a reviewer's decision: the decision it replaced is in force again and the review item
        reopens; the mentions, aggregates and claims follow (review_sensor) back to their earlier figures."""
        from radar_pipeline.claims.resolution import ReviewError
        from radar_pipeline.claims.resolution import undo as _undo

        try:
            out = _undo(_engine(), key, by=by)
        except ReviewError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
        u, r = out["undone"], out["restored"]
        typer.echo(
            f"{u['decision_key']}  {u['alias']!r}: deshecha la decisión {u['decision']} de {u['decided_by']}"
            + (f"; vuelve {r['decision']} ({r['signal']})" if r else "; queda pendiente de revisión")
        )

    @review_app.command("cluster")
    def cluster(canonical_id: str = typer.Argument(..., help="entity:eln, municipality:52835, ...")):
        """The alias cluster of one id: its aliases with their deciding signal, what it was decided
        different from, and the unresolved aliases that could denote it."""
        from radar_pipeline.claims.resolution import cluster as _cluster

        c = _cluster(_engine(), canonical_id)
        typer.echo(f"{c['id']}: {len(c['aliases'])} alias(es)")
        for a in c["aliases"]:
            typer.echo(f"    = {a['alias']!r} [{a['lang'] or '-'}] {a['form'] or ''} ({a['signal']}, {a['by']})")
        for d in c["different_from"]:
            typer.echo(f"    ≠ {d}")
        for u in c["unresolved"]:
            typer.echo(f"    ? {u['alias']!r} (sin resolver: {', '.join(u['candidates'])}; clave {u['key']})")

    @review_app.command("decide")
    def decide(
        key: str = typer.Argument(..., help="the key shown by `radar review`"),
        decision: str = typer.Argument(..., help="same, different or unresolved"),
        by: str = typer.Option(..., "--by", help="who decides (recorded with the time)"),
        target: str | None = typer.Option(None, "--target", help="with 'same': the candidate id"),
        note: str = typer.Option("", "--note"),
    ):
        """Record a reviewer's decision; it supersedes the automatic one and closes the review item."""
        from radar_pipeline.claims.resolution import ReviewError
        from radar_pipeline.claims.resolution import decide as _decide

        try:
            row = _decide(_engine(), key, decision, by=by, target=target, note=note)
        except ReviewError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
        typer.echo(
            f"{row['decision_key']}  {row['alias']!r} → {row['decision']}"
            + (f" {row['candidate_a']}" if row["candidate_a"] else "")
            + f"  (por {row['decided_by']}, {row['decided_at']:%Y-%m-%d %H:%M} UTC)"
        )
