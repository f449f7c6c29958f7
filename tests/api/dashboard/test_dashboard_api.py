"""The dashboard's read endpoints on the materialized crafted corpus (no browser).

Figures must equal those of the shared ``/aggregates`` endpoints when no filter narrows them, and
a narrowed figure must be exactly the distinct documents of the row's evidence that pass the
filter — computed here again, independently, in SQL.
"""

from __future__ import annotations

import re

import httpx
import pytest
import sqlalchemy as sa

from tests.api.dashboard.conftest import DASHBOARD


@pytest.fixture(scope="module")
def http(dashboard_app):
    with httpx.Client(base_url=dashboard_app[1], timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def eng(dashboard_app):
    return dashboard_app[0].engine


def _scalar_set(eng, sql, **params) -> set:
    with eng.connect() as conn:
        return {r[0] for r in conn.execute(sa.text(sql), params)}


def test_unfiltered_figures_equal_the_shared_aggregates(http):
    mine = http.get("/tablero/api/vista/documents_per_place", params={"fenomeno": "territorial"}).json()
    shared = http.get("/aggregates/documents_per_place", params={"phenomenon": "territorial", "limit": 5000}).json()
    assert mine["materialized"] and shared["materialized"]
    assert {r["place_id"]: r["n_documents"] for r in mine["rows"]} == {
        r["place_id"]: r["n_documents"] for r in shared["rows"]
    }
    alerts = http.get("/tablero/api/vista/alerts_per_department").json()["rows"]
    shared = http.get("/aggregates/alerts_per_department").json()["rows"]
    assert sorted((r["department_code"], r["alert_type"], r["n_alerts"]) for r in alerts) == sorted(
        (r["department_code"], r["alert_type"], r["n_alerts"]) for r in shared
    )
    assert {r["alert_type"] for r in alerts} >= {"imminent", "structural"}


def test_entity_narrowing_counts_documents_naming_both(http, eng):
    eln_docs = _scalar_set(eng, "SELECT DISTINCT doc_id FROM entity_mentions_current WHERE entity_id = 'eln'")
    assert eln_docs
    rows = http.get(
        "/tablero/api/vista/documents_per_place", params={"fenomeno": "territorial", "entidad": "eln"}
    ).json()
    assert rows["narrowed_by"] == ["entidad"]
    for r in rows["rows"]:
        place_docs = _scalar_set(
            eng,
            # every collection's row of the key the folded row stands for (ids: the smallest of them)
            "SELECT DISTINCT e->>'doc_id' FROM agg_documents_per_place_current a, "
            "jsonb_array_elements(a.evidence) e WHERE (a.place_id, a.phenomenon) = "
            "(SELECT place_id, phenomenon FROM agg_documents_per_place WHERE id = :i)",
            i=r["id"],
        )
        assert r["n_documents"] == len(place_docs & eln_docs) > 0
        assert r["n_total"] >= r["n_documents"]
    caq = next(r for r in rows["rows"] if r["place_id"] == "department:18")
    assert caq["n_documents"] < caq["n_total"]  # not every Caquetá document names the ELN


def test_period_narrowing_uses_source_dates_only(http, eng):
    docs = _scalar_set(eng, "SELECT doc_id FROM publication_dates_current WHERE year BETWEEN 2019 AND 2021")
    out = http.get(
        "/tablero/api/vista/entity_network", params={"fenomeno": "territorial", "desde": 2019, "hasta": 2021}
    ).json()
    for n in out["nodes"]:
        ev = _scalar_set(
            eng,
            "SELECT DISTINCT e->>'doc_id' FROM agg_entity_network_current a, jsonb_array_elements(a.evidence) e, "
            "agg_entity_network k WHERE k.id = :i AND a.kind = k.kind AND a.entity_a = k.entity_a "
            "AND a.entity_b IS NOT DISTINCT FROM k.entity_b AND a.phenomenon = k.phenomenon",
            i=n["id"],
        )
        assert n["n_documents"] == len(ev & docs)
    tl = http.get(
        "/tablero/api/vista/timeline", params={"fenomeno": "territorial", "desde": 2019, "hasta": 2021}
    ).json()
    assert [r["period"] for r in tl["rows"]] == ["2019", "2020", "2021"]


def test_timeline_reports_the_undated(http, eng):
    with eng.connect() as conn:
        undated = conn.execute(
            sa.text(
                "SELECT sum(n_documents) FROM agg_timeline_current WHERE phenomenon = 'territorial' "
                "AND entity_id IS NULL AND granularity = 'year' AND undated"
            )
        ).scalar()
    tl = http.get("/tablero/api/vista/timeline", params={"fenomeno": "territorial"}).json()
    assert tl["undated"]["n_documents"] == undated == 1


def test_presence_keeps_no_information_apart(http):
    rows = http.get("/tablero/api/vista/armed_presence").json()["rows"]
    states = {r["municipality_id"]: r["state"] for r in rows}
    assert states["CO18256"] == "present" and states["CO18410"] == "no_info"
    emc = {
        r["municipality_id"]: r["state"]
        for r in http.get("/tablero/api/vista/armed_presence", params={"entidad": "emc"}).json()["rows"]
    }
    assert emc["CO18001"] == "absent" and emc["CO18410"] == "no_info" and emc["CO18256"] == "present"
    dated = http.get("/tablero/api/vista/armed_presence", params={"desde": 2020}).json()
    assert any("periodo" in n for n in dated["not_applied"])


def test_evidence_lists_passages_with_source_and_page(http, eng):
    row = next(
        r
        for r in http.get("/tablero/api/vista/documents_per_place", params={"fenomeno": "territorial"}).json()["rows"]
        if r["place_id"] == "department:18"
    )
    ev = http.get(
        "/tablero/api/evidencia",
        params={"vista": "documents_per_place", "ids": str(row["id"]), "fenomeno": "territorial"},
    ).json()
    assert ev["n_documents"] == row["n_documents"] and ev["total"] == row["n_passages"]
    assert ev["counted"]["places"] == [{"place_id": "department:18", "level": "department", "code": "18"}]
    for it in ev["items"]:
        assert re.fullmatch(r"[0-9a-f]{16}-\d+", it["chunk_id"]) and it["chunk_id"].startswith(it["doc_id"])
        assert it["source_path"] and it["page_start"] >= 1 and it["snippet"]
        named = _scalar_set(
            eng,
            "SELECT place_id FROM place_mentions_current WHERE chunk_id = :c AND department_code = '18'",
            c=it["chunk_id"],
        )
        assert named, f"{it['chunk_id']} does not name a place in Caquetá"


def test_resolver_maps_the_agents_names(http):
    r = http.get("/tablero/api/resolver", params={"entidad": "disidencias de las farc", "lugar": "caqueta"}).json()
    assert r["entidad"] == "farc_dissidents" and r["lugar"] == "department:18"
    assert http.get("/tablero/api/resolver", params={"lugar": "bogota"}).json()["lugar"] == "department:11"
    china = http.get("/tablero/api/resolver", params={"entidad": "china"}).json()
    assert china["entidad"] is None and china["entidad_como_lugar"] == "country:CHN"


def test_meta_and_bad_requests(http):
    meta = http.get("/tablero/api/meta").json()
    assert meta["modo"] == "offline" and meta["dates"]["year_min"] == 2017
    assert next(e for e in meta["entities"] if e["id"] == "eln")["n_documents"] == 4
    for url, params in [
        ("/tablero/api/vista/timeline", {"entidad": "DROP TABLE"}),
        ("/tablero/api/vista/nope", {}),
        ("/tablero/api/evidencia", {"vista": "timeline", "ids": "x"}),
        ("/tablero/api/vista/timeline", {"lugar": "department:18;--"}),
    ]:
        assert http.get(url, params=params).status_code == 422


def test_page_and_static_assets_are_served_locally(http):
    page = http.get("/tablero/")
    assert page.status_code == 200 and '<html lang="es">' in page.text
    assert http.get("/", follow_redirects=False).headers["location"] == "/tablero/"
    for path in (
        "/tablero/static/vendor/d3.min.js",
        "/tablero/static/js/app.js",
        "/tablero/static/geo/co_departments.json",
        "/tablero/static/css/tablero.css",
    ):
        assert http.get(path).status_code == 200, path
    external = re.compile(r"""(?:src|href|import|url|fetch)\s*\(?\s*["'`]?(?:https?:)?//""", re.I)
    for f in (DASHBOARD / "static").rglob("*"):
        if f.suffix in (".html", ".js", ".css") and "vendor" not in f.parts:
            assert not external.search(f.read_text(encoding="utf-8")), f"{f} loads something from the network"


def _docs_naming(eng, place_id: str) -> set[str]:
    return _scalar_set(
        eng,
        "SELECT DISTINCT e->>'doc_id' FROM agg_documents_per_place_current a, jsonb_array_elements(a.evidence) e "
        "WHERE a.place_id = :p AND a.phenomenon = 'all'",
        p=place_id,
    )


def test_a_municipality_narrows_alerts_and_views_and_is_named(http, eng):
    tumaco = "municipality:52835"
    naming = _scalar_set(
        eng,
        "SELECT alert_code FROM early_warnings_current w, jsonb_array_elements(w.places) p WHERE p->>'place_id' = :p",
        p=tumaco,
    )
    assert naming == {"001-20"}
    alerts = http.get("/tablero/api/vista/alerts_per_department", params={"lugar": tumaco}).json()
    assert alerts["narrowed_by"] == ["lugar"]
    assert [(r["department_code"], r["alert_type"], r["alert_codes"]) for r in alerts["rows"]] == [
        ("52", "imminent", sorted(naming))
    ]
    # /aggregates counts the same alerts for the municipality (it narrowed to the whole department
    # before: one definition now, precompute.alerts.names_place)
    shared = http.get("/aggregates/alerts_per_department", params={"place": tumaco}).json()
    assert shared["filters_applied"] == {"place": tumaco}
    assert [(r["department_code"], r["alert_type"], r["alert_codes"], r["n_alerts"]) for r in shared["rows"]] == [
        (r["department_code"], r["alert_type"], r["alert_codes"], r["n_alerts"]) for r in alerts["rows"]
    ]
    alert_chunks = _scalar_set(
        eng,
        "SELECT e->>'chunk_id' FROM early_warnings_current w, jsonb_array_elements(w.evidence) e "
        "WHERE w.alert_code = '001-20'",
    )
    assert {e["chunk_id"] for r in shared["rows"] for e in r["evidence"]} <= alert_chunks
    ev = http.get(
        "/tablero/api/evidencia",
        params={"vista": "alerts_per_department", "ids": str(alerts["rows"][0]["id"]), "lugar": tumaco},
    ).json()
    alert_docs = _scalar_set(
        eng,
        "SELECT DISTINCT d->>'doc_id' FROM early_warnings_current w, jsonb_array_elements(w.documents) d "
        "WHERE w.alert_code = '001-20'",
    )
    assert ev["narrowed_by"] == ["lugar"] and {i["doc_id"] for i in ev["items"]} == alert_docs
    # a department does not narrow the alerts: it is the map's own row
    assert (
        http.get("/tablero/api/vista/alerts_per_department", params={"lugar": "department:52"}).json()["narrowed_by"]
        == []
    )
    docs = _docs_naming(eng, tumaco)
    years = _scalar_set(
        eng, "SELECT DISTINCT year::text FROM publication_dates_current WHERE doc_id = ANY(:d)", d=list(docs)
    )
    tl = http.get("/tablero/api/vista/timeline", params={"lugar": tumaco}).json()
    assert tl["narrowed_by"] == ["lugar"] and {r["period"] for r in tl["rows"]} == years == {"2020"}
    muni = {p["place_id"]: p for p in http.get("/tablero/api/meta").json()["places"] if p["level"] == "municipality"}
    assert muni[tumaco]["name"] == "San Andrés de Tumaco" and muni[tumaco]["department_name"] == "Nariño"
    assert muni[tumaco]["n_documents"] == len(docs) == 1
    assert "municipality:18410" in muni  # listed by the presence records
    assert "municipality:05001" not in muni  # Medellín: nothing names it, resolved on demand
    r = http.get("/tablero/api/resolver", params={"lugar": "municipality:05001"}).json()
    assert r["lugar"] == "municipality:05001" and r["nombres"]["municipality:05001"]["name"] == "Medellín"


def test_a_country_as_the_entity_narrows_by_the_documents_naming_it(http, eng):
    china = _docs_naming(eng, "country:CHN")
    assert china
    tl = http.get("/tablero/api/vista/timeline", params={"entidad": "country:CHN"}).json()
    by_year = {}
    for doc, year in (
        (d, y)
        for d in china
        for y in _scalar_set(eng, "SELECT year FROM publication_dates_current WHERE doc_id = :d", d=d)
        if y is not None
    ):
        by_year.setdefault(str(year), set()).add(doc)
    assert tl["narrowed_by"] == ["entidad"]
    assert {r["period"]: r["n_documents"] for r in tl["rows"]} == {y: len(d) for y, d in by_year.items()}
    net = http.get("/tablero/api/vista/entity_network", params={"entidad": "country:CHN"}).json()
    assert net["narrowed_by"] == ["entidad"] and net["nodes"]
    quad = http.get("/tablero/api/vista/entity_quadrant", params={"entidad": "country:CHN"}).json()
    assert any("país" in n for n in quad["not_applied"])
    assert http.get("/tablero/api/resolver", params={"entidad": "country:CHN"}).json()["nombres"] == {
        "country:CHN": {"level": "country", "name": "China", "department_name": None}
    }
    for bad in ("country:chn", "country:CHINA", "department:18"):
        assert http.get("/tablero/api/vista/timeline", params={"entidad": bad}).status_code == 422, bad


def test_open_periods_filter_on_one_side(http, eng):
    def periods(**p):
        return [
            r["period"]
            for r in http.get("/tablero/api/vista/timeline", params={"fenomeno": "territorial", **p}).json()["rows"]
        ]

    every = periods()
    assert periods(desde=2019) == [p for p in every if int(p) >= 2019] and min(every) < "2019"
    assert periods(hasta=2019) == [p for p in every if int(p) <= 2019] and max(every) > "2019"
    docs = _scalar_set(eng, "SELECT doc_id FROM publication_dates_current WHERE year >= 2019")
    net = http.get("/tablero/api/vista/entity_network", params={"fenomeno": "territorial", "desde": 2019}).json()
    assert net["filters"] == {"fenomeno": "territorial", "desde": 2019} and net["narrowed_by"] == ["periodo"]
    for n in net["nodes"]:
        ev = _scalar_set(
            eng,
            "SELECT DISTINCT e->>'doc_id' FROM agg_entity_network_current a, jsonb_array_elements(a.evidence) e, "
            "agg_entity_network k WHERE k.id = :i AND a.kind = k.kind AND a.entity_a = k.entity_a "
            "AND a.entity_b IS NOT DISTINCT FROM k.entity_b AND a.phenomenon = k.phenomenon",
            i=n["id"],
        )
        assert n["n_documents"] == len(ev & docs)


def test_a_subregion_narrows_like_its_municipalities(http, eng):
    """A subregion (``subregion:<id>``, PDET) is the set of its municipalities end to end: the alerts
    view, /aggregates and the timeline narrow to what names any of them; the resolver names it."""
    from radar_pipeline.precompute.places.subregions import subregions

    sub = subregions()["subregion:pacifico_frontera_narinense"]  # holds Tumaco (52835)
    members = list(sub.municipalities)
    naming = _scalar_set(
        eng,
        "SELECT alert_code FROM early_warnings_current w, jsonb_array_elements(w.places) p "
        "WHERE p->>'place_id' = ANY(:m)",
        m=members,
    )
    assert naming  # the crafted corpus' alert on Tumaco
    alerts = http.get("/tablero/api/vista/alerts_per_department", params={"lugar": sub.place_id}).json()
    assert alerts["narrowed_by"] == ["lugar"]
    assert {c for r in alerts["rows"] for c in r["alert_codes"]} == naming
    shared = http.get("/aggregates/alerts_per_department", params={"place": sub.place_id}).json()
    assert shared["filters_applied"] == {"place": sub.place_id}
    assert sorted((r["department_code"], r["alert_type"], r["n_alerts"]) for r in shared["rows"]) == sorted(
        (r["department_code"], r["alert_type"], r["n_alerts"]) for r in alerts["rows"]
    )
    docs = set().union(*(_docs_naming(eng, m) for m in members))
    years = _scalar_set(
        eng, "SELECT DISTINCT year::text FROM publication_dates_current WHERE doc_id = ANY(:d)", d=list(docs)
    )
    tl = http.get("/tablero/api/vista/timeline", params={"lugar": sub.place_id}).json()
    assert tl["narrowed_by"] == ["lugar"] and {r["period"] for r in tl["rows"]} == years
    places = http.get("/aggregates/documents_per_place", params={"place": sub.place_id}).json()
    assert places["filters_applied"] == {"place": sub.place_id}
    assert {r["place_id"] for r in places["rows"]} <= set(members) and places["rows"]
    # the same municipalities listed by id read alike
    listed = ",".join(members)
    again = http.get("/tablero/api/vista/alerts_per_department", params={"lugar": listed}).json()
    assert {c for r in again["rows"] for c in r["alert_codes"]} == naming
    r = http.get("/tablero/api/resolver", params={"lugar": sub.place_id}).json()
    assert r["lugar"] == sub.place_id and r["nombres"][sub.place_id]["level"] == "subregion"
    assert http.get("/tablero/api/vista/timeline", params={"lugar": "subregion:Bad-Id"}).status_code == 422
