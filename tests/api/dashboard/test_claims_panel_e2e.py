"""The evidence panel's claims section in headless Chromium: a selected territory shows the claims
about it with their status and their supporting and contradicting passages (Spanish UI); a passage
opens in its document."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
import sqlalchemy as sa

from radar_pipeline.claims.build import build_claims
from radar_pipeline.claims.model import Evidence
from radar_pipeline.claims.policy import resolve
from radar_pipeline.claims.store import write_claims
from tests.api.dashboard.test_dashboard_e2e import goto

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture()
def contested(dashboard_app):
    """Claims of the crafted corpus, one of them about a territory made contested by a second
    passage that contradicts it; removed afterwards (the other browser tests see no claims)."""
    engine = dashboard_app[0].engine
    claims, _ = build_claims(engine)
    target = next(c for c in claims if c.object.startswith(("department:", "municipality:")))
    other = next(e for c in claims for e in c.evidence if e.chunk_id != target.evidence[0].chunk_id)
    target.evidence.append(dataclasses.replace(other, stance="contradicts", authority=1))
    target.evidence[0] = dataclasses.replace(target.evidence[0], authority=1)
    resolve(target)
    write_claims(engine, claims, run_id="e2e", producer="test", now=dt.datetime.now(dt.UTC))
    yield target, other
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM claim_evidence"))
        conn.execute(sa.text("DELETE FROM claims"))


def test_a_territory_shows_its_claims_with_both_sides(page, contested, shots):
    target, other = contested
    assert isinstance(other, Evidence) and target.status == "contested"
    goto(page, f"fenomeno=territorial&vista=mapa&lugar={target.object}")
    item = page.locator(f'#ev-afirmaciones li[data-claim="{target.claim_id}"]')
    item.wait_for()
    text = item.inner_text()
    assert "disputada" in text and target.statement in text and "Prevalece" in text
    assert item.locator("li.postura-supports button").count() >= 1
    contra = item.locator("li.postura-contradicts button")
    assert contra.count() == 1 and contra.inner_text().startswith("Contradice")
    contra.click()
    page.wait_for_selector(f'#ev-pasajes li.target[data-chunk="{other.chunk_id}"]')
    page.screenshot(path=str(shots / "evidencia-afirmaciones.png"), full_page=True)
