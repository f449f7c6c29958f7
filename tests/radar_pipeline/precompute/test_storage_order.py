"""Answers that must not depend on the order PostgreSQL keeps rows in.

A query without ORDER BY returns its rows in storage order (or in the order of whatever plan the
statistics chose), and that order differs between two databases holding the same rows and within
one database over time: an UPDATE moves a row, autovacuum frees space that later inserts fill,
autoanalyze changes a plan. Each test here reads a real database, rewrites it with every table's
rows in reverse storage order (``scramble_storage``) and reads it again: the answer must not change.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.reader import PrecomputeReader
from tests.api.dashboard import support_corpus as corpus
from tests.api.dashboard.support_server import fresh_database
from tests.radar_pipeline.precompute.support_precompute import add_document, scramble_storage


@pytest.fixture(scope="module")
def crafted(pg_url, shared_dir) -> sa.Engine:
    """The dashboard's crafted corpus, materialized once into its own database."""
    engine = db.create_engine(fresh_database(pg_url, "radar_storage_order"))
    db.ensure_schema(engine)
    T.ensure_precompute_schema(engine)
    for d in corpus.DOCS:
        add_document(
            engine, d.path, list(d.passages), phenomenon=d.phenomenon, language=d.language, is_tabular=d.tabular
        )
    corpus.materialize(engine, shared_dir)
    yield engine
    engine.dispose()


def _changes(stats: dict) -> dict[str, int]:
    """The rows a materialization inserted or superseded, by asset and table (non-zero only)."""
    return {
        f"{asset} {k}": v
        for asset, st in stats.items()
        for k, v in st.items()
        if k.endswith((".rows_inserted", ".rows_superseded")) and v
    }


def test_materializing_again_the_same_rows_stored_in_another_order_changes_nothing(crafted, shared_dir):
    """Every precompute is a function of the rows' content: the same documents read in another
    storage order give the same rows (same row hashes), so a re-run versions nothing."""
    assert _changes(corpus.materialize(crafted, shared_dir)) == {}  # unchanged input: nothing new
    scramble_storage(crafted)
    assert _changes(corpus.materialize(crafted, shared_dir)) == {}


# names that several gazetteer places of one level share (Colombian municipalities), and one each
AMBIGUOUS = {
    "la union": ("municipality",),  # Antioquia, Nariño, Sucre, Valle del Cauca
    "villanueva": ("municipality",),  # Bolívar, Casanare, La Guajira, Santander
    "buenavista": ("municipality",),  # Boyacá, Córdoba, Quindío, Sucre
    "granada": ("municipality",),  # Antioquia, Cundinamarca, Meta
    "narino": ("department", "municipality"),  # the department first, then three municipalities
    "san pedro": ("municipality",),  # Sucre, Valle del Cauca
}
UNIQUE = {"caqueta": ("department",), "ecuador": ("country",), "china": ("country",)}


def _places(reader: PrecomputeReader) -> dict[str, str | None]:
    return {k: reader.find_place(k, levels) for k, levels in {**AMBIGUOUS, **UNIQUE}.items()}


def _entities(reader: PrecomputeReader, engine: sa.Engine) -> dict[str, str | None]:
    """Every alias, name and id of the dictionary, resolved."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT entity_id, name, aliases FROM entity_dictionary WHERE valid_to IS NULL")
        ).all()
    texts = set()
    for r in rows:
        texts |= {r.entity_id, r.name} | {a.get("text") if isinstance(a, dict) else a for a in r.aliases or []}
    return {t: reader.find_entity(t) for t in sorted(x for x in texts if x)}


def test_a_name_shared_by_several_places_or_entities_resolves_the_same_in_any_storage_order(crafted):
    """``find_place`` on a name several municipalities share, and ``find_entity`` on every alias of
    the dictionary, give the same answer before and after the rows are stored in reverse order —
    for a shared name the smallest id of the places (or entries) that bear it."""
    before_places, before_entities = _places(PrecomputeReader(crafted)), _entities(PrecomputeReader(crafted), crafted)
    assert all(before_places.values()), before_places  # every name is in the gazetteer
    scramble_storage(crafted)
    after = PrecomputeReader(crafted)
    assert _places(after) == before_places
    assert _entities(after, crafted) == before_entities
    # a shared municipality name: the smallest id of those that bear it (Antioquia's La Unión, 05400)
    assert after.find_place("la union", ("municipality",)) == "municipality:05400"
    assert after.find_place("granada", ("municipality",)) == "municipality:05313"
    assert after.find_place("narino", ("department", "municipality")) == "department:52"
    # an alias of two entries (China's PLA and Colombia's EPL): the smallest entity id
    assert after.find_entity("Ejército Popular de Liberación") == "epl"
    assert after.find_entity("ejercito popular de liberacion") == "epl"
