"""Lexical BM25 index (bm25s; Robertson & Zaragoza 2009, Lucene's BM25 variant, k1=1.5, b=0.75).

Tokens: NFKD accent-folded, lower-cased ``\\w+`` runs, minus English/Spanish/Portuguese stop
words, so ``Antisatélite`` and ``antisatelite`` match and codes such as ``001-17`` keep parts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_PORTUGUESE, STOPWORDS_SPANISH

from radar_pipeline.stores.integrity import atomic_write_dir
from radar_pipeline.textfold import fold_tokens

BM25_DIR = "bm25"
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return frozenset(fold_tokens(w) for w in (*STOPWORDS_EN, *STOPWORDS_SPANISH, *STOPWORDS_PORTUGUESE))


def tokenize(text: str) -> list[str]:
    """BM25 tokens of one text (see module docstring)."""
    stop = _stopwords()
    return [t for t in _WORD.findall(fold_tokens(text)) if t not in stop and len(t) > 1 or t.isdigit()]


class Bm25Index:
    """A bm25s index plus its vocabulary; rows align with the passage table."""

    def __init__(self, retriever: bm25s.BM25):
        self.retriever = retriever
        self.vocab = retriever.vocab_dict

    @classmethod
    def build(cls, texts: Sequence[str]) -> Bm25Index:
        retriever = bm25s.BM25(k1=1.5, b=0.75)
        retriever.index([tokenize(t) or ["\u2205"] for t in texts], show_progress=False)
        return cls(retriever)

    def save(self, index_dir: Path) -> Path:
        """Write ``<index_dir>/bm25/`` into a new directory, then swap it in (never half-written)."""
        return atomic_write_dir(index_dir / BM25_DIR, lambda tmp: self.retriever.save(str(tmp), show_progress=False))

    @classmethod
    def load(cls, index_dir: Path) -> Bm25Index:
        path = index_dir / BM25_DIR
        if not path.exists():
            raise FileNotFoundError(f"no BM25 index at {path}: materialize bm25_index first")
        try:
            return cls(bm25s.BM25.load(str(path), show_progress=False, verbosity=0))
        except (OSError, ValueError, KeyError, EOFError) as exc:
            raise ValueError(f"BM25 index at {path} unreadable: {type(exc).__name__}: {str(exc)[:200]}") from exc

    @property
    def size(self) -> int:
        return int(self.retriever.scores["num_docs"])

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ``(scores, row_ids)`` (1-D) for one query; empty arrays when no token is known."""
        toks = [t for t in tokenize(query) if t in self.vocab]
        if not toks:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        k = min(k, self.size)
        docs, scores = self.retriever.retrieve([toks], k=k, show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return scores[0][keep].astype(np.float32), docs[0][keep].astype(np.int64)
