"""The documents stage survives a file that hangs: it is recorded as ``timeout`` and the run goes on."""
import sqlalchemy as sa

import time

from radar_pipeline import db, stages
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.stages import extract_documents, sync_source_files


def test_a_hanging_file_times_out_and_the_rest_is_extracted(engine, tmp_path, monkeypatch):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "ok.txt").write_text("Orbital debris is a growing problem in low Earth orbit.")
    (root / "hang.txt").write_text("HANG " * 10)
    real_extract = stages.extract

    def hanging_extract(path, **kw):  # a reader that never returns on one file (workers are forked)
        if path.name == "hang.txt":
            time.sleep(3600)
        return real_extract(path, **kw)

    monkeypatch.setattr(stages, "extract", hanging_extract)
    sync_source_files(engine, root)
    stats = extract_documents(engine, root, OcrSettings(enabled=False), workers=2, timeout_s=3, per_mb_s=0)
    with engine.begin() as conn:
        rows = dict(conn.execute(sa.select(db.documents.c.primary_path, db.documents.c.status)).all())
    assert rows == {"ok.txt": "ok", "hang.txt": "timeout"}
    assert stats["by_status"] == {"ok": 1, "timeout": 1}
