"""The dashboard in headless Chromium against the served app on the materialized crafted corpus.

Every test fails on any console error, page error, failed or 4xx/5xx request, or request that
leaves the served origin (see ``conftest.page``). Screenshots go to ``tests/api/dashboard/screenshots``.
"""

from __future__ import annotations

import re
import struct
from urllib.parse import parse_qs, urlparse

import pytest
import sqlalchemy as sa

from radar_pipeline.precompute.reader import PrecomputeReader
from tests.api.dashboard.conftest import AXE

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def goto(page, query: str) -> None:
    page.goto(f"{page.base}/tablero/?{query}")
    ready(page)


def ready(page) -> None:
    page.wait_for_selector('#vista[data-evidencia="lista"]')


def params(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def rows(engine, sql: str, **p) -> list:
    with engine.connect() as conn:
        return list(conn.execute(sa.text(sql), p))


def axe_audit(page) -> list[dict]:
    """Serious and critical violations of WCAG 2.x A/AA rules (axe-core injected from node_modules)."""
    if not AXE.is_file():
        pytest.fail(f"{AXE} missing: run `npm ci --prefix api/dashboard`")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""")
    return [v for v in result if v["impact"] in ("serious", "critical")]


VIEWS = [
    ("territorial-mapa-lugares", "fenomeno=territorial&vista=mapa"),
    ("territorial-mapa-alertas", "fenomeno=territorial&vista=mapa&capa=alertas"),
    ("territorial-mapa-presencia", "fenomeno=territorial&vista=mapa&capa=presencia"),
    ("territorial-tiempo", "fenomeno=territorial&vista=tiempo"),
    ("territorial-red", "fenomeno=territorial&vista=red"),
    ("territorial-matriz", "fenomeno=territorial&vista=matriz"),
    ("territorial-cuadrante", "fenomeno=territorial&vista=cuadrante"),
    ("ai_military-mapa-paises", "fenomeno=ai_military&vista=mapa"),
    ("space_security-red", "fenomeno=space_security&vista=red"),
    ("space_security-tiempo-mes", "fenomeno=space_security&vista=tiempo&gran=month"),
]


@pytest.mark.parametrize("name,query", VIEWS, ids=[v[0] for v in VIEWS])
def test_each_view_renders_with_data_and_passes_axe(page, dashboard_app, shots, name, query):
    engine = dashboard_app[0].engine
    goto(page, query)
    assert page.get_attribute("#vista", "data-estado") == "listo"
    svg = page.locator("#vista svg")
    assert svg.count() == 1
    assert "Fuente:" in svg.locator("text.fuente").text_content()
    phen = params(page)["fenomeno"]
    if name == "territorial-mapa-lugares":
        (n,) = rows(
            engine,
            # rows are kept per collection: the figure is their sum
            "SELECT sum(n_documents) FROM agg_documents_per_place_current WHERE place_id = 'department:18' "
            "AND phenomenon = 'territorial'",
        )[0]
        assert page.get_attribute('path[data-place="department:18"]', "data-n") == str(n) == "5"
        assert (
            page.locator("path[data-n]").count()
            == rows(
                engine,
                "SELECT count(DISTINCT place_id) FROM agg_documents_per_place_current "
                "WHERE level = 'department' AND phenomenon = 'territorial'",
            )[0][0]
        )
        assert "leyenda" in svg.inner_html() and "ninguno lo nombra" in svg.text_content()
    elif name == "territorial-mapa-alertas":
        for t in ("imminent", "structural"):
            expect = rows(
                engine,
                "SELECT department_code, count(DISTINCT c) FROM agg_alerts_per_department_current, "
                "jsonb_array_elements_text(alert_codes) c WHERE alert_type = :t GROUP BY department_code",
                t=t,
            )
            got = {
                p.get_attribute("data-place"): p.get_attribute("data-n")
                for p in page.locator(f'path[data-tipo="{t}"][data-n]').all()
            }
            assert got == {f"department:{d}": str(n) for d, n in expect}, t
        assert "nunca se suman" in svg.text_content()
    elif name == "territorial-mapa-presencia":
        states = {p.get_attribute("data-municipio"): p for p in page.locator("path[data-estado]").all()}
        assert states["CO18256"].get_attribute("data-estado") == "present"
        assert states["CO18410"].get_attribute("data-estado") == "no_info"
        assert states["CO18410"].get_attribute("fill").startswith("url(#")  # hatched, not a colour
        assert states["CO18001"].get_attribute("data-estado") == "absent"
        assert states["CO18001"].get_attribute("fill") != states["CO18410"].get_attribute("fill")
        assert "PE1601" in states  # a Peruvian province: drawn from its own boundaries
        assert "Brasil 1" in page.inner_text("#vista-nota")  # no boundary: counted in the note, not dropped
        assert "Manaus" in page.locator("#tabla-contenido").text_content()
    elif name == "territorial-tiempo":
        (undated,) = rows(
            engine,
            "SELECT sum(n_documents) FROM agg_timeline_current WHERE phenomenon = 'territorial' "
            "AND entity_id IS NULL AND granularity = 'year' AND undated",
        )[0]
        assert f"{undated} documento sin fecha" in page.inner_text("#vista-titulo")
        assert page.locator("rect[data-periodo]").count() == 7
    elif name == "territorial-red":
        assert (
            page.locator("g[data-entidad]").count()
            == rows(
                engine,
                "SELECT count(DISTINCT entity_a) FROM agg_entity_network_current "
                "WHERE kind = 'node' AND phenomenon = 'territorial'",
            )[0][0]
        )
        assert page.locator("line.enlace").count() > 0
    elif name == "territorial-matriz":
        assert page.locator("rect[data-columna]").count() > 0
    elif name == "territorial-cuadrante":
        assert page.locator("g.medianas line").count() == 2
        # the medians are the whole corpus's: classified over every collection's rows on read
        quad = PrecomputeReader(engine).quadrant(None, "territorial")
        assert {(r["intensity_median"], r["trend_median"]) for r in quad} == {(2.0, quad[0]["trend_median"])}
        assert "mediana de intensidad = 2" in svg.text_content()
        assert (
            page.locator("g.puntos g[data-entidad]").count()
            == len(quad)
            == rows(
                engine,
                "SELECT count(DISTINCT entity_id) FROM agg_entity_quadrant_current WHERE phenomenon = 'territorial'",
            )[0][0]
        )
    elif name == "ai_military-mapa-paises":
        assert page.get_attribute('path[data-place="country:RUS"]', "data-n") == "2"
    elif name == "space_security-red":
        assert page.locator('g[data-entidad="starlink"]').count() == 1
    elif name == "space_security-tiempo-mes":
        assert page.locator('rect[data-periodo="2021-03"]').count() == 1
    assert phen in page.url
    page.screenshot(path=str(shots / f"{name}.png"))
    bad = axe_audit(page)
    assert not bad, bad


def test_department_click_opens_evidence_with_the_counted_mention(page, dashboard_app, shots):
    engine = dashboard_app[0].engine
    goto(page, "fenomeno=territorial&vista=mapa")
    page.click('path[data-place="department:18"]')
    ready(page)
    assert params(page)["lugar"] == "department:18"
    assert "Caquetá" in page.inner_text("#ev-seleccion")
    items = page.locator("#ev-lista li")
    assert items.count() == 7
    listed = {li.get_attribute("data-chunk") for li in items.all()}
    expected = {
        r[0]
        for r in rows(
            engine,
            "SELECT e->>'chunk_id' FROM agg_documents_per_place_current a, "
            "jsonb_array_elements(a.evidence) e WHERE a.place_id = 'department:18' "
            "AND a.phenomenon = 'territorial'",
        )
    }
    assert listed == expected
    for chunk in sorted(listed):  # every cited passage: open it, the counted mention is highlighted
        page.click(f'#ev-lista li[data-chunk="{chunk}"] button')
        page.wait_for_selector(f'#ev-pasajes li.target[data-chunk="{chunk}"]')
        marks = [m.inner_text() for m in page.locator("#ev-pasajes li.target mark.contada").all()]
        named = {
            r[0]
            for r in rows(
                engine,
                "SELECT matched FROM place_mentions_current WHERE chunk_id = :c AND department_code = '18'",
                c=chunk,
            )
        }
        assert marks and set(marks) <= named, (chunk, marks, named)
        page.click("#ev-volver")
    long_doc = next(c for c in listed if c.endswith("-60"))
    page.click(f'#ev-lista li[data-chunk="{long_doc}"] button')
    page.wait_for_selector(f'#ev-pasajes li.target[data-chunk="{long_doc}"]')
    window = page.locator("#ev-pasajes li")
    assert window.count() == 80
    assert window.first.get_attribute("data-chunk").endswith("-20") and window.last.get_attribute(
        "data-chunk"
    ).endswith("-99")
    assert page.get_attribute("#ev-pasajes", "start") == "21"
    assert "Pasajes 21–100 de 120" in page.inner_text("#ev-doc")
    assert page.locator("#ev-pasajes li.target mark.contada").all_inner_texts() == ["Caquetá", "Cartagena del Chairá"]
    assert page.locator('#ev-pasajes li.target span.mencion[data-id="emc"]').count() == 1  # named, not counted here
    assert page.locator("path.seleccion").count() == 1
    page.screenshot(path=str(shots / "evidencia-caqueta.png"), full_page=True)


def test_filters_live_in_the_url_and_round_trip(page):
    goto(page, "fenomeno=territorial&vista=red")
    page.select_option("#f-desde", "2018")
    ready(page)
    page.select_option("#f-hasta", "2021")
    ready(page)
    page.select_option("#f-entidad", "eln")
    ready(page)
    page.select_option("#f-lugar", "department:18")
    ready(page)
    assert params(page) == {
        "fenomeno": "territorial",
        "vista": "red",
        "desde": "2018",
        "hasta": "2021",
        "entidad": "eln",
        "lugar": "department:18",
    }
    title, note = page.inner_text("#vista-titulo"), page.inner_text("#vista-nota")
    assert "ELN" in title or "Ejército de Liberación Nacional" in title
    shared = page.url
    page.goto(shared)  # a shared link restores the same view
    ready(page)
    assert (page.inner_text("#vista-titulo"), page.inner_text("#vista-nota")) == (title, note)
    for sel, value in (
        ("#f-desde", "2018"),
        ("#f-hasta", "2021"),
        ("#f-entidad", "eln"),
        ("#f-lugar", "department:18"),
    ):
        assert page.input_value(sel) == value
    page.go_back()  # one step back: the entity was chosen, the territory not yet
    ready(page)
    assert "lugar" not in params(page) and params(page)["entidad"] == "eln"
    assert page.input_value("#f-lugar") == ""
    page.go_forward()
    ready(page)
    assert params(page)["lugar"] == "department:18" and page.input_value("#f-lugar") == "department:18"
    page.click("#limpiar")
    ready(page)
    assert params(page) == {"fenomeno": "territorial", "vista": "red"}
    page.click('#paginas a[data-fenomeno="space_security"]')
    ready(page)
    assert params(page)["fenomeno"] == "space_security"
    assert page.get_attribute('#paginas a[data-fenomeno="space_security"]', "aria-current") == "page"
    page.go_back()
    ready(page)
    assert params(page)["fenomeno"] == "territorial"


def test_selecting_an_entity_narrows_the_other_views(page, dashboard_app):
    engine = dashboard_app[0].engine
    goto(page, "fenomeno=territorial&vista=red")
    page.click('g[data-entidad="eln"]')
    ready(page)
    assert params(page)["entidad"] == "eln"
    assert "ELN" in page.inner_text("#ev-seleccion")
    mark_ok = page.locator("#ev-lista li").count() > 0
    assert mark_ok
    page.click('#vistas button[data-vista="mapa"]')
    ready(page)
    eln = {r[0] for r in rows(engine, "SELECT DISTINCT doc_id FROM entity_mentions_current WHERE entity_id = 'eln'")}
    caq = {
        r[0]
        for r in rows(
            engine,
            "SELECT DISTINCT e->>'doc_id' FROM agg_documents_per_place_current a, "
            "jsonb_array_elements(a.evidence) e WHERE a.place_id = 'department:18' "
            "AND a.phenomenon = 'territorial'",
        )
    }
    assert page.get_attribute('path[data-place="department:18"]', "data-n") == str(len(eln & caq)) == "2"
    assert "restringido por entidad" in page.inner_text("#vista-nota").lower()
    page.click('#vistas button[data-vista="matriz"]')
    ready(page)
    assert "ELN" in page.inner_text("#vista-titulo") or "Liberación" in page.inner_text("#vista-titulo")
    page.click('g.filas text[data-entidad="clan_del_golfo"]')  # selecting in the matrix switches the entity
    ready(page)
    assert params(page)["entidad"] == "clan_del_golfo"
    page.click('#vistas button[data-vista="cuadrante"]')
    ready(page)
    page.click('g.puntos g[data-entidad="farc_dissidents"]')
    ready(page)
    assert params(page)["entidad"] == "farc_dissidents"
    page.click('#vistas button[data-vista="tiempo"]')
    ready(page)
    assert "que nombran" in page.inner_text("#vista-titulo")


def test_keyboard_selects_a_territory(page):
    goto(page, "fenomeno=territorial&vista=mapa&capa=alertas")
    page.focus('path[data-tipo="structural"][data-place="department:86"]')
    page.keyboard.press("Enter")
    ready(page)
    assert params(page)["lugar"] == "department:86"
    assert "riesgo estructural" in page.inner_text("#ev-seleccion")
    page.focus("#ev-lista li button")
    page.keyboard.press("Enter")
    page.wait_for_selector("#ev-pasajes li.target mark.contada")
    assert page.evaluate("document.activeElement.id") == "ev-pasajes"


def test_chat_drives_the_view_and_frames_the_territory(page, shots):
    goto(page, "fenomeno=ai_military&vista=red")
    page.fill("#pregunta", "Muéstrame el mapa de alertas tempranas en Caquetá")
    page.click("#preguntar")
    page.wait_for_selector("#chat-log .answer")
    page.wait_for_function("new URLSearchParams(location.search).get('capa') === 'alertas'")
    ready(page)
    page.wait_for_selector("#ev-pasajes li.target")
    assert params(page) == {"fenomeno": "territorial", "vista": "mapa", "capa": "alertas", "lugar": "department:18"}
    roles = page.locator("#chat-log li.paso").evaluate_all("els => els.map(e => e.dataset.rol)")
    assert roles[0] == "guardia_entrada" and "visualizador" in roles and roles[-1] == "guardia_salida"
    assert page.locator("#chat-log .vis[data-componente='mapa_alertas']").count() == 1
    # the agent states no phenomenon for an alerts map: the dashboard opened the territorial page itself
    assert "fenomeno" not in page.inner_text("#chat-log .vis")
    assert "scale(" in page.get_attribute("g.alertas-imminent", "transform")  # framed
    assert page.locator("#ev-lista li").count() == 2  # one imminent and one structural alert, listed apart
    assert page.locator("#ev-pasajes li.target mark.contada").count() >= 1
    page.screenshot(path=str(shots / "chat-vista-alertas.png"), full_page=True)


FRAME_JS = """(pid) => {
    const o = document.querySelector(`path.seleccion[data-seleccion="${pid}"]`);
    if (!o) return null;
    const svg = o.ownerSVGElement;
    const clip = o.closest('g[clip-path]').getAttribute('clip-path').match(/#([^)]+)/)[1];
    const r = document.getElementById(clip).querySelector('rect');
    const pt = (m, x, y) => { const p = svg.createSVGPoint(); p.x = x; p.y = y; return p.matrixTransform(m); };
    const corners = (m, x, y, w, h) => { const a = pt(m, x, y), b = pt(m, x + w, y + h); return {x: a.x, y: a.y, w: b.x - a.x, h: b.y - a.y}; };
    const bb = o.getBBox();
    return {
        outline: corners(o.getScreenCTM(), bb.x, bb.y, bb.width, bb.height),
        box: corners(svg.getScreenCTM(), +r.getAttribute('x'), +r.getAttribute('y'), +r.getAttribute('width'), +r.getAttribute('height')),
    };
}"""


def assert_framed(page, place_id: str) -> None:
    """The territory's outline is drawn, centred in its map box and zoomed to fill a good part of it
    (a municipality is a speck on the unframed map of Colombia)."""
    geo = page.evaluate(FRAME_JS, place_id)
    assert geo, f"no outline for {place_id}"
    o, box = geo["outline"], geo["box"]
    assert abs(o["x"] + o["w"] / 2 - (box["x"] + box["w"] / 2)) < 0.1 * box["w"], geo
    assert abs(o["y"] + o["h"] / 2 - (box["y"] + box["h"] / 2)) < 0.1 * box["h"], geo
    assert max(o["w"] / box["w"], o["h"] / box["h"]) > 0.5, geo


def test_chat_frames_a_municipality_and_picks_the_territorial_page(page, dashboard_app, shots):
    engine = dashboard_app[0].engine
    goto(page, "fenomeno=ai_military&vista=red")
    page.fill("#pregunta", "¿Qué grupos armados operan en Puerto Asís?")
    page.click("#preguntar")
    page.wait_for_selector("#chat-log .answer")
    page.wait_for_function("new URLSearchParams(location.search).get('capa') === 'presencia'")
    ready(page)
    # the agent leaves fenomeno unset for armed presence: the dashboard opens the territorial page itself
    vis = page.inner_text("#chat-log .vis")
    assert "lugar: municipality:86568" in vis and "fenomeno" not in vis
    assert params(page) == {
        "fenomeno": "territorial",
        "vista": "mapa",
        "capa": "presencia",
        "lugar": "municipality:86568",
    }
    assert page.get_attribute('#paginas a[data-fenomeno="territorial"]', "aria-current") == "page"
    assert_framed(page, "municipality:86568")
    assert page.get_attribute('path[data-municipio="CO86568"]', "data-estado") == "present"
    assert page.input_value("#f-lugar") == "municipality:86568"
    assert page.locator("#f-lugar option:checked").inner_text().startswith("Puerto Asís (Putumayo)")
    assert "territorio Puerto Asís (Putumayo)" in page.inner_text("#estado-filtros")
    assert "Puerto Asís" in page.locator("#vista g.leyenda").last.text_content()
    # its presence rows are the evidence: every listed passage counts for Puerto Asís
    assert "Puerto Asís (Putumayo): presencia declarada" in page.inner_text("#ev-seleccion")
    (n_rows,) = rows(engine, "SELECT count(*) FROM armed_presence_current WHERE divipola_code = '86568'")[0]
    assert n_rows > 0
    whys = page.locator("#ev-lista li .why").all_inner_texts()
    assert whys and all("Puerto Asís" in w for w in whys)
    page.screenshot(path=str(shots / "chat-municipio-presencia.png"), full_page=True)


def test_a_municipality_filter_frames_every_map_and_narrows_the_views(page, dashboard_app, shots):
    engine = dashboard_app[0].engine
    tumaco = "municipality:52835"
    goto(page, f"fenomeno=territorial&vista=mapa&lugar={tumaco}")
    assert_framed(page, tumaco)  # on the department map, from the municipal boundaries
    assert "San Andrés de Tumaco (Nariño)" in page.inner_text("#estado-filtros")
    assert "San Andrés de Tumaco" in page.locator("#vista g.leyenda").text_content()
    cited = {
        r[0]
        for r in rows(
            engine,
            "SELECT e->>'chunk_id' FROM agg_documents_per_place_current a, jsonb_array_elements(a.evidence) e "
            "WHERE a.place_id = :p AND a.phenomenon = 'territorial'",
            p=tumaco,
        )
    }
    assert cited and {li.get_attribute("data-chunk") for li in page.locator("#ev-lista li").all()} == cited
    page.screenshot(path=str(shots / "municipio-mapa-departamentos.png"), full_page=True)
    page.select_option("#op-nivel", "municipality")
    ready(page)
    assert params(page)["nivel"] == "municipality"
    assert page.get_attribute(f'path[data-place="{tumaco}"]', "data-n") == "1"
    assert_framed(page, tumaco)
    page.click('#opciones button[data-valor="alertas"]')
    ready(page)
    # the alerts naming Tumaco, in its department's imminent map; each panel frames the municipality
    got = {
        (p.get_attribute("data-tipo"), p.get_attribute("data-place"), p.get_attribute("data-n"))
        for p in page.locator("path[data-tipo][data-n]").all()
    }
    assert got == {("imminent", "department:52", "1")}
    assert "las que nombran San Andrés de Tumaco" in page.inner_text("#vista-nota")
    assert page.locator(f'path.seleccion[data-seleccion="{tumaco}"]').count() == 2
    assert "alertas que lo nombran" in page.inner_text("#ev-seleccion")
    page.click('#vistas button[data-vista="tiempo"]')
    ready(page)
    assert page.locator("rect[data-periodo]").evaluate_all("els => els.map(e => e.dataset.periodo)") == ["2020"]
    assert "nombran San Andrés de Tumaco" in page.inner_text("#vista-nota")


def test_an_open_period_from_the_chat(page, dashboard_app, shots):
    engine = dashboard_app[0].engine
    goto(page, "fenomeno=territorial&vista=red")
    page.fill("#pregunta", "Muéstrame la línea de tiempo de los documentos desde 2019")
    page.click("#preguntar")
    page.wait_for_selector("#chat-log .answer")
    page.wait_for_function("new URLSearchParams(location.search).get('vista') === 'tiempo'")
    ready(page)
    p = params(page)
    assert p["desde"] == "2019" and "hasta" not in p
    bars = page.locator("rect[data-periodo]").evaluate_all("els => els.map(e => e.dataset.periodo)")
    expected = [
        r[0]
        for r in rows(
            engine,
            "SELECT DISTINCT period FROM agg_timeline_current WHERE phenomenon = 'territorial' AND entity_id IS NULL "
            "AND granularity = 'year' AND NOT undated AND n_documents > 0 ORDER BY period",
        )
    ]
    assert min(expected) < "2019"  # the corpus has earlier documents: the open period cuts them
    assert bars == [y for y in expected if y >= "2019"] and bars
    assert page.input_value("#f-desde") == "2019" and page.input_value("#f-hasta") == ""
    assert "periodo desde 2019" in page.inner_text("#estado-filtros")
    assert "periodo desde 2019" in page.inner_text("#vista-nota")
    page.screenshot(path=str(shots / "chat-periodo-abierto.png"), full_page=True)
    goto(page, "fenomeno=territorial&vista=tiempo&hasta=2018")  # open the other way
    assert params(page) == {"fenomeno": "territorial", "vista": "tiempo", "hasta": "2018"}
    bars = page.locator("rect[data-periodo]").evaluate_all("els => els.map(e => e.dataset.periodo)")
    assert bars == [y for y in expected if y <= "2018"] and bars
    assert "periodo hasta 2018" in page.inner_text("#estado-filtros")


def test_a_country_as_the_entity_filter(page):
    goto(page, "fenomeno=ai_military&vista=red&entidad=country:CHN")
    assert params(page)["entidad"] == "country:CHN"
    assert "entidad China" in page.inner_text("#estado-filtros")
    assert page.locator("#f-entidad option:checked").inner_text() == "China"
    assert "que nombran China" in page.inner_text("#vista-titulo")
    assert "restringida por entidad" in page.inner_text("#vista-nota").lower()
    assert page.inner_text("#ev-seleccion").startswith("China — documentos que lo nombran")
    assert page.locator("#ev-lista li").count() > 0


def test_chat_answer_links_citations_and_shows_the_reasoning(page, shots):
    goto(page, "fenomeno=territorial&vista=tiempo")
    page.evaluate("""() => {
        window.__orden = [];
        new MutationObserver(ms => ms.forEach(m => m.addedNodes.forEach(n => {
            if (n.nodeType === 1 && n.matches('li.paso')) window.__orden.push('paso');
            if (n.nodeType === 1 && (n.matches('.answer') || n.querySelector('.answer'))) window.__orden.push('final');
        }))).observe(document.getElementById('chat-log'), {childList: true, subtree: true});
    }""")
    # an explanation asked in words (a bare "¿qué grupos armados…?" is read as the presence view now)
    page.fill(
        "#pregunta",
        "¿Qué explican los documentos sobre por qué los grupos armados se disputan el río Caguán en Caquetá?",
    )
    page.click("#preguntar")
    page.wait_for_selector("#chat-log .answer")
    order = page.evaluate("window.__orden")
    assert order[-1] == "final" and order.count("paso") >= 5  # steps rendered as they streamed, then the answer
    steps = page.inner_text("#chat-log ol.steps")
    assert "search_evidence" in steps and "read_chunks" in steps
    assert re.search(r"resultado \d{1,3}(\.\d{3})+ caracteres", steps), steps  # es-CO thousands separator
    meta = page.inner_text("#chat-log .meta")
    assert "tokens" in meta and "roles:" in meta and "modo sin modelo" in meta
    cite = page.locator("#chat-log .answer a.cita").first
    chunk = cite.get_attribute("data-chunk")
    assert page.locator("#chat-log ol.fuentes").first.inner_text().count(chunk) >= 1
    cite.click()
    page.wait_for_selector(f'#ev-pasajes li.target[data-chunk="{chunk}"]')
    assert "Pasaje citado en la respuesta" in page.inner_text("#ev-seleccion")
    page.screenshot(path=str(shots / "chat-respuesta-citas.png"), full_page=True)
    bad = axe_audit(page)
    assert not bad, bad


def test_share_exports_a_png_with_filters_legend_and_sources(page, shots):
    goto(page, "fenomeno=territorial&vista=mapa&capa=presencia&lugar=department:18")
    with page.expect_download() as dl:
        page.click("#compartir")
    download = dl.value
    assert download.suggested_filename == "radar-territorial-mapa-presencia.png"
    out = shots / "compartir-presencia.png"
    download.save_as(out)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 1880 and height > 1200  # 2× the 940-px view plus header and footer
    page.wait_for_function("document.getElementById('aviso').textContent.includes('PNG')")
