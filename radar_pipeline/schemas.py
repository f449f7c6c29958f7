"""Table contracts (pandera, polars backend), enforced by Dagster asset checks.

Each schema describes the columns read back from PostgreSQL; ``TABLE_QUERIES`` says which
columns a check reads (vectors are checked in SQL, not pulled into frames).
"""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from radar_pipeline.vocabulary import PHENOMENA

STATUSES = ["ok", "partial", "damaged", "encrypted", "corrupt", "empty", "unsupported", "timeout"]
PAGE_SOURCES = ["text_layer", "ocr", "text_layer+ocr", "record", "plain"]
NUL_FREE = pa.Check(
    lambda data: data.lazyframe.select(~pl.col(data.key).str.contains("\x00", literal=True)), name="no_nul"
)


def _frame_check(expr: pl.Expr, name: str) -> pa.Check:
    """A row-wise check over the whole frame (pandera-polars passes ``PolarsData``)."""
    return pa.Check(lambda data: data.lazyframe.select(expr), name=name)


SourceFilesSchema = pa.DataFrameSchema(
    {
        "path": pa.Column(pl.Utf8, unique=True),
        "doc_id": pa.Column(pl.Utf8, pa.Check.str_matches(r"^[0-9a-f]{16}$")),
        "sha256": pa.Column(pl.Utf8, pa.Check.str_matches(r"^[0-9a-f]{64}$")),
        "size_bytes": pa.Column(pl.Int64, pa.Check.ge(0)),
        "extension": pa.Column(pl.Utf8),
        "phenomenon": pa.Column(pl.Utf8, pa.Check.isin(PHENOMENA), nullable=True),
    },
    strict=False,
)

DocumentsSchema = pa.DataFrameSchema(
    {
        "doc_id": pa.Column(pl.Utf8, unique=True),
        "primary_path": pa.Column(pl.Utf8),
        "format": pa.Column(pl.Utf8),
        "status": pa.Column(pl.Utf8, pa.Check.isin(STATUSES)),
        "reason": pa.Column(pl.Utf8, nullable=True),
        "language": pa.Column(pl.Utf8, pa.Check.isin(["en", "es", "pt"]), nullable=True),
        "n_pages": pa.Column(pl.Int64, pa.Check.ge(0)),
        "n_chars": pa.Column(pl.Int64, pa.Check.ge(0)),
    },
    strict=False,
    checks=[
        # a failed file always says why
        _frame_check((pl.col("status") == "ok") | pl.col("reason").is_not_null(), "failure_has_reason"),
    ],
)

PagesSchema = pa.DataFrameSchema(
    {
        "doc_id": pa.Column(pl.Utf8),
        "page_no": pa.Column(pl.Int64, pa.Check.ge(1)),
        "source": pa.Column(pl.Utf8, pa.Check.isin(PAGE_SOURCES)),
        "text": pa.Column(pl.Utf8, NUL_FREE),
    },
    strict=False,
    unique=["doc_id", "page_no"],
)

ChunksSchema = pa.DataFrameSchema(
    {
        "chunk_id": pa.Column(pl.Utf8, unique=True),
        "doc_id": pa.Column(pl.Utf8),
        "seq": pa.Column(pl.Int64, pa.Check.ge(0)),
        "text": pa.Column(pl.Utf8, [NUL_FREE, pa.Check.str_length(min_value=1)]),
        "n_tokens": pa.Column(pl.Int64, pa.Check.gt(0)),
        "page_start": pa.Column(pl.Int64, pa.Check.ge(1)),
        "page_end": pa.Column(pl.Int64, pa.Check.ge(1)),
    },
    strict=False,
    checks=[
        # <doc_id>-<n>: n is the passage's seq, except after a re-chunk gave a changed text a number
        # no earlier text of the document had (radar_pipeline.history.assign_chunk_ids)
        _frame_check(
            pl.col("chunk_id").str.starts_with(pl.col("doc_id") + "-")
            & pl.col("chunk_id").str.strip_prefix(pl.col("doc_id") + "-").str.contains(r"^[0-9]{1,6}$"),
            "chunk_id_is_doc_number",
        ),
        _frame_check(pl.col("page_end") >= pl.col("page_start"), "page_span_ordered"),
    ],
)

EmbeddingsSchema = pa.DataFrameSchema(
    {
        "text_sha": pa.Column(pl.Utf8, pa.Check.str_matches(r"^[0-9a-f]{64}$")),
        "encoder": pa.Column(pl.Utf8),
        "dim": pa.Column(pl.Int64, pa.Check.gt(0)),
        "norm": pa.Column(pl.Float64, pa.Check.in_range(0.999, 1.001)),
    },
    strict=False,
    unique=["text_sha", "encoder"],
)

TABLE_QUERIES = {
    "source_files": "SELECT path, doc_id, sha256, size_bytes, extension, phenomenon FROM source_files",
    "documents": "SELECT doc_id, primary_path, format, status, reason, language, n_pages, n_chars FROM documents",
    "pages": "SELECT doc_id, page_no, source, text FROM pages",
    "chunks": "SELECT chunk_id, doc_id, seq, text, n_tokens, page_start, page_end FROM chunks",
    "embeddings": "SELECT text_sha, encoder, dim, vector_norm(embedding)::float8 AS norm FROM embeddings",
}
SCHEMAS = {
    "source_files": SourceFilesSchema,
    "documents": DocumentsSchema,
    "pages": PagesSchema,
    "chunks": ChunksSchema,
    "embeddings": EmbeddingsSchema,
}
