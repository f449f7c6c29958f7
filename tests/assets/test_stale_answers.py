"""Stale answers flag themselves (issue 25 §2), end to end through Dagster on three Codefest
mini-corpus files: two /chat answers are stored; one cited file is edited and the knowledge base
re-materialized by Dagster (``source_files`` … ``faiss_index``, then ``stale_answers``); the answer
citing it is flagged — ``GET /runs/{id}`` and the trace say which citation, why and what replaced
it — the check counts it, and a retraction flags the other answer's citations as retracted."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

from assets import answers, indexes, ingestion, knowledge_base
from radar_pipeline import provenance
from radar_pipeline.agent.staleness import find_stale_citations, flag_stale_answers, stale_counts
from radar_pipeline.agent.trace import TraceStore, ensure_agent_schema, format_trace
from radar_pipeline.corpus import CONTENT_BUCKETS
from resources import (
    ChunkingResource,
    CorpusResource,
    DatabaseResource,
    EncoderResource,
    IndexStoreResource,
    OcrResource,
    RerankerResource,
)
from tests.radar_pipeline.support_history import FILES, QUESTION
from tests.radar_pipeline.support_history import client_for as _client

pytestmark = pytest.mark.slow  # two Dagster materializations of three files with real USE vectors (~60 s)

QUESTION_2 = "¿Qué desafíos plantean los sistemas autónomos con inteligencia artificial para las vidas humanas?"
SELECTION = ["source_files", "documents", "pages", "chunks", "embeddings", "bm25_index", "faiss_index"]


def _materialize(pg_url: str, root: Path, home: Path) -> dg.ExecuteInProcessResult:
    """The knowledge base and its search index, then ``stale_answers`` and its check: one Dagster run
    over every content bucket, as ``radar materialize`` (the daemon runs ``stale_answers`` eagerly)."""
    kb = dg.load_assets_from_modules(
        [ingestion, knowledge_base, indexes], backfill_policy=dg.BackfillPolicy.single_run()
    )
    tags = {
        "dagster/asset_partition_range_start": CONTENT_BUCKETS[0],
        "dagster/asset_partition_range_end": CONTENT_BUCKETS[-1],
    }
    result = dg.materialize(
        [*kb, answers.stale_answers, *answers.answers_checks],
        resources={
            "database": DatabaseResource(database_url=pg_url, pgdata=str(home / "unused")),
            "corpus": CorpusResource(corpus_dir=str(root), workers=1),
            "ocr": OcrResource(enabled=False),
            "chunking": ChunkingResource(chunk_tokens=120, workers=1),
            "encoder": EncoderResource(workers=1),
            "index_store": IndexStoreResource(index_dir=str(home / "indexes")),
            "reranker": RerankerResource(),  # required by the module's rerank assets, not selected
        },
        selection=[*SELECTION, "stale_answers"],
        tags=tags,
    )
    assert result.success
    return result


def _flagging(result: dg.ExecuteInProcessResult) -> tuple[dict, dict]:
    """The ``stale_answers`` materialization's metadata and its check's outcome and metadata."""
    (mat,) = result.asset_materializations_for_node("stale_answers")
    (ev,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "stale_answers_counted"]
    return (
        {k: v.value for k, v in mat.metadata.items()},
        {"passed": ev.passed, **{k: v.value for k, v in ev.metadata.items()}},
    )


@pytest.fixture()
def world(engine, tmp_path, shared_dir, monkeypatch) -> dict:
    monkeypatch.setenv("RADAR_HOME", str(tmp_path / "home"))
    ensure_agent_schema(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM agent_runs"))
        conn.execute(sa.text("DROP TABLE IF EXISTS answer_stale_citations"))
    root = tmp_path / "corpus"
    root.mkdir()
    for name in FILES:
        shutil.copy(shared_dir / "eval" / "codefest_mini_corpus" / name, root / name)
        (root / name).chmod(0o644)
    return {"root": root, "home": tmp_path / "home"}


def _doc_of(engine, path: str) -> str:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT doc_id FROM documents WHERE primary_path = :p"), {"p": path}).scalar_one()


def test_an_edited_source_flags_the_answers_that_cited_it(engine, pg_url, world, use_encoder):
    first = _materialize(pg_url, world["root"], world["home"])
    meta, check = _flagging(first)
    assert meta["stale_answers"] == 0 and check["passed"] and check["stale_answers"] == 0
    index_dir = world["home"] / "indexes" / use_encoder.name
    client, _ = _client(engine, pg_url, index_dir, use_encoder)
    with client:
        bodies = [client.post("/chat", json={"pregunta": q}).json() for q in (QUESTION, QUESTION_2)]
        runs = [b["metadata"]["run_id"] for b in bodies]
        for run_id in runs:
            got = client.get(f"/runs/{run_id}")
            assert got.status_code == 200, got.text
            assert got.json()["vigencia"] == {"estado": "vigente", "citas_no_vigentes": []}
        assert client.get("/runs/" + "0" * 32).status_code == 404
    old_doc = _doc_of(engine, FILES[0])
    cited_old = {
        r: sorted((c["n"], c["chunk_id"]) for c in b["citas"] if c["doc_id"] == old_doc)
        for r, b in zip(runs, bodies, strict=True)
    }
    assert cited_old[runs[0]], "the first answer cites the file about to change"

    # the publisher corrects one word of a cited passage; Dagster re-materializes the knowledge base
    with engine.connect() as conn:
        cited_text = conn.execute(
            sa.text("SELECT text FROM chunks WHERE chunk_id = :c"), {"c": cited_old[runs[0]][0][1]}
        ).scalar_one()
    path = world["root"] / FILES[0]
    text = path.read_text(encoding="utf-8")
    word = max((w for w in cited_text.split() if w.isalpha() and w in text), key=len)
    path.write_text(text.replace(word, word.upper() + " (corregido)"), encoding="utf-8")
    second = _materialize(pg_url, world["root"], world["home"])
    new_doc = _doc_of(engine, FILES[0])
    assert new_doc != old_doc
    meta, check = _flagging(second)
    n_stale = sum(len(v) for v in cited_old.values())
    flagged_runs = [r for r in runs if cited_old[r]]
    assert meta["stale_citations"] == meta["flagged"] == n_stale
    assert meta["stale_answers"] == len(flagged_runs) and meta["by_reason"] == {"superseded": n_stale}
    assert not check["passed"] and check["stale_answers"] == len(flagged_runs)
    assert check["stale_citations"] == n_stale

    # which passages changed text: what `radar impact` says a reader must re-check
    text_changed = set(provenance.impact(engine, old_doc)["chunks"]["text_changed"])
    assert text_changed, "one word changed in a cited passage"
    client, service = _client(engine, pg_url, index_dir, use_encoder)
    with client:
        for run_id in runs:
            body = client.get(f"/runs/{run_id}").json()
            assert body["respuesta"]["metadata"]["run_id"] == run_id
            v = body["vigencia"]
            assert v["estado"] == ("desactualizada" if cited_old[run_id] else "vigente")
            assert [(c["n"], c["chunk_id"]) for c in v["citas_no_vigentes"]] == cited_old[run_id]
            for c in v["citas_no_vigentes"]:
                assert c["motivo"] == "superseded" and c["estado"] == "reemplazado"
                assert c["supersede_reason"] == "source_changed" and c["superseded_by"] == new_doc
                assert c["reemplazo"]["doc_id"] == new_doc and c["reemplazo"]["chunk_id"].startswith(new_doc)
                assert c["reemplazo"]["texto_cambiado"] == (c["chunk_id"] in text_changed)
                assert c["detectado_por"].startswith("dagster:")
            # the stored trace says the same (over HTTP, open mode refuses traces without a key: issue 25.4)
            assert TraceStore(engine).load(run_id)["vigencia"] == v
            assert client.get(f"/traces/{run_id}").status_code == 403
        # the replacement a stale citation names is served now
        c = client.get(f"/runs/{runs[0]}").json()["vigencia"]["citas_no_vigentes"][0]
        assert client.get(f"/chunks/{c['reemplazo']['chunk_id']}").json()["estado"] == "vigente"
    printed = format_trace(TraceStore(engine).load(runs[0]))
    assert "respuesta desactualizada" in printed and f"cita no vigente [{cited_old[runs[0]][0][0]}]" in printed

    # flagging again changes nothing (the marks are facts, not recomputed noise)
    again = flag_stale_answers(engine, detected_by="test")
    assert (again["flagged"], again["updated"], again["cleared"]) == (0, 0, 0)

    # a reviewer retracts a document the second answer cites and that is still current
    other = next(c["doc_id"] for c in bodies[1]["citas"] if c["doc_id"] != old_doc)
    retracted = sorted((c["n"], c["chunk_id"]) for c in bodies[1]["citas"] if c["doc_id"] == other)
    with client:
        r = client.post(f"/documents/{other}/retract", json={"motivo": "Fuente no verificable"})
        assert r.status_code == 200, r.text
        v = client.get(f"/runs/{runs[1]}").json()["vigencia"]
    assert v["estado"] == "desactualizada"
    by_chunk = {c["chunk_id"]: c for c in v["citas_no_vigentes"]}
    for n, cid in retracted:
        c = by_chunk[cid]
        assert c["n"] == n and c["motivo"] == "retracted" and c["estado"] == "retractado"
        assert c["reemplazo"] is None and c["retraction_reason"] == "Fuente no verificable"
        assert c["detectado_por"] == f"retraction:{other}"
    counts = stale_counts(engine)
    assert counts["by_reason"]["retracted"] == len(
        {cid for _, cid in retracted} - {cid for _, cid in cited_old[runs[1]]}
    )
    assert counts["stale_answers"] == len(set(flagged_runs) | {runs[1]})
    # the computed state and the marks agree
    assert {(s["run_id"], s["chunk_id"]) for s in find_stale_citations(engine)} == {
        (r.run_id, r.chunk_id)
        for r in engine.connect().execute(
            sa.text("SELECT run_id, chunk_id FROM answer_stale_citations WHERE cleared_at IS NULL")
        )
    }
