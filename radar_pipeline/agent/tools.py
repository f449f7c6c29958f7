"""The agent's retrieval tools, over the retrieval service the API's read endpoints also use.

The tools read through ``radar_pipeline.retrieval.service.RetrievalService`` (read-only access to
one encoder's materialized indexes); the API's ``/search`` and ``/documents`` endpoints call the
same service, so a passage cannot differ between chat and dashboard.

``ToolBox`` is one run's tool contract (SPEC "Tool contract"):

* five tools with strict JSON-schema arguments (``TOOL_ARGS``; ``openai_tools()`` exports them),
  re-validated server-side with pydantic (``extra='forbid'``, strict types) before running;
* a sixth, ``aggregate`` (``AggregateArgs``), when the run has the precompute tables
  (``ToolBox.aggregate`` set): the figures of one dashboard view under filters, in Spanish words
  with the passages the view counted (``agent/roles/figures.py``, over the dashboard's own view
  functions). It is offered in every state but ``answer`` (a view needs no passage found first),
  and its figures are kept in ``figures``: the runner states them in the answer, their citations
  checked against the evidence the view counted (``verifier.check_figure_citations``);
* ``read_chunks`` accepts 1–8 ids and a neighbour window 0–1, and rejects any id that no search
  (or outline) of this run returned, with a structured error ``{"code": "chunk_not_discovered"}``;
* at most ``max_calls`` (8) calls per run, counting every call the model makes: executed, or
  rejected (invalid arguments, unknown tool, tool not valid in the state); later calls get
  ``tool_budget_exhausted`` and do not count. ``used_calls`` is that number, the one the run reports
  (``llamadas_herramientas``), so the cap and the report cannot disagree;
* every call (accepted or rejected) is kept in ``calls`` with its id, arguments, output and timing,
  and the passages actually read are kept in ``read`` (the only ones a citation may point to);
* a passage read that carries instructions (``guards.scan_passage``) is marked ``suspicious``: the
  writers never get it as evidence and the verifier rejects a citation of it;
* ``corpus`` is the run's scoped view (``RetrievalService.for_scope``): every tool searches, lists
  and reads only the caller's collections, and every passage returned carries its ``politica``.

Tool states (``ToolState``), derived from what the run has found so far, in this order::

    discover_documents ─► discover_evidence ─► read ─► answer

* ``discover_documents`` — nothing found yet: only the search/list tools (``search_documents``,
  ``search_evidence``, ``list_publications``);
* ``discover_evidence`` — documents known (a document search or a listing returned some), no
  passage yet: those plus ``document_outline``;
* ``read`` — a search or outline returned passage ids: every tool, ``read_chunks`` included;
* ``answer`` — the budget is spent or the analyst closed the round (``close``): no tools.

``offered()`` is what the model is shown (``openai_tools(tb.offered())``); ``call`` still checks
the state server-side: a tool not valid in the current state gets ``tool_not_available`` and
counts toward the 8-call cap, as do executed calls, schema errors and unknown tools (a model that
keeps sending malformed calls spends its budget instead of looping for ever).
"""

from __future__ import annotations

import enum
import json
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from radar_pipeline.agent.guards import scan_passage
from radar_pipeline.precompute.reader import PrecomputeReader
from radar_pipeline.precompute.views import VIEWS
from radar_pipeline.retrieval.publications import DATE_RE, PublicationQuery, document_year, read_dates
from radar_pipeline.retrieval.service import EncodeBudget, RetrievalService, normalize_id
from radar_pipeline.vocabulary import Phenomenon

__all__ = ["STATE_TOOLS", "ToolBox", "ToolState", "openai_tools"]

DOC_ID_RE = r"^[0-9a-f]{16}$"
CHUNK_ID_RE = r"^[0-9a-f]{16}-[0-9]{1,6}$"
DocId = Annotated[str, StringConstraints(pattern=DOC_ID_RE)]
ChunkId = Annotated[str, StringConstraints(pattern=CHUNK_ID_RE)]
Query = Annotated[str, StringConstraints(min_length=2, max_length=300)]
DateBound = Annotated[str, StringConstraints(pattern=DATE_RE)]

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
    """Find passages that answer a query; optionally only inside given documents, or inside one
    source collection (the publisher's code, as in list_publications: e.g. CSET, ESA, SIPRI)."""

    query: Query
    k: int = Field(8, ge=1, le=10)
    doc_ids: list[DocId] = Field(default_factory=list, max_length=5)
    coleccion: Annotated[str, StringConstraints(min_length=1, max_length=80)] | None = None


class ReadChunksArgs(_Args):
    """Read the full text of passages returned by a previous search (1-8 ids), with 0-1 neighbours each side."""

    chunk_ids: list[ChunkId] = Field(min_length=1, max_length=8)
    window: int = Field(0, ge=0, le=1)


class DocumentOutlineArgs(_Args):
    """List a document's passages (ids, pages, first words) to choose what to read."""

    doc_id: DocId
    max_entries: int = Field(30, ge=1, le=60)


class ListPublicationsArgs(_Args):
    """List publications (one per document: doc_id, title, collection, publication date and the rule
    that produced it, source path, phenomenon), newest first, with the total count. Filter by date
    range (desde/hasta: YYYY, YYYY-MM or YYYY-MM-DD, inclusive), source collection (e.g. CSET, the
    institution code of a Codefest id, or the corpus top folder) and phenomenon."""

    desde: DateBound | None = None
    hasta: DateBound | None = None
    coleccion: Annotated[str, StringConstraints(min_length=1, max_length=80)] | None = None
    fenomeno: Phenomenon | None = None
    limit: int = Field(20, ge=1, le=50)


class AggregateArgs(_Args):
    """Read the figures of one dashboard view, under filters, as Spanish sentences with the passages
    the view counted ([doc_id:chunk_id]): documents_per_place (documents naming each place),
    alerts_per_department (Ombudsman early warnings by department, risk type and year),
    armed_presence (declared presence of armed groups by municipality), timeline (documents per
    year: first year, peak, trend), entity_network (actors co-occurring in a passage),
    entity_heatmap (entity × source), entity_quadrant (rising and falling actors). Filters: fenomeno
    (ai_military, space_security, territorial), desde/hasta (years), entidad (an entity of the
    dictionary: id or name, or a country name), lugar (a Colombian department or municipality, or a
    country: name or gazetteer id). Use it for how many / where / which groups / since when."""

    vista: Literal[VIEWS]  # type: ignore[valid-type]
    fenomeno: Phenomenon | None = None
    desde: int | None = Field(None, ge=1950, le=2049)
    hasta: int | None = Field(None, ge=1950, le=2049)
    entidad: Annotated[str, StringConstraints(min_length=1, max_length=120)] | None = None
    lugar: Annotated[str, StringConstraints(min_length=1, max_length=120)] | None = None


TOOL_ARGS: dict[str, type[_Args]] = {
    "search_documents": SearchDocumentsArgs,
    "search_evidence": SearchEvidenceArgs,
    "read_chunks": ReadChunksArgs,
    "document_outline": DocumentOutlineArgs,
    "list_publications": ListPublicationsArgs,
}
"""The five retrieval tools (always available)."""
AGGREGATE = "aggregate"
ALL_TOOL_ARGS: dict[str, type[_Args]] = {**TOOL_ARGS, AGGREGATE: AggregateArgs}
"""Every tool a run may have: the five retrieval tools and ``aggregate`` (only with the precompute tables)."""


class ToolState(str, enum.Enum):
    """Where a run's retrieval stands; decides which tools are offered (see the module docstring)."""

    DISCOVER_DOCUMENTS = "discover_documents"
    DISCOVER_EVIDENCE = "discover_evidence"
    READ = "read"
    ANSWER = "answer"


_SEARCH = ("search_documents", "search_evidence", "list_publications")
STATE_TOOLS: dict[ToolState, tuple[str, ...]] = {
    ToolState.DISCOVER_DOCUMENTS: _SEARCH,
    ToolState.DISCOVER_EVIDENCE: (*_SEARCH, "document_outline"),
    ToolState.READ: (*_SEARCH, "document_outline", "read_chunks"),
    ToolState.ANSWER: (),
}
"""The retrieval tools valid in each state, in the order they are offered."""
AGGREGATE_STATES = (ToolState.DISCOVER_DOCUMENTS, ToolState.DISCOVER_EVIDENCE, ToolState.READ)
"""The states ``aggregate`` is offered in (after the retrieval tools), when the run has it: a view
reads the precompute tables, not the passages found, so it needs nothing found first; never in
``answer``."""


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


def openai_tools(names: tuple[str, ...] | list[str] | None = None) -> list[dict]:
    """The tools named in ``names`` (default: the five retrieval tools, in ``TOOL_ARGS`` order; names
    may include ``aggregate``) in OpenAI ``tools`` format, ``strict`` JSON schemas (no extra
    properties). Raises ``KeyError`` on an unknown name."""
    chosen = list(TOOL_ARGS) if names is None else list(names)
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
        for name, model in ((n, ALL_TOOL_ARGS[n]) for n in chosen)
    ]


# --------------------------------------------------------------------------- tool box
@dataclass
class ToolCallRecord:
    """One tool call as made: ``executed`` it ran; ``counted`` it counts toward the cap (every call
    made within the budget: executed, or rejected for its arguments, its name or the ``state``; not
    one refused because the budget was spent); ``state`` the tool state when it was made."""

    call_id: str
    name: str
    arguments: Any
    output: dict
    ok: bool
    ms: float
    result_size: int
    executed: bool
    counted: bool = False
    state: str = ToolState.DISCOVER_DOCUMENTS.value
    # a search's query-time re-ranker encoding limit (its ``EncodeBudget`` grant; None: no run
    # budget), recorded in the provenance so ``radar replay`` searches under the same limit
    encode_limit: int | None = None


@dataclass
class ToolBox:
    """One run's tools over a ``RetrievalService``; see the module docstring for the contract.

    ``reader`` (optional) gives ``list_publications`` the materialized ``publication_dates``; without
    it, or without the table, publications are dated from their paths. ``encode_budget`` (optional,
    ``retrieval.service.EncodeBudget``): the re-ranker encodings this run's searches may make at
    query time, together (None: each search its own per-search limit).

    ``aggregate`` (optional) makes the ``aggregate`` tool available: ``(vista, filtros) -> Figure``
    (``figures.Figure``; ``filtros`` under their Spanish names, as the model wrote them); it raises
    ``ValueError`` for a filter value it cannot resolve (a structured ``invalid_arguments`` error).
    The figures it returned are kept in ``figures``, in call order.
    """

    corpus: RetrievalService
    max_calls: int = MAX_TOOL_CALLS
    reader: PrecomputeReader | None = None
    encode_budget: EncodeBudget | None = None
    calls: list[ToolCallRecord] = field(default_factory=list)
    discovered: dict[str, float] = field(default_factory=dict)  # chunk_id → best similarity seen
    # chunk_id → best rank (1 = first) it had in a search_evidence of this run: the retrieval
    # ranking (fused lexical + dense + re-rank), which the raw cosine above does not reflect
    discovered_rank: dict[str, int] = field(default_factory=dict)
    known_docs: set[str] = field(default_factory=set)  # doc ids a search or listing returned
    read: OrderedDict[str, dict] = field(default_factory=OrderedDict)
    closed: bool = False
    aggregate: Callable[[str, dict], Any] | None = None
    figures: list = field(default_factory=list)
    _years: dict[str, int | None] = field(default_factory=dict, repr=False)  # doc_id → publication year
    _dates: tuple[dict[str, dict] | None, str] | None = field(default=None, repr=False)  # read_dates, once

    @property
    def executed_calls(self) -> int:
        return sum(c.executed for c in self.calls)

    @property
    def used_calls(self) -> int:
        """Calls that count toward ``max_calls`` (all calls made within the budget, executed or
        rejected); the number a run reports as ``llamadas_herramientas``; never above ``max_calls``."""
        return sum(c.counted for c in self.calls)

    @property
    def remaining(self) -> int:
        return self.max_calls - self.used_calls

    @property
    def state(self) -> ToolState:
        """The current ``ToolState`` (see the module docstring)."""
        if self.closed or self.remaining <= 0:
            return ToolState.ANSWER
        if self.discovered:
            return ToolState.READ
        if self.known_docs:
            return ToolState.DISCOVER_EVIDENCE
        return ToolState.DISCOVER_DOCUMENTS

    def offered(self) -> tuple[str, ...]:
        """The tool names valid in the current state (empty in ``answer``)."""
        return self._valid_in(self.state)

    def _valid_in(self, state: ToolState) -> tuple[str, ...]:
        extra = (AGGREGATE,) if self.aggregate is not None and state in AGGREGATE_STATES else ()
        return STATE_TOOLS[state] + extra

    def publication_year(self, doc_id: str) -> int | None:
        """The publication year of a document (None when undated), dated as ``list_publications``
        dates it (``publications.document_year``: ``publication_dates`` through ``reader``, else the
        source path); the table is read once per run. Used by the ``range`` coverage requirements."""
        if doc_id not in self._years:
            if self._dates is None:
                self._dates = read_dates(self.reader)
            self._years[doc_id] = document_year(self.corpus, doc_id, self._dates[0])
        return self._years[doc_id]

    def close(self) -> None:
        """Enter the ``answer`` state: no more tools this run."""
        self.closed = True

    def reopen(self) -> None:
        """Leave ``answer`` after ``close`` (a reformulation round), if budget is left."""
        self.closed = False

    def call(self, name: str, arguments: str | dict | None, call_id: str | None = None) -> ToolCallRecord:
        """Validate and run one tool call; never raises for bad input (structured errors instead)."""
        call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
        t0 = time.perf_counter()
        raw = arguments
        executed = counted = False
        state = self.state

        def done(output: dict, ok: bool, args: Any) -> ToolCallRecord:
            size = len(json.dumps(output, ensure_ascii=False, default=str))
            rec = ToolCallRecord(
                call_id,
                name,
                args,
                output,
                ok,
                round((time.perf_counter() - t0) * 1000, 2),
                size,
                executed,
                counted,
                state.value,
            )
            self.calls.append(rec)
            return rec

        if self.used_calls >= self.max_calls:
            return done(
                {"error": {"code": "tool_budget_exhausted", "message": f"at most {self.max_calls} tool calls per run"}},
                False,
                raw,
            )
        counted = True  # from here on every call spends budget, whether it runs or not
        if name not in ALL_TOOL_ARGS:
            return done(
                {
                    "error": {
                        "code": "unknown_tool",
                        "message": f"no tool named {name!r}",
                        "tools": sorted(TOOL_ARGS) + ([AGGREGATE] if self.aggregate is not None else []),
                    }
                },
                False,
                raw,
            )
        if name not in self._valid_in(state):
            return done(
                {
                    "error": {
                        "code": "tool_not_available",
                        "message": f"{name!r} is not available in state {state.value!r}; this call counts toward "
                        f"the {self.max_calls}-call budget",
                        "state": state.value,
                        "tools": list(self._valid_in(state)),
                    }
                },
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
            if name == "list_publications":
                for k in ("desde", "hasta"):  # a bare year written as a number
                    if isinstance(data.get(k), int) and not isinstance(data.get(k), bool):
                        data[k] = str(data[k])
            if name == AGGREGATE:
                for k in ("desde", "hasta"):  # a year written as a string
                    if isinstance(data.get(k), str) and data[k].strip().isdigit():
                        data[k] = int(data[k].strip())
            args = ALL_TOOL_ARGS[name].model_validate(data)
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
        rec = done(output, "error" not in output or bool(output.get("passages")), args.model_dump())
        if self.encode_budget is not None and name in ("search_documents", "search_evidence"):
            rec.encode_limit = self.encode_budget.granted(args.query)
        return rec

    # -- implementations
    def _run_aggregate(self, a: AggregateArgs) -> dict:
        filtros = a.model_dump(exclude={"vista"})
        try:
            fig = self.aggregate(a.vista, filtros)
        except ValueError as exc:
            return {"error": {"code": "invalid_arguments", "message": str(exc)[:300]}}
        except Exception as exc:  # noqa: BLE001 - a tool failure is a structured output, never a failed run
            return {"error": {"code": "aggregate_failed", "message": f"{type(exc).__name__}: {exc}"[:300]}}
        self.figures.append(fig)
        return fig.contract()

    def _run_search_documents(self, a: SearchDocumentsArgs) -> dict:
        docs = self.corpus.search_documents(a.query, a.k, budget=self.encode_budget)
        self.known_docs.update(d["doc_id"] for d in docs)
        return {"documents": docs}

    def _run_list_publications(self, a: ListPublicationsArgs) -> dict:
        q = PublicationQuery(a.desde, a.hasta, a.coleccion, a.fenomeno, a.limit)
        try:
            out = self.corpus.publications(q, self.reader)
        except ValueError as exc:
            return {"error": {"code": "invalid_arguments", "message": str(exc)}}
        self.known_docs.update(i["doc_id"] for i in out["items"])
        return out

    def _run_search_evidence(self, a: SearchEvidenceArgs) -> dict:
        hits = self.corpus.search_passages(
            a.query,
            a.k,
            a.doc_ids or None,
            budget=self.encode_budget,
            collections=[a.coleccion] if a.coleccion else None,
        )
        self.known_docs.update(h["doc_id"] for h in hits)
        for rank, h in enumerate(hits, 1):
            self.discovered[h["chunk_id"]] = max(self.discovered.get(h["chunk_id"], -1.0), h["similarity"])
            self.discovered_rank[h["chunk_id"]] = min(self.discovered_rank.get(h["chunk_id"], rank), rank)
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
                    "politica": h.get("politica"),
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
