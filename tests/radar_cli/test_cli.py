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


def _child_dispositions() -> str:
    """SIGINT and SIGTERM as a plain Python child starts with them."""
    import subprocess
    import sys

    code = (
        "import signal; print(*(signal.getsignal(s) == signal.SIG_IGN and 'SIG_IGN' or 'not ignored' "
        "for s in (signal.SIGINT, signal.SIGTERM)))"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_radar_up_starts_dagster_able_to_stop_even_as_a_background_job():
    """``radar up &`` starts with SIGINT ignored; the ``dagster dev`` it starts (inside
    ``stoppable_children``) must not inherit that, or it ignores the SIGTERM ``up`` stops it with."""
    import signal

    from radar_cli.main import stoppable_children

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for ignored in ({signal.SIGINT}, {signal.SIGINT, signal.SIGTERM}):
            for s in ignored:
                signal.signal(s, signal.SIG_IGN)  # as a background job of a non-interactive shell
            assert _child_dispositions().count("SIG_IGN") == len(ignored)  # what a child would inherit
            with stoppable_children():
                assert _child_dispositions() == "not ignored not ignored"
            assert all(signal.getsignal(s) == signal.SIG_IGN for s in ignored)  # this process: as before
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a foreground job
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with stoppable_children():  # nothing ignored: nothing changed
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
