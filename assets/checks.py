"""Asset checks: every table's pandera contract, validated on the rows actually stored, and one
current version per document and passage (``radar_pipeline.history``)."""

from collections.abc import Callable

import dagster as dg
import pandera.polars as pa
import polars as pl
import sqlalchemy as sa

from radar_pipeline.history import history_counts, version_violations
from radar_pipeline.schemas import SCHEMAS, TABLE_QUERIES
from resources import DatabaseResource


def align_null_columns(frame: pl.DataFrame, schema: pa.DataFrameSchema) -> pl.DataFrame:
    """Cast all-NULL columns (which polars reads as dtype ``Null``) to the schema's dtype, so a table
    where, say, no document failed (every ``reason`` NULL) is not rejected for its type."""
    casts = [
        pl.col(name).cast(col.dtype.type)
        for name, col in schema.columns.items()
        if name in frame.columns and frame.schema[name] == pl.Null and col.dtype is not None
    ]
    return frame.with_columns(casts) if casts else frame


def pandera_contract_check(
    table: str,
    schema: pa.DataFrameSchema,
    query: str,
    engine_of: Callable[[DatabaseResource], sa.Engine] = lambda db: db.engine(),
    description: str | None = None,
) -> dg.AssetChecksDefinition:
    """A blocking asset check on ``table``: ``query``'s rows (read with polars) satisfy ``schema``.

    Failure metadata holds the first 20 failure cases; ``engine_of`` lets a domain ensure its own
    tables before reading.
    """

    @dg.asset_check(
        asset=table,
        name=f"{table}_contract",
        blocking=True,
        description=description or f"pandera schema of `{table}` holds on every stored row",
    )
    def _check(database: DatabaseResource) -> dg.AssetCheckResult:
        frame = align_null_columns(
            pl.read_database(query, connection=engine_of(database), infer_schema_length=None), schema
        )
        try:
            schema.validate(frame, lazy=True)
        except pa.errors.SchemaErrors as err:
            return dg.AssetCheckResult(
                passed=False,
                metadata={"rows": frame.height, "failures": dg.MetadataValue.md(str(err.failure_cases.head(20)))},
            )
        except pa.errors.SchemaError as err:
            return dg.AssetCheckResult(passed=False, metadata={"rows": frame.height, "failure": str(err)[:2000]})
        return dg.AssetCheckResult(passed=True, metadata={"rows": frame.height})

    return _check


contract_checks = [pandera_contract_check(t, SCHEMAS[t], TABLE_QUERIES[t]) for t in SCHEMAS]


def _one_current_version(asset: str, keys: tuple[str, ...]) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=asset,
        name=f"{asset}_one_current_version",
        blocking=True,
        description=f"no two current versions of one {asset[:-1]} (closed versions live in {asset}_history)",
    )
    def _check(database: DatabaseResource) -> dg.AssetCheckResult:
        engine = database.engine()
        found = {k: v for k, v in version_violations(engine).items() if k in keys}
        counts = history_counts(engine)
        return dg.AssetCheckResult(
            passed=not any(found.values()),
            metadata={
                **{k: len(v) for k, v in found.items()},
                "examples": "; ".join(x for v in found.values() for x in v)[:2000] or "-",
                "current": counts[f"{asset}_current"],
                "closed_by_reason": str(counts[f"{asset}_closed"]),
            },
        )

    return _check


version_checks = [
    _one_current_version("documents", ("documents_same_path", "documents_retracted_current")),
    _one_current_version("chunks", ("chunks_same_position",)),
]
