"""The HTTP contract: /chat strictness and failures, and the read endpoints the tools and dashboard share."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.main import create_app
from api.schemas import ChatResponse

Q = "¿Qué incidentes recientes de spoofing han comprometido servicios satelitales?"


def test_chat_contract_is_strict(client):
    r = client.post("/chat", json={"pregunta": Q, "conversacion_id": "abc-1"})
    assert r.status_code == 200
    body = r.json()
    ChatResponse.model_validate(body)
    assert set(body) == {
        "respuesta",
        "citas",
        "evaluacion",
        "metadata",
        "ruta",
        "visualizacion",
        "conversacion_id",
        "premisa",
        "cifras",  # added (issue 22): the figures stated in words, with the passages they counted
    }
    assert body["premisa"] is None  # the question takes nothing for granted
    assert body["cifras"] == []  # a text question: no view, no figures
    assert body["conversacion_id"] == "abc-1"
    m = body["metadata"]
    assert m["estado"] == "respondida" and m["tokens"] == {"input": 0, "output": 0, "total": 0} and m["latencia_ms"] > 0
    assert (
        set(m["latencia_por_agente"]) == set(m["agentes_invocados"])
        and sum(m["latencia_por_agente"].values()) <= m["latencia_ms"]
    )
    assert set(body["evaluacion"]) == {"input", "retrieval_context", "tools_called"}
    assert all(set(t) == {"name", "input_parameters", "output"} for t in body["evaluacion"]["tools_called"])
    c = body["citas"][0]
    assert set(c) == {"n", "doc_id", "chunk_id", "fuente", "titulo", "pagina", "politica"}
    assert c["fuente"].endswith(".txt")
    # the policy that let the passage through: its collection, the (open loopback) credential, the rule
    assert c["politica"] == {"coleccion": c["fuente"].split("/")[0], "clave": "open", "regla": "todas_las_colecciones"}
    bad = dict(body, extra=1)
    try:
        ChatResponse.model_validate(bad)
        raise AssertionError("extra field accepted")
    except ValueError:
        pass


def test_invalid_requests_get_the_full_contract(client):
    for payload in (
        {},
        {"pregunta": ""},
        {"pregunta": "x" * 2001},
        {"pregunta": "hola", "otro": 1},
        {"pregunta": 5},
        {"pregunta": "hola", "conversacion_id": "../../etc"},
    ):
        r = client.post("/chat", json=payload)
        assert r.status_code == 422, payload
        body = ChatResponse.model_validate(r.json())
        assert body.metadata.estado == "error" and body.metadata.motivo_terminacion == "solicitud_invalida"
    r = client.post("/chat", content=b"not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["metadata"]["estado"] == "error"


def test_unexpected_crash_is_contract_not_bare_500(offline_service, monkeypatch):
    app = create_app(service=offline_service)
    import api.routes.chat as chat_mod

    monkeypatch.setattr(chat_mod, "run_chat", lambda *a, **k: 1 / 0)
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.post("/chat", json={"pregunta": Q})
    assert r.status_code == 500
    assert ChatResponse.model_validate(r.json()).metadata.estado == "error"


def test_health(client, tmp_path):
    body = client.get("/health").json()
    assert body["status"] == "ok" and body["mode"] == "offline" and body["index"]["present"]
    assert body["llm"] == {"enabled": False, "model_large": None, "model_small": None}


def test_openapi_and_docs(client):
    spec = client.get("/openapi.json").json()
    assert {"/chat", "/chat/stream", "/search", "/documents/{doc_id}/window", "/aggregates/{name}", "/health"} <= set(
        spec["paths"]
    )
    assert client.get("/docs").status_code == 200


def test_search_and_documents(client):
    r = client.get("/search", params={"q": "pruebas antisatélite y desechos orbitales", "k": 3})
    body = r.json()
    assert r.status_code == 200 and len(body["passages"]) == 3 and body["documents"]
    top = body["passages"][0]
    assert -1 <= top["similarity"] <= 1 and top["chunk_id"].startswith(top["doc_id"] + "-")
    w = client.get(f"/documents/{top['doc_id']}/window", params={"chunk_id": top["chunk_id"]}).json()
    assert any(p["is_target"] and p["chunk_id"] == top["chunk_id"] for p in w["passages"]) and w["mentions"] == {}
    assert client.get(f"/documents/{top['doc_id']}/outline").json()["n_passages"] >= 1
    assert client.get(f"/chunks/{top['chunk_id']}").json()["text"] == top["text"]
    assert client.get("/chunks/ffffffffffffffff-9").json()["error"]["code"] == "unknown_chunk"
    assert client.get("/documents/ffffffffffffffff/window", params={"chunk_id": top["chunk_id"]}).status_code == 404
    assert client.get("/search", params={"q": "   "}).status_code == 400
    r = client.get("/search", params={"q": "satélites", "doc_id": [top["doc_id"]]})
    assert {p["doc_id"] for p in r.json()["passages"]} == {top["doc_id"]}


def test_index_missing_is_structured(tmp_path, use_encoder):
    from radar_pipeline.agent.llm import LLMSettings
    from radar_pipeline.agent.service import AgentService, ServiceSettings
    from tests.radar_pipeline.agent.support_index import OFFLINE_LLM

    svc = AgentService(
        ServiceSettings(index_dir=tmp_path / "none", use_database=False, llm=LLMSettings(**OFFLINE_LLM)),
        encoder=use_encoder,
    )
    with TestClient(create_app(service=svc)) as c:
        r = c.get("/search", params={"q": "satélites"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "index_not_materialized"
        assert c.get("/health").json()["status"] == "degraded"
        assert c.post("/chat", json={"pregunta": "¿Qué es la basura espacial?"}).json()["metadata"]["estado"] == "error"
        assert c.get("/aggregates/timeline").json()["error"]["code"] == "database_unavailable"


def test_withheld_passages_never_reach_evaluacion_the_trace_keeps_them(db_client, agent_engine, agent_index):
    """Issue 25.5a on the real database: questions (Spanish and English) whose best passage carries
    injected instructions. The /chat ``evaluacion`` shows the poisoned passage's id, flagged and
    without its text, nowhere its payload; the trace stored in PostgreSQL still says how many
    passages were withheld and records the read passage by its text's SHA-256 (never its text)."""
    import json

    from radar_pipeline.agent import prompts
    from radar_pipeline.agent.trace import TraceStore
    from radar_pipeline.chunking import text_sha
    from tests.radar_pipeline.agent.support_corpus import load_indirect

    poisoned = {
        r["source_path"].split("/")[-1][:-4]: r for r in agent_index[1] if r["source_path"].startswith("poisoned/")
    }
    attacks = load_indirect()
    seen = provenances = 0
    for a in [x for x in attacks if x["question"][0] == "¿"][:3] + [x for x in attacks if x["question"][0] != "¿"][:3]:
        body = db_client.post("/chat", json={"pregunta": a["question"]}).json()
        evaluation = json.dumps(body["evaluacion"], ensure_ascii=False)
        assert a["payload"][:30] not in evaluation, a["id"]
        row = poisoned[a["id"]]
        flagged = [
            p
            for t in body["evaluacion"]["tools_called"]
            if t["name"] == "read_chunks"
            for p in t["output"].get("passages", [])
            if p["chunk_id"] == row["chunk_id"]
        ]
        if not flagged:
            continue
        seen += 1
        assert all(p["suspicious"] and p["text"] == prompts.WITHHELD for p in flagged)
        assert row["text"] not in body["evaluacion"]["retrieval_context"]
        trace = TraceStore(agent_engine).load(body["metadata"]["run_id"])
        assert trace is not None
        withheld = [s["detail"].get("pasajes_retirados") for s in trace["steps"] if s["detail"]]
        assert any(n for n in withheld if n), a["id"]
        provenance = trace["run"]["provenance"]
        if provenance is None:  # a trace detail (None when a precompute table was dropped by another test)
            continue
        provenances += 1
        recorded = {p["chunk_id"]: p for p in provenance["passages"]}
        assert recorded[row["chunk_id"]]["sha256"] == text_sha(row["text"])  # read: recorded by hash
        assert not recorded[row["chunk_id"]]["cited"]
        assert a["payload"][:30] not in json.dumps(provenance, ensure_ascii=False)
    assert seen >= 3 and provenances >= 1


def test_a_run_without_a_read_citation_ends_incomplete_over_http(agent_index, use_encoder, agent_engine, pg_url):
    """Issue 25.5b through the API and the real database, the model behind its HTTP interface:
    writers that invent a citation, cite nothing, or cite a read chunk under another document give
    ``incompleta`` (``sin_citas_validas``) with the reason, stored so in the trace; a writer that
    keeps one valid read citation beside an invented one still gives ``no_verificada``."""
    from evals.fake_llm import FakeOpenAI, cite_first
    from radar_pipeline.agent.llm import LLMSettings
    from radar_pipeline.agent.service import AgentService, ServiceSettings
    from radar_pipeline.agent.trace import TraceStore

    invented = {"content": "Hubo interferencias graves en la navegación [deadbeefdeadbeef:deadbeefdeadbeef-3]."}
    uncited = {"content": "Spoofing incidents compromised the navigation of several ships in the Black Sea."}

    def other_doc(body):
        chunk = cite_first(body)["content"].split(":")[-1].strip(" ].")
        return {"content": f"Los pasajes describen incidentes de suplantación [0123456789abcdef:{chunk}]."}

    def mixed(body):
        return {"content": cite_first(body)["content"] + " Y más [deadbeefdeadbeef:deadbeefdeadbeef-3]."}

    with FakeOpenAI() as fake:
        llm = LLMSettings(base_url=fake.base_url, api_key="k", model_large="big", model_small="small", timeout_s=5.0)
        settings = ServiceSettings(
            index_dir=agent_index[0], use_database=True, trace=True, database_url=pg_url, llm=llm
        )
        service = AgentService(settings, encoder=use_encoder, engine=agent_engine)
        with TestClient(create_app(service=service)) as c:
            for draft, estado, reason in (
                (invented, "incompleta", "sin_citas_validas"),
                (uncited, "incompleta", "sin_citas_validas"),
                (other_doc, "incompleta", "sin_citas_validas"),
                (mixed, "no_verificada", "verificacion_agotada"),
            ):
                fake.reset()
                fake.script("redactor", draft, draft, draft)
                body = c.post(
                    "/chat", json={"pregunta": "¿Qué incidentes de spoofing han afectado a satélites?"}
                ).json()
                meta = body["metadata"]
                assert (meta["estado"], meta["motivo_terminacion"]) == (estado, reason), body["respuesta"]
                stored = TraceStore(agent_engine).load(meta["run_id"])["run"]
                assert stored["estado"] == estado and stored["termination_reason"] == reason
                if estado == "incompleta":
                    assert body["citas"] == [] and "ninguna cita válida" in body["respuesta"]
                else:
                    assert len(body["citas"]) == 1


def test_aggregates_not_materialized_then_materialized(db_client, agent_engine):
    with agent_engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS agg_timeline"))
    r = db_client.get("/aggregates/timeline", params={"phenomenon": "space_security"})
    assert r.status_code == 200
    assert r.json()["materialized"] is False and "materializado" in r.json()["message"]
    from radar_pipeline.precompute.tables import agg_timeline

    row = {
        "row_hash": "h",
        "run_id": "r1",
        "producer": "test@1",
        "entity_id": None,
        "granularity": "year",
        "undated": False,
    }
    with agent_engine.begin() as conn:  # the table as precompute/tables.py defines it
        agg_timeline.create(conn)
        conn.execute(
            agg_timeline.insert(),
            [
                {
                    **row,
                    "row_hash": "a",
                    "phenomenon": "space_security",
                    "period": "2019",
                    "n_documents": 3,
                    "evidence": [{"doc_id": "a", "chunk_id": "a-1"}],
                },
                {
                    **row,
                    "row_hash": "b",
                    "phenomenon": "space_security",
                    "period": "2022",
                    "n_documents": 5,
                    "evidence": [],
                },
                {
                    **row,
                    "row_hash": "c",
                    "phenomenon": "territorial",
                    "period": "2022",
                    "n_documents": 7,
                    "evidence": [],
                },
            ],
        )
    try:
        body = db_client.get(
            "/aggregates/timeline", params={"phenomenon": "space_security", "year_from": 2020, "place": "choco"}
        ).json()
        assert body["materialized"] and body["n_rows"] == 1 and body["rows"][0]["n_documents"] == 5
        assert body["filters_applied"] == {"phenomenon": "space_security", "year_from": 2020}
        assert body["filters_ignored"] == ["place"]
        listing = {a["aggregate"]: a["materialized"] for a in db_client.get("/aggregates").json()}
        assert listing["timeline"] is True and listing["entity_network"] is False
        assert db_client.get("/aggregates/not_a_thing").status_code == 422
    finally:
        with agent_engine.begin() as conn:
            agg_timeline.drop(conn)


def test_real_precompute_schema_current_rows_and_highlights(db_client, agent_engine, agent_index):
    """Against the precompute tables as defined by radar_pipeline.precompute (when present): only
    current rows (valid_to IS NULL), place filter, and mentions highlighted in the evidence window."""
    from radar_pipeline.precompute import tables

    tables.drop_precompute_schema(agent_engine)
    tables.ensure_precompute_schema(agent_engine)
    row = next(r for r in agent_index[1] if "mineria_oro" in r["source_path"])
    lineage = {"row_hash": "h", "run_id": "r1", "producer": "test@1"}
    try:
        with agent_engine.begin() as conn:
            conn.execute(
                tables.agg_alerts_per_department.insert(),
                [
                    {
                        **lineage,
                        "row_hash": "a",
                        "department_code": "27",
                        "department_name": "Chocó",
                        "alert_type": "imminent",
                        "n_alerts": 4,
                        # consistent with n_alerts: the reader folds collections by the codes' union
                        "alert_codes": ["001-20", "002-20", "003-20", "004-20"],
                        "evidence": [{"doc_id": row["doc_id"], "chunk_id": row["chunk_id"]}],
                    },
                    {
                        **lineage,
                        "row_hash": "b",
                        "department_code": "05",
                        "department_name": "Antioquia",
                        "alert_type": "structural",
                        "n_alerts": 2,
                        "alert_codes": ["010-19", "011-19"],
                        "evidence": [],
                    },
                ],
            )
            conn.execute(
                tables.agg_alerts_per_department.insert(),
                [  # a superseded row
                    {
                        **lineage,
                        "row_hash": "c",
                        "department_code": "27",
                        "department_name": "Chocó",
                        "alert_type": "imminent",
                        "n_alerts": 1,
                        "alert_codes": [],
                        "evidence": [],
                        "valid_to": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
                    },
                ],
            )
            conn.execute(
                tables.entity_mentions.insert(),
                [
                    {
                        **lineage,
                        "entity_id": "eln",
                        "category": "armed_group",
                        "doc_id": row["doc_id"],
                        "chunk_id": row["chunk_id"],
                        "char_start": 0,
                        "char_end": 3,
                        "matched": "ELN",
                        "alias": "ELN",
                        "dictionary_version": "1",
                    }
                ],
            )
        body = db_client.get("/aggregates/alerts_per_department", params={"place": "choco"}).json()
        assert body["materialized"] and body["n_rows"] == 1 and body["rows"][0]["n_alerts"] == 4
        assert body["rows"][0]["evidence"][0]["chunk_id"] == row["chunk_id"] and body["filters_applied"] == {
            "place": "choco"
        }
        w = db_client.get(f"/documents/{row['doc_id']}/window", params={"chunk_id": row["chunk_id"]}).json()
        assert w["mentions"]["entity_mentions"][0]["matched"] == "ELN"
        vis = db_client.post(
            "/chat", json={"pregunta": "Muéstrame un mapa de alertas tempranas por departamento"}
        ).json()
        assert vis["visualizacion"]["componentes"][0]["materializado"] is True
    finally:
        tables.drop_precompute_schema(agent_engine)


def test_publications_from_paths_without_database(client):
    """No precompute table (no database): dated from the paths; filters, limit, order and errors."""
    body = client.get("/publications", params={"fenomeno": "space_security", "limit": 2}).json()
    assert body["date_source"] == "ruta" and body["total"] >= 5 and len(body["items"]) == 2
    assert body["filters"] == {"fenomeno": "space_security"}
    assert all(i["phenomenon"] == "space_security" and i["collection"] == "space_security" for i in body["items"])
    one = client.get("/publications", params={"coleccion": "territorial", "limit": 200}).json()
    assert one["total"] == 3 and {i["source_path"].split("/")[0] for i in one["items"]} == {"territorial"}
    assert client.get("/publications", params={"desde": "2021"}).json()["total"] == 0
    assert client.get("/publications", params={"desde": "21"}).status_code == 422
    assert client.get("/publications", params={"fenomeno": "cocina"}).status_code == 422
    r = client.get("/publications", params={"desde": "2022-05", "hasta": "2021"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_range"
    assert "/publications" in client.get("/openapi.json").json()["paths"]


def test_publications_from_the_precompute_table(db_client, agent_engine, agent_index):
    """With ``publication_dates`` materialized: its dates and rules, newest first; two publications
    of the same day stay apart by doc_id and path; the date range reads each date's own period."""
    from radar_pipeline.precompute import tables

    paths = {
        "space_security/asat_debris.txt": ("2023-10-09", "day", "iso_date"),
        "space_security/gnss_spoofing.txt": ("2023-10-09", "day", "iso_date"),
        "space_security/dprk_space.txt": ("2021", "year", "year_in_name"),
        "space_security/us_space_ops.txt": ("2023-10", "month", "iso_month"),
    }
    doc_of = {r["source_path"]: r["doc_id"] for r in agent_index[1]}
    tables.drop_precompute_schema(agent_engine)
    tables.ensure_precompute_schema(agent_engine)
    try:
        with agent_engine.begin() as conn:
            conn.execute(
                tables.publication_dates.insert(),
                [
                    {
                        "row_hash": p,
                        "run_id": "r1",
                        "producer": "test@1",
                        "doc_id": doc_of[p],
                        "date": date,
                        "year": int(date[:4]),
                        "precision": prec,
                        "rule": rule,
                        "source_kind": "path",
                        "source_path": p,
                        "phenomenon": "space_security",
                    }
                    for p, (date, prec, rule) in paths.items()
                ],
            )
        body = db_client.get("/publications", params={"fenomeno": "space_security", "limit": 10}).json()
        assert body["date_source"] == "publication_dates"
        dated = [(i["source_path"], i["date"], i["precision"], i["date_rule"]) for i in body["items"] if i["date"]]
        assert dated == [
            ("space_security/asat_debris.txt", "2023-10-09", "day", "iso_date"),
            ("space_security/gnss_spoofing.txt", "2023-10-09", "day", "iso_date"),
            ("space_security/us_space_ops.txt", "2023-10", "month", "iso_month"),
            ("space_security/dprk_space.txt", "2021", "year", "year_in_name"),
        ]
        assert body["items"][0]["doc_id"] != body["items"][1]["doc_id"]
        assert [i["date"] for i in body["items"][4:]] == [None] * (len(body["items"]) - 4)  # undated last
        r = db_client.get("/publications", params={"desde": "2023-10-09", "hasta": "2023-10-31"}).json()
        assert r["total"] == 3 and {i["date"] for i in r["items"]} == {"2023-10-09", "2023-10"}
        r = db_client.get("/publications", params={"desde": "2021-06-01", "hasta": "2022"}).json()
        assert [i["source_path"] for i in r["items"]] == ["space_security/dprk_space.txt"]
    finally:
        tables.drop_precompute_schema(agent_engine)
