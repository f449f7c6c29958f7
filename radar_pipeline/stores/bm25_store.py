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

from radar_pipeline.stores.integrity import atomic_write, atomic_write_dir
from radar_pipeline.textfold import fold_tokens

BM25_DIR = "bm25"
# Tokens of every passage text, by text SHA-256: a rebuild tokenizes only new texts (tokenizing is
# ~60 % of a BM25 build; measured 15.4 s of 25.4 s for 10,000 passages here). A cache, not an index
# file: not in the manifest, rebuilt when missing or unreadable.
TOKEN_CACHE_FILE = "bm25_tokens.parquet"
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
        """An index over ``texts`` (row i = text i); a text without tokens gets a placeholder token."""
        return cls.from_tokens([tokenize(t) for t in texts])

    @classmethod
    def from_tokens(cls, token_lists: Sequence[list[str]]) -> Bm25Index:
        """An index over already tokenized passages (``tokenize``'s output, row-aligned)."""
        retriever = bm25s.BM25(k1=1.5, b=0.75)
        retriever.index([toks or ["\u2205"] for toks in token_lists], show_progress=False)
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


def cached_tokens(index_dir: Path, texts: Sequence[str], shas: Sequence[str]) -> tuple[list[list[str]], int]:
    """``tokenize`` of each text, reusing ``<index_dir>/bm25_tokens.parquet`` (keyed by the texts'
    SHA-256 ``shas``) and rewriting it with exactly these texts. Returns (token lists, how many texts
    were tokenized now)."""
    import polars as pl

    path = index_dir / TOKEN_CACHE_FILE
    known: dict[str, list[str]] = {}
    if path.exists():
        try:
            cache = pl.read_parquet(path)
            known = dict(zip(cache["text_sha"].to_list(), cache["tokens"].to_list(), strict=True))
        except (OSError, pl.exceptions.PolarsError, KeyError, ValueError):
            known = {}
    out, fresh = [], 0
    for text, sha in zip(texts, shas, strict=True):
        toks = known.get(sha)
        if toks is None:
            toks, fresh = tokenize(text), fresh + 1
            known[sha] = toks
        out.append(list(toks))
    keep = dict.fromkeys(shas)
    table = pl.DataFrame(
        {"text_sha": list(keep), "tokens": [known[s] for s in keep]},
        schema={"text_sha": pl.Utf8, "tokens": pl.List(pl.Utf8)},
    )
    atomic_write(path, lambda tmp: table.write_parquet(tmp))
    return out, fresh
