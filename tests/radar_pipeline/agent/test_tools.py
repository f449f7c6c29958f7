"""The tool contract: strict schemas, server-side validation, discovered-ids rule, 8-call cap."""

from __future__ import annotations

import json

from radar_pipeline.agent.tools import ToolBox, openai_tools


def test_openai_tool_schemas_are_strict():
    tools = {t["function"]["name"]: t["function"] for t in openai_tools()}
    assert set(tools) == {"search_documents", "search_evidence", "read_chunks", "document_outline"}
    rc = tools["read_chunks"]["parameters"]
    assert rc["additionalProperties"] is False and set(rc["required"]) == {"chunk_ids", "window"}
    assert rc["properties"]["chunk_ids"]["maxItems"] == 8 and rc["properties"]["chunk_ids"]["minItems"] == 1
    assert rc["properties"]["window"]["maximum"] == 1
    assert all(t["function"]["strict"] is True for t in openai_tools())


def test_read_requires_a_search_first(offline_service):
    tb = ToolBox(offline_service.corpus())
    some = next(iter(offline_service.corpus().row_of))
    rec = tb.call("read_chunks", {"chunk_ids": [some]})
    assert rec.output["error"]["code"] == "chunk_not_discovered" and not rec.output["passages"]
    hits = tb.call("search_evidence", {"query": "GPS spoofing ships Black Sea"}).output["passages"]
    first = hits[0]["chunk_id"]
    rec = tb.call("read_chunks", json.dumps({"chunk_ids": [first.replace("-", "\u2011")], "window": 1}))
    assert rec.ok and rec.output["passages"][0]["chunk_id"] in (first,) + tuple(
        p["chunk_id"] for p in rec.output["passages"]
    )
    assert first in tb.read and all("text" in p for p in rec.output["passages"])


def test_invalid_arguments(offline_service):
    tb = ToolBox(offline_service.corpus())
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
    assert tb.executed_calls == 0


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
    out = tb.call("document_outline", {"doc_id": doc, "max_entries": 2}).output
    assert out["doc_id"] == doc and len(out["entries"]) <= 2
    win = corpus.window(corpus.chunk_ids[1], size=2)
    assert [p["is_target"] for p in win["passages"]].count(True) == 1 and len(win["passages"]) == 2
    assert tb.call("document_outline", {"doc_id": "f" * 16}).output["error"]["code"] == "unknown_document"
