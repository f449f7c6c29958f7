"""Aggregates by collection, on real PostgreSQL: a restricted reader counts exactly what a corpus made
only of its collections would count, and an unrestricted one what the whole corpus counts.

The dashboard's crafted corpus (``tests/api/dashboard/support_corpus.py``: alerts, armed presence,
three phenomena, undated documents) is materialized four times, each in its own database:

* ``split``: every document, in three collections that cut across phenomena and departments
  (two alert documents in ``alertas``; the other alerts and the territorial reports in
  ``territorio``; the AI and space reports in ``tecnologia``);
* ``one``: every document in a single collection, i.e. the whole-corpus figures as they were
  computed before collections (one collection folds to itself);
* ``territorio``: only the documents of ``territorio``;
* ``pair``: only the documents of ``alertas`` and ``tecnologia``.

Then, for every aggregate of ``/aggregates``, every dashboard view under several filters, the
evidence behind every view row and the dashboard's reference counts: ``split`` read with no
restriction equals ``one``; ``split`` read as ``territorio`` equals the ``territorio`` database;
``split`` read as ``alertas`` + ``tecnologia`` equals ``pair``. Row ids differ between databases
(they are the folded rows' smallest ids) and are left out of the comparison; everything else —
counts, medians, evidence lists in order — must be equal.

``split`` is then rewritten with every table's rows in reverse storage order (``scramble_storage``):
two databases holding the same rows keep them in different orders (autovacuum, updates, insertion
history), and an answer that depends on that order (a query without ORDER BY feeding a list) differs
between them only on the runs where autovacuum happened to differ; reversed, it differs every run.
"""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from api.dashboard.data import VIEWS, DashboardData
from radar_pipeline import db
from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.reader import AGGREGATES, PrecomputeReader
from radar_pipeline.precompute.versioning import current_rows
from tests.api.dashboard import support_corpus as corpus
from tests.api.dashboard.support_server import fresh_database
from tests.radar_pipeline.precompute.support_precompute import add_document, scramble_storage

ALERTAS = ("codefest/F3/F3-ALERTAS-001.txt", "codefest/F3/F3-ALERTAS-012.txt")
LINEAGE = {
    "id",
    "valid_from",
    "valid_to",
    "run_id",
    "producer",
    "row_hash",
    "collections",
    "collection",
    "precompute_version",
}
FILTERS = [
    Filters(),
    Filters(phenomenon="territorial"),
    Filters(phenomenon="space_security"),
    Filters(year_from=2019, year_to=2022),
    Filters(entity="eln"),
    Filters(place="department:18"),
    Filters(place="municipality:52835"),
    Filters(entity="country:CHN"),
]
VIEW_OPTS = {
    "documents_per_place": [{"level": "department"}, {"level": "country"}],
    "armed_presence": [{}, {"grupo": "emc"}],
    "timeline": [{"granularidad": "year"}, {"granularidad": "month"}],
    "entity_heatmap": [{"columnas": "source"}, {"columnas": "phenomenon"}],
}


def split_collection(path: str) -> str:
    """The ``split`` database's collections (module doc)."""
    if path in ALERTAS:
        return "alertas"
    if path.startswith(("codefest/", "radar/territorial/")):
        return "territorio"
    return "tecnologia"


def _materialize(pg_url, shared_dir, name: str, keep, collection) -> sa.Engine:
    engine = db.create_engine(fresh_database(pg_url, name))
    db.ensure_schema(engine)
    T.ensure_precompute_schema(engine)
    for d in corpus.DOCS:
        if not keep(d.path):
            continue
        doc_id = add_document(
            engine, d.path, list(d.passages), phenomenon=d.phenomenon, language=d.language, is_tabular=d.tabular
        )
        with engine.begin() as conn:  # what a collections manifest would assign (RADAR_COLLECTIONS_FILE)
            for t in ("documents", "chunks"):
                conn.execute(
                    sa.text(f"UPDATE {t} SET collection = :c WHERE doc_id = :d"), {"c": collection(d.path), "d": doc_id}
                )
    corpus.materialize(engine, shared_dir)
    return engine


@pytest.fixture(scope="module")
def dbs(pg_url, shared_dir):
    out = {
        "split": _materialize(pg_url, shared_dir, "radar_coll_split", lambda p: True, split_collection),
        "one": _materialize(pg_url, shared_dir, "radar_coll_one", lambda p: True, lambda p: "todo"),
        "territorio": _materialize(
            pg_url, shared_dir, "radar_coll_territorio", lambda p: split_collection(p) == "territorio", split_collection
        ),
        "pair": _materialize(
            pg_url, shared_dir, "radar_coll_pair", lambda p: split_collection(p) != "territorio", split_collection
        ),
    }
    scramble_storage(out["split"])  # the same rows in the other storage order: order must not matter
    yield out
    for e in out.values():
        e.dispose()


def _strip(v):
    """``v`` without row ids and lineage (they differ between databases), as canonical JSON."""
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if k not in LINEAGE and k != "ids"}
    if isinstance(v, list):
        return [_strip(x) for x in v]
    return v


def _rows(out: dict) -> list[str]:
    return sorted(json.dumps(_strip(r), sort_keys=True, ensure_ascii=False) for r in out["rows"])


def _aggregates(reader: PrecomputeReader, scope: AccessScope | None) -> dict[str, list[str]]:
    out = {}
    for name in AGGREGATES:
        for f in FILTERS[:5]:
            res = reader.read(name, f, limit=5000, scope=scope)
            assert res["materialized"] and not res["truncated"], name
            out[f"{name} {f}"] = _rows(res)
    return out


def _dashboard(data: DashboardData, scope: AccessScope | None) -> dict[str, object]:
    """Every view under every filter, the evidence behind all its rows, and the reference counts."""
    out: dict[str, object] = {"meta": _strip(data.meta(scope))}
    for name in VIEWS:
        for opts in VIEW_OPTS.get(name, [{}]):
            for f in FILTERS:
                v = data.view(name, f, scope, **opts)
                key = f"{name} {opts} {f}"
                out[key] = _strip(v)
                ids = sorted(
                    {r["id"] for part in ("rows", "nodes", "edges") for r in v.get(part, []) if r.get("id") is not None}
                    | {i for r in v.get("rows", []) for i in r.get("ids", [])}
                )
                if ids:
                    ev = data.evidence(name, ids, f, limit=200, scope=scope)
                    out[f"evidence {key}"] = _strip(ev)
    return out


def _docs(engine) -> set[str]:
    with engine.connect() as conn:
        return {r[0] for r in conn.execute(sa.text("SELECT doc_id FROM documents"))}


def test_unrestricted_figures_are_the_whole_corpus_figures(dbs):
    split, one = PrecomputeReader(dbs["split"]), PrecomputeReader(dbs["one"])
    with dbs["split"].connect() as conn:
        colls = {r[0] for r in conn.execute(sa.text("SELECT DISTINCT collection FROM agg_timeline_current"))}
    assert colls == {"alertas", "territorio", "tecnologia"}  # the rows really are kept per collection
    assert _aggregates(split, None) == _aggregates(one, None)
    assert _dashboard(DashboardData(dbs["split"]), None) == _dashboard(DashboardData(dbs["one"]), None)
    # one collection folds to itself: the folded rows are the stored rows, evidence order included
    for name, spec in AGGREGATES.items():
        if spec.table.name.startswith("agg_") and spec.table is not T.agg_entity_quadrant:
            stored = current_rows(dbs["one"], spec.table.name)
            assert _rows(one.read(name, limit=5000)) == _rows({"rows": stored}), name
    stored = current_rows(dbs["one"], "agg_entity_quadrant")
    assert _rows({"rows": one.quadrant(evidence=True)}) == _rows({"rows": stored})


@pytest.mark.parametrize(
    ("database", "collections"), [("territorio", {"territorio"}), ("pair", {"alertas", "tecnologia"})]
)
def test_a_restricted_reader_counts_exactly_a_corpus_of_its_collections(dbs, database, collections):
    scope = AccessScope.of(collections, "k1")
    split, alone = PrecomputeReader(dbs["split"]), PrecomputeReader(dbs[database])
    mine = _aggregates(split, scope)
    assert mine == _aggregates(alone, None)
    assert any(mine.values())  # not vacuous: the collections have figures
    dash = _dashboard(DashboardData(dbs["split"]), scope)
    assert dash == _dashboard(DashboardData(dbs[database]), None)
    # nothing of another collection: every document id in any answer is one of the scope's
    allowed, every = _docs(dbs[database]), _docs(dbs["split"])
    text = json.dumps([mine, dash], ensure_ascii=False)
    assert not [d for d in every - allowed if d in text]


def test_a_collection_with_nothing_reads_nothing(dbs):
    scope = AccessScope.of({"ninguna"}, "k2")
    reader = PrecomputeReader(dbs["split"])
    for name in AGGREGATES:
        assert reader.read(name, limit=5000, scope=scope)["rows"] == [], name
    meta = DashboardData(dbs["split"]).meta(scope)
    assert meta["documents"] == {} and meta["dates"]["n"] == 0
    assert all(e["n_documents"] == 0 for e in meta["entities"]) and all(p["n_documents"] == 0 for p in meta["places"])
    assert not any(p["level"] == "municipality" for p in meta["places"])  # none named, none with presence records
    timeline = DashboardData(dbs["split"]).view("timeline", Filters(), scope)
    assert timeline["rows"] == [] and timeline["undated"]["n_documents"] == 0


def test_the_quadrant_is_classified_again_after_a_change(dbs):
    """The read-time quadrant is remembered only while its tables are unchanged."""
    reader = PrecomputeReader(dbs["pair"])
    first = reader.quadrant(None, "all")
    assert first and reader.quadrant(None, "all") == first
    gone = first[0]["entity_id"]
    with dbs["pair"].begin() as conn:  # a re-materialization superseding that entity's rows
        conn.execute(
            sa.text("UPDATE agg_entity_quadrant SET valid_to = now() WHERE entity_id = :e AND valid_to IS NULL"),
            {"e": gone},
        )
    again = reader.quadrant(None, "all")
    assert gone not in {r["entity_id"] for r in again} and len(again) == len(first) - 1
