"""`radar claims --valid-at --as-of` and `radar review` / `radar review decide` on the real test PostgreSQL."""

from __future__ import annotations

import datetime as dt

from typer.testing import CliRunner

from radar_cli.main import app
from radar_pipeline.claims import resolution as ER
from radar_pipeline.claims.model import Claim, Evidence
from radar_pipeline.claims.policy import resolve
from radar_pipeline.claims.store import write_claims


def _at(day: str) -> dt.datetime:
    return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(12), tzinfo=dt.UTC)


def _claim(subject: str, span: str) -> Claim:
    ev = Evidence("doc1", "doc1-0", "supports", span, 0, len(span), "test", 2, "2023", "es", "AMAZONUW")
    return resolve(
        Claim(
            subject,
            "present_in",
            "municipality:52835",
            f"{subject} tiene presencia declarada en San Andrés de Tumaco",
            dt.date(2023, 1, 1),
            dt.date(2023, 12, 31),
            "publication_period",
            {},
            [ev],
        )
    )


def test_claims_as_of_and_review_from_the_command_line(engine, pg_url, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", pg_url)
    eln, emc = _claim("entity:eln", "au_eln: VERDADERO"), _claim("entity:emc", "au_emc: VERDADERO")
    write_claims(engine, [eln], run_id="r1", producer="test", now=_at("2026-10-15"))
    write_claims(engine, [eln, emc], run_id="r2", producer="test", now=_at("2026-11-20"))
    run = CliRunner().invoke
    args = ["claims", "--object", "municipality:52835", "--predicate", "present_in", "--valid-at", "2023-06-30"]
    res = run(app, [*args, "--as-of", "2026-11-01"])
    assert res.exit_code == 0, res.output
    assert "entity:eln" in res.output and "entity:emc" not in res.output and "au_eln: VERDADERO" in res.output
    res = run(app, args)
    assert "entity:eln" in res.output and "entity:emc" in res.output
    assert run(app, ["claims", "--valid-at", "ayer"]).exit_code == 2
    assert run(app, ["claims", "--predicate", "nope"]).exit_code == 2

    d = ER.Decision(
        "place", "Argelia", "unresolved", "context_rule", candidates=["municipality:05055", "municipality:19050"]
    )
    ER.write_decisions(engine, [d])
    listed = run(app, ["review"])
    assert listed.exit_code == 0 and d.decision_key in listed.output and "pendiente" in listed.output
    bad = run(app, ["review", "decide", d.decision_key, "same", "--by", "ana"])
    assert bad.exit_code == 1 and "--target" in bad.output
    ok = run(app, ["review", "decide", d.decision_key, "same", "--target", "municipality:19050", "--by", "ana"])
    assert ok.exit_code == 0 and "por ana" in ok.output
    assert "nada pendiente" in run(app, ["review"]).output
    assert "decidido por ana" in run(app, ["review", "--all"]).output
    # undone: the automatic decision is back and the item waits again (issue 25 §1)
    undo = run(app, ["review", "undo", d.decision_key, "--by", "bruno"])
    assert undo.exit_code == 0 and "deshecha la decisión same de ana" in undo.output, undo.output
    assert "vuelve unresolved (context_rule)" in undo.output
    assert "pendiente" in run(app, ["review"]).output
    again = run(app, ["review", "undo", d.decision_key, "--by", "bruno"])
    assert again.exit_code == 1 and "no hay una decisión de revisión vigente" in again.output
