"""The agent's retrieval tools, over the retrieval service the API's read endpoints also use.

The tools read through ``radar_pipeline.retrieval.service.RetrievalService`` (read-only access to
one encoder's materialized indexes); the API's ``/search`` and ``/documents`` endpoints call the
same service, so a passage cannot differ between chat and dashboard.

``ToolBox`` is one run's tool contract (SPEC "Tool contract"):

* four tools with strict JSON-schema arguments (``TOOL_ARGS``; ``openai_tools()`` exports them),
  re-validated server-side with pydantic (``extra='forbid'``, strict types) before running;
* ``read_chunks`` accepts 1–8 ids and a neighbour window 0–1, and rejects any id that no search
  (or outline) of this run returned, with a structured error ``{"code": "chunk_not_discovered"}``;
* at most ``max_calls`` (8) executed calls per run; later calls get ``tool_budget_exhausted``;
* every call (accepted or rejected) is kept in ``calls`` with its id, arguments, output and timing,
  and the passages actually read are kept in ``read`` (the only ones a citation may point to).
"""

from __future__ import annotations

import json
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from radar_pipeline.agent.guards import scan_passage
from radar_pipeline.retrieval.service import RetrievalService, normalize_id

__all__ = ["ToolBox", "openai_tools"]

DOC_ID_RE = r"^[0-9a-f]{16}$"
CHUNK_ID_RE = r"^[0-9a-f]{16}-[0-9]{1,6}$"
DocId = Annotated[str, StringConstraints(pattern=DOC_ID_RE)]
ChunkId = Annotated[str, StringConstraints(pattern=CHUNK_ID_RE)]
Query = Annotated[str, StringConstraints(min_length=2, max_length=300)]

MAX_TOOL_CALLS = 8
SNIPPET_CHARS = 320


# --------------------------------------------------------------------------- argument models
class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SearchDocumentsArgs(_Args):
    """Find the documents most relevant to a query (top documents with title and path)."""

    query: Query
    k: int = Field(3, ge=1, le=5)


class SearchEvidenceArgs(_Args):
    """Find passages that answer a query; optionally only inside given documents."""

    query: Query
    k: int = Field(8, ge=1, le=10)
    doc_ids: list[DocId] = Field(default_factory=list, max_length=5)


class ReadChunksArgs(_Args):
    """Read the full text of passages returned by a previous search (1-8 ids), with 0-1 neighbours each side."""

    chunk_ids: list[ChunkId] = Field(min_length=1, max_length=8)
    window: int = Field(0, ge=0, le=1)


class DocumentOutlineArgs(_Args):
    """List a document's passages (ids, pages, first words) to choose what to read."""

    doc_id: DocId
    max_entries: int = Field(30, ge=1, le=60)


TOOL_ARGS: dict[str, type[_Args]] = {
    "search_documents": SearchDocumentsArgs,
    "search_evidence": SearchEvidenceArgs,
    "read_chunks": ReadChunksArgs,
    "document_outline": DocumentOutlineArgs,
}


def _strict_schema(model: type[BaseModel]) -> dict:
    schema = model.model_json_schema()

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: clean(v) for k, v in node.items() if k != "title"}
            if node.get("type") == "object":
                node["additionalProperties"] = False
                node["required"] = sorted(node.get("properties", {}))
            return node
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    return clean(schema)


def openai_tools() -> list[dict]:
    """The four tools in OpenAI ``tools`` format, ``strict`` JSON schemas (no extra properties)."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": (model.__doc__ or "").strip(),
                "parameters": _strict_schema(model),
                "strict": True,
            },
        }
        for name, model in TOOL_ARGS.items()
    ]


# --------------------------------------------------------------------------- tool box
@dataclass
class ToolCallRecord:
    call_id: str
    name: str
    arguments: Any
    output: dict
    ok: bool
    ms: float
    result_size: int
    executed: bool


@dataclass
class ToolBox:
    """One run's tools over a ``RetrievalService``; see the module docstring for the contract."""

    corpus: RetrievalService
    max_calls: int = MAX_TOOL_CALLS
    calls: list[ToolCallRecord] = field(default_factory=list)
    discovered: dict[str, float] = field(default_factory=dict)  # chunk_id → best similarity seen
    read: OrderedDict[str, dict] = field(default_factory=OrderedDict)

    @property
    def executed_calls(self) -> int:
        return sum(c.executed for c in self.calls)

    @property
    def remaining(self) -> int:
        return self.max_calls - self.executed_calls

    def call(self, name: str, arguments: str | dict | None, call_id: str | None = None) -> ToolCallRecord:
        """Validate and run one tool call; never raises for bad input (structured errors instead)."""
        call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
        t0 = time.perf_counter()
        raw = arguments
        executed = False

        def done(output: dict, ok: bool, args: Any) -> ToolCallRecord:
            size = len(json.dumps(output, ensure_ascii=False, default=str))
            rec = ToolCallRecord(
                call_id, name, args, output, ok, round((time.perf_counter() - t0) * 1000, 2), size, executed
            )
            self.calls.append(rec)
            return rec

        if name not in TOOL_ARGS:
            return done(
                {"error": {"code": "unknown_tool", "message": f"no tool named {name!r}", "tools": sorted(TOOL_ARGS)}},
                False,
                raw,
            )
        if self.executed_calls >= self.max_calls:
            return done(
                {"error": {"code": "tool_budget_exhausted", "message": f"at most {self.max_calls} tool calls per run"}},
                False,
                raw,
            )
        try:
            if isinstance(raw, str):
                data = json.loads(raw or "{}")
            else:
                data = dict(raw or {})
            if not isinstance(data, dict):
                raise ValueError("arguments must be a JSON object")
            if name == "read_chunks" and isinstance(data.get("chunk_ids"), list):
                data["chunk_ids"] = [normalize_id(c) if isinstance(c, str) else c for c in data["chunk_ids"]]
            if name == "search_evidence" and isinstance(data.get("doc_ids"), list):
                data["doc_ids"] = [normalize_id(c) if isinstance(c, str) else c for c in data["doc_ids"]]
            if name == "document_outline" and isinstance(data.get("doc_id"), str):
                data["doc_id"] = normalize_id(data["doc_id"])
            args = TOOL_ARGS[name].model_validate(data)
        except (ValueError, ValidationError) as exc:
            errors = (
                exc.errors(include_url=False, include_context=False, include_input=False)
                if isinstance(exc, ValidationError)
                else [{"msg": str(exc)}]
            )
            return done(
                {
                    "error": {
                        "code": "invalid_arguments",
                        "message": "arguments do not match the tool schema",
                        "details": json.loads(json.dumps(errors, default=str)),
                    }
                },
                False,
                raw,
            )
        executed = True
        output = getattr(self, f"_run_{name}")(args)
        return done(output, "error" not in output or bool(output.get("passages")), args.model_dump())

    # -- implementations
    def _run_search_documents(self, a: SearchDocumentsArgs) -> dict:
        return {"documents": self.corpus.search_documents(a.query, a.k)}

    def _run_search_evidence(self, a: SearchEvidenceArgs) -> dict:
        hits = self.corpus.search_passages(a.query, a.k, a.doc_ids or None)
        for h in hits:
            self.discovered[h["chunk_id"]] = max(self.discovered.get(h["chunk_id"], -1.0), h["similarity"])
        return {
            "passages": [
                {
                    "chunk_id": h["chunk_id"],
                    "doc_id": h["doc_id"],
                    "title": h["title"],
                    "page": h["page"],
                    "similarity": h["similarity"],
                    "score": round(h["score"], 6),
                    "snippet": " ".join(h["text"].split())[:SNIPPET_CHARS],
                }
                for h in hits
            ]
        }

    def _run_document_outline(self, a: DocumentOutlineArgs) -> dict:
        out = self.corpus.outline(a.doc_id, a.max_entries)
        if out is None:
            return {"error": {"code": "unknown_document", "message": f"no document {a.doc_id}"}}
        for e in out["entries"]:
            self.discovered.setdefault(e["chunk_id"], -1.0)
        return out

    def _run_read_chunks(self, a: ReadChunksArgs) -> dict:
        rejected = [c for c in a.chunk_ids if c not in self.discovered or c not in self.corpus.row_of]
        accepted = [c for c in a.chunk_ids if c not in rejected]
        passages = []
        for cid in accepted:
            row = self.corpus.row_of[cid]
            for r in self.corpus.neighbours(row, a.window):
                rec = self.corpus.record(r)
                if rec["chunk_id"] in self.read or any(p["chunk_id"] == rec["chunk_id"] for p in passages):
                    continue
                flag = scan_passage(rec["text"])
                rec["suspicious"] = not flag.allowed
                rec["similarity"] = (
                    self.discovered.get(cid, -1.0) if r == row else self.discovered.get(rec["chunk_id"], -1.0)
                )
                rec["neighbour_of"] = None if r == row else cid
                passages.append(rec)
        for p in passages:
            self.read[p["chunk_id"]] = p
        out: dict = {"passages": passages}
        if rejected:
            out["error"] = {
                "code": "chunk_not_discovered",
                "message": "these ids were never returned by a search in this run; search first",
                "ids": rejected,
            }
        return out
