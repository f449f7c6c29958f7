"""A reopened answer says whether it still stands (issue 25 §2), in headless Chromium: an answer
asked in the page carries a link to itself; reopened while its citations are current it says so;
reopened after one of its citations was marked superseded and another retracted, it is shown stale
— which citation, why and what replaced it — and the stale citation links are struck through.

The marks are the rows ``staleness.flag_stale_answers`` writes (the flagging after a real edit and
Dagster re-materialization is tested in tests/assets/test_stale_answers.py); here they are written
for the page's own answer and removed afterwards, so the session's crafted corpus stays unchanged
for the other browser tests."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from radar_pipeline.agent.staleness import answer_stale_citations, ensure_staleness_schema
from tests.api.dashboard.test_dashboard_e2e import axe_audit, goto

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUESTION = "¿Qué explican los documentos sobre por qué los grupos armados se disputan el río Caguán en Caquetá?"


def _mark(engine, run_id: str, citas: list[dict]) -> list[dict]:
    """The first citation superseded by the second one's passage (another text), the second retracted."""
    now = dt.datetime.now(dt.UTC)
    a, b = citas[0], citas[1]
    rows = [
        {
            "run_id": run_id, "n": a["n"], "doc_id": a["doc_id"], "chunk_id": a["chunk_id"], "reason": "superseded",
            "supersede_reason": "source_changed", "superseded_at": now, "superseded_by_doc": b["doc_id"],
            "retraction_reason": None, "replaced_by": b["chunk_id"], "replaced_by_doc": b["doc_id"],
            "text_changed": True, "detected_at": now, "detected_by": "dagster:e2e",
        },
        {
            "run_id": run_id, "n": b["n"], "doc_id": b["doc_id"], "chunk_id": b["chunk_id"], "reason": "retracted",
            "supersede_reason": "retracted", "superseded_at": now, "superseded_by_doc": None,
            "retraction_reason": "Fuente no verificable", "replaced_by": None, "replaced_by_doc": None,
            "text_changed": None, "detected_at": now, "detected_by": "retraction:e2e",
        },
    ]  # fmt: skip
    with engine.begin() as conn:
        conn.execute(answer_stale_citations.insert(), rows)
    return rows


def test_a_reopened_answer_shows_whether_it_still_stands(page, dashboard_app, shots):
    engine = dashboard_app[0].engine
    ensure_staleness_schema(engine)
    goto(page, "fenomeno=territorial&vista=tiempo")
    page.fill("#pregunta", QUESTION)
    page.click("#preguntar")
    page.wait_for_selector("#chat-log .answer")
    link = page.locator("#chat-log a.enlace-respuesta").first
    href = link.get_attribute("href")
    run_id = href.split("#respuesta=")[1]
    assert len(run_id) == 32
    with engine.connect() as conn:
        citas = conn.execute(
            sa.text("SELECT response->'citas' FROM agent_runs WHERE run_id = :r"), {"r": run_id}
        ).scalar_one()
    assert len(citas) >= 2, citas

    # reopened (a fresh load of its link) while every citation is current: said so, nothing struck through
    page.goto("about:blank")
    page.goto(f"{page.base}/tablero/{href}")
    box = page.locator(f'#chat-log article.reabierta[data-run="{run_id}"]')
    box.locator(".answer").wait_for()
    assert box.locator(".q").inner_text() == QUESTION
    assert box.locator('.vigencia[data-vigencia="vigente"]').count() == 1
    assert box.locator("a.cita.obsoleta").count() == 0

    try:
        rows = _mark(engine, run_id, citas)
        page.goto("about:blank")
        page.goto(f"{page.base}/tablero/{href}")
        box = page.locator(f'#chat-log article.reabierta[data-run="{run_id}"]')
        box.locator(".answer").wait_for()
        stale = box.locator('.vigencia[data-vigencia="desactualizada"]')
        assert stale.count() == 1
        text = stale.inner_text()
        assert "Respuesta desactualizada" in text and "2 citas ya no están vigentes" in text
        sup = stale.locator(f'li[data-chunk="{rows[0]["chunk_id"]}"]')
        assert sup.get_attribute("data-motivo") == "superseded"
        assert f"[{rows[0]['n']}]" in sup.inner_text() and "reemplazada" in sup.inner_text()
        assert "con otro texto" in sup.inner_text()
        assert sup.locator("a.cita").get_attribute("data-chunk") == rows[0]["replaced_by"]
        ret = stale.locator(f'li[data-chunk="{rows[1]["chunk_id"]}"]')
        assert ret.get_attribute("data-motivo") == "retracted"
        assert "retractada" in ret.inner_text() and "Fuente no verificable" in ret.inner_text()
        struck = {a.get_attribute("data-chunk") for a in box.locator(".answer a.cita.obsoleta").all()}
        assert struck == {rows[0]["chunk_id"], rows[1]["chunk_id"]}
        # the replacement opens in the evidence panel like any citation
        sup.locator("a.cita").click()
        page.wait_for_selector(f'#ev-pasajes li.target[data-chunk="{rows[0]["replaced_by"]}"]')
        page.screenshot(path=str(shots / "chat-respuesta-desactualizada.png"), full_page=True)
        bad = axe_audit(page)
        assert not bad, bad
    finally:
        with engine.begin() as conn:
            conn.execute(answer_stale_citations.delete().where(answer_stale_citations.c.run_id == run_id))
