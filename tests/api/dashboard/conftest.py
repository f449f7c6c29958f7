"""Fixtures for the dashboard tests: the served app on the crafted corpus and headless Chromium.

The browser suite needs Debian's ``chromium`` (``RADAR_CHROMIUM`` overrides the path), the Python
``playwright`` package and the npm packages of ``api/dashboard`` (``npm ci --prefix api/dashboard``);
the static assets are built on demand (``api/dashboard/build.py``). Missing pieces skip the
browser tests with the reason — unless ``RADAR_REQUIRE_BROWSER=1`` (CI), which turns the skip
into a failure so a broken setup cannot pass silently.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.api.dashboard import support_server as srv

HERE = Path(__file__).resolve().parent
DASHBOARD = HERE.parents[2] / "api" / "dashboard"
SHOTS = HERE / "screenshots"
AXE = DASHBOARD / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _unavailable(reason: str):
    if os.environ.get("RADAR_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser suite required but unavailable: {reason}")
    pytest.skip(reason)


def chromium_path() -> str | None:
    cand = os.environ.get("RADAR_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    return cand if cand and Path(cand).exists() else None


@pytest.fixture(scope="session")
def dashboard_static():
    """The dashboard's static assets (vendor libraries, boundaries), built if missing."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("dashboard_build", DASHBOARD / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    if build.missing():
        if not (DASHBOARD / "node_modules").is_dir():
            _unavailable("api/dashboard/node_modules missing: run `npm ci --prefix api/dashboard`")
        build.main([])
    assert not build.missing(), build.missing()
    return DASHBOARD / "static"


@pytest.fixture(scope="session")
def dashboard_app(pg_url, shared_dir, use_encoder, tmp_path_factory, dashboard_static):
    """``(Prepared, base_url)``: the crafted corpus materialized and the app served by uvicorn."""
    prep = srv.prepare(pg_url, shared_dir, tmp_path_factory.mktemp("dashboard"), use_encoder)
    thread = srv.ServerThread(srv.make_app(prep, use_encoder)).start()
    yield prep, thread.base
    thread.stop()
    prep.engine.dispose()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for one test module. Module-scoped: Playwright's sync API keeps an event
    loop running in the main thread while it is open, which would break ``asyncio.run`` in any
    test collected after it (tests/api/test_load_script.py)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("python package playwright not installed")
    exe = chromium_path()
    if exe is None:
        _unavailable("chromium not found (apt-get install chromium, or set RADAR_CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        yield b
        b.close()


class Console:
    """Console errors, page errors and failed requests of one page."""

    def __init__(self, page, base: str):
        self.errors: list[str] = []
        local = (base, "data:", "blob:", "about:")
        page.on(
            "request", lambda r: None if r.url.startswith(local) else self.errors.append(f"external request: {r.url}")
        )
        page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on("requestfailed", lambda r: self.errors.append(f"requestfailed: {r.url} {r.failure}"))
        page.on("response", lambda r: self.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)


@pytest.fixture()
def page(browser, dashboard_app):
    """A fresh page (1440×1000, es-CO); fails the test if the console reported an error."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, locale="es-CO", accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    console = Console(pg, dashboard_app[1])
    pg.base = dashboard_app[1]
    pg.console = console
    yield pg
    context.close()
    assert not console.errors, "\n".join(console.errors)


@pytest.fixture(scope="session")
def shots() -> Path:
    SHOTS.mkdir(exist_ok=True)
    return SHOTS
