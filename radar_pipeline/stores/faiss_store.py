"""Exact inner-product search with FAISS ``IndexFlatIP`` over unit vectors (= cosine)."""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np

from radar_pipeline.stores.integrity import atomic_write

FAISS_FILE = "faiss.index"
# One OpenMP thread per search: a single-query flat search gains nothing from threads, a service
# runs concurrent queries anyway, and with OMP_THREAD_LIMIT=1 in the environment (set for
# Tesseract) FAISS's default team of threads made one 53k-vector search take over 2 minutes here
# instead of 6 ms (measured on this 2-core machine).
faiss.omp_set_num_threads(1)


def build_flat_ip(vectors: np.ndarray) -> faiss.Index:
    """An ``IndexFlatIP`` holding ``vectors`` (float32, shape (n, d), unit-normalised)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index


def save_index(index: faiss.Index, index_dir: Path) -> Path:
    """Write ``<index_dir>/faiss.index`` atomically (temporary file, fsync, rename). Returns the path."""
    # serialised in memory and written by Python, so a full disk raises OSError(ENOSPC) with its
    # message (FAISS's own writer reports it as a bare RuntimeError)
    data = faiss.serialize_index(index)
    return atomic_write(index_dir / FAISS_FILE, lambda tmp: tmp.write_bytes(data.tobytes()))


def load_index(index_dir: Path) -> faiss.Index:
    """Read the index. Raises ``FileNotFoundError`` when it was never built, ``ValueError`` when
    the file cannot be read (truncated, damaged)."""
    path = index_dir / FAISS_FILE
    if not path.exists():
        raise FileNotFoundError(f"no FAISS index at {path}: materialize faiss_index first")
    try:
        return faiss.read_index(str(path))
    except RuntimeError as exc:  # FAISS reports a short or garbled file as a RuntimeError
        raise ValueError(f"FAISS index at {path} unreadable: {str(exc).splitlines()[0][:200]}") from exc


def selector(allowed_rows: np.ndarray) -> faiss.SearchParameters:
    """Search parameters that let FAISS consider only ``allowed_rows`` (int64 row ids): an
    ``IDSelectorBatch`` checked inside the scan, so the top-k is taken over those rows only."""
    ids = np.ascontiguousarray(allowed_rows, dtype=np.int64)
    sel = faiss.IDSelectorBatch(ids.size, faiss.swig_ptr(ids))
    params = faiss.SearchParameters(sel=sel)
    params._radar_keep = (ids, sel)  # the selector reads ``ids`` by pointer: keep both alive
    return params


def search(
    index: faiss.Index, queries: np.ndarray, k: int, allowed: faiss.SearchParameters | None = None, n_allowed=None
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` rows per query: ``(scores, row_ids)``, both shape (n_queries, k); missing = -1.

    ``allowed`` (from ``selector``) restricts the scan to those rows (``n_allowed`` of them)."""
    k = min(k, index.ntotal if n_allowed is None else n_allowed) or 1
    q = np.ascontiguousarray(queries, dtype=np.float32)
    if allowed is None:
        return index.search(q, k)
    return index.search(q, k, params=allowed)
