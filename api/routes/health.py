"""GET /health: index, database, model configuration and access mode at a glance (no secrets).

Open to everyone; ``auth`` says whether credentials are required (``"required (api keys)"``,
``"required (api keys + oidc)"``) or the server runs open on loopback (``"open (loopback only)"``).
With credentials required, the fields that describe the corpus itself (``index.passages``, the index
directory) are withheld: an anonymous caller or a key restricted
to some collections must not learn the size of the whole corpus. Monitoring keeps ``status``, the
index version and which search stages are live. While ``radar up`` builds, ``construccion`` says in
Spanish what is being built and how far, with an estimate (``radar_pipeline.build_status``).
"""

from __future__ import annotations

import importlib.metadata

import sqlalchemy as sa
from fastapi import APIRouter, Request

from api.deps import ServiceDep
from api.schemas import HealthResponse
from radar_pipeline.build_status import read_build_status

router = APIRouter(tags=["health"])


def _version() -> str:
    try:
        return importlib.metadata.version("radar")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


@router.get("/health", response_model=HealthResponse)
def health(service: ServiceDep, request: Request) -> HealthResponse:
    index = service.index_status()
    db = {"enabled": service.settings.use_database, "connected": None}
    if service.settings.use_database:
        eng = service.engine()
        try:
            if eng is None:
                raise RuntimeError("no engine")
            with eng.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
            db["connected"] = True
        except Exception:  # noqa: BLE001 - any failure to reach the database is reported as disconnected
            db["connected"] = False
    llm = service.settings.llm
    llm_info = {
        "enabled": llm.enabled,
        "model_large": llm.model_large if llm.enabled else None,
        "model_small": (llm.model_small or llm.model_large) if llm.enabled else None,
    }
    ok = index["present"] and not index["problems"] and db["connected"] is not False
    if request.app.state.access.mode != "open":
        index = {**index, "passages": None, "dir": None}
    build = read_build_status()  # what `radar up` is building right now, if anything
    return HealthResponse(
        status="ok" if ok else "degraded",
        version=_version(),
        mode=service.mode,
        index=index,
        database=db,
        llm=llm_info,
        auth=request.app.state.access.describe(),
        construccion=build.as_dict() if build is not None and build.building else None,
    )
