"""The claims assets through Dagster on crafted documents: precomputes → claims, alias decisions and
their evaluation, with the blocking checks passing; a second run changes nothing."""

from __future__ import annotations

import json

import dagster as dg
import pytest
import sqlalchemy as sa

from assets import claims as claim_assets
from assets import precompute
from radar_pipeline.precompute import tables as T
from resources import DatabaseResource, PrecomputeResource
from tests.radar_pipeline.precompute.support_precompute import add_document

pytestmark = pytest.mark.slow  # runs the precompute assets and the claims group (~30 s)

RECORD = (
    "capa: au_compilado_R02\nfid: 1\nb_ADM2_PCODE: CO52835\nb_ADM1_PCODE: CO52\nau_country: Colombia\n"
    "au_level1: Nariño\nau_level2: San Andrés de Tumaco\nau_emc: FALSO\nau_eln: VERDADERO\nau_no_info: FALSO"
)
PRECOMPUTE = ["entity_dictionary", "place_gazetteer", "entity_mentions", "place_mentions", "publication_dates"]
PRECOMPUTE += ["early_warnings", "armed_presence"]


def _run(pg_url: str, shared_dir, tmp_path) -> dg.ExecuteInProcessResult:
    pre = [a for a in dg.load_assets_from_modules([precompute]) if set(a.keys) & {dg.AssetKey(k) for k in PRECOMPUTE}]
    return dg.materialize(
        [
            *pre,
            claim_assets.claims,
            claim_assets.alias_decisions,
            claim_assets.claims_evaluation,
            *claim_assets.claims_checks,
        ],
        resources={
            "database": DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused")),
            "precompute": PrecomputeResource(shared_dir=str(shared_dir), workers=1),
        },
        selection=[*PRECOMPUTE, "claims", "alias_decisions", "claims_evaluation"],
    )


def test_claims_group_materializes_with_passing_checks(engine, pg_url, shared_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RADAR_REPORTS_DIR", str(tmp_path / "reports"))
    T.drop_precompute_schema(engine)  # rows another test left would become claims here
    add_document(engine, "radar/territorial/data/presencia_2023.csv", [RECORD], is_tabular=True)
    add_document(
        engine,
        "codefest/F3/F3-ALERTAS-045.txt",
        ["Alerta Temprana de Inminencia No. 045-23 para el municipio de Tumaco, Nariño. El ELN disputa el territorio."],
    )
    result = _run(pg_url, shared_dir, tmp_path)
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {
        "every_claim_quotes_existing_evidence": True,
        "one_current_version_per_claim": True,
        "no_forced_merge": True,
    }
    (mat,) = result.asset_materializations_for_node("claims")
    assert mat.metadata["by_predicate"].value["present_in"] == 1
    (ev,) = result.asset_materializations_for_node("claims_evaluation")
    assert ev.metadata["provenance_coverage"].value == 1.0
    # the report goes to the home's reports folder, never into the checkout's evals/reports
    written = tmp_path / "reports" / "claims_eval.json"
    assert ev.metadata["report_path"].value == str(written)
    assert json.loads(written.read_text(encoding="utf-8"))["provenance"]["coverage"] == 1.0
    with engine.connect() as conn:
        n = conn.execute(sa.text("SELECT count(*) FROM claims")).scalar_one()
    again = _run(pg_url, shared_dir, tmp_path)
    (mat2,) = again.asset_materializations_for_node("claims")
    assert mat2.metadata["write_unchanged"].value == mat.metadata["claims"].value
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM claims")).scalar_one() == n
