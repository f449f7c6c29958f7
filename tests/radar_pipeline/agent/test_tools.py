"""The tool contract: strict schemas, server-side validation, tool states, discovered-ids rule,
8-call cap, the publication listing, and passages carrying instructions."""

from __future__ import annotations

import json

import pytest

from radar_pipeline.agent import prompts
from radar_pipeline.agent.roles.analyst import for_model
from radar_pipeline.agent.roles.verifier import canonicalize, check_answer
from radar_pipeline.agent.roles.writer import ExtractiveWriter
from radar_pipeline.agent.tools import STATE_TOOLS, ToolBox, ToolState, openai_tools
from radar_pipeline.retrieval.publications import PublicationQuery, bounds, collection_of


def test_openai_tool_schemas_are_strict():
    tools = {t["function"]["name"]: t["function"] for t in openai_tools()}
    assert set(tools) == {
        "search_documents",
        "search_evidence",
        "read_chunks",
        "document_outline",
        "list_publications",
    }
    lp = tools["list_publications"]["parameters"]
    assert lp["additionalProperties"] is False
    assert set(lp["required"]) == {"desde", "hasta", "coleccion", "fenomeno", "limit"}
    assert lp["properties"]["limit"]["maximum"] == 50
    rc = tools["read_chunks"]["parameters"]
    assert rc["additionalProperties"] is False and set(rc["required"]) == {"chunk_ids", "window"}
    assert rc["properties"]["chunk_ids"]["maxItems"] == 8 and rc["properties"]["chunk_ids"]["minItems"] == 1
    assert rc["properties"]["window"]["maximum"] == 1
    assert all(t["function"]["strict"] is True for t in openai_tools())


def test_read_requires_a_search_first(offline_service):
    tb = ToolBox(offline_service.corpus())
    some = next(iter(offline_service.corpus().row_of))
    # before any search, read_chunks is not a tool of the state: refused, and the call counts
    rec = tb.call("read_chunks", {"chunk_ids": [some]})
    assert rec.output["error"]["code"] == "tool_not_available" and rec.output["error"]["state"] == "discover_documents"
    assert not rec.executed and rec.counted and tb.remaining == 7
    hits = tb.call("search_evidence", {"query": "GPS spoofing ships Black Sea"}).output["passages"]
    # once something was discovered, an id no search returned is still refused, id by id
    undiscovered = next(c for c in offline_service.corpus().row_of if c not in tb.discovered)
    rec = tb.call("read_chunks", {"chunk_ids": [undiscovered]})
    assert rec.output["error"]["code"] == "chunk_not_discovered" and not rec.output["passages"]
    first = hits[0]["chunk_id"]
    rec = tb.call("read_chunks", json.dumps({"chunk_ids": [first.replace("-", "\u2011")], "window": 1}))
    assert rec.ok and rec.output["passages"][0]["chunk_id"] in (first,) + tuple(
        p["chunk_id"] for p in rec.output["passages"]
    )
    assert first in tb.read and all("text" in p for p in rec.output["passages"])


def test_invalid_arguments(offline_service):
    tb = ToolBox(offline_service.corpus(), max_calls=9)
    assert tb.call("search_evidence", {"query": "satélites"}).ok  # state read: every tool is valid
    for name, args in [
        ("read_chunks", {"chunk_ids": []}),
        ("read_chunks", {"chunk_ids": ["a" * 16 + "-1"] * 9}),
        ("read_chunks", {"chunk_ids": ["0" * 16 + "-1"], "window": 2}),
        ("search_evidence", {"query": "x" * 400}),
        ("search_evidence", {"query": "ok", "k": "3"}),
        ("search_documents", {"query": "satélites", "extra": True}),
        ("document_outline", {"doc_id": "../etc"}),
        ("search_evidence", "{not json"),
    ]:
        rec = tb.call(name, args)
        assert not rec.ok and rec.output["error"]["code"] == "invalid_arguments", (name, args)
    # schema errors count toward the cap like any call the model makes (a model that keeps sending
    # malformed calls spends its budget); only the first call ran
    assert tb.executed_calls == 1 and tb.used_calls == 9 and tb.remaining == 0
    assert all(c.counted for c in tb.calls)


def test_rejected_calls_spend_the_cap_and_the_report_says_so(offline_service):
    """Eight calls of any kind spend the budget: schema errors, unknown tools and state refusals
    count like executed calls; the ninth is refused without counting, so ``used_calls`` (what a run
    reports as ``llamadas_herramientas``) never passes the cap."""
    tb = ToolBox(offline_service.corpus())
    calls = [
        ("read_chunks", {"chunk_ids": ["0" * 16 + "-1"], "window": 0}),  # not in the state
        ("search_evidence", '{"query": 42}'),  # schema error
        ("drop_tables", {}),  # unknown tool
        ("search_evidence", {"query": "GPS spoofing Black Sea"}),  # runs
        ("search_documents", {"query": "x", "k": 99}),  # schema error
        ("document_outline", {"doc_id": "../etc"}),  # schema error
        ("search_documents", {"query": "satélites"}),  # runs
        ("list_publications", {"limit": 0}),  # schema error
    ]
    codes = [tb.call(n, a).output.get("error", {}).get("code") for n, a in calls]
    assert codes == [
        "tool_not_available",
        "invalid_arguments",
        "unknown_tool",
        None,
        "invalid_arguments",
        "invalid_arguments",
        None,
        "invalid_arguments",
    ]
    assert tb.used_calls == 8 and tb.executed_calls == 2 and tb.state is ToolState.ANSWER
    for n, a in [("search_evidence", {"query": "otra"}), ("drop_tables", {}), ("search_evidence", "{bad")]:
        assert tb.call(n, a).output["error"]["code"] == "tool_budget_exhausted"
    assert tb.used_calls == 8 and len(tb.calls) == 11 and [c.counted for c in tb.calls[8:]] == [False] * 3


def test_reported_tool_calls_match_the_cap(client):
    """Through the API: the reported number is the cap's count, never above 8."""
    body = client.post(
        "/chat", json={"pregunta": "¿Qué incidentes de spoofing GPS se registraron en el Mar Negro?"}
    ).json()
    made = body["evaluacion"]["tools_called"]
    counted = [t for t in made if t["output"].get("error", {}).get("code") != "tool_budget_exhausted"]
    assert body["metadata"]["llamadas_herramientas"] == len(counted) <= 8


def test_budget_of_eight_calls(offline_service):
    tb = ToolBox(offline_service.corpus())
    for i in range(8):
        assert tb.call("search_documents", {"query": f"satélites {i}"}).ok
    rec = tb.call("search_documents", {"query": "uno más"})
    assert rec.output["error"]["code"] == "tool_budget_exhausted" and not rec.executed
    assert tb.executed_calls == 8


def test_outline_and_window(offline_service):
    corpus = offline_service.corpus()
    doc = corpus.doc_ids[0]
    tb = ToolBox(corpus)
    assert tb.call("document_outline", {"doc_id": doc}).output["error"]["code"] == "tool_not_available"
    assert tb.call("list_publications", {"limit": 50}).ok and tb.state is ToolState.DISCOVER_EVIDENCE
    out = tb.call("document_outline", {"doc_id": doc, "max_entries": 2}).output
    assert out["doc_id"] == doc and len(out["entries"]) <= 2
    win = corpus.window(corpus.chunk_ids[1], size=2)
    assert [p["is_target"] for p in win["passages"]].count(True) == 1 and len(win["passages"]) == 2
    assert tb.call("document_outline", {"doc_id": "f" * 16}).output["error"]["code"] == "unknown_document"


def test_tools_offered_by_state(offline_service):
    """discover documents → discover evidence → read → answer; the model is offered only the tools of
    the state, and the server refuses the others with a structured error that counts toward the cap."""
    tb = ToolBox(offline_service.corpus(), max_calls=5)
    assert tb.state is ToolState.DISCOVER_DOCUMENTS
    assert tb.offered() == ("search_documents", "search_evidence", "list_publications")
    assert [t["function"]["name"] for t in openai_tools(tb.offered())] == list(tb.offered())
    assert tb.call("search_documents", {"query": "satélites y desechos orbitales", "k": 2}).ok
    assert tb.state is ToolState.DISCOVER_EVIDENCE and "document_outline" in tb.offered()
    assert "read_chunks" not in tb.offered()
    refused = tb.call("read_chunks", {"chunk_ids": ["0" * 16 + "-1"], "window": 0})
    assert refused.output["error"] == {
        "code": "tool_not_available",
        "message": refused.output["error"]["message"],
        "state": "discover_evidence",
        "tools": list(STATE_TOOLS[ToolState.DISCOVER_EVIDENCE]),
    }
    assert tb.call("search_evidence", {"query": "ASAT debris", "k": 2}).ok
    assert tb.state is ToolState.READ and "read_chunks" in tb.offered()
    assert tb.call("read_chunks", {"chunk_ids": [next(iter(tb.discovered))], "window": 0}).ok
    assert [c.state for c in tb.calls] == ["discover_documents", "discover_evidence", "discover_evidence", "read"]
    # the refused call counted: 4 of 5 used, one left; after it, the answer state offers nothing
    assert tb.used_calls == 4 and tb.executed_calls == 3
    assert tb.call("search_documents", {"query": "último intento"}).ok
    assert tb.state is ToolState.ANSWER and tb.offered() == () and openai_tools(()) == []
    assert tb.call("search_documents", {"query": "otra"}).output["error"]["code"] == "tool_budget_exhausted"
    tb2 = ToolBox(offline_service.corpus())
    tb2.close()
    rec = tb2.call("search_documents", {"query": "satélites"})
    assert rec.output["error"]["code"] == "tool_not_available" and rec.output["error"]["tools"] == []


def test_publication_helpers():
    assert collection_of("codefest/F1/F1-CSET-005.txt") == "CSET"
    assert collection_of("codefest/F3/F3-ALERTAS-379_rendered_scan.pdf") == "ALERTAS"
    assert collection_of("radar/territorial/pdf/informe.pdf") == "radar"
    assert collection_of("space_security/asat_debris.txt") == "space_security"
    assert collection_of("suelto.pdf") is None
    assert bounds("2021") == ("2021-01-01", "2021-12-31")
    assert bounds("2024-02") == ("2024-02-01", "2024-02-29")
    assert bounds("2023-10-09") == ("2023-10-09", "2023-10-09")
    for bad in ("21", "2021-13", "2021-02-30", "2021/01/01"):
        with pytest.raises(ValueError):
            bounds(bad)


def test_list_publications_from_paths(offline_service):
    """Without the precompute table the dates come from the paths; collection and phenomenon filter."""
    corpus = offline_service.corpus()
    out = corpus.publications(PublicationQuery(limit=100))
    assert out["date_source"] == "ruta" and out["total"] == len(corpus.doc_rows) == len(out["items"])
    item = next(i for i in out["items"] if i["source_path"] == "space_security/asat_debris.txt")
    assert item == {
        "doc_id": item["doc_id"],
        "title": "ASAT tests and orbital debris",
        "collection": "space_security",
        "date": None,
        "precision": None,
        "date_rule": None,
        "source_path": "space_security/asat_debris.txt",
        "phenomenon": "space_security",
        "n_passages": 3,
    }
    terr = corpus.publications(PublicationQuery(coleccion="TERRITORIAL", fenomeno="territorial", limit=2))
    assert terr["total"] == 3 and len(terr["items"]) == 2
    assert terr["filters"] == {"coleccion": "TERRITORIAL", "fenomeno": "territorial"}
    # one document of the test corpus is dated by its path (…/informe-ciberdefensa-2012.txt, for the
    # period coverage tests); a date range keeps it alone, undated documents are left out
    dated = corpus.publications(PublicationQuery(desde="2000"))
    assert dated["total"] == 1 and dated["items"][0]["source_path"].endswith("informe-ciberdefensa-2012.txt")
    assert dated["items"][0]["date"] == "2012" and dated["items"][0]["date_rule"] == "year_in_name"
    assert corpus.publications(PublicationQuery(desde="2013"))["total"] == 0
    with pytest.raises(ValueError):
        corpus.publications(PublicationQuery(desde="2022", hasta="2021"))


def test_list_publications_tool(offline_service):
    corpus = offline_service.corpus()
    tb = ToolBox(corpus)
    rec = tb.call("list_publications", {"fenomeno": "ai_military", "limit": 1, "desde": None, "hasta": None})
    n_ai = len({d for d, p in zip(corpus.doc_ids, corpus.phenomena, strict=True) if p == "ai_military"})
    assert rec.ok and rec.executed and rec.output["total"] == n_ai > 1 and len(rec.output["items"]) == 1
    assert tb.known_docs == {rec.output["items"][0]["doc_id"]}
    assert tb.call("list_publications", {"desde": 2021}).output["total"] == 0  # a bare year as a number
    for args in ({"fenomeno": "cocina"}, {"desde": "21"}, {"limit": 51}, {"coleccion": ""}, {"pais": "CO"}):
        rec = tb.call("list_publications", args)
        assert rec.output["error"]["code"] == "invalid_arguments" and rec.counted and not rec.executed, args
    rec = tb.call("list_publications", {"desde": "2022", "hasta": "2021"})
    assert rec.output["error"]["code"] == "invalid_arguments" and "posterior" in rec.output["error"]["message"]
    assert tb.used_calls == 8 and tb.executed_calls == 3  # rejected calls spend the cap too


def test_flagged_passages_are_withheld_everywhere(offline_service, use_encoder):
    """A passage carrying instructions is read (and kept in the trace) but never evidence: the
    extractive writer skips it whole, the model sees a fenced notice, the verifier rejects its citation."""
    from tests.radar_pipeline.agent.support_corpus import load_indirect

    attack = load_indirect()[0]
    corpus = offline_service.corpus()
    tb = ToolBox(corpus)
    hits = tb.call("search_evidence", {"query": attack["carrier"][:200], "k": 10}).output["passages"]
    poisoned = next(h["chunk_id"] for h in hits if h["title"] == attack["title"])
    clean = next(h["chunk_id"] for h in hits if not corpus.paths[corpus.row_of[h["chunk_id"]]].startswith("poisoned/"))
    rec = tb.call("read_chunks", {"chunk_ids": [poisoned, clean], "window": 0})
    assert tb.read[poisoned]["suspicious"] and not tb.read[clean]["suspicious"]
    # the analyst model sees the notice, the recorded output keeps the text
    shown = {p["chunk_id"]: p["text"] for p in for_model(rec.output)["passages"]}
    assert shown[poisoned] == prompts.WITHHELD and attack["payload"] in tb.read[poisoned]["text"]
    assert attack["payload"][:20] not in json.dumps(for_model(rec.output))
    # the LLM writer's fence: a notice without the text or the id
    fenced = prompts.fence_passages(list(tb.read.values()))
    assert prompts.WITHHELD in fenced and poisoned not in fenced and clean in fenced
    assert attack["carrier"][:40] not in fenced
    # the extractive writer: not even the carrier sentence
    cands = ExtractiveWriter(use_encoder).candidates(list(tb.read.values()))
    assert cands and all(p["chunk_id"] != poisoned for _, p in cands)
    # the verifier: a citation of it is rejected and canonicalize drops it
    doc = tb.read[poisoned]["doc_id"]
    answer = f"El síndrome de Kessler describe una cascada de colisiones en órbita baja [{doc}:{poisoned}]."
    check = check_answer(answer, tb.read)
    assert not check.ok and check.rejected[0]["motivo"] == "pasaje retirado: contiene instrucciones"
    assert poisoned not in canonicalize(answer, tb.read)


def test_the_analyst_reads_in_the_order_of_the_retrieval_ranking(offline_service):
    """``discovered_rank`` keeps the best rank a passage had in any search of the run, and the
    offline analyst reads unread passages in that order (then by raw cosine), not by cosine alone:
    the fused ranking is what retrieval measured (evals/README.md, "Known-item misses")."""
    from radar_pipeline.agent.roles.analyst import Analyst

    tb = ToolBox(offline_service.corpus())
    first = tb.call("search_evidence", {"query": "pruebas antisatélite y desechos orbitales", "k": 6})
    second = tb.call("search_evidence", {"query": "grupos armados en Colombia", "k": 6})
    hits = [p["chunk_id"] for p in first.output["passages"]]
    assert hits and all(tb.discovered_rank[c] <= i for i, c in enumerate(hits, 1))
    for i, c in enumerate(p["chunk_id"] for p in second.output["passages"]):
        assert tb.discovered_rank[c] == min(i + 1, hits.index(c) + 1 if c in hits else i + 1)
    analyst = Analyst(None, min_similarity=-1.0, max_read=len(tb.discovered), turns=1)
    picked = analyst._pick_unread(tb, limit=len(tb.discovered), per_doc=100)
    ranks = [tb.discovered_rank[c] for c in picked]
    assert ranks == sorted(ranks)  # rank order, whatever the cosine
    same_rank = [c for c in picked if tb.discovered_rank[c] == 1]
    assert [tb.discovered[c] for c in same_rank] == sorted((tb.discovered[c] for c in same_rank), reverse=True)


def test_search_evidence_inside_one_collection(offline_service):
    """``coleccion``: the search ranks only that source collection's passages (the test index's
    collections are its top folders); an unknown collection finds nothing, without error."""
    tb = ToolBox(offline_service.corpus(), max_calls=9)
    corpus = offline_service.corpus()
    colls = dict(zip(corpus.chunk_ids, corpus.collections, strict=True))
    out = tb.call("search_evidence", {"query": "minería ilegal y grupos armados", "coleccion": "space_security"})
    assert out.ok and out.output["passages"]
    assert {colls[p["chunk_id"]] for p in out.output["passages"]} == {"space_security"}
    assert all(p["politica"]["coleccion"] == "space_security" for p in out.output["passages"])
    none = tb.call("search_evidence", {"query": "minería ilegal y grupos armados", "coleccion": "CSET"})
    assert none.ok and none.output["passages"] == []
    bad = tb.call("search_evidence", {"query": "minería ilegal", "coleccion": ""})
    assert bad.output["error"]["code"] == "invalid_arguments"
