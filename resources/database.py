"""PostgreSQL (+pgvector) for every asset: ``DATABASE_URL`` when set, else the embedded server."""

from pathlib import Path
from typing import Optional

import sqlalchemy as sa
from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline import db


class DatabaseResource(ConfigurableResource):
    """Owns the SQLAlchemy engine. With no ``database_url`` it starts/attaches the embedded
    PostgreSQL 18 + pgvector in ``pgdata`` (the server stops when its last process exits)."""

    database_url: Optional[str] = Field(default=None, description="external PostgreSQL URL (EnvVar DATABASE_URL)")
    pgdata: str = Field(description="data directory of the embedded server")

    def url(self) -> str:
        return db.resolve_database_url(self.database_url, Path(self.pgdata))

    def engine(self) -> sa.Engine:
        """An engine with the schema ensured (idempotent)."""
        engine = db.create_engine(self.url())
        db.ensure_schema(engine)
        return engine
