"""`radar impact`, `radar replay` and `radar retract` on a real knowledge base, index and trace."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from radar_cli.main import app
from tests.radar_pipeline.support_history import FILES, QUESTION, build_world, client_for


@pytest.fixture()
def world(engine, pg_url, tmp_path, shared_dir, use_encoder, monkeypatch) -> dict:
    w = build_world(engine, tmp_path, shared_dir, use_encoder)
    monkeypatch.setenv("DATABASE_URL", pg_url)
    monkeypatch.setenv("RADAR_AGENT_INDEX_DIR", str(w["index_dir"]))
    monkeypatch.setenv("RADAR_CORPUS_DIR", str(w["root"]))
    monkeypatch.setenv("RADAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RADAR_SHARED_DIR", str(shared_dir))
    client, _ = client_for(engine, pg_url, w["index_dir"], use_encoder)
    with client:
        body = client.post("/chat", json={"pregunta": QUESTION}).json()
    w["run_id"] = body["metadata"]["run_id"]
    w["cited"] = [c["chunk_id"] for c in body["citas"]]
    with engine.connect() as conn:
        w["doc"] = conn.execute(
            sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": FILES[0]}
        ).scalar_one()
    return w


def test_impact_replay_and_retract_from_the_command_line(engine, world):
    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    assert {"retract", "impact", "replay"} <= names
    runner = CliRunner()
    doc, run_id = world["doc"], world["run_id"]
    assert any(c.startswith(doc) for c in world["cited"])

    res = runner.invoke(app, ["impact", FILES[0]])
    assert res.exit_code == 0, res.output
    assert f"documento {doc}  vigente" in res.output and run_id in res.output
    assert runner.invoke(app, ["impact", "no/such/file.txt"]).exit_code == 1

    res = runner.invoke(app, ["replay", run_id])
    assert res.exit_code == 0, res.output
    assert "(el mismo índice)" in res.output and "0 cambiados, 0 desaparecidos" in res.output

    res = runner.invoke(
        app, ["retract", doc, "--reason", "Informe retirado por el editor", "--by", "ana", "--no-rebuild-index"]
    )
    assert res.exit_code == 0, res.output
    assert '"retracted_by": "ana"' in res.output and '"propagated"' in res.output
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM chunks WHERE doc_id = :d"), {"d": doc}).scalar() == 0
        assert conn.execute(sa.text("SELECT reason FROM retractions WHERE doc_id = :d"), {"d": doc}).scalar() == (
            "Informe retirado por el editor"
        )
    res = runner.invoke(app, ["impact", doc])
    assert res.exit_code == 0 and "retractado" in res.output and "retractado por ana" in res.output
    cited_doc = sorted(c for c in world["cited"] if c.startswith(doc))
    assert all(f"{c} (retractado)" in res.output for c in cited_doc)
    res = runner.invoke(app, ["replay", run_id, "--json"])
    assert res.exit_code == 0
    assert f'"chunk_id": "{cited_doc[0]}"' in res.output and '"estado": "gone"' in res.output
    assert runner.invoke(app, ["retract", doc, "--reason", "otra vez", "--no-rebuild-index"]).exit_code == 1
    assert runner.invoke(app, ["replay", "f" * 32]).exit_code == 1
