"""Answers stay auditable after the corpus changes (issue 13 §1–2), end to end on a real index of
three Codefest mini-corpus files: a /chat answer's trace records the index version and the hashes of
what it read; the cited file then changes and is re-materialized; the old citations still resolve
(marked superseded), ``impact`` names exactly what depended on the file, ``replay`` reports the
changed passages, and a reviewer's retraction propagates and is refused to readers."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from radar_pipeline import db, history, provenance
from radar_pipeline.chunking import text_sha
from tests.radar_pipeline.support_history import FILES, QUESTION, build_world
from tests.radar_pipeline.support_history import client_for as _client
from tests.radar_pipeline.support_history import materialize as _materialize


@pytest.fixture()
def world(engine, tmp_path, shared_dir, use_encoder) -> dict:
    return build_world(engine, tmp_path, shared_dir, use_encoder)


def test_a_changed_source_leaves_old_answers_auditable(engine, pg_url, world, use_encoder):
    client, service = _client(engine, pg_url, world["index_dir"], use_encoder)
    with client:
        r = client.post("/chat", json={"pregunta": QUESTION})
        assert r.status_code == 200, r.text
        body = r.json()
    run_id = body["metadata"]["run_id"]
    citas = body["citas"]
    assert citas, body["respuesta"]
    with engine.connect() as conn:
        old_doc = conn.execute(
            sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": FILES[0]}
        ).scalar_one()
        prov = conn.execute(sa.text("SELECT provenance FROM agent_runs WHERE run_id = :r"), {"r": run_id}).scalar()
        texts = dict(conn.execute(sa.text("SELECT chunk_id, text FROM chunks")).all())
    # the trace says which index, encoders and configuration answered, and what the writer was given
    assert prov["index_version"] == world["version"] and len(prov["index_version"]) == 16
    assert prov["encoder"] == use_encoder.name and prov["encoder_version"] == use_encoder.version
    assert prov["retrieval"]["candidates"] == 200 and "reranker" in prov and "reranker_version" in prov
    assert prov["searches"] and all(s["query"] for s in prov["searches"])
    assert {p["chunk_id"] for p in prov["passages"] if p["cited"]} == {c["chunk_id"] for c in citas}
    for p in prov["passages"]:
        assert p["sha256"] == text_sha(texts[p["chunk_id"]])
    cited_old = sorted(c["chunk_id"] for c in citas if c["doc_id"] == old_doc)
    assert cited_old, "the answer cites the file we are about to change"

    # the publisher corrects the file: its content, doc_id and the cited passage's text change
    path = world["root"] / FILES[0]
    text = path.read_text(encoding="utf-8")
    word = max((w for w in texts[cited_old[0]].split() if w.isalpha() and w in text), key=len)
    path.write_text(text.replace(word, word.upper() + " (corregido)"), encoding="utf-8")
    new_version = _materialize(engine, world["root"], world["index_dir"], use_encoder)
    assert new_version != world["version"]
    with engine.connect() as conn:
        new_doc = conn.execute(
            sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": FILES[0]}
        ).scalar_one()
    assert new_doc != old_doc

    client2, service2 = _client(engine, pg_url, world["index_dir"], use_encoder)
    with client2:
        # every old citation still resolves, marked superseded, with what replaced it
        for cid in cited_old:
            got = client2.get(f"/chunks/{cid}")
            assert got.status_code == 200, got.text
            p = got.json()
            assert p["estado"] == "reemplazado" and p["supersede_reason"] == "source_changed"
            assert p["superseded_by"] == new_doc and p["replaced_by"].startswith(new_doc)
            assert text_sha(p["text"]) == next(x["sha256"] for x in prov["passages"] if x["chunk_id"] == cid)
            win = client2.get(f"/documents/{old_doc}/window", params={"chunk_id": cid})
            assert win.status_code == 200 and win.json()["estado"] == "reemplazado"
            assert [x["chunk_id"] for x in win.json()["passages"] if x["is_target"]] == [cid]
        assert client2.get("/chunks/" + "0" * 16 + "-0").status_code == 404
        # impact of the old version names exactly the passages and the answer that depended on it
        imp = client2.get(f"/impact/{old_doc}")
        assert imp.status_code == 200, imp.text
        imp = imp.json()
    with engine.connect() as conn:
        closed_sha = dict(
            conn.execute(
                sa.text("SELECT chunk_id, text_sha FROM chunks_history WHERE doc_id = :d"), {"d": old_doc}
            ).all()
        )
        new_shas = set(conn.execute(sa.text("SELECT text_sha FROM chunks WHERE doc_id = :d"), {"d": new_doc}).scalars())
    closed_ids = set(closed_sha)
    # what a reader must re-check: the closed passages whose text the new version no longer holds
    text_changed = sorted(c for c, sha in closed_sha.items() if sha not in new_shas)
    assert text_changed and len(text_changed) < len(closed_ids), "one word changed, not the whole file"
    assert imp["chunks"]["text_changed"] == text_changed
    assert set(imp["chunks"]["same_text_now"]) == closed_ids - set(text_changed)
    assert all(v.startswith(new_doc) for v in imp["chunks"]["same_text_now"].values())
    stale = imp["answers"][0]["citas_no_vigentes"]
    assert {c: s["texto_cambiado"] for c, s in stale.items()} == {c: c in text_changed for c in cited_old}
    assert imp["doc_ids"] == [old_doc]
    assert imp["documents"][old_doc]["estado"] == "reemplazado"
    assert imp["documents"][old_doc]["superseded_by"] == new_doc
    assert imp["chunks"]["current"] == [] and set(imp["chunks"]["closed"]) == closed_ids
    assert [a["run_id"] for a in imp["answers"]] == [run_id]
    assert sorted(imp["answers"][0]["citas_no_vigentes"]) == cited_old
    assert imp["answers"][0]["index_version"] == world["version"]
    assert imp["claims"] == {"current": [], "n_current": 0, "closed": 0}  # no claims materialized here
    # by path: both versions of the file
    assert provenance.resolve_documents(engine, FILES[0]) == [old_doc, new_doc]
    by_path = provenance.impact(engine, FILES[0])
    assert by_path["summary"]["answers_with_stale_citations"] == 1
    assert by_path["chunks"]["text_changed"] == text_changed  # the path's both versions: the same answer
    assert by_path["summary"]["answers_citing_changed_text"] == int(any(c in text_changed for c in cited_old))
    untouched = provenance.impact(engine, FILES[1])
    assert all(not a["citas_no_vigentes"] for a in untouched["answers"])

    # replay: today's index, the same searches; the changed passages are reported as such
    rep = provenance.replay(engine, run_id, service2.corpus())
    assert rep["index_version_then"] == world["version"] and rep["index_version_now"] == new_version
    assert not rep["same_index"]
    by_id = {p["chunk_id"]: p for p in rep["passages"]}
    assert set(by_id) == {c["chunk_id"] for c in citas}
    changed = [c for c in cited_old if by_id[c]["estado"] == "changed"]
    # impact and replay agree on which cited passages changed text
    assert changed and changed == [c for c in cited_old if c in text_changed], rep["passages"]
    for c in cited_old:
        assert by_id[c]["estado"] in ("changed", "same") and by_id[c]["chunk_id_now"].startswith(new_doc)
    for c, p in by_id.items():
        if not c.startswith(old_doc):
            assert p["estado"] == "same" and p["chunk_id_now"] == c
    assert rep["summary"]["changed"] == len(changed)


def test_retraction_endpoint_withdraws_the_document_at_once(engine, pg_url, world, use_encoder):
    client, service = _client(engine, pg_url, world["index_dir"], use_encoder)
    with engine.connect() as conn:
        doc = conn.execute(sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": FILES[0]}).scalar()
        first = conn.execute(
            sa.text("SELECT chunk_id FROM chunks WHERE doc_id = :d ORDER BY seq LIMIT 1"), {"d": doc}
        ).scalar()
    with client:
        assert client.get(f"/chunks/{first}").json()["estado"] == "vigente"
        assert client.post(f"/documents/{doc}/retract", json={"motivo": ""}).status_code == 422
        r = client.post(f"/documents/{doc}/retract", json={"motivo": "Fuente no verificable"})
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["doc_id"] == doc and out["retirado_del_indice_cargado"] and out["chunks"] >= 1
        assert out["retracted_by"] == "open:acceso local abierto"
        # still cited? it resolves, marked retracted; search no longer offers it
        p = client.get(f"/chunks/{first}").json()
        assert p["estado"] == "retractado" and p["supersede_reason"] == "retracted"
        hits = client.get("/search", params={"q": "California frontier AI model developers", "k": 10})
        assert hits.status_code == 200 and hits.json()["passages"]
        assert all(h["doc_id"] != doc for h in hits.json()["passages"] + hits.json()["documents"])
        assert client.post(f"/documents/{doc}/retract", json={"motivo": "otra vez"}).status_code == 409
        assert client.post("/documents/" + "0" * 16 + "/retract", json={"motivo": "motivo"}).status_code == 404
        listed = client.get("/retractions").json()
        assert [x["doc_id"] for x in listed] == [doc] and listed[0]["reason"] == "Fuente no verificable"
        imp = client.get(f"/impact/{doc}").json()
        assert imp["documents"][doc]["estado"] == "retractado"
        assert imp["documents"][doc]["retraction"]["reason"] == "Fuente no verificable"
    # a fresh process over the same (not yet rebuilt) index withdraws it too
    _, fresh = _client(engine, pg_url, world["index_dir"], use_encoder)
    assert fresh.corpus().chunk(first) is None
    assert history.version_violations(engine)["documents_retracted_current"] == []
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(db.retractions)).scalar() == 1


def test_history_endpoints_answer_409_before_the_knowledge_base_exists(pg_url, use_encoder, tmp_path):
    """A database without the knowledge-base tables (nothing materialized yet): structured 409s."""
    import sqlalchemy as sa

    from radar_pipeline import db as core_db

    eng = core_db.create_engine(pg_url)
    with eng.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA IF EXISTS empty_kb CASCADE"))
        conn.execute(sa.text("CREATE SCHEMA empty_kb"))
    eng.dispose()
    url = pg_url + ("&" if "?" in pg_url else "?") + "options=-csearch_path%3Dempty_kb"
    engine = core_db.create_engine(url)
    try:
        client, _ = _client(engine, url, tmp_path / "no-index", use_encoder)
        with client:
            doc = "0" * 16
            for r in (
                client.post(f"/documents/{doc}/retract", json={"motivo": "motivo"}),
                client.get(f"/impact/{doc}"),
                client.get("/retractions"),
            ):
                assert r.status_code == 409, r.text
                assert r.json()["error"]["code"] == "knowledge_base_not_materialized"
    finally:
        engine.dispose()
