"""The dashboard with authentication on, in headless Chromium: the page asks for a key once per tab.

The same crafted corpus as the other browser tests, served by a second uvicorn with
``AccessControl.required`` (what ``radar serve --host 0.0.0.0`` and ``api.main:app`` run). The page
and its static files are open; every data request needs a credential. The page must ask for it
(a 401 opens the dialog), refuse a wrong one, send the right one as ``Authorization: Bearer`` on
every data, evidence-window and chat request, keep it in sessionStorage across a reload of the tab
(and nowhere else: not in the URL, not in a cookie), forget it on request, and show a
collection-restricted key only its collections' figures.
"""

from __future__ import annotations

import pytest

from api.security import AccessControl, AuthSettings
from radar_pipeline.access import KeyStore
from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.reader import PrecomputeReader
from tests.api.dashboard import support_server as srv

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
MAP = "fenomeno=territorial&vista=mapa&capa=lugares"


@pytest.fixture(scope="module")
def secured(dashboard_app, use_encoder):
    """``(base URL, {name: key})``: the crafted corpus served with credentials required."""
    prep = dashboard_app[0]
    store = KeyStore(prep.engine)
    keys = {}
    for name, scopes, colls in (("todo", "read,chat", None), ("alertas", "read,chat", "ALERTAS")):
        keys[name], _ = store.create(f"tablero {name}", scopes, collections=colls)
    access = AccessControl.required(AuthSettings(rate_per_minute=60000, rate_burst=10000))
    thread = srv.ServerThread(srv.make_app(prep, use_encoder, access)).start()
    yield thread.base, keys
    thread.stop()


@pytest.fixture()
def tab(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, locale="es-CO")
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    page.data_requests = []
    page.on(
        "request",
        lambda r: (
            page.data_requests.append((r.url, r.headers.get("authorization")))
            if "/tablero/api/" in r.url or "/documents/" in r.url or "/chat/" in r.url
            else None
        ),
    )
    yield page
    context.close()
    assert not page.js_errors, page.js_errors


def _enter(page, key: str) -> None:
    page.wait_for_selector("#acceso[open]")
    page.fill("#acceso-clave", key)
    page.click("#acceso-entrar")


def _department_18(page) -> str:
    page.wait_for_selector('#vista[data-evidencia="lista"]')
    return page.get_attribute('path[data-place="department:18"]', "data-n")


def _expected(engine, scope: AccessScope | None) -> str:
    out = PrecomputeReader(engine).read(
        "documents_per_place", Filters(phenomenon="territorial", place="department:18"), scope=scope
    )
    return str(out["rows"][0]["n_documents"])


def test_the_page_asks_for_a_key_once_and_sends_it(secured, tab, dashboard_app):
    base, keys = secured
    tab.goto(f"{base}/tablero/?{MAP}")
    tab.wait_for_selector("#acceso[open]")
    assert "exige autenticación" in tab.inner_text("#acceso-mensaje")
    _enter(tab, "radar_0000000000_" + "x" * 43)  # a forged key: refused, asked again
    tab.wait_for_function("document.querySelector('#acceso-mensaje').textContent.includes('no fue aceptada')")
    assert tab.locator("#acceso[open]").count() == 1
    assert [h for _u, h in tab.data_requests if h] == ["Bearer radar_0000000000_" + "x" * 43]
    n0 = len(tab.data_requests)
    _enter(tab, keys["todo"])
    assert _department_18(tab) == _expected(dashboard_app[0].engine, None) == "5"
    assert tab.evaluate("sessionStorage.getItem('radar.credencial')") == keys["todo"]
    assert keys["todo"] not in tab.url and not tab.context.cookies()
    # every data request after the key was entered carried it
    sent = [h for _u, h in tab.data_requests[n0:]]
    assert len(sent) >= 2 and set(sent) == {f"Bearer {keys['todo']}"}
    # the evidence window (/documents/{id}/window) and the chat go through the same credential
    tab.click('path[data-place="department:18"]')
    tab.click("#ev-lista li button")
    tab.wait_for_selector("#ev-pasajes li.target")
    tab.fill("#pregunta", "¿Qué financia la minería ilegal de oro?")
    tab.click("#preguntar")
    tab.wait_for_selector("#chat-log .answer", timeout=60_000)
    assert "No pude hablar con el agente" not in tab.inner_text("#chat-log")
    chat = [h for u, h in tab.data_requests if "/chat/stream" in u]
    assert chat == [f"Bearer {keys['todo']}"]
    # a reload of the tab keeps the key: no dialog
    n = len(tab.data_requests)
    tab.reload()
    assert _department_18(tab) == "5" and tab.locator("#acceso[open]").count() == 0
    assert all(h == f"Bearer {keys['todo']}" for _u, h in tab.data_requests[n:])
    # forgetting it asks again
    tab.click("#salir")
    tab.wait_for_selector("#acceso[open]")
    assert tab.evaluate("sessionStorage.getItem('radar.credencial')") is None


def test_a_restricted_key_sees_only_its_collections(secured, tab, dashboard_app):
    base, keys = secured
    tab.goto(f"{base}/tablero/?{MAP}")
    _enter(tab, keys["alertas"])
    mine = _expected(dashboard_app[0].engine, AccessScope.of({"ALERTAS"}, "t"))
    assert _department_18(tab) == mine != "5"
    # a new tab (another session) starts without it
    other = tab.context.browser.new_context().new_page()
    other.goto(f"{base}/tablero/?{MAP}")
    other.wait_for_selector("#acceso[open]")
    assert other.evaluate("sessionStorage.getItem('radar.credencial')") is None
    other.context.close()
