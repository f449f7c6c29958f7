"""Follow-up turns through the real API (``POST /chat``) on the real PostgreSQL: the conversation's
state is the trace store's (``agent_runs``), read per credential, so two keys sharing a
``conversacion_id`` never carry each other's view."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.main import create_app
from api.security import AccessControl, AuthSettings
from radar_pipeline.access import KeyStore


@pytest.fixture(scope="module")
def keys(agent_engine) -> dict[str, str]:
    store = KeyStore(agent_engine)
    return {name: store.create(f"followup {name}", "read,chat")[0] for name in ("a", "b")}


@pytest.fixture(scope="module")
def api(db_service, keys):
    settings = AuthSettings(rate_per_minute=60000, rate_burst=10000)
    with TestClient(create_app(service=db_service, access=AccessControl.required(settings))) as c:
        yield c


def _chat(api, key: str, q: str, conv: str) -> dict:
    r = api.post("/chat", json={"pregunta": q, "conversacion_id": conv}, headers={"Authorization": f"Bearer {key}"})
    assert r.status_code == 200, r.text
    return r.json()


def test_followups_carry_per_conversation_and_credential(api, keys):
    first = _chat(api, keys["a"], "Mapa de presencia armada del ELN en el Cauca", "fu-api-1")
    assert first["visualizacion"]["filtros"]["entidad"] == "eln"
    second = _chat(api, keys["a"], "¿Y en Nariño?", "fu-api-1")
    f = second["visualizacion"]["filtros"]
    assert (f["entidad"], f["lugar"]) == ("eln", "department:52")
    assert second["visualizacion"]["componentes"][0]["tipo"] == "mapa_presencia"
    assert second["respuesta"].startswith("Mantengo de la pregunta anterior:")
    # another credential in the same conversation id: read alone, nothing of key a's turn
    other = _chat(api, keys["b"], "¿Y en Nariño?", "fu-api-1")
    assert not other["respuesta"].startswith("Mantengo")
    assert (other.get("visualizacion") or {}).get("filtros", {}).get("entidad") is None
    # key a's next turn carries its own conversation still (its last turn, not key b's)
    third = _chat(api, keys["a"], "ahora desde 2015", "fu-api-1")
    f = third["visualizacion"]["filtros"]
    assert (f["entidad"], f["lugar"], f["desde"]) == ("eln", "department:52", 2015)
