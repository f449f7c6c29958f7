"""Ranking policy over candidate passages (SPEC "Retrieval policy").

Passages: ranked score → drop duplicate texts → at most ``max_per_doc`` passages per document
→ top ``k_passages``. Documents: score = mean of the document's best ``doc_top_n`` passage
scores, grouped by source file so two byte-identical copies cannot take two slots → top
``k_documents``. Each rule is a named setting of ``PolicyConfig`` so it can be switched off and
measured.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """One scored passage; ``row`` indexes the passage table."""

    row: int
    chunk_id: str
    doc_id: str
    source_path: str
    text: str
    score: float
    # the part of ``score`` given by identifier priority (``Searcher.identifier_priority``) and the
    # keys of the identifiers the passage names
    identifier: float = 0.0
    identifiers: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyConfig:
    k_passages: int = 10
    k_documents: int = 3
    max_per_doc: int = 3
    dedupe_texts: bool = True
    doc_top_n: int = 2


_WS = re.compile(r"\s+")


def _text_key(text: str) -> str:
    return _WS.sub(" ", text.strip().lower())


def rank_passages(cands: Sequence[Candidate], cfg: PolicyConfig) -> list[Candidate]:
    """Apply dedupe and the per-document cap to candidates, best first; returns ≤ ``k_passages``."""
    out: list[Candidate] = []
    seen: set[str] = set()
    per_doc: dict[str, int] = {}
    for c in sorted(cands, key=lambda c: -c.score):
        if cfg.dedupe_texts:
            key = _text_key(c.text)
            if key in seen:
                continue
            seen.add(key)
        if per_doc.get(c.doc_id, 0) >= cfg.max_per_doc:
            continue
        per_doc[c.doc_id] = per_doc.get(c.doc_id, 0) + 1
        out.append(c)
        if len(out) >= cfg.k_passages:
            break
    return out


@dataclass(frozen=True)
class DocumentHit:
    doc_id: str
    source_path: str
    score: float


def rank_documents(cands: Sequence[Candidate], cfg: PolicyConfig) -> list[DocumentHit]:
    """Document score = mean of its best ``doc_top_n`` passage scores (fewer if it has fewer).

    Documents are grouped by ``doc_id`` (content hash: byte-identical copies are one document) so
    no file takes two of the ``k_documents`` slots. Returns ≤ ``k_documents`` hits, best first.
    """
    by_doc: dict[str, list[Candidate]] = {}
    for c in cands:
        by_doc.setdefault(c.doc_id, []).append(c)
    hits = []
    for doc_id, cs in by_doc.items():
        top = sorted((c.score for c in cs), reverse=True)[: cfg.doc_top_n]
        hits.append(DocumentHit(doc_id, cs[0].source_path, sum(top) / len(top)))
    hits.sort(key=lambda h: -h.score)
    return hits[: cfg.k_documents]
