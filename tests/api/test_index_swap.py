"""The service serves early and follows new materializations without a restart: a lexical-only
index answers (marked as such), the dense stage is added when its index is sealed, and a rebuilt
index B replaces A in the same running app, /health naming the version served."""

from __future__ import annotations

import time

import numpy as np
import polars as pl
import pytest
from fastapi.testclient import TestClient

from api.main import create_app
from api.security import AccessControl
from radar_pipeline.agent.llm import LLMSettings
from radar_pipeline.agent.service import AgentService, ServiceSettings
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.centroids import compute_centroids, save_centroids
from radar_pipeline.stores.faiss_store import build_flat_ip, save_index
from radar_pipeline.stores.integrity import index_version, seal_dense, seal_lexical
from radar_pipeline.stores.passages import save_passages
from tests.radar_pipeline.agent.support_corpus import corpus_rows
from tests.radar_pipeline.agent.support_index import OFFLINE_LLM

Q = "¿Qué incidentes recientes de spoofing han comprometido servicios satelitales?"
NEW_TEXT = (
    "The Zorbulon relay network reported a new satellite jamming campaign in 2024 that disrupted "
    "navigation signals across the Andean region for three weeks."
)


def _lexical(d, rows) -> None:
    """What bm25_index writes: the passage table and BM25, sealed without any vector."""
    frame = pl.DataFrame(rows)
    save_passages(frame, d)
    Bm25Index.build(frame["text"].to_list()).save(d)
    seal_lexical(d, "usem3", frame.height)


def _dense(d, rows, encoder) -> None:
    """What faiss_index writes over that same table."""
    vecs = np.asarray(encoder.encode_passages([r["text"] for r in rows]), dtype=np.float32)
    save_index(build_flat_ip(vecs), d)
    save_centroids(compute_centroids(vecs, [r["phenomenon"] for r in rows]), d)
    seal_dense(d, "usem3", len(rows), vecs.shape[1], aligned=True)


def _wait_for_version(client: TestClient, version: str, timeout: float = 60) -> dict:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        client.get("/search", params={"q": "satellite spoofing", "k": 3})  # a request notices the change
        health = client.get("/health").json()
        if health["index"]["index_version"] == version:
            return health
        time.sleep(0.2)
    raise AssertionError(f"still serving {health['index']['index_version']}, expected {version}: {health['index']}")


@pytest.fixture()
def swap_client(tmp_path, use_encoder):
    d = tmp_path / "usem3"
    settings = ServiceSettings(
        index_dir=d, use_database=False, trace=False, reload_check_seconds=0, llm=LLMSettings(**OFFLINE_LLM)
    )
    service = AgentService(settings, encoder=use_encoder)
    with TestClient(create_app(service=service, access=AccessControl.open_loopback())) as c:
        yield c, d


def test_serves_lexical_first_then_dense_then_a_new_build_without_restart(swap_client, use_encoder):
    client, d = swap_client
    rows_a = corpus_rows(with_attacks=False)

    # nothing built: a structured 409, and /health says no stage is live
    assert client.get("/search", params={"q": "spoofing", "k": 3}).status_code == 409
    assert client.get("/health").json()["index"]["stages_on_disk"] == {
        "lexical": False,
        "dense": False,
        "rerank": False,
    }

    # the lexical stage alone: searchable, and a cited answer says it is lexical-only
    _lexical(d, rows_a)
    hits = client.get("/search", params={"q": "satellite spoofing incidents", "k": 5})
    assert hits.status_code == 200 and hits.json()["passages"]
    health = client.get("/health").json()
    assert health["status"] == "ok"
    assert health["index"]["stages"] == {"lexical": True, "dense": False, "rerank": False}
    assert health["index"]["lexical_only"] is True
    assert health["index"]["index_version"] == index_version(d)
    chat = client.post("/chat", json={"pregunta": Q}).json()
    assert chat["metadata"]["estado"] == "respondida" and chat["citas"], chat["respuesta"]
    assert chat["metadata"]["solo_lexica"] is True and chat["metadata"]["etapas_busqueda"] == ["lexica"]
    assert "solo en la búsqueda léxica" in chat["respuesta"]

    # the dense stage is sealed over the same table: the same app adds it, no restart
    _dense(d, rows_a, use_encoder)
    health = _wait_for_version(client, index_version(d))
    assert health["index"]["stages"] == {"lexical": True, "dense": True, "rerank": False}
    chat = client.post("/chat", json={"pregunta": Q}).json()
    assert chat["metadata"]["solo_lexica"] is False and chat["metadata"]["etapas_busqueda"] == ["lexica", "densa"]
    assert "solo en la búsqueda léxica" not in chat["respuesta"]
    version_a = index_version(d)

    # build B (one more document): while only its lexical stage exists, A (dense) keeps answering
    rows_b = [
        *rows_a,
        {
            **rows_a[0],
            "chunk_id": "feedfacefeedface-0",
            "doc_id": "feedfacefeedface",
            "text": NEW_TEXT,
            "source_path": "F2/zorbulon.txt",
            "title": "Zorbulon relay report",
        },
    ]
    _lexical(d, rows_b)
    client.get("/search", params={"q": "Zorbulon", "k": 3})
    health = client.get("/health").json()
    assert health["index"]["index_version"] == version_a != health["index"]["index_version_on_disk"]
    assert health["index"]["stages"]["dense"] is True and health["index"]["reload_note"]

    # B complete: the same app now answers from B and /health shows B
    _dense(d, rows_b, use_encoder)
    version_b = index_version(d)
    health = _wait_for_version(client, version_b)
    assert health["index"]["passages"] == len(rows_b) and version_b != version_a
    top = client.get("/search", params={"q": "Zorbulon relay network jamming", "k": 3}).json()["passages"]
    assert top[0]["chunk_id"] == "feedfacefeedface-0"
