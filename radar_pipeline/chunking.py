"""Sentence-bounded chunking with sentence overlap (SPEC "Chunking").

Prose: whole sentences (``radar_pipeline.sentences.split_sentences`` in the document's
language) are accumulated until the next one would exceed the token budget; no sentence crosses
a chunk boundary; each new chunk starts with the previous chunk's last whole sentences up to
``overlap`` × budget tokens. Tabular files: whole records are packed to the budget with no
overlap, and at most ``tabular_max_chunks`` chunks are made per file (the original system's cap,
so a 20,000-row CSV cannot flood the index while the file stays reachable).

Tokens are counted as words and punctuation marks (``\\w+|[^\\w\\s]``), a tokenizer-free proxy
close to sub-word counts for en/es/pt prose; 500 such tokens ≈ 2,500 characters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from radar_pipeline.sentences import split_sentences

CHUNKER_VERSION = "sent-v2"  # v2: sentence boundaries after short abbreviations (a. m., p. ej., Cía.) changed
_TOKEN_RX = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Number of word and punctuation tokens in ``text``."""
    return len(_TOKEN_RX.findall(text))


def text_sha(text: str) -> str:
    """SHA-256 of a chunk text; the embedding cache key (a changed text is re-encoded)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Chunk:
    """One passage. ``chunk_id`` is ``<doc_id>-<seq>``; pages are 1-based and inclusive."""

    chunk_id: str
    doc_id: str
    seq: int
    text: str
    page_start: int
    page_end: int
    n_tokens: int
    n_sentences: int

    @property
    def text_sha(self) -> str:
        return text_sha(self.text)


@dataclass(frozen=True)
class _Unit:
    page_no: int
    text: str
    tokens: int


def _split_long(unit: _Unit, budget: int) -> list[_Unit]:
    """Split a unit longer than the budget at word boundaries (only for run-on 'sentences')."""
    words = unit.text.split()
    out, cur, cur_tok = [], [], 0
    for w in words:
        t = count_tokens(w)
        if cur and cur_tok + t > budget:
            out.append(_Unit(unit.page_no, " ".join(cur), cur_tok))
            cur, cur_tok = [], 0
        cur.append(w)
        cur_tok += t
    if cur:
        out.append(_Unit(unit.page_no, " ".join(cur), cur_tok))
    return out


def _units(pages: Sequence[tuple[int, str]], language: str | None, tabular: bool, budget: int) -> Iterator[_Unit]:
    """Sentences (prose) or records (tabular) as units of at most ``budget`` tokens, lazily, so a
    capped tabular file stops being read once its chunk cap is reached."""
    for page_no, text in pages:
        if not text or not text.strip():
            continue
        pieces = [text] if tabular else split_sentences(text, language)
        for piece in pieces:
            piece = piece.strip()
            if not piece:
                continue
            u = _Unit(page_no, piece, count_tokens(piece))
            yield from (_split_long(u, budget) if u.tokens > budget else [u])


def chunk_pages(
    doc_id: str,
    pages: Sequence[tuple[int, str]],
    *,
    language: str | None,
    tabular: bool = False,
    budget: int = 500,
    overlap: float = 0.15,
    tabular_max_chunks: int = 400,
) -> list[Chunk]:
    """Chunk a document given as ``[(page_no, text), ...]``.

    ``budget`` is in tokens (see ``count_tokens``), ``overlap`` a fraction of it (prose only).
    Returns chunks with ``seq`` 0..n-1. Empty input gives an empty list.
    """
    units = _units(pages, language, tabular, budget)
    sep = "\n" if tabular else " "
    chunks: list[Chunk] = []
    cur: list[_Unit] = []
    cur_tok = 0
    overlap_budget = 0 if tabular else int(budget * overlap)

    def emit(group: list[_Unit]) -> None:
        text = sep.join(u.text for u in group)
        chunks.append(
            Chunk(
                chunk_id=f"{doc_id}-{len(chunks)}",
                doc_id=doc_id,
                seq=len(chunks),
                text=text,
                page_start=group[0].page_no,
                page_end=group[-1].page_no,
                n_tokens=sum(u.tokens for u in group),
                n_sentences=len(group),
            )
        )

    n_new = 0  # units in ``cur`` that are not overlap carried from the previous chunk
    for u in units:
        if cur and cur_tok + u.tokens > budget and n_new:
            emit(cur)
            if tabular and len(chunks) >= tabular_max_chunks:
                return chunks
            carry: list[_Unit] = []
            carry_tok = 0
            for prev in reversed(cur):
                if carry_tok + prev.tokens > overlap_budget:
                    break
                carry.insert(0, prev)
                carry_tok += prev.tokens
            # keep room for the new unit: drop carried sentences if they would not fit
            while carry and carry_tok + u.tokens > budget:
                carry_tok -= carry.pop(0).tokens
            cur, cur_tok, n_new = carry, carry_tok, 0
        cur.append(u)
        cur_tok += u.tokens
        n_new += 1
    if cur and n_new:
        emit(cur)
    return chunks
