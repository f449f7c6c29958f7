"""Search over the materialized indexes: the engine behind ``radar search`` and the API.

Loads the row-aligned passage table, the FAISS index and the BM25 index of one encoder from the
index directory (no raw corpus, no PostgreSQL), then applies ``policy``. Dense-only for now.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from radar_pipeline.encoders import Encoder
from radar_pipeline.retrieval.policy import Candidate, PolicyConfig, rank_documents, rank_passages
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.passages import load_passages


@dataclass
class SearchResult:
    """The ``radar search`` contract: top documents and top passages, ranks 1-based."""

    query: str
    documents: list[dict] = field(default_factory=list)
    passages: list[dict] = field(default_factory=list)
    latency_ms: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


class Searcher:
    """Query-time view of one encoder's indexes. Thread-safe for reads."""

    def __init__(self, index_dir: Path, encoder: Encoder, policy: PolicyConfig | None = None, candidates: int = 200):
        self.index_dir = index_dir
        self.encoder = encoder
        self.policy = policy or PolicyConfig()
        self.candidates = candidates
        self.passages: pl.DataFrame = load_passages(index_dir)
        self.faiss = faiss_store.load_index(index_dir)
        try:
            self.bm25: Bm25Index | None = Bm25Index.load(index_dir)
        except FileNotFoundError:
            self.bm25 = None
        cols = self.passages
        self._chunk_ids = cols["chunk_id"].to_list()
        self._doc_ids = cols["doc_id"].to_list()
        self._paths = cols["source_path"].to_list()
        self._texts = cols["text"].to_list()
        self._pages = cols["page_start"].to_list()
        self._titles = cols["title"].to_list()

    def _candidate(self, row: int, score: float) -> Candidate:
        return Candidate(row, self._chunk_ids[row], self._doc_ids[row], self._paths[row], self._texts[row], float(score))

    def dense_candidates(self, question: str) -> list[Candidate]:
        q = self.encoder.encode_queries([question])
        scores, rows = faiss_store.search(self.faiss, q, self.candidates)
        return [self._candidate(int(r), s) for s, r in zip(scores[0], rows[0]) if r >= 0]

    def search(self, question: str) -> SearchResult:
        """Top documents and passages for one question. Raises ``ValueError`` on an empty question."""
        if not question or not question.strip():
            raise ValueError("empty question")
        t0 = time.perf_counter()
        cands = self.dense_candidates(question)
        passages = rank_passages(cands, self.policy)
        docs = rank_documents(cands, self.policy)
        res = SearchResult(query=question)
        res.documents = [{"rank": i, "doc_id": d.doc_id, "source_path": d.source_path, "score": round(d.score, 6)}
                         for i, d in enumerate(docs, 1)]
        res.passages = [{"rank": i, "chunk_id": c.chunk_id, "doc_id": c.doc_id, "source_path": c.source_path,
                         "page": self._pages[c.row], "title": self._titles[c.row], "text": c.text,
                         "score": round(c.score, 6)} for i, c in enumerate(passages, 1)]
        res.latency_ms = round((time.perf_counter() - t0) * 1000, 2)
        return res
