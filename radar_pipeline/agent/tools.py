"""The agent's retrieval tools and the read functions the API shares with them.

``Corpus`` is a read-only view over one encoder's materialized indexes (a
``radar_pipeline.retrieval.search.Searcher``): passage search with the raw cosine similarity of each
hit, document outline, a window of ~80 passages around a chunk, passages by id. The API's
``/search`` and ``/documents`` endpoints and the agent's tools call the same methods, so a figure
cannot differ between chat and dashboard.

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
import re
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from radar_pipeline.agent.guards import scan_passage

DOC_ID_RE = r"^[0-9a-f]{16}$"
CHUNK_ID_RE = r"^[0-9a-f]{16}-[0-9]{1,6}$"
DocId = Annotated[str, StringConstraints(pattern=DOC_ID_RE)]
ChunkId = Annotated[str, StringConstraints(pattern=CHUNK_ID_RE)]
Query = Annotated[str, StringConstraints(min_length=2, max_length=300)]

MAX_TOOL_CALLS = 8
SNIPPET_CHARS = 320
_HYPHENS = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u2043]")
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff\\s]")


def normalize_id(raw: str) -> str:
    """Canonical form of a doc/chunk id as a model may write it: odd hyphens (U+2011 …) → ``-``,
    soft hyphens, zero-width characters and spaces removed, lower case."""
    return _HYPHENS.sub("-", _INVISIBLE.sub("", str(raw))).lower()


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
    return [{"type": "function", "function": {"name": name, "description": (model.__doc__ or "").strip(),
                                              "parameters": _strict_schema(model), "strict": True}}
            for name, model in TOOL_ARGS.items()]


# --------------------------------------------------------------------------- corpus view
class IndexUnavailable(RuntimeError):
    """The passage table / FAISS index of the configured encoder has not been materialized."""


class Corpus:
    """Read-only view over a ``Searcher`` (thread-safe: lookups are immutable, caches are locked)."""

    def __init__(self, searcher):
        self.searcher = searcher
        frame = searcher.passages
        self.chunk_ids: list[str] = frame["chunk_id"].to_list()
        self.doc_ids: list[str] = frame["doc_id"].to_list()
        self.texts: list[str] = frame["text"].to_list()
        self.titles: list[str] = frame["title"].to_list()
        self.paths: list[str] = frame["source_path"].to_list()
        self.page_start: list[int] = frame["page_start"].to_list()
        self.page_end: list[int] = frame["page_end"].to_list()
        self.phenomena: list[str | None] = frame["phenomenon"].to_list()
        self.languages: list[str | None] = frame["language"].to_list()
        self.row_of = {c: i for i, c in enumerate(self.chunk_ids)}
        self.doc_rows: dict[str, list[int]] = {}
        for i, d in enumerate(self.doc_ids):
            self.doc_rows.setdefault(d, []).append(i)
        self._vectors = getattr(searcher, "vectors", None)
        self._lock = threading.Lock()
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._scache: OrderedDict[str, Any] = OrderedDict()

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    # -- vectors
    def query_vector(self, text: str) -> np.ndarray:
        with self._lock:
            if text in self._qcache:
                self._qcache.move_to_end(text)
                return self._qcache[text]
        v = np.asarray(self.searcher.encoder.encode_queries([text])[0], dtype=np.float32)
        with self._lock:
            self._qcache[text] = v
            while len(self._qcache) > 512:
                self._qcache.popitem(last=False)
        return v

    def vector(self, row: int) -> np.ndarray:
        if self._vectors is not None:
            return self._vectors[row]
        return self.searcher.faiss.reconstruct(int(row))

    def similarity(self, qvec: np.ndarray, rows: list[int]) -> list[float]:
        """Raw cosine (unit vectors) of the query with each row: comparable across queries,
        unlike fused/min-max-normalised ranking scores."""
        if not rows:
            return []
        mat = np.vstack([self.vector(r) for r in rows])
        return [round(float(s), 4) for s in mat @ qvec]

    # -- records
    def record(self, row: int, *, text: bool = True) -> dict:
        rec = {"chunk_id": self.chunk_ids[row], "doc_id": self.doc_ids[row], "title": self.titles[row],
               "source_path": self.paths[row], "page": self.page_start[row], "page_end": self.page_end[row],
               "phenomenon": self.phenomena[row], "language": self.languages[row]}
        if text:
            rec["text"] = self.texts[row]
        return rec

    def chunk(self, chunk_id: str) -> dict | None:
        row = self.row_of.get(normalize_id(chunk_id))
        return None if row is None else self.record(row)

    # -- search
    def _search(self, query: str):
        with self._lock:
            if query in self._scache:
                self._scache.move_to_end(query)
                return self._scache[query]
        res = self.searcher.search(query)
        with self._lock:
            self._scache[query] = res
            while len(self._scache) > 256:
                self._scache.popitem(last=False)
        return res

    def search_passages(self, query: str, k: int = 10, doc_ids: list[str] | None = None) -> list[dict]:
        """Top passages for ``query`` (the retrieval policy's ranking) with ``similarity`` = raw
        cosine. With ``doc_ids``, ranks only those documents' passages by cosine. Raises
        ``ValueError`` on an empty query."""
        if not query or not query.strip():
            raise ValueError("empty query")
        qvec = self.query_vector(query)
        if doc_ids:
            rows = [r for d in doc_ids for r in self.doc_rows.get(d, [])]
            sims = self.similarity(qvec, rows)
            order = sorted(zip(rows, sims), key=lambda t: -t[1])[:k]
            return [{"rank": i, **self.record(r), "score": s, "similarity": s} for i, (r, s) in enumerate(order, 1)]
        res = self._search(query)
        hits = res.passages[:k]
        rows = [self.row_of[p["chunk_id"]] for p in hits]
        sims = self.similarity(qvec, rows)
        return [{"rank": p["rank"], **self.record(r), "score": float(p["score"]), "similarity": s}
                for p, r, s in zip(hits, rows, sims)]

    def search_documents(self, query: str, k: int = 3) -> list[dict]:
        if not query or not query.strip():
            raise ValueError("empty query")
        res = self._search(query)
        out = []
        for d in res.documents[:k]:
            rows = self.doc_rows.get(d["doc_id"], [])
            out.append({"rank": d["rank"], "doc_id": d["doc_id"], "source_path": d["source_path"],
                        "title": self.titles[rows[0]] if rows else None, "n_passages": len(rows),
                        "score": float(d["score"])})
        return out

    def outline(self, doc_id: str, max_entries: int = 30) -> dict | None:
        rows = self.doc_rows.get(normalize_id(doc_id))
        if not rows:
            return None
        step = max(1, -(-len(rows) // max_entries))
        picked = rows[::step][:max_entries]
        return {"doc_id": self.doc_ids[rows[0]], "title": self.titles[rows[0]], "source_path": self.paths[rows[0]],
                "n_passages": len(rows), "pages": [self.page_start[rows[0]], self.page_end[rows[-1]]],
                "entries": [{"chunk_id": self.chunk_ids[r], "page": self.page_start[r],
                             "opening": " ".join(self.texts[r].split())[:140]} for r in picked]}

    def window(self, chunk_id: str, size: int = 80) -> dict | None:
        """``size`` consecutive passages of the chunk's document centred on it (evidence panel)."""
        row = self.row_of.get(normalize_id(chunk_id))
        if row is None:
            return None
        rows = self.doc_rows[self.doc_ids[row]]
        pos = rows.index(row)
        start = max(0, min(pos - size // 2, len(rows) - size))
        sel = rows[start:start + size]
        return {"doc_id": self.doc_ids[row], "title": self.titles[row], "source_path": self.paths[row],
                "chunk_id": self.chunk_ids[row], "position": pos, "n_passages": len(rows), "first_position": start,
                "passages": [{**self.record(r), "position": start + i, "is_target": r == row}
                             for i, r in enumerate(sel)]}

    def neighbours(self, row: int, window: int) -> list[int]:
        if window <= 0:
            return [row]
        rows = self.doc_rows[self.doc_ids[row]]
        pos = rows.index(row)
        return rows[max(0, pos - window): pos + window + 1]


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
    """One run's tools over a ``Corpus``; see the module docstring for the contract."""

    corpus: Corpus
    max_calls: int = MAX_TOOL_CALLS
    calls: list[ToolCallRecord] = field(default_factory=list)
    discovered: dict[str, float] = field(default_factory=dict)   # chunk_id → best similarity seen
    read: "OrderedDict[str, dict]" = field(default_factory=OrderedDict)

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
            rec = ToolCallRecord(call_id, name, args, output, ok, round((time.perf_counter() - t0) * 1000, 2), size, executed)
            self.calls.append(rec)
            return rec

        if name not in TOOL_ARGS:
            return done({"error": {"code": "unknown_tool", "message": f"no tool named {name!r}",
                                   "tools": sorted(TOOL_ARGS)}}, False, raw)
        if self.executed_calls >= self.max_calls:
            return done({"error": {"code": "tool_budget_exhausted",
                                   "message": f"at most {self.max_calls} tool calls per run"}}, False, raw)
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
            errors = exc.errors(include_url=False, include_context=False, include_input=False) if isinstance(exc, ValidationError) else [{"msg": str(exc)}]
            return done({"error": {"code": "invalid_arguments", "message": "arguments do not match the tool schema",
                                   "details": json.loads(json.dumps(errors, default=str))}}, False, raw)
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
        return {"passages": [{"chunk_id": h["chunk_id"], "doc_id": h["doc_id"], "title": h["title"], "page": h["page"],
                              "similarity": h["similarity"], "score": round(h["score"], 6),
                              "snippet": " ".join(h["text"].split())[:SNIPPET_CHARS]} for h in hits]}

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
                rec["similarity"] = self.discovered.get(cid, -1.0) if r == row else self.discovered.get(rec["chunk_id"], -1.0)
                rec["neighbour_of"] = None if r == row else cid
                passages.append(rec)
        for p in passages:
            self.read[p["chunk_id"]] = p
        out: dict = {"passages": passages}
        if rejected:
            out["error"] = {"code": "chunk_not_discovered",
                            "message": "these ids were never returned by a search in this run; search first",
                            "ids": rejected}
        return out
