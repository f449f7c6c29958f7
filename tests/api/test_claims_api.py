"""GET /claims and /claims/{id}/history on the real test PostgreSQL: the bitemporal question of the
issue over HTTP, a contested claim with both sides, and the collection scope of a restricted key."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.main import create_app
from api.security import AccessControl, AuthSettings
from radar_pipeline import db
from radar_pipeline.access import KeyStore
from radar_pipeline.claims import resolution as ER
from radar_pipeline.claims.model import Claim, Evidence
from radar_pipeline.claims.policy import resolve
from radar_pipeline.claims.store import write_claims

TUMACO = "municipality:52835"
ARGELIA = ER.Decision(
    "place", "Argelia", "unresolved", "context_rule", candidates=["municipality:05055", "municipality:19050"]
)


def _ev(doc, stance, collection, span):
    return Evidence(doc, f"{doc}-0", stance, span, 0, len(span), "test", 1, "2023", "es", collection)


def _claim(subject, *evidence):
    return resolve(
        Claim(
            subject,
            "present_in",
            TUMACO,
            f"{subject} tiene presencia declarada en San Andrés de Tumaco",
            dt.date(2023, 1, 1),
            dt.date(2023, 12, 31),
            "publication_period",
            {"municipality": "San Andrés de Tumaco"},
            list(evidence),
        )
    )


def _at(day: str) -> dt.datetime:
    return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(12), tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def claims_db(agent_engine):
    db.ensure_schema(agent_engine)
    with agent_engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM claim_evidence"))
        conn.execute(sa.text("DELETE FROM claims"))
    eln = _claim("entity:eln", _ev("docterr1", "supports", "territorial", "au_eln: VERDADERO"))
    write_claims(agent_engine, [eln], run_id="t1", producer="test", now=_at("2026-10-15"))
    emc = _claim(
        "entity:emc",
        _ev("docterr2", "supports", "territorial", "au_emc: VERDADERO"),
        _ev("docspace", "contradicts", "space_security", "au_emc: FALSO"),
    )
    write_claims(agent_engine, [eln, emc], run_id="t2", producer="test", now=_at("2026-11-20"))
    with agent_engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM alias_review"))
        conn.execute(sa.text("DELETE FROM alias_decisions"))
    ER.write_decisions(agent_engine, [ARGELIA])
    yield agent_engine
    with agent_engine.begin() as conn:
        for t in ("claim_evidence", "claims", "alias_review", "alias_decisions"):
            conn.execute(sa.text(f"DELETE FROM {t}"))


@pytest.fixture(scope="module")
def api(db_service, agent_engine, claims_db):
    keys = KeyStore(agent_engine)
    tokens = {
        "all": keys.create("claims all", "read", collections=None)[0],
        "space": keys.create("claims space", "read", collections="space_security")[0],
        "chat": keys.create("claims chat", "chat", collections=None)[0],
        "review": keys.create("claims reviewer", "review", collections=None)[0],
        "review-space": keys.create("claims reviewer space", "review", collections="space_security")[0],
    }
    settings = AuthSettings(rate_per_minute=60000, rate_burst=10000)
    with TestClient(create_app(service=db_service, access=AccessControl.required(settings))) as c:
        c.tokens = tokens
        yield c


def _get(api, key, **params):
    return api.get("/claims", params=params, headers={"Authorization": f"Bearer {api.tokens[key]}"})


def test_what_radar_knew_on_1_nov_about_who_was_present_in_tumaco_in_2023(api):
    r = _get(api, "all", object=TUMACO, predicate="present_in", valid_at="2023-06-30", as_of="2026-11-01")
    assert r.status_code == 200, r.text
    assert [c["subject"] for c in r.json()["claims"]] == ["entity:eln"]
    now = _get(api, "all", object=TUMACO, valid_at="2023-06-30").json()
    assert [c["subject"] for c in now["claims"]] == ["entity:eln", "entity:emc"]
    assert _get(api, "all", object=TUMACO, valid_at="2024-01-01").json()["count"] == 0


def test_a_contested_claim_shows_both_sides(api):
    (c,) = _get(api, "all", subject="entity:emc").json()["claims"]
    assert c["status"] == "contested" and c["policy"] == "tie" and c["prevailing_stance"] is None
    assert {(e["stance"], e["span"]) for e in c["evidence"]} == {
        ("supports", "au_emc: VERDADERO"),
        ("contradicts", "au_emc: FALSO"),
    }
    hist = api.get(f"/claims/{c['claim_id']}/history", headers={"Authorization": f"Bearer {api.tokens['all']}"}).json()
    assert hist["count"] == 1 and hist["claims"][0]["recorded_at"].startswith("2026-11-20")


def test_restricted_key_sees_only_its_collections_evidence(api):
    body = _get(api, "space", object=TUMACO).json()
    assert [c["subject"] for c in body["claims"]] == ["entity:emc"]
    assert [e["collection"] for e in body["claims"][0]["evidence"]] == ["space_security"]
    eln = _get(api, "all", subject="entity:eln").json()["claims"][0]["claim_id"]
    r = api.get(f"/claims/{eln}/history", headers={"Authorization": f"Bearer {api.tokens['space']}"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_claim"


def test_errors_are_structured(api):
    r = _get(api, "all", predicate="no_such_predicate")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][0] == "query"
    r = _get(api, "all", valid_at="ayer")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][0] == "query"
    assert _get(api, "chat").status_code == 403  # read scope required


def test_not_materialized_is_a_200_with_a_message(api, agent_engine):
    with agent_engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE claims RENAME TO claims_hidden"))
    try:
        r = _get(api, "all", object=TUMACO)
    finally:
        with agent_engine.begin() as conn:
            conn.execute(sa.text("ALTER TABLE claims_hidden RENAME TO claims"))
    assert r.status_code == 200 and r.json()["materialized"] is False and r.json()["claims"] == []


def test_review_queue_over_http_records_who_decided(api):
    def h(key):
        return {"Authorization": f"Bearer {api.tokens[key]}"}

    assert api.get("/review/aliases", headers=h("all")).status_code == 403  # read is not review
    denied = api.get("/review/aliases", headers=h("review-space"))
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "aggregate_not_scoped"
    (item,) = api.get("/review/aliases", headers=h("review")).json()["items"]
    assert item["decision_key"] == ARGELIA.decision_key and item["alias"] == "Argelia"
    url = f"/review/aliases/{item['decision_key']}"
    bad = api.post(url, json={"decision": "same", "target": "municipality:11001"}, headers=h("review"))
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_review"
    ok = api.post(url, json={"decision": "same", "target": "municipality:19050", "note": "Cauca"}, headers=h("review"))
    assert ok.status_code == 200, ok.text
    assert ok.json()["decided_by"] == "claims reviewer" and ok.json()["signal"] == "reviewer"
    assert api.get("/review/aliases", headers=h("review")).json()["count"] == 0
    (closed,) = api.get("/review/aliases", params={"decided": "true"}, headers=h("review")).json()["items"]
    assert closed["closed_by"] == "claims reviewer"
    # undone over HTTP (issue 25 §1): the automatic decision rules again and the item waits again
    assert api.delete(url, headers=h("all")).status_code == 403
    undone = api.delete(url, headers=h("review"))
    assert undone.status_code == 200, undone.text
    assert undone.json() == {
        "decision_key": item["decision_key"],
        "alias": "Argelia",
        "undone_decision": "same",
        "undone_by": "claims reviewer",
        "restored_decision": "unresolved",
        "restored_signal": "context_rule",
    }
    assert api.get("/review/aliases", headers=h("review")).json()["count"] == 1
    again = api.delete(url, headers=h("review"))
    assert again.status_code == 422 and again.json()["error"]["code"] == "invalid_review"
