"""On-disk format of the optional sentence vectors of an index (multi-granularity dense score).

``sentence_vectors.npy`` (float32, (sentences, dim)) and ``sentence_owner.npy`` (int64,
(sentences,): the passage row each sentence belongs to). Built only by the evaluation
(``evals.sentence_vectors``); read by ``retrieval.search.Searcher`` when present.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SENTENCE_VECTORS = "sentence_vectors.npy"
SENTENCE_OWNERS = "sentence_owner.npy"


def save_sentence_vectors(index_dir: Path, vectors, owner) -> None:
    """Write the sentence vectors ``(n, dim)`` and their owning passage rows ``(n,)``."""
    np.save(index_dir / SENTENCE_VECTORS, np.asarray(vectors, dtype=np.float32))
    np.save(index_dir / SENTENCE_OWNERS, np.asarray(owner, dtype=np.int64))


def load_sentence_vectors(index_dir: Path) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(vectors, owner)`` when both files exist in ``index_dir``, else ``None`` for the missing one."""
    sv, so = index_dir / SENTENCE_VECTORS, index_dir / SENTENCE_OWNERS
    return (np.load(sv) if sv.exists() else None, np.load(so) if so.exists() else None)
