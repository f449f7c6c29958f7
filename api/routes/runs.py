"""``GET /runs/{run_id}``: a past /chat answer reopened, with whether it still stands (issue 25 §2).

The answer is the /chat contract as it was sent (stored in ``agent_runs.response``); ``vigencia``
(``radar_pipeline.agent.staleness.answer_validity``) says whether a later materialization closed a
passage it cites: per citation, which one (``n``, ``doc_id``, ``chunk_id``), why (``motivo``
``superseded`` | ``retracted``, the closing reason and time, the retraction's reason) and what
replaced it (``reemplazo``: the current passage and whether its text differs from the one the
answer read). Visible as the trace is (``/traces/{run_id}``): to the key that asked, or to an
unrestricted ``admin`` key; anyone else gets 404, as for a run that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.encoders import jsonable_encoder

from api.deps import ServiceDep
from api.schemas import ErrorResponse
from api.security import AccessControl, ChatOrAdminPrincipal

router = APIRouter(tags=["chat"])
_ERRORS = {404: {"model": ErrorResponse}, 409: {"model": ErrorResponse}}


@router.get("/runs/{run_id}", responses=_ERRORS, summary="Una respuesta pasada y si sigue vigente")
def run(
    principal: ChatOrAdminPrincipal,
    service: ServiceDep,
    request: Request,
    run_id: Annotated[str, Path(min_length=8, max_length=64, pattern=r"^[0-9a-f]+$")],
) -> dict[str, Any]:
    """``{"run_id", "pregunta", "started_at", "estado", "respuesta": <the /chat contract as sent>,
    "vigencia": {"estado": "vigente" | "desactualizada", "citas_no_vigentes": [...]}}``."""
    access: AccessControl = request.app.state.access
    store, audit = service.store(), access.audit()
    if store is None or audit is None:
        raise HTTPException(
            409, detail={"code": "database_unavailable", "message": "PostgreSQL no está disponible para esta consulta"}
        )
    missing = HTTPException(404, detail={"code": "unknown_run", "message": "no hay respuesta visible con ese run_id"})
    admin = principal.allows("admin") and principal.collections is None
    if not (admin or audit.owns_run(principal.key_id, run_id)):
        raise missing
    data = store.load(run_id)
    if data is None:
        raise missing
    r = data["run"]
    return jsonable_encoder(
        {
            "run_id": r["run_id"],
            "pregunta": r["pregunta"],
            "started_at": r["started_at"],
            "estado": r["estado"],
            "respuesta": r["response"],
            "vigencia": data["vigencia"],
        }
    )
