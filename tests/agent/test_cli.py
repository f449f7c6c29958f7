"""`radar serve` / `radar trace` wiring (skipped until radar_pipeline/cli.py registers them)."""
from __future__ import annotations

import pytest

from radar_pipeline.agent import cli_commands


def test_cli_functions_exist():
    assert callable(cli_commands.serve) and callable(cli_commands.trace)


def test_trace_command_registered(db_client, pg_url, monkeypatch):
    from typer.testing import CliRunner

    from radar_pipeline.cli import app

    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    if "trace" not in names:
        pytest.skip("radar trace not wired into radar_pipeline/cli.py yet")
    run_id = db_client.post("/chat", json={"pregunta": "Hola"}).json()["metadata"]["run_id"]
    monkeypatch.setenv("DATABASE_URL", pg_url)
    res = CliRunner().invoke(app, ["trace", run_id])
    assert res.exit_code == 0 and run_id in res.output and "guardia_entrada" in res.output
