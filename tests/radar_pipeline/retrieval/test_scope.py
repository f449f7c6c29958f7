"""Collections restrict the searcher's candidates before ranking (never a filtered top-k).

The real small test index (real USE vectors, FAISS, BM25), whose top folders are its collections.
"""

from __future__ import annotations

import numpy as np

from radar_pipeline.collection import AccessScope, CollectionManifest, collection_of
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher
from radar_pipeline.retrieval.service import RetrievalService
from radar_pipeline.stores.passages import load_passages
from tests.radar_pipeline.agent.support_index import agent_index  # noqa: F401 - the session fixture

QUERY = "anti-satellite weapons tests and orbital debris"


def _searcher(agent_index, use_encoder, **cfg) -> Searcher:  # noqa: F811
    return Searcher(agent_index[0], use_encoder, config=RetrievalConfig(rerank_k=0, **cfg))


def test_passage_table_carries_the_collection(agent_index):  # noqa: F811
    frame = load_passages(agent_index[0])
    assert frame["collection"].to_list() == [collection_of(p) for p in frame["source_path"].to_list()]
    assert set(frame["collection"].unique().to_list()) >= {"space_security", "territorial", "ai_military"}


def test_candidates_are_restricted_before_ranking(agent_index, use_encoder):  # noqa: F811
    s = _searcher(agent_index, use_encoder, candidates=3)
    terr = s.row_mask(frozenset({"territorial"}))
    colls = s.passages["collection"].to_list()
    # unrestricted: the 3 candidates per ranker are space passages, so filtering them would leave nothing
    plain = s.search(QUERY)
    assert all(colls[s.passages["chunk_id"].to_list().index(p["chunk_id"])] != "territorial" for p in plain.passages)
    scoped = s.search(QUERY, allowed=terr)
    assert scoped.passages and {colls[int(np.flatnonzero(terr.mask)[0])]} == {"territorial"}
    ids = s.passages["chunk_id"].to_list()
    assert {colls[ids.index(p["chunk_id"])] for p in scoped.passages} == {"territorial"}
    assert {d["source_path"].split("/")[0] for d in scoped.documents} == {"territorial"}
    # the dense run over the allowed rows is the exact ranking of those rows (FAISS ID selector)
    q = s.query_vector(QUERY, s.config)
    exact = sorted(((float(s.vectors[r] @ q), int(r)) for r in terr.rows), reverse=True)[:3]
    got = s.dense_run(q, 3, allowed=terr)
    assert sorted(got, key=lambda r: -got[r]) == [r for _, r in exact]
    # BM25 scores outside the mask never become candidates
    fused, dense, _ = s.candidates("minería ilegal de oro satellites debris", allowed=terr)
    assert fused and all(terr.mask[c.row] for c in fused) and all(terr.mask[c.row] for c in dense)
    empty = s.row_mask(frozenset({"CSET"}))
    assert s.search(QUERY, allowed=empty).passages == []


def test_scoped_service_hides_other_rows(agent_index, use_encoder):  # noqa: F811
    svc = RetrievalService(_searcher(agent_index, use_encoder))
    rows = agent_index[1]
    other = next(r for r in rows if r["source_path"].startswith("territorial/"))
    mine = next(r for r in rows if r["source_path"].startswith("space_security/"))
    view = svc.for_scope(AccessScope.of(["space_security"], "k1"))
    assert view.chunk(other["chunk_id"]) is None and view.window(other["chunk_id"]) is None
    assert view.outline(other["doc_id"]) is None and other["chunk_id"] not in view.row_of
    assert view.search_passages(QUERY, 5, [other["doc_id"]]) == []
    rec = view.chunk(mine["chunk_id"])
    assert rec["politica"] == {"coleccion": "space_security", "clave": "k1", "regla": "coleccion_permitida"}
    assert svc.chunk(other["chunk_id"]) is not None  # the unscoped service (internal callers) is unchanged
    assert svc.for_scope(AccessScope.of(["space_security"], "k1")) is view  # views are cached


def test_manifest_overrides_the_default(tmp_path):
    f = tmp_path / "collections.toml"
    f.write_text(
        '[[collection]]\nname = "defensa"\npaths = ["radar/territorial/*", "codefest/F2/*"]\n'
        'tenant = "mindefensa"\npurpose = "analisis"\n',
        encoding="utf-8",
    )
    m = CollectionManifest.load(f)
    assert m.assign("radar/territorial/pdf/x.pdf") == ("defensa", {"tenant": "mindefensa", "purpose": "analisis"})
    assert m.assign("codefest/F2/F2-CSET-001.txt")[0] == "defensa"
    assert m.assign("codefest/F1/F1-CSET-005.txt") == ("CSET", {})
    assert m.assign("radar/ai_military/a.pdf") == ("radar", {})
    assert m.version.startswith("m") and CollectionManifest().version == "default"
    f.write_text('[[collection]]\nname = "x/y"\npaths = ["*"]\n', encoding="utf-8")
    try:
        CollectionManifest.load(f)
        raise AssertionError("bad name accepted")
    except ValueError:
        pass
    assert collection_of("suelto.pdf") is None


def test_a_search_inside_named_collections_ranks_only_their_passages(agent_index, use_encoder):  # noqa: F811
    """``search_passages(collections=…)``: the publisher a question names (reading.publishers) is
    searched inside its own collection; the caller's scope still bounds it."""
    svc = RetrievalService(_searcher(agent_index, use_encoder))
    colls = dict(zip(svc.chunk_ids, svc.collections, strict=True))
    plain = svc.search_passages(QUERY, 5)
    assert plain and all(colls[p["chunk_id"]] != "territorial" for p in plain)  # the whole index: space first
    inside = svc.search_passages(QUERY, 5, collections=["territorial"])
    assert inside and {colls[p["chunk_id"]] for p in inside} == {"territorial"}
    assert [p["rank"] for p in inside] == list(range(1, len(inside) + 1))
    assert svc.search_passages(QUERY, 5, collections=["CSET"]) == []  # a collection with no passage here
    # a scope that does not allow the collection: nothing, never a passage the caller may not read
    view = svc.for_scope(AccessScope.of(["space_security"], "k1"))
    assert view.search_passages(QUERY, 5, collections=["territorial"]) == []
    both = view.search_passages(QUERY, 5, collections=["territorial", "space_security"])
    assert both and {colls[p["chunk_id"]] for p in both} == {"space_security"}
