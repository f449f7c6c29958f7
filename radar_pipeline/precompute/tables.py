"""Precompute tables (SQLAlchemy Core, their own ``MetaData``; the core tables live in ``db.py``).

Every table keeps history: each row carries ``row_hash`` (SHA-1 of its content), ``valid_from`` /
``valid_to`` (``valid_to IS NULL`` = current), ``run_id`` (the ``precompute_runs`` row that wrote
it) and ``producer`` (asset name, code version and input versions, e.g.
``entity_mentions@matcher-1|entities:2026.11.30-1``) and ``precompute_version`` (the run's
fingerprint of asset, code version and inputs). Rematerializing closes rows that are no
longer produced and inserts new ones; unchanged rows are left alone (see ``versioning.py``).
Readers that want the current state use the ``<table>_current`` views (or ``valid_to IS NULL``).

Every ``agg_*`` table has ``evidence``: a JSONB list of ``{"doc_id", "chunk_id"}`` — the passages
the row counts.

Every table derived from the corpus (all but the dictionary and the gazetteer, which are reference
data) has ``collection``: the access collection (``radar_pipeline.collection``) of the documents the
row was computed from. Producers compute each collection's rows from that collection's documents
alone, so the grain is collection × the table's own keys; ``reader.PrecomputeReader.scoped`` folds
the collections a caller may read back into one row per key, in SQL (``COLLECTION_TABLES``).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

metadata = sa.MetaData()


def _lineage() -> list[sa.Column]:
    return [
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("row_hash", sa.Text, nullable=False, comment="SHA-1 of the row content (identity across runs)"),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("valid_to", sa.DateTime(timezone=True), nullable=True, comment="NULL = current row"),
        sa.Column("run_id", sa.Text, nullable=False, comment="precompute_runs.run_id that inserted the row"),
        sa.Column("producer", sa.Text, nullable=False, comment="asset@code-version|input versions"),
        sa.Column(
            "precompute_version", sa.Text, nullable=True, comment="precompute_runs.precompute_version that inserted it"
        ),
    ]


def _collection() -> sa.Column:
    return sa.Column(
        "collection",
        sa.Text,
        nullable=True,
        index=True,
        comment="access collection of the documents the row was computed from (NULL: a file in no collection)",
    )


def _versioned(name: str, *columns: sa.Column, comment: str, collection: bool = True) -> sa.Table:
    cols = (*columns, _collection()) if collection else columns
    table = sa.Table(name, metadata, *_lineage(), *cols, comment=comment)
    sa.Index(f"ix_{name}_current_hash", table.c.row_hash, unique=True, postgresql_where=table.c.valid_to.is_(None))
    return table


precompute_runs = sa.Table(
    "precompute_runs",
    metadata,
    sa.Column("run_id", sa.Text, primary_key=True),
    sa.Column("asset", sa.Text, nullable=False),
    sa.Column("code_version", sa.Text, nullable=False),
    sa.Column("inputs", JSONB, nullable=False, comment="versions/fingerprints of what the run read"),
    sa.Column(
        "precompute_version",
        sa.Text,
        nullable=True,
        comment="SHA-256 prefix of (asset, code version, inputs): equal ⇔ same code on the same inputs",
    ),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("rows_current", sa.Integer, nullable=True),
    sa.Column("rows_inserted", sa.Integer, nullable=True),
    sa.Column("rows_superseded", sa.Integer, nullable=True),
    sa.Column("rows_unchanged", sa.Integer, nullable=True),
    comment="One row per precompute materialization: the lineage anchor of every derived row.",
)

precompute_inputs = sa.Table(
    "precompute_inputs",
    metadata,
    sa.Column("asset", sa.Text, primary_key=True),
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("input_hash", sa.Text, nullable=False, comment="MD5 of the document's inputs (pipeline.document_inputs)"),
    sa.Column("producer", sa.Text, nullable=False, comment="the producer string its current rows were written with"),
    sa.Column("run_id", sa.Text, nullable=False, comment="precompute_runs.run_id that last matched the document"),
    comment="Per-document ledger of a per-document precompute (mentions): what each document's current rows "
    "were computed from. A document whose inputs and producer are unchanged is not computed again; "
    "bookkeeping, not history (rows are replaced).",
)

entity_dictionary = _versioned(
    "entity_dictionary",
    sa.Column("entity_id", sa.Text, nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("category", sa.Text, nullable=False),
    sa.Column("phenomenon", sa.Text, nullable=False),
    sa.Column("aliases", JSONB, nullable=False, comment="[{text, lang, case_sensitive, phenomena, regex}]"),
    sa.Column("decoys", JSONB, nullable=False),
    sa.Column("dictionary_version", sa.Text, nullable=False),
    comment="The reviewed entity dictionary (radar_pipeline/precompute/data/entities.yaml) as loaded.",
    collection=False,
)

entity_mentions = _versioned(
    "entity_mentions",
    sa.Column("entity_id", sa.Text, nullable=False, index=True),
    sa.Column("category", sa.Text, nullable=False),
    sa.Column("doc_id", sa.Text, nullable=False, index=True),
    sa.Column("chunk_id", sa.Text, nullable=False, index=True),
    sa.Column("char_start", sa.Integer, nullable=False, comment="offset in chunks.text (Python str index)"),
    sa.Column("char_end", sa.Integer, nullable=False, comment="exclusive"),
    sa.Column("matched", sa.Text, nullable=False, comment="chunks.text[char_start:char_end]"),
    sa.Column("alias", sa.Text, nullable=False),
    sa.Column("alias_lang", sa.Text, nullable=True),
    sa.Column("language", sa.Text, nullable=True, comment="chunk language"),
    sa.Column("phenomenon", sa.Text, nullable=True, comment="document phenomenon"),
    sa.Column("dictionary_version", sa.Text, nullable=False),
    comment="Dictionary matches per passage (word boundaries, case/accent folded, decoys and boilerplate removed).",
)

place_gazetteer = _versioned(
    "place_gazetteer",
    sa.Column("place_id", sa.Text, nullable=False, comment="<level>:<code>, e.g. municipality:11001"),
    sa.Column("level", sa.Text, nullable=False, comment="country | department | municipality"),
    sa.Column("code", sa.Text, nullable=False, comment="ISO 3166-1 alpha-3, or DIVIPOLA (2/5 digits)"),
    sa.Column("iso2", sa.Text, nullable=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("country_code", sa.Text, nullable=False),
    sa.Column("department_code", sa.Text, nullable=True),
    sa.Column("department_name", sa.Text, nullable=True),
    sa.Column("aliases", JSONB, nullable=False, comment="[{text, lang}]"),
    sa.Column("context_required", sa.Boolean, nullable=False),
    sa.Column("has_shape", sa.Boolean, nullable=False),
    sa.Column("shape_source", sa.Text, nullable=True),
    sa.Column("gazetteer_version", sa.Text, nullable=False),
    comment="Countries (Natural Earth, ISO codes), Colombian departments and municipalities (DIVIPOLA).",
    collection=False,
)

place_mentions = _versioned(
    "place_mentions",
    sa.Column("place_id", sa.Text, nullable=True, index=True, comment="NULL when unresolved"),
    sa.Column("level", sa.Text, nullable=True),
    sa.Column("code", sa.Text, nullable=True),
    sa.Column("country_code", sa.Text, nullable=True),
    sa.Column("department_code", sa.Text, nullable=True),
    sa.Column("doc_id", sa.Text, nullable=False, index=True),
    sa.Column("chunk_id", sa.Text, nullable=False, index=True),
    sa.Column("char_start", sa.Integer, nullable=False),
    sa.Column("char_end", sa.Integer, nullable=False),
    sa.Column("matched", sa.Text, nullable=False),
    sa.Column(
        "resolution",
        sa.Text,
        nullable=False,
        comment="unique | cue | nearby_department | country_default | department_only | unresolved",
    ),
    sa.Column("candidates", JSONB, nullable=False, comment="place_ids the name could denote"),
    sa.Column("language", sa.Text, nullable=True),
    sa.Column("phenomenon", sa.Text, nullable=True),
    sa.Column("gazetteer_version", sa.Text, nullable=False),
    comment="Place names per passage; ambiguous names resolved by a cue or the department named nearby, else unresolved.",
)

publication_dates = _versioned(
    "publication_dates",
    sa.Column("doc_id", sa.Text, nullable=False, index=True),
    sa.Column("date", sa.Text, nullable=True, comment="YYYY, YYYY-MM or YYYY-MM-DD; NULL = undated"),
    sa.Column("year", sa.Integer, nullable=True),
    sa.Column("month", sa.Integer, nullable=True),
    sa.Column("day", sa.Integer, nullable=True),
    sa.Column("precision", sa.Text, nullable=True, comment="year | month | day"),
    sa.Column("rule", sa.Text, nullable=True, comment="rule that produced the date; NULL = undated"),
    sa.Column("source_kind", sa.Text, nullable=False, comment="codefest_inventory | path"),
    sa.Column("source_value", sa.Text, nullable=True, comment="the file name or folder the rule read"),
    sa.Column("source_path", sa.Text, nullable=True),
    sa.Column("phenomenon", sa.Text, nullable=True),
    comment="Publication dates from source metadata only (never from the text).",
)

early_warnings = _versioned(
    "early_warnings",
    sa.Column("alert_code", sa.Text, nullable=False, comment="NNN-YY as the Ombudsman numbers alerts"),
    sa.Column("alert_number", sa.Integer, nullable=False),
    sa.Column("code_year", sa.Integer, nullable=False, comment="year encoded in the code (not a publication date)"),
    sa.Column(
        "date", sa.Text, nullable=True, comment="publication date of the alert's own document (publication_dates)"
    ),
    sa.Column("date_rule", sa.Text, nullable=True),
    sa.Column("alert_type", sa.Text, nullable=False, comment="imminent | structural | unspecified | conflicting"),
    sa.Column("armed_groups", JSONB, nullable=False, comment="entity ids (category armed_group)"),
    sa.Column("places", JSONB, nullable=False, comment="[{place_id, level, code, name, department_code}]"),
    sa.Column("department_codes", JSONB, nullable=False),
    sa.Column("documents", JSONB, nullable=False, comment="[{doc_id, role: alert | follow_up}]"),
    sa.Column("evidence", JSONB, nullable=False, comment="[{doc_id, chunk_id, role, key}]"),
    comment="One row per Ombudsman early-warning alert (own document or follow-up reports naming its code).",
)

armed_presence = _versioned(
    "armed_presence",
    sa.Column("municipality_id", sa.Text, nullable=False, comment="b_ADM2_PCODE (e.g. CO18256)"),
    sa.Column("country", sa.Text, nullable=True, comment="ISO 3166-1 alpha-3"),
    sa.Column("level1", sa.Text, nullable=True),
    sa.Column("level2", sa.Text, nullable=True),
    sa.Column("divipola_code", sa.Text, nullable=True),
    sa.Column(
        "group_key", sa.Text, nullable=False, comment="cdf, emc, embf, seg_marq, eln, lobos, choneros, cv, pcc, others"
    ),
    sa.Column("entity_id", sa.Text, nullable=True),
    sa.Column("state", sa.Text, nullable=False, comment="present | absent | no_info (never shown as absent)"),
    sa.Column("n_records", sa.Integer, nullable=False),
    sa.Column("n_present", sa.Integer, nullable=False),
    sa.Column("n_absent", sa.Integer, nullable=False),
    sa.Column("n_no_info", sa.Integer, nullable=False),
    sa.Column("shape_match", sa.Text, nullable=False, comment="code | name | none"),
    sa.Column("shape_key", sa.Text, nullable=True),
    sa.Column("evidence", JSONB, nullable=False, comment="[{doc_id, chunk_id|null, quote, reason?}]"),
    comment="Declared armed-group presence per municipality (Amazon Underworld records in the corpus).",
)


def _agg(name: str, *columns: sa.Column, comment: str) -> sa.Table:
    return _versioned(
        name,
        *columns,
        sa.Column("evidence", JSONB, nullable=False, comment='[{"doc_id", "chunk_id"}] counted'),
        comment=comment,
    )


agg_documents_per_place = _agg(
    "agg_documents_per_place",
    sa.Column("level", sa.Text, nullable=False),
    sa.Column("place_id", sa.Text, nullable=False),
    sa.Column("code", sa.Text, nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("country_code", sa.Text, nullable=True),
    sa.Column("department_code", sa.Text, nullable=True),
    sa.Column("phenomenon", sa.Text, nullable=False, comment="a phenomenon or 'all'"),
    sa.Column("n_documents", sa.Integer, nullable=False, comment="documents naming the place or a place inside it"),
    sa.Column("n_documents_direct", sa.Integer, nullable=False, comment="documents naming the place itself"),
    sa.Column("n_passages", sa.Integer, nullable=False),
    comment="Documents naming each place (naming is not acting).",
)

agg_alerts_per_department = _agg(
    "agg_alerts_per_department",
    sa.Column("department_code", sa.Text, nullable=False),
    sa.Column("department_name", sa.Text, nullable=False),
    sa.Column(
        "alert_type", sa.Text, nullable=False, comment="imminent | structural | unspecified | conflicting; never summed"
    ),
    sa.Column("n_alerts", sa.Integer, nullable=False),
    sa.Column("alert_codes", JSONB, nullable=False),
    comment="Ombudsman alerts naming a place in each department, one row per alert type.",
)

agg_timeline = _agg(
    "agg_timeline",
    sa.Column("phenomenon", sa.Text, nullable=False, comment="a phenomenon or 'all'"),
    sa.Column("entity_id", sa.Text, nullable=True, comment="NULL = all documents"),
    sa.Column("granularity", sa.Text, nullable=False, comment="year | month"),
    sa.Column("period", sa.Text, nullable=True, comment="YYYY or YYYY-MM; NULL on the undated row"),
    sa.Column(
        "undated", sa.Boolean, nullable=False, comment="true: the documents left out (no date at this granularity)"
    ),
    sa.Column("n_documents", sa.Integer, nullable=False),
    comment="Documents per period and phenomenon (optionally naming an entity), with the undated count.",
)

agg_entity_network = _agg(
    "agg_entity_network",
    sa.Column("kind", sa.Text, nullable=False, comment="node | edge"),
    sa.Column("entity_a", sa.Text, nullable=False),
    sa.Column("entity_b", sa.Text, nullable=True, comment="NULL for nodes; entity_a < entity_b for edges"),
    sa.Column("phenomenon", sa.Text, nullable=False),
    sa.Column("n_passages", sa.Integer, nullable=False),
    sa.Column("n_documents", sa.Integer, nullable=False),
    comment="Entity co-occurrence in the same passage (nodes and edges).",
)

agg_entity_heatmap = _agg(
    "agg_entity_heatmap",
    sa.Column("entity_id", sa.Text, nullable=False),
    sa.Column("entity_category", sa.Text, nullable=False),
    sa.Column("column_kind", sa.Text, nullable=False, comment="phenomenon | source"),
    sa.Column("category", sa.Text, nullable=False, comment="the column: a phenomenon or a source collection"),
    sa.Column("n_documents", sa.Integer, nullable=False),
    sa.Column("n_passages", sa.Integer, nullable=False),
    comment="Entity × category matrix: documents naming the entity per phenomenon / source collection.",
)

agg_entity_quadrant = _agg(
    "agg_entity_quadrant",
    sa.Column("entity_id", sa.Text, nullable=False),
    sa.Column("entity_category", sa.Text, nullable=False),
    sa.Column("phenomenon", sa.Text, nullable=False, comment="scope: a phenomenon or 'all'"),
    sa.Column("intensity", sa.Integer, nullable=False, comment="dated documents naming the entity"),
    sa.Column("n_recent", sa.Integer, nullable=False, comment="of them, dated after the cut-off"),
    sa.Column("trend", sa.Float, nullable=False, comment="n_recent / intensity"),
    sa.Column("cutoff_date", sa.Text, nullable=False, comment="median publication date of the dated corpus in scope"),
    sa.Column("intensity_median", sa.Float, nullable=False),
    sa.Column("trend_median", sa.Float, nullable=False),
    sa.Column("quadrant", sa.Text, nullable=False, comment="{high|low}_intensity_{rising|declining}"),
    comment="Intensity-vs-trend quadrant; all cut-offs are medians computed from the data.",
)

VERSIONED_TABLES: dict[str, sa.Table] = {
    t.name: t
    for t in (
        entity_dictionary,
        entity_mentions,
        place_gazetteer,
        place_mentions,
        publication_dates,
        early_warnings,
        armed_presence,
        agg_documents_per_place,
        agg_alerts_per_department,
        agg_timeline,
        agg_entity_network,
        agg_entity_heatmap,
        agg_entity_quadrant,
    )
}
AGG_TABLES = [n for n in VERSIONED_TABLES if n.startswith("agg_")]
COLLECTION_TABLES = [n for n, t in VERSIONED_TABLES.items() if "collection" in t.c]
LINEAGE_COLUMNS = ("id", "row_hash", "valid_from", "valid_to", "run_id", "producer", "precompute_version")


def content_columns(table: sa.Table) -> list[str]:
    """Columns a producer fills (everything except the lineage columns)."""
    return [c.name for c in table.columns if c.name not in LINEAGE_COLUMNS]


def ensure_precompute_schema(engine: sa.Engine) -> None:
    """Create the precompute tables and their ``<table>_current`` views if missing (idempotent);
    tables created before precompute versions existed get the ``precompute_version`` column first
    (the views are then re-created with it)."""
    from radar_pipeline.db import create_all_locked

    # tables created before collections get the column; their rows stay NULL (readable only by an
    # unrestricted caller) until the next materialization writes each collection's rows
    create_all_locked(
        engine,
        metadata,
        (
            "ALTER TABLE precompute_runs ADD COLUMN IF NOT EXISTS precompute_version text",
            *(f"ALTER TABLE {name} ADD COLUMN IF NOT EXISTS precompute_version text" for name in VERSIONED_TABLES),
            *(f"ALTER TABLE {name} ADD COLUMN IF NOT EXISTS collection text" for name in COLLECTION_TABLES),
            *(f"CREATE INDEX IF NOT EXISTS ix_{name}_collection ON {name} (collection)" for name in COLLECTION_TABLES),
            *(
                f"CREATE OR REPLACE VIEW {name}_current AS SELECT * FROM {name} WHERE valid_to IS NULL"
                for name in VERSIONED_TABLES
            ),
        ),
    )


def drop_precompute_schema(engine: sa.Engine) -> None:
    """Drop the views and tables (tests only)."""
    with engine.begin() as conn:
        for name in VERSIONED_TABLES:
            conn.execute(sa.text(f"DROP VIEW IF EXISTS {name}_current"))
    metadata.drop_all(engine)
