"""A retraction propagates: the document's passages, mentions and dates are closed and every
aggregate, alert and presence row that counted it is re-materialized without it (old rows kept);
the claims it was the only evidence of become ``retracted`` (a new version; the old one kept)."""

from __future__ import annotations

import shutil

import sqlalchemy as sa

from radar_pipeline import history
from radar_pipeline.claims.build import materialize_claims
from radar_pipeline.claims.links import claims_citing
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.precompute import pipeline as P
from radar_pipeline.precompute import tables as T
from radar_pipeline.stages import chunk_documents, extract_documents, sync_source_files

FILES = ("F3-ALERTAS-016.txt", "F1-ILIA-001.txt", "F2-CSIS-154.txt")


def _cites(conn, table: str, doc_id: str, current: bool) -> int:
    cond = "valid_to IS NULL" if current else "valid_to IS NOT NULL"
    return conn.execute(
        sa.text(f"SELECT count(*) FROM {table} WHERE {cond} AND evidence @> CAST(:e AS jsonb)"),
        {"e": f'[{{"doc_id": "{doc_id}"}}]'},
    ).scalar()


def test_retraction_closes_mentions_and_rematerializes_aggregates(pengine, config, tmp_path, shared_dir):
    root = tmp_path / "corpus"
    root.mkdir()
    for name in FILES:
        shutil.copy(shared_dir / "eval" / "codefest_mini_corpus" / name, root / name)
    sync_source_files(pengine, root)
    extract_documents(pengine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(pengine)
    P.materialize_entity_dictionary(pengine, config.dictionary())
    P.materialize_gazetteer(pengine, config.gazetteer())
    P.materialize_mentions(pengine, config)
    P.materialize_publication_dates(pengine, config)
    P.materialize_aggregates(pengine, config)
    P.materialize_early_warnings(pengine, config)
    with pengine.connect() as conn:
        doc = conn.execute(sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": FILES[0]}).scalar()
        mentions = conn.execute(
            sa.text("SELECT count(*) FROM place_mentions WHERE valid_to IS NULL AND doc_id = :d"), {"d": doc}
        ).scalar()
        counted = _cites(conn, "agg_documents_per_place", doc, current=True)
    assert mentions > 0 and counted > 0, "the fixture document names places the aggregate counts"
    materialize_claims(pengine)
    before = claims_citing(pengine, [doc])
    assert before["n_current"] > 0 and {c["status"] for c in before["current"]} == {"asserted"}

    history.retract_document(pengine, doc, "Documento apócrifo", "revisor")
    out = P.propagate_retraction(pengine, config, [doc])

    assert out["closed"]["place_mentions"] == mentions and out["closed"]["publication_dates"] == 1
    with pengine.connect() as conn:
        for table in P.DOCUMENT_TABLES:
            assert (
                conn.execute(
                    sa.text(f"SELECT count(*) FROM {table} WHERE valid_to IS NULL AND doc_id = :d"), {"d": doc}
                ).scalar()
                == 0
            )
            assert (
                conn.execute(
                    sa.text(f"SELECT count(*) FROM {table} WHERE valid_to IS NOT NULL AND doc_id = :d"), {"d": doc}
                ).scalar()
                > 0
                or table == "entity_mentions"
            )
        for table in T.AGG_TABLES:
            assert _cites(conn, table, doc, current=True) == 0, table
        assert _cites(conn, "agg_documents_per_place", doc, current=False) >= counted  # history kept
        run = conn.execute(
            sa.text("SELECT inputs FROM precompute_runs WHERE run_id = :r"), {"r": out["closed"]["run_id"]}
        ).scalar()
    assert run == {"doc_ids": [doc], "reason": "retracted"}
    assert out["aggregates"]["precompute_version"]
    # claims: the alert was their only evidence, so each gets a new version, retracted; the old kept
    after = claims_citing(pengine, [doc])
    assert {c["claim_id"] for c in after["current"]} == {c["claim_id"] for c in before["current"]}
    assert {c["status"] for c in after["current"]} == {"retracted"}
    assert after["closed"] >= before["n_current"]
    assert out["claims"]["write"]["retracted"] == before["n_current"]
