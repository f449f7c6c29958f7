"""`radar serve` / `radar trace` are registered in the `radar` command line and work on a real trace."""

from __future__ import annotations

from radar_cli import agent_commands


def test_cli_functions_exist():
    assert callable(agent_commands.serve) and callable(agent_commands.trace)


def test_trace_command_registered(db_client, pg_url, monkeypatch):
    from typer.testing import CliRunner

    from radar_cli.main import app

    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    assert {"serve", "trace", "materialize", "search", "eval", "doctor", "ui", "up"} <= names
    run_id = db_client.post("/chat", json={"pregunta": "Hola"}).json()["metadata"]["run_id"]
    monkeypatch.setenv("DATABASE_URL", pg_url)
    res = CliRunner().invoke(app, ["trace", run_id])
    assert res.exit_code == 0 and run_id in res.output and "guardia_entrada" in res.output
