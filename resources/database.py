"""PostgreSQL (+pgvector) for every asset: ``DATABASE_URL`` when set, else the embedded server."""

from pathlib import Path

import sqlalchemy as sa
from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline import db
from radar_pipeline.config import DatabaseSettings, StorageSettings


class DatabaseResource(ConfigurableResource):
    """Owns the SQLAlchemy engine. With no database URL it starts/attaches the embedded
    PostgreSQL 18 + pgvector in ``pgdata`` (the server stops when its last process exits).

    Unset fields are read from the environment when a run starts (``DatabaseSettings``,
    ``StorageSettings``), so the URL — a secret — never enters Dagster's run config.
    """

    database_url: str | None = Field(
        default=None, description="external PostgreSQL URL; unset: DATABASE_URL / RADAR_DATABASE_URL, else embedded"
    )
    pgdata: str | None = Field(
        default=None, description="data directory of the embedded server; unset: <RADAR_HOME>/pgdata"
    )

    def url(self) -> str:
        """The SQLAlchemy URL (starts the embedded server when no external URL is configured)."""
        url = self.database_url or DatabaseSettings().database_url
        pgdata = Path(self.pgdata) if self.pgdata else StorageSettings().pgdata
        return db.resolve_database_url(url, pgdata)

    def engine(self) -> sa.Engine:
        """An engine with the schema ensured (idempotent)."""
        engine = db.create_engine(self.url())
        db.ensure_schema(engine)
        return engine
