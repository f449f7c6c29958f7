"""The passage table shared row by row by the on-disk indexes of one encoder.

``passages.parquet`` holds, for row ``i`` of the FAISS and BM25 indexes, the chunk's id, document,
source path, page span, phenomenon, text and access collection (``radar_pipeline.collection``), so
a search answers, and restricts its candidates to a caller's collections, without touching PostgreSQL.
A table written without ``collection`` (older indexes, hand-built test indexes) gets the default
collection of each ``source_path`` when saved or loaded.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from radar_pipeline.collection import collection_of
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
# written too; derived from ``source_path`` when a frame lacks it (``collection.collection_of``)
COLLECTION_COLUMN = "collection"
# polars dtypes of the passage table's columns (the collection included), for readers that build it
# from PostgreSQL rows (``stages.load_passage_frame``, ``pg_store.load_pg_passages``)
PASSAGE_SCHEMA: dict[str, pl.DataType] = {
    **{c: pl.Utf8 for c in PASSAGE_COLUMNS},
    "page_start": pl.Int32,
    "page_end": pl.Int32,
    COLLECTION_COLUMN: pl.Utf8,
}
PASSAGES_FILE = "passages.parquet"


def _with_collection(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with a ``collection`` column (derived from ``source_path`` when missing)."""
    if COLLECTION_COLUMN in frame.columns:
        return frame
    return frame.with_columns(
        pl.col("source_path").map_elements(collection_of, return_dtype=pl.Utf8).alias(COLLECTION_COLUMN)
    )


def save_passages(frame: pl.DataFrame, index_dir: Path) -> Path:
    """Write the aligned passage table atomically (temporary file, fsync, rename):
    ``PASSAGE_COLUMNS`` (required) and ``collection`` (derived from ``source_path`` when ``frame``
    lacks it). Returns the path."""
    frame = _with_collection(frame)
    missing = set(PASSAGE_COLUMNS) - set(frame.columns)
    if missing:
        raise ValueError(f"passage table lacks columns {sorted(missing)}")
    index_dir.mkdir(parents=True, exist_ok=True)
    path = index_dir / PASSAGES_FILE
    table = frame.select([*PASSAGE_COLUMNS, COLLECTION_COLUMN])
    return atomic_write(path, lambda tmp: table.write_parquet(tmp))


def load_passages(index_dir: Path) -> pl.DataFrame:
    """Read the aligned passage table. Raises ``FileNotFoundError`` if the indexes were never
    built, ``ValueError`` when the file cannot be read (truncated, damaged)."""
    path = index_dir / PASSAGES_FILE
    if not path.exists():
        raise FileNotFoundError(f"no passage table at {path}: materialize the index assets first")
    try:
        return _with_collection(pl.read_parquet(path))
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise ValueError(f"passage table at {path} unreadable: {str(exc).splitlines()[0][:200]}") from exc
