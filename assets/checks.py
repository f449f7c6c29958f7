"""Asset checks: every table's pandera contract, validated on the rows actually stored."""

import dagster as dg
import pandera.polars as pa
import polars as pl

from radar_pipeline.schemas import SCHEMAS, TABLE_QUERIES
from resources import DatabaseResource


def _contract_check(table: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=table, name=f"{table}_contract", blocking=True,
                    description=f"pandera schema of `{table}` holds on every stored row")
    def _check(database: DatabaseResource) -> dg.AssetCheckResult:
        engine = database.engine()
        frame = pl.read_database(TABLE_QUERIES[table], connection=engine, infer_schema_length=None)
        try:
            SCHEMAS[table].validate(frame, lazy=True)
        except pa.errors.SchemaErrors as err:
            return dg.AssetCheckResult(passed=False, metadata={
                "rows": frame.height, "failures": dg.MetadataValue.md(str(err.failure_cases.head(20)))})
        except pa.errors.SchemaError as err:
            return dg.AssetCheckResult(passed=False, metadata={"rows": frame.height, "failure": str(err)[:2000]})
        return dg.AssetCheckResult(passed=True, metadata={"rows": frame.height})

    return _check


contract_checks = [_contract_check(t) for t in SCHEMAS]
