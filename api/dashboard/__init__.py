"""The Radar dashboard, served by the API under ``/tablero/`` (``mount(app)`` in ``api.main``).

Static pages (HTML, CSS, JavaScript modules) with D3 installed from npm and copied into
``static/vendor/`` by ``build.py``, boundaries simplified from ``../shared/geo`` into
``static/geo/``; nothing is fetched from a CDN. The page reads the service's own endpoints plus
the few in ``router.py``; the judging page (``/tablero/juicio``) is ``judging.py``. See ``README.md``.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from api.dashboard.judging import router as judging_router
from api.dashboard.router import STATIC, router

__all__ = ["mount"]


def mount(app: FastAPI) -> None:
    """Add the dashboard's routes and its static files (``/tablero/static``) to ``app``."""
    app.include_router(router)
    app.include_router(judging_router)
    app.mount("/tablero/static", StaticFiles(directory=STATIC, check_dir=False), name="tablero-static")
