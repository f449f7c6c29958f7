"""`radar materialize` shows its work: one line (a bar on a terminal) per stage with its count, then
a one-screen summary — not Dagster's DEBUG event stream, which goes to the log file and the UI."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from radar_cli.main import app
from radar_pipeline import db

pytestmark = pytest.mark.slow  # a real Dagster run (subprocess per step) of four stages

FILES = ("F1-CSET-005.txt", "F2-SWF-021.txt", "F3-SIPRI-001.txt")


def test_materialize_prints_stages_counts_and_a_summary_not_debug_events(tmp_path, shared_dir, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in FILES:
        shutil.copy(shared_dir / "eval" / "codefest_mini_corpus" / name, corpus / name)
    home = tmp_path / "home"
    for var in ("DATABASE_URL", "RADAR_DATABASE_URL", "RADAR_EXECUTOR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RADAR_HOME", str(home))
    monkeypatch.setenv("RADAR_CORPUS_DIR", str(corpus))
    monkeypatch.setenv("RADAR_WORKERS", "1")
    monkeypatch.setenv("RADAR_PG_URL", "unset")  # restored after the test (materialize sets it)

    res = CliRunner().invoke(app, ["materialize", "--select", "group:ingestion or group:knowledge_base"])
    out = res.output
    assert res.exit_code == 0, out

    engine = db.create_engine(db.start_embedded_server(home / "pgdata"))
    with engine.connect() as conn:
        n_docs = conn.execute(sa.text("SELECT count(*) FROM documents")).scalar()
        n_pages = conn.execute(sa.text("SELECT count(*) FROM pages")).scalar()
        n_chunks = conn.execute(sa.text("SELECT count(*) FROM chunks")).scalar()
    engine.dispose()
    assert n_docs == len(FILES) and n_chunks > len(FILES)

    lines = out.splitlines()

    def line(stage: str) -> str:
        hits = [ln for ln in lines if re.match(rf"^✓ {stage}\s", ln)]
        assert len(hits) == 1, (stage, out)
        return hits[0]

    # one finished line per stage, with its count
    assert f"{len(FILES):,} rows" in line("source_files")
    assert f"{n_docs:,} documents, {n_pages:,} pages" in line("documents_and_pages")
    assert f"{n_chunks:,} rows" in line("chunks")
    assert f"{n_chunks:,} rows" in line("embeddings")
    # the summary: a table row per stage, the checks, the warnings, the outcome and where the detail is
    for stage in ("source_files", "documents_and_pages", "chunks", "embeddings"):
        assert any(ln.startswith(stage) and "done" in ln for ln in lines), (stage, out)
    assert re.search(r"checks: [1-9]\d* passed, 0 failed", out), out
    assert re.search(r"^warnings: \d+", out, re.M), out
    assert re.search(r"^success in .*radar ui", out, re.M), out
    # not the event stream: no DEBUG records, no engine or step events
    for noise in ("DEBUG", "STEP_START", "ENGINE_EVENT", "STEP_WORKER_STARTING", "LOADED_INPUT"):
        assert noise not in out, noise
    # ... which is kept, whole, in the log file the summary names
    log = Path(re.search(r"log: (\S+\.log)", out).group(1))
    text = log.read_text(encoding="utf-8")
    assert "STEP_START" in text and "DEBUG" in text
    assert len(lines) < 60, "fits one screen"
