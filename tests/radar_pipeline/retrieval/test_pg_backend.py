"""The pgvector backend (``RADAR_INDEX_BACKEND=pgvector``) against the FAISS one, on real PostgreSQL.

A small real corpus (the agent tests' topical passages, one file each, top folder = collection) goes
through the real stages into PostgreSQL (USE vectors), then both indexes are built from it: the
files (FAISS, bm25s) and the database (HNSW, the exported BM25 tables). On 31 passages HNSW is
exact, so both backends must return the same ranking, fusion and policy being the same code.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from radar_pipeline.collection import AccessScope
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.retrieval.pg_search import PgSearcher
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher
from radar_pipeline.retrieval.service import RetrievalService
from radar_pipeline.stages import (
    build_bm25_index,
    build_faiss_index,
    chunk_documents,
    embed_chunks,
    export_pg_bm25,
    export_rerank_vectors,
    extract_documents,
    sync_source_files,
)
from radar_pipeline.stores import pg_lexical
from radar_pipeline.stores.bm25_store import Bm25Index, tokenize
from radar_pipeline.stores.pg_store import ensure_hnsw_index
from tests.radar_pipeline.agent.support_corpus import DOCUMENTS

ROOT = Path(__file__).resolve().parents[3]
QUESTIONS = [
    "pruebas antisatélite y desechos orbitales",
    "minería ilegal de oro y grupos armados",
    "GPS spoofing incidents near conflict zones",
    "drones autónomos en Ucrania",
    "North Korea reconnaissance satellite launch",
    "¿Qué dice la doctrina espacial de Estados Unidos?",
]


def _build(engine, tmp_path: Path, encoder) -> Path:
    """Corpus → PostgreSQL (stages) → both indexes; returns the FAISS index directory."""
    root = tmp_path / "corpus"
    for path, _title, _phen, _lang, passages in DOCUMENTS:
        stem = Path(path)
        (root / stem.parent).mkdir(parents=True, exist_ok=True)
        for i, text in enumerate(passages):
            (root / stem.parent / f"{stem.stem}-{i}.txt").write_text(text, encoding="utf-8")
    sync_source_files(engine, root)
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine)
    embed_chunks(engine, encoder)
    index_dir = tmp_path / "indexes" / encoder.name
    build_faiss_index(engine, encoder.name, index_dir)
    build_bm25_index(index_dir)
    ensure_hnsw_index(engine, encoder.name, encoder.dim)
    export_pg_bm25(engine, encoder.name, index_dir)
    return index_dir


def _ranking(res) -> list[tuple[str, float]]:
    return [(p["chunk_id"], round(p["score"], 5)) for p in res.passages]


def test_both_backends_rank_alike(engine, tmp_path, use_encoder):
    index_dir = _build(engine, tmp_path, use_encoder)
    cfg = RetrievalConfig(rerank_k=0)
    files = Searcher(index_dir, use_encoder, cfg)
    pg = PgSearcher(engine, use_encoder, cfg)
    assert pg.passages["chunk_id"].to_list() == files.passages["chunk_id"].to_list() and pg.problems == {}
    for q in QUESTIONS:
        a, b = files.search(q), pg.search(q)
        assert _ranking(b) == _ranking(a), q
        assert [d["doc_id"] for d in b.documents] == [d["doc_id"] for d in a.documents], q
        # the exported BM25 table scores exactly as bm25s
        toks = tokenize(q)
        disk = Bm25Index.load(index_dir).retriever.get_scores([t for t in toks if t in files.bm25.vocab] or ["∅"])
        for chunk_id, score in pg_lexical.search_bm25(engine, use_encoder.name, toks, 50):
            assert score == pytest.approx(float(disk[pg._row_of[chunk_id]]), rel=1e-5)
    # convex fusion needs exact scores of every candidate from both rankers: same answer too
    convex = cfg.with_(fusion="convex", bm25_weight=0.3)
    for q in QUESTIONS[:3]:
        assert _ranking(pg.search(q, convex)) == _ranking(files.search(q, convex)), q
    # the raw cosine the service reports comes from PostgreSQL and equals the in-memory one
    qv = files.query_vector(QUESTIONS[0], cfg)
    assert np.allclose(pg.cosine(qv, [0, 5, 9]), files.cosine(qv, [0, 5, 9]), atol=1e-5)
    with pytest.raises(ValueError):
        pg.search(QUESTIONS[0], cfg.with_(bm25_prf_k=3, bm25_prf_terms=5))


def test_second_stage_reads_reranker_vectors_from_postgres(engine, tmp_path, use_encoder, e5_encoder):
    index_dir = _build(engine, tmp_path, use_encoder)
    embed_chunks(engine, e5_encoder)
    export_rerank_vectors(engine, e5_encoder.name, index_dir)
    cfg = RetrievalConfig(rerank_encode_limit=0)  # the default second stage; nothing encoded at query time
    files = Searcher(index_dir, use_encoder, cfg, reranker=e5_encoder)
    pg = PgSearcher(engine, use_encoder, cfg, reranker=e5_encoder)
    assert pg.rerank_coverage == files.rerank_coverage == 1.0
    for q in QUESTIONS:
        assert _ranking(pg.search(q)) == _ranking(files.search(q)), q
    assert pg.encoded_at_query_time == 0


def test_collections_are_scoped_inside_the_pgvector_queries(engine, tmp_path, use_encoder):
    index_dir = _build(engine, tmp_path, use_encoder)
    cfg = RetrievalConfig(rerank_k=0, candidates=3)
    pg = PgSearcher(engine, use_encoder, cfg)
    files = Searcher(index_dir, use_encoder, cfg)
    colls = pg.passages["collection"].to_list()
    terr = pg.row_mask(frozenset({"territorial"}))
    q = "anti-satellite weapons tests and orbital debris"
    # unrestricted, 3 candidates per ranker are all space passages: a filtered top-k would be empty
    assert all(colls[pg._row_of[p["chunk_id"]]] != "territorial" for p in pg.search(q).passages)
    scoped = pg.search(q, allowed=terr)
    assert scoped.passages and {colls[pg._row_of[p["chunk_id"]]] for p in scoped.passages} == {"territorial"}
    assert _ranking(scoped) == _ranking(files.search(q, allowed=files.row_mask(frozenset({"territorial"}))))
    # each ranker's SQL returns only allowed rows, the best of them
    qv = pg.query_vector(q, cfg)
    exact = sorted(((float(pg.dense_vectors([int(r)])[0] @ qv), int(r)) for r in terr.rows), reverse=True)[:3]
    got = pg.dense_run(qv, 3, allowed=terr)
    assert sorted(got, key=lambda r: -got[r]) == [r for _, r in exact]
    territorial_text = pg._texts[int(terr.rows[0])]
    tokens = tokenize(territorial_text)[:6] + tokenize("satellites orbital debris")
    everywhere = pg_lexical.search_bm25(engine, use_encoder.name, tokens, 10)
    assert {colls[pg._row_of[c]] for c, _ in everywhere} > {"territorial"}
    lex = pg_lexical.search_bm25(engine, use_encoder.name, tokens, 10, terr.params)
    assert lex and all(colls[pg._row_of[c]] == "territorial" for c, _ in lex)
    filtered = [c for c, _ in everywhere if colls[pg._row_of[c]] == "territorial"]
    assert [c for c, _ in lex][: len(filtered)] == filtered  # the allowed rows' own ranking
    assert pg.search(q, allowed=pg.row_mask(frozenset({"CSET"}))).passages == []
    # the service's scoped view over the pgvector searcher hides other collections' rows
    svc = RetrievalService(pg)
    view = svc.for_scope(AccessScope.of(["space_security"], "k1"))
    other = next(c for c, col in zip(pg._chunk_ids, colls, strict=True) if col == "territorial")
    assert view.chunk(other) is None
    hits = view.search_passages("minería ilegal de oro", 5)
    assert hits and all(h["politica"]["coleccion"] == "space_security" for h in hits)
    assert all(0.0 < h["similarity"] <= 1.0 for h in hits)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 60.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


@pytest.mark.slow
def test_two_serve_processes_on_one_postgres_answer_identically(engine, pg_url, tmp_path, use_encoder):
    """Two real ``radar serve`` processes (uvicorn, two ports), no index files, one PostgreSQL."""
    _build(engine, tmp_path, use_encoder)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": pg_url,
        "RADAR_INDEX_BACKEND": "pgvector",
        "RADAR_HOME": str(tmp_path / "empty_home"),  # no index directory: PostgreSQL alone
        "RADAR_RERANKER_KIND": "none",
        "RADAR_LLM_BASE_URL": "",
    }
    ports = [_free_port(), _free_port()]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "radar_cli.main", "serve", "--port", str(p)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for p in ports
    ]
    try:
        deadline = time.monotonic() + 180
        for p in ports:
            while True:
                try:
                    health = _get(f"http://127.0.0.1:{p}/health", timeout=5)
                    break
                except OSError:
                    assert time.monotonic() < deadline, "radar serve did not start"
                    assert all(x.poll() is None for x in procs), "radar serve exited"
                    time.sleep(0.5)
            assert health["index"]["backend"] == "pgvector" and health["index"]["present"] is True
        for q in QUESTIONS:
            answers = []
            for p in ports:
                body = _get(f"http://127.0.0.1:{p}/search?" + urllib.parse.urlencode({"q": q, "k": 10}))
                answers.append(
                    (
                        [(x["chunk_id"], x["score"], x["similarity"]) for x in body["passages"]],
                        [(d["doc_id"], d["score"]) for d in body["documents"]],
                    )
                )
            assert answers[0][0], q
            assert answers[0] == answers[1], q
        assert _get(f"http://127.0.0.1:{ports[0]}/health")["index"]["loaded"] is True
    finally:
        for x in procs:
            x.terminate()
        for x in procs:
            x.wait(timeout=30)
