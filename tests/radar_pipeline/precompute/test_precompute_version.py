"""Every precompute run has a ``precompute_version`` (asset, code version, inputs), recorded on the
run and on the rows it inserted."""

from __future__ import annotations

import sqlalchemy as sa

from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.versioning import precompute_version, run_versions, start_run, write_versioned


def test_precompute_version_is_deterministic_and_recorded_on_rows(engine):
    T.ensure_precompute_schema(engine)
    try:
        inputs = {"corpus": {"sha1": "abc", "documents": 2}}
        v = precompute_version("publication_dates", "precompute-1", inputs)
        assert v == precompute_version("publication_dates", "precompute-1", dict(inputs))
        assert v != precompute_version("publication_dates", "precompute-1", {"corpus": {"sha1": "abd"}})
        assert v != precompute_version("publication_dates", "precompute-2", inputs)
        run_id = start_run(engine, "publication_dates", "precompute-1", inputs)
        row = {"doc_id": "d1", "source_kind": "path", "date": "2024", "year": 2024}
        write_versioned(engine, "publication_dates", [row], run_id=run_id, producer="p@1", version=v)
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE precompute_runs SET finished_at = now() WHERE run_id = :r"), {"r": run_id})
            got = conn.execute(sa.text("SELECT precompute_version FROM publication_dates_current")).scalars().all()
            run_v = conn.execute(
                sa.text("SELECT precompute_version FROM precompute_runs WHERE run_id = :r"), {"r": run_id}
            ).scalar_one()  # its own run: another test file on the same database may have left runs
        assert got == [v] and run_v == v
        assert run_versions(engine)["publication_dates"]["precompute_version"] == v
    finally:
        T.drop_precompute_schema(engine)
