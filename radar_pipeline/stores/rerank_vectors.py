"""On-disk format of the second-stage (re-ranker) vectors: ``<index>/rerank/<encoder>.npz``.

One file per re-ranker encoder, row-aligned with the index's ``passages.parquet`` and stamped with
a fingerprint of that table, so vectors built for another passage table are never applied. Written
by the ``rerank_vectors`` stage, read by ``retrieval.search.Searcher``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

RERANK_DIR = "rerank"


def rerank_vector_path(index_dir: Path, name: str) -> Path:
    """``<index>/rerank/<name>.npz``: one file holding ``vectors`` (float32, (rows, dim), zeros
    where missing), ``have`` (bool, (rows,)) and ``fingerprint`` (the passage table it is aligned
    with, see ``passage_fingerprint``)."""
    return index_dir / RERANK_DIR / f"{name}.npz"


def passage_fingerprint(texts: list[str]) -> str:
    """SHA-256 over the passage texts in row order: changes whenever a row's text or the row order
    changes, so vectors aligned with another passage table are never applied to this one."""
    h = hashlib.sha256()
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    return h.hexdigest()


def save_rerank_vectors(index_dir: Path, name: str, vectors: np.ndarray, have: np.ndarray, fingerprint: str) -> Path:
    """Write ``rerank_vector_path`` atomically (temporary file, then rename). Returns the path."""
    path = rerank_vector_path(index_dir, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(
        tmp,
        vectors=np.asarray(vectors, dtype=np.float32),
        have=np.asarray(have, dtype=bool),
        fingerprint=np.array(fingerprint),
    )
    tmp.replace(path)
    return path


def load_rerank_vectors(
    index_dir: Path, name: str, fingerprint: str, dim: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Precomputed re-ranker vectors ``(rows, dim)`` float32 (held in memory: ~80 MB for the full
    corpus; a memory map cost ~20 ms of page faults per question) and the mask ``(rows,)`` bool,
    or ``(None, None)`` when the file is absent, unreadable, built for another passage table
    (``fingerprint`` differs) or of another dimension: a stale file is ignored, never misread."""
    path = rerank_vector_path(index_dir, name)
    if not path.exists():
        return None, None
    try:
        with np.load(path) as z:
            vecs, have, fp = z["vectors"], z["have"], str(z["fingerprint"])
    except (OSError, ValueError, KeyError):
        return None, None
    if fp != fingerprint or have.shape[0] != vecs.shape[0] or (have.any() and vecs.shape[1] != dim):
        return None, None
    return vecs, have
