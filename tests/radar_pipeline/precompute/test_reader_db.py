"""The precompute reader on the real test PostgreSQL: every aggregate name reads its typed table
with the filters its columns allow (and only current rows); a table not materialized answers a
structured result, never an exception."""

from __future__ import annotations

import sqlalchemy as sa

from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.filters import Filters
from radar_pipeline.precompute.reader import AGGREGATES, NotMaterialized, PrecomputeReader, current
from radar_pipeline.precompute.scoped import FOLDS
from radar_pipeline.precompute.versioning import current_rows
from radar_pipeline.textfold import fold_spans

from .test_pipeline_db import _crafted, _run_all

ALL = Filters(phenomenon="territorial", year_from=2000, year_to=2030, entity="eln", place="Caquetá")


def test_filter_columns_belong_to_the_aggregate_table():
    for name, spec in AGGREGATES.items():
        cols = [spec.phenomenon, spec.dated, *spec.entity, *spec.place]
        assert all(c.table is spec.table for c in cols if c is not None), name
        assert spec.table.name in T.VERSIONED_TABLES, name


def _matches(spec, row: dict, applied: dict) -> bool:
    if "phenomenon" in applied and row[spec.phenomenon.name] != applied["phenomenon"]:
        return False
    if "year_from" in applied or "year_to" in applied:
        text = str(row[spec.dated.name] or "")
        if not (text[:4].isdigit() and ALL.year_ok(int(text[:4]))):  # undated rows never pass a period
            return False
    if "entity" in applied and not any(str(row[c.name]).lower() == "eln" for c in spec.entity):
        return False
    if "place" in applied and not any(
        row[c.name] and fold_spans(row[c.name]) == fold_spans("Caquetá") for c in spec.place
    ):
        return False
    return True


def test_every_aggregate_reads_with_filters(pengine, config):
    _crafted(pengine)
    _run_all(pengine, config)
    reader = PrecomputeReader(pengine)
    assert all(reader.status().values())
    applied_somewhere = set()
    for name, spec in AGGREGATES.items():
        everything = reader.read(name, limit=5000)
        assert everything["materialized"] and not everything["truncated"], name
        # rows are stored per collection and read folded: one row per key of the table (scoped.FOLDS)
        stored = current_rows(pengine, spec.table.name)
        fold = FOLDS.get(spec.table.name)
        keys = {tuple(r[k] for k in fold.keys) for r in stored} if fold else stored
        assert everything["n_rows"] == len(keys), name
        assert everything["filters_applied"] == {} and everything["filters_ignored"] == []
        out = reader.read(name, ALL, limit=5000)
        assert out["materialized"] and out["message"] is None and out["n_rows"] > 0, name
        assert set(out["filters_applied"]) | set(out["filters_ignored"]) == set(ALL.requested()), name
        assert not set(out["filters_applied"]) & set(out["filters_ignored"]), name
        assert all(_matches(spec, r, out["filters_applied"]) for r in out["rows"]), name
        kept = {r["id"] for r in out["rows"]}
        assert kept == {r["id"] for r in everything["rows"] if _matches(spec, r, out["filters_applied"])}, name
        applied_somewhere |= set(out["filters_applied"])
    assert applied_somewhere == set(ALL.requested())


def test_not_materialized_is_structured(pengine):
    reader = PrecomputeReader(pengine)
    assert reader.read("timeline")["materialized"] is True  # created (empty) by the fixture
    T.drop_precompute_schema(pengine)
    for name in AGGREGATES:
        out = reader.read(name, ALL)
        assert out["materialized"] is False and out["rows"] == [] and "materializado" in out["message"], name
        assert out["filters_ignored"] == sorted(ALL.requested()), name
    assert not any(reader.status().values())
    assert reader.mentions_for_chunks(["0123456789abcdef-1"]) == {}
    assert reader.find_entity("ELN") is None and reader.find_place("caqueta", ("department",)) is None
    try:
        reader.rows(sa.select(T.agg_timeline.c.id).where(current(T.agg_timeline)), T.agg_timeline)
        raise AssertionError("expected NotMaterialized")
    except NotMaterialized as exc:
        assert str(exc) == "agg_timeline"
    T.ensure_precompute_schema(pengine)


def test_municipality_alerts_are_the_alerts_naming_it(pengine, config):
    # one definition with the dashboard (precompute.alerts.names_place): a municipality keeps, in
    # every department row, the alerts that name it; it narrowed to the whole department before
    from radar_pipeline.precompute.alerts import names_place

    _crafted(pengine)
    _run_all(pengine, config)
    reader = PrecomputeReader(pengine)
    warnings = current_rows(pengine, "early_warnings")
    munis = {p["place_id"] for w in warnings for p in w["places"] or [] if p["place_id"].startswith("municipality:")}
    assert munis
    for muni in sorted(munis):
        naming = {w["alert_code"] for w in warnings if names_place(w, muni)}
        out = reader.read("alerts_per_department", Filters(place=muni))
        assert out["filters_applied"] == {"place": muni} and out["filters_ignored"] == []
        assert {c for r in out["rows"] for c in r["alert_codes"]} == naming, muni
        assert all(r["n_alerts"] == len(r["alert_codes"]) > 0 for r in out["rows"]), muni
    # without early_warnings nothing says which alerts name it: its department, as a column
    muni = sorted(munis)[0]
    with pengine.begin() as conn:
        conn.execute(sa.text("DROP TABLE early_warnings CASCADE"))
    reader = PrecomputeReader(pengine)
    out = reader.read("alerts_per_department", Filters(place=muni))
    assert out["materialized"] and {r["department_code"] for r in out["rows"]} == {muni.split(":")[1][:2]}
    assert out["filters_applied"] == {"place": muni}


def test_a_subregion_or_a_list_of_municipalities_reads_as_any_of_them(pengine, config):
    """A place set (``subregion:<id>`` or ``municipality:…,municipality:…``) narrows every aggregate
    with a place to its municipalities: the places map to their rows, the alerts to the alerts naming
    one of them, the armed presence to their DIVIPOLA codes."""
    from radar_pipeline.precompute.alerts import names_place
    from radar_pipeline.precompute.places.subregions import subregions

    _crafted(pengine)
    _run_all(pengine, config)
    reader = PrecomputeReader(pengine)
    warnings = current_rows(pengine, "early_warnings")
    named = sorted(
        {p["place_id"] for w in warnings for p in w["places"] or [] if p["place_id"].startswith("municipality:")}
    )
    places = {r["place_id"] for r in current_rows(pengine, "agg_documents_per_place")}
    munis = sorted({p for p in places if p.startswith("municipality:")})
    assert len(named) >= 2 and len(munis) >= 2
    pair = named[:2]
    value = ",".join(pair)
    out = reader.read("alerts_per_department", Filters(place=value))
    assert out["filters_applied"] == {"place": value}
    expected = {w["alert_code"] for w in warnings if any(names_place(w, m) for m in pair)}
    assert {c for r in out["rows"] for c in r["alert_codes"]} == expected
    one = {c for r in reader.read("alerts_per_department", Filters(place=pair[0]))["rows"] for c in r["alert_codes"]}
    assert one <= expected
    out = reader.read("documents_per_place", Filters(place=",".join(munis[:2])))
    assert {r["place_id"] for r in out["rows"]} == set(munis[:2]) and out["filters_applied"]
    # a subregion holding one of the corpus' municipalities: that municipality's rows, none outside it
    sub = next(s for s in subregions().values() if set(s.municipalities) & set(munis))
    out = reader.read("documents_per_place", Filters(place=sub.place_id))
    got = {r["place_id"] for r in out["rows"]}
    assert got == set(sub.municipalities) & places and out["filters_applied"] == {"place": sub.place_id}
    presence = reader.read("armed_presence", Filters(place=sub.place_id), limit=5000)
    assert all(f"municipality:{r['divipola_code']}" in sub.municipalities for r in presence["rows"])


def test_a_list_of_municipalities_is_named_by_its_members(pengine, config):
    """``docsets.place_names`` names a place set written as municipality ids (a region the question
    defined by its members) by their gazetteer names, and a subregion by its label."""
    from radar_pipeline.precompute.docsets import place_names

    _crafted(pengine)
    _run_all(pengine, config)
    reader = PrecomputeReader(pengine)
    gaz = {r["place_id"]: r["name"] for r in current_rows(pengine, "place_gazetteer")}
    munis = sorted(p for p in gaz if p.startswith("municipality:"))[:3]
    value = ",".join(munis)
    got = place_names(reader, [value, munis[0], "subregion:catatumbo"])
    assert got[value]["name"] == ", ".join(gaz[m] for m in munis[:-1]) + " y " + gaz[munis[-1]]
    assert got[value]["municipios"] == munis and got[value]["level"] == "subregion"
    assert got[munis[0]]["name"] == gaz[munis[0]]
    assert got["subregion:catatumbo"]["name"] == "Catatumbo"
    # only the ids asked for come back (the members read to name the list are not added)
    assert set(got) == {value, munis[0], "subregion:catatumbo"}
