"""The passage table shared row by row by the on-disk indexes of one encoder.

``passages.parquet`` holds, for row ``i`` of the FAISS and BM25 indexes, the chunk's id, document,
source path, page span, phenomenon and text, so a search answers without touching PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from radar_pipeline.stores.integrity import atomic_write

PASSAGE_COLUMNS = [
    "chunk_id",
    "doc_id",
    "source_path",
    "title",
    "page_start",
    "page_end",
    "phenomenon",
    "language",
    "text",
]
PASSAGES_FILE = "passages.parquet"


def save_passages(frame: pl.DataFrame, index_dir: Path) -> Path:
    """Write the aligned passage table atomically (temporary file, fsync, rename); ``frame`` must
    have ``PASSAGE_COLUMNS``. Returns the path."""
    missing = set(PASSAGE_COLUMNS) - set(frame.columns)
    if missing:
        raise ValueError(f"passage table lacks columns {sorted(missing)}")
    table = frame.select(PASSAGE_COLUMNS)
    return atomic_write(index_dir / PASSAGES_FILE, lambda tmp: table.write_parquet(tmp))


def load_passages(index_dir: Path) -> pl.DataFrame:
    """Read the aligned passage table. Raises ``FileNotFoundError`` if the indexes were never
    built, ``ValueError`` when the file cannot be read (truncated, damaged)."""
    path = index_dir / PASSAGES_FILE
    if not path.exists():
        raise FileNotFoundError(f"no passage table at {path}: materialize the index assets first")
    try:
        return pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise ValueError(f"passage table at {path} unreadable: {str(exc).splitlines()[0][:200]}") from exc
