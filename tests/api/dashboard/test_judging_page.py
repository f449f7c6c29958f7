"""The judging page (``/tablero/juicio``) on real PostgreSQL: its API (blind items, one round per
session, a changed grade replaces the round's grade, structured Spanish errors) and the page in
headless Chromium driven by the keyboard only (0/1/2, →, ←). Grades land in the same versioned
store ``radar judge import`` writes, so agreement and the merged qrels see them."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.main import create_app
from api.security import AccessControl
from evals.datasets import CodefestDev, CodefestQuestion, text_hash
from evals.judging import agreement, export_batch, import_grades, latest_judgments, merged_qrels
from evals.relevance import JudgedPassageIndex
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.stores.qrels import ensure_judging_schema, judging_metadata
from tests.api.dashboard import support_server as srv
from tests.api.dashboard.conftest import Console
from tests.api.dashboard.test_dashboard_e2e import axe_audit
from tests.evals.support_text import words as W

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUESTIONS = {"qa": "¿Cómo usan la IA los ejércitos?", "qb": "¿Qué riesgos hay en la órbita baja?"}
TEXTS = {"qa": [W("ia", 0, 40), W("dron", 0, 40), W("mando", 0, 40)], "qb": [W("orbita", 0, 40), W("basura", 0, 40)]}


@pytest.fixture()
def jengine(engine):
    judging_metadata.drop_all(engine)
    ensure_judging_schema(engine)
    return engine


@pytest.fixture()
def batch(jengine, tmp_path):
    """One exported batch of 5 unjudged passages over two questions: ``(batch id, batch file)``."""
    dev = CodefestDev(
        tuple(CodefestQuestion(q, t, "F1") for q, t in QUESTIONS.items()),
        {q: () for q in QUESTIONS},
        {q: frozenset() for q in QUESTIONS},
    )
    runs = {"A": {q: [{"rank": i + 1, "text": t} for i, t in enumerate(ts)] for q, ts in TEXTS.items()}}
    out = tmp_path / "batch.jsonl"
    s = export_batch(jengine, runs, dev, JudgedPassageIndex(), out, seed=3)
    assert s.n_items == 5
    return s.batch_id, out


def _service(engine, tmp_path) -> AgentService:
    settings = ServiceSettings(
        index_dir=tmp_path / "no-index",
        use_database=True,
        trace=False,
        database_url=engine.url.render_as_string(hide_password=False),
        llm=LLMSettings(base_url=None, api_key=None, model_large=None, model_small=None),
    )
    return AgentService(settings, engine=engine)


@pytest.fixture()
def api(jengine, tmp_path):
    with TestClient(create_app(service=_service(jengine, tmp_path), access=AccessControl.open_loopback())) as c:
        yield c


def test_judging_api_round_trip(api, jengine, batch, tmp_path):
    batch_id, batch_file = batch
    lotes = api.get("/tablero/api/juicio/lotes").json()["lotes"]
    assert [(b["lote"], b["items"], b["preguntas"]) for b in lotes] == [(batch_id, 5, 2)]

    s = api.post("/tablero/api/juicio/sesiones", json={"anotador": " ana ", "lote": batch_id}).json()
    assert (s["anotador"], s["ronda"]) == ("ana", 1)
    items = s["items"]
    # blind: an opaque id, the question and the passage; nothing about query id, system, rank or score
    assert all(set(i) == {"item_id", "pregunta", "texto", "nota"} and i["nota"] is None for i in items)
    assert sorted(i["texto"] for i in items) == sorted(t for ts in TEXTS.values() for t in ts)
    by_text = {t: q for q, ts in TEXTS.items() for t in ts}
    assert all(i["pregunta"] == QUESTIONS[by_text[i["texto"]]] for i in items)
    # a fixed shuffled order: the same on every session
    again = api.post("/tablero/api/juicio/sesiones", json={"anotador": "beto", "lote": batch_id}).json()
    assert [i["item_id"] for i in again["items"]] == [i["item_id"] for i in items]

    first, second = items[0], items[1]
    r = api.put(f"/tablero/api/juicio/items/{first['item_id']}", json={"anotador": "ana", "ronda": 1, "nota": 2})
    assert r.status_code == 200 and r.json()["nota"] == 2
    api.put(f"/tablero/api/juicio/items/{second['item_id']}", json={"anotador": "ana", "ronda": 1, "nota": 0})
    # back, and a changed mind: the round keeps one judgment of the passage, the new grade
    api.put(f"/tablero/api/juicio/items/{first['item_id']}", json={"anotador": "ana", "ronda": 1, "nota": 1})
    with jengine.connect() as conn:
        stored = conn.execute(sa.text("SELECT annotator, round, query_id, text_hash, grade FROM qrels_judgments")).all()
    q1 = by_text[first["texto"]]
    assert sorted(stored) == sorted(
        [
            ("ana", 1, q1, text_hash(first["texto"]), 1),
            ("ana", 1, by_text[second["texto"]], text_hash(second["texto"]), 0),
        ]
    )
    # resuming the round shows its grades; a new session is the next round
    resumed = api.post("/tablero/api/juicio/sesiones", json={"anotador": "ana", "lote": batch_id, "ronda": 1}).json()
    assert [i["nota"] for i in resumed["items"][:3]] == [1, 0, None]
    assert api.post("/tablero/api/juicio/sesiones", json={"anotador": "ana", "lote": batch_id}).json()["ronda"] == 2

    # the same store as `radar judge import`: an imported round of another annotator overlaps → kappa
    rows = [json.loads(line) for line in batch_file.read_text(encoding="utf-8").splitlines()]
    grades = {first["item_id"]: 1, second["item_id"]: 2}
    for row in rows:
        row["grade"] = grades.get(row["item_id"])
    judged = tmp_path / "beto.jsonl"
    judged.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8")
    assert import_grades(jengine, judged, "beto").round == 1
    ag = agreement(latest_judgments(jengine))
    assert ag["pairs"]["ana|beto"]["n"] == 2 and ag["pairs"]["ana|beto"]["exact"] == pytest.approx(0.5)
    merged = {(c.query_id, c.text): c.grade for c in merged_qrels(jengine) if c.doc_id == "imported"}
    assert merged == {(q1, first["texto"]): 1, (by_text[second["texto"]], second["texto"]): 0}  # lower median


def test_judging_api_errors_are_structured(api, batch):
    batch_id, _ = batch
    item = api.post("/tablero/api/juicio/sesiones", json={"anotador": "ana", "lote": batch_id}).json()["items"][0]
    bad = api.put(f"/tablero/api/juicio/items/{item['item_id']}", json={"anotador": "ana", "ronda": 1, "nota": 3})
    # request validation answers as everywhere in the API: 422 with the offending field
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "nota"]
    unknown = api.put("/tablero/api/juicio/items/ffff0000", json={"anotador": "ana", "ronda": 1, "nota": 1})
    assert unknown.status_code == 404
    assert unknown.json()["error"] == {
        "code": "item_not_found",
        "message": "el ítem 'ffff0000' no pertenece a ningún lote",
    }
    missing = api.post("/tablero/api/juicio/sesiones", json={"anotador": "ana", "lote": "nope"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "batch_not_found"
    blank = api.post("/tablero/api/juicio/sesiones", json={"anotador": "   ", "lote": batch_id})
    assert blank.status_code == 422


def test_judging_without_a_database_answers_409(tmp_path):
    settings = ServiceSettings(
        index_dir=tmp_path,
        use_database=False,
        trace=False,
        llm=LLMSettings(base_url=None, api_key=None, model_large=None, model_small=None),
    )
    with TestClient(create_app(service=AgentService(settings), access=AccessControl.open_loopback())) as c:
        r = c.get("/tablero/api/juicio/lotes")
    assert r.status_code == 409 and r.json()["error"]["code"] == "database_unavailable"


@pytest.mark.slow
def test_judging_page_by_keyboard(browser, jengine, batch, tmp_path):
    batch_id, _ = batch
    server = srv.ServerThread(create_app(service=_service(jengine, tmp_path))).start()
    context = browser.new_context(viewport={"width": 1200, "height": 900}, locale="es-CO")
    page = context.new_page()
    page.set_default_timeout(20_000)
    console = Console(page, server.base)
    try:
        page.goto(f"{server.base}/tablero/juicio")
        page.wait_for_selector(f'#lote option[value="{batch_id}"]', state="attached")
        page.fill("#anotador", "carla")
        page.select_option("#lote", batch_id)
        page.click("#empezar")
        page.wait_for_selector("#tarea:not([hidden])")
        assert page.inner_text("#posicion") == "Pasaje 1 de 5"
        assert axe_audit(page) == []  # no serious or critical WCAG violation
        shown = []

        def current() -> tuple[str, str, str]:
            return page.get_attribute("body", "data-item"), page.inner_text("#pregunta"), page.inner_text("#pasaje")

        # blind: the question and the passage, no rank, score or system on the page
        item, question, passage = current()
        assert question in QUESTIONS.values() and passage in [t for ts in TEXTS.values() for t in ts]
        body = page.inner_text("main")
        assert "hybrid" not in body and "rank" not in body.lower() and "score" not in body.lower()
        shown.append(item)
        page.keyboard.press("2")  # grade and move on
        page.wait_for_function("() => document.getElementById('posicion').textContent === 'Pasaje 2 de 5'")
        shown.append(current()[0])
        page.keyboard.press("0")
        page.wait_for_function("() => document.getElementById('posicion').textContent === 'Pasaje 3 de 5'")
        page.keyboard.press("ArrowRight")  # skip the third
        page.wait_for_function("() => document.getElementById('posicion').textContent === 'Pasaje 4 de 5'")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => document.getElementById('posicion').textContent === 'Pasaje 2 de 5'")
        assert page.get_attribute('.notas button[data-nota="0"]', "aria-pressed") == "true"
        page.keyboard.press("1")  # changed mind on the second
        page.wait_for_function("() => document.getElementById('posicion').textContent === 'Pasaje 3 de 5'")
        assert page.inner_text("#hechos") == "2 calificados"
        assert "ronda=1" in page.url and "anotador=carla" in page.url
        # a reload resumes the same round at the same item, with its grades
        page.reload()
        page.wait_for_selector("#tarea:not([hidden])")
        assert page.inner_text("#posicion") == "Pasaje 3 de 5" and page.inner_text("#ronda") == "1"
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.wait_for_selector("#fin:not([hidden])")
        assert "2 de 5 pasajes calificados" in page.inner_text("#fin-texto")
    finally:
        context.close()
        server.stop()
    assert not console.errors, "\n".join(console.errors)
    latest = latest_judgments(jengine)
    with jengine.connect() as conn:
        hashes = dict(conn.execute(sa.text("SELECT item_id, text_hash FROM judge_items")).all())
    grades = {h: g["carla"] for (_, h), g in latest.items() if "carla" in g}
    assert grades == {hashes[shown[0]]: 2, hashes[shown[1]]: 1}
