"""End to end on the real test PostgreSQL: crafted core rows → every precompute table, history
kept on a dictionary change, and every aggregate row's evidence verified."""

from __future__ import annotations

import dataclasses
import hashlib

import pandera.polars as pa
import polars as pl
import pytest
import sqlalchemy as sa
import yaml

from evals.precompute_eval import evaluate
from radar_pipeline.precompute import pipeline as P
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.entities import DEFAULT_ENTITIES_PATH
from radar_pipeline.precompute.evidence import verify_evidence
from radar_pipeline.precompute.schemas import PRECOMPUTE_QUERIES, PRECOMPUTE_SCHEMAS
from radar_pipeline.precompute.versioning import current_rows

from .support_precompute import add_document

ALERT = (
    "Mapa\nAutodefensas Gaitanistas de Colombia (AGC) ELN\n"
    "El escenario de riesgo de inminencia se configura en Bogotá D.C. y en Soacha, Cundinamarca, "
    "y en Florencia (Caquetá). En 2023 se repitió."
)
AU_RECORD = (
    "capa: au_compilado_R02\nfid: {fid}\nb_ADM2_PCODE: {code}\nb_ADM1_PCODE: CO18\nau_country: Colombia\n"
    "au_level1: Caquetá\nau_level2: {name}\nau_emc: {emc}\nau_eln: FALSO\nau_cv: FALSO\nau_no_info: {ni}"
)


def _crafted(engine):
    a = add_document(engine, "codefest/F3/F3-ALERTAS-001.txt", [ALERT, "El ELN y las AGC en Bogotá D.C."])
    b = add_document(
        engine,
        "radar/space_security/report_2021-03-04.pdf",
        ["Starlink and Cosmos 2542 passed near China.", "The ASAT test by Russia and China."],
        phenomenon="space_security",
        language="en",
    )
    c = add_document(
        engine,
        "radar/ai_military/notes.pdf",
        ["In 2019 the PLA studied Project Maven and Starlink."],
        phenomenon="ai_military",
        language="en",
    )
    recs = [
        AU_RECORD.format(fid=1, code="CO18256", name="El Paujíl", emc="VERDADERO", ni="FALSO"),
        AU_RECORD.format(fid=2, code="CO18001", name="Florencia", emc="FALSO", ni="FALSO"),
        AU_RECORD.format(fid=3, code="CO18410", name="La Montañita", emc="FALSO", ni="VERDADERO"),
    ]
    # tabular: 3 records (pages), but the chunk cap left only the first two in passages
    d = add_document(
        engine,
        "radar/territorial/data/au_records.csv",
        ["\n".join(recs[:2])],
        pages=recs,
        is_tabular=True,
        page_of_chunk=[(1, 2)],
    )
    return a, b, c, d


def _run_all(engine, config):
    out = {
        "dict": P.materialize_entity_dictionary(engine, config.dictionary()),
        "gaz": P.materialize_gazetteer(engine, config.gazetteer()),
        "mentions": P.materialize_mentions(engine, config),
        "dates": P.materialize_publication_dates(engine, config),
        "alerts": P.materialize_early_warnings(engine, config),
        "presence": P.materialize_armed_presence(engine, config),
        "aggs": P.materialize_aggregates(engine, config),
    }
    return out


def test_all_tables_rules_and_evidence(pengine, config):
    a, b, c, d = _crafted(pengine)
    st = _run_all(pengine, config)

    dates = {r["doc_id"]: r for r in current_rows(pengine, "publication_dates")}
    assert (dates[a]["date"], dates[a]["rule"], dates[a]["source_kind"]) == (
        "2017",
        "alert_number",
        "codefest_inventory",
    )
    assert (dates[b]["date"], dates[b]["rule"]) == ("2021-03-04", "iso_date")
    assert dates[c]["date"] is None  # "In 2019" is in the text, never a publication date
    assert st["dates"]["undated"] == 2

    places = current_rows(pengine, "place_mentions", where="doc_id = :d", params={"d": a})
    bog = [p for p in places if p["matched"].startswith("Bogotá")]
    assert bog and {p["place_id"] for p in bog} == {"municipality:11001"} and bog[0]["department_code"] == "11"
    assert not [p for p in places if p["matched"] == "Colombia"]  # inside the AGC's name
    assert {p["place_id"] for p in places} >= {"municipality:25754", "department:25", "municipality:18001"}

    ents = {(r["doc_id"], r["entity_id"]) for r in current_rows(pengine, "entity_mentions")}
    assert {
        (a, "clan_del_golfo"),
        (a, "eln"),
        (b, "starlink"),
        (b, "kosmos"),
        (b, "asat"),
        (c, "pla"),
        (c, "project_maven"),
    } <= ents

    (alert,) = current_rows(pengine, "early_warnings")
    assert (alert["alert_code"], alert["alert_type"], alert["date"]) == ("001-17", "imminent", "2017")
    assert alert["armed_groups"] == ["clan_del_golfo", "eln"]
    assert set(alert["department_codes"]) == {"11", "25", "18"}

    pres = {(r["municipality_id"], r["group_key"]): r for r in current_rows(pengine, "armed_presence")}
    assert pres[("CO18256", "emc")]["state"] == "present"
    assert pres[("CO18001", "emc")]["state"] == "absent"
    assert pres[("CO18410", "emc")]["state"] == "no_info"  # never shown as absent
    beyond = pres[("CO18410", "emc")]["evidence"][0]
    assert beyond["chunk_id"] is None and beyond["reason"] == "beyond_tabular_cap"
    assert pres[("CO18256", "emc")]["evidence"][0]["chunk_id"] == f"{d}-0"
    assert st["presence"]["municipalities_with_shape"] == 3

    timeline = current_rows(
        pengine, "agg_timeline", where="entity_id IS NULL AND phenomenon = 'all' AND granularity = 'year'"
    )
    by_period = {r["period"]: r for r in timeline}
    assert by_period[None]["n_documents"] == 2 and by_period[None]["undated"]
    assert by_period["2017"]["evidence"] == [{"doc_id": a, "chunk_id": f"{a}-0"}]

    dpp = {(r["place_id"], r["phenomenon"]): r for r in current_rows(pengine, "agg_documents_per_place")}
    assert (
        dpp[("department:11", "all")]["n_documents"] == 1 and dpp[("department:11", "all")]["n_documents_direct"] == 0
    )
    assert dpp[("department:25", "all")]["n_documents_direct"] == 1
    assert {e["chunk_id"] for e in dpp[("municipality:11001", "all")]["evidence"]} == {f"{a}-0", f"{a}-1"}

    alerts = current_rows(pengine, "agg_alerts_per_department")
    assert {(r["department_code"], r["alert_type"]) for r in alerts} == {
        ("11", "imminent"),
        ("25", "imminent"),
        ("18", "imminent"),
    }
    net = {
        (r["kind"], r["entity_a"], r["entity_b"], r["phenomenon"]) for r in current_rows(pengine, "agg_entity_network")
    }
    assert ("edge", "clan_del_golfo", "eln", "all") in net
    quad = current_rows(pengine, "agg_entity_quadrant", where="phenomenon = 'all'")
    assert quad and all(0 <= q["trend"] <= 1 and q["cutoff_date"] for q in quad)

    report = verify_evidence(pengine)
    assert report["share_rows_ok"] == 1.0 and report["mentions_bad_span"] == 0
    assert all(t["rows"] > 0 for t in report["tables"].values())

    for table, query in PRECOMPUTE_QUERIES.items():
        PRECOMPUTE_SCHEMAS[table].validate(
            pl.read_database(query, connection=pengine, infer_schema_length=None), lazy=True
        )


def test_evidence_check_catches_a_wrong_citation(pengine, config):
    a, b, *_ = _crafted(pengine)
    _run_all(pengine, config)
    with pengine.begin() as conn:  # point a Bogotá row at a passage that does not name Bogotá
        conn.execute(
            sa.text(
                "UPDATE agg_documents_per_place SET evidence = CAST(:ev AS jsonb) "
                "WHERE place_id = 'municipality:11001' AND phenomenon = 'all' AND valid_to IS NULL"
            ),
            {"ev": f'[{{"doc_id": "{b}", "chunk_id": "{b}-0"}}, {{"doc_id": "{a}", "chunk_id": "{a}-1"}}]'},
        )
    report = verify_evidence(pengine, tables=("agg_documents_per_place",))
    assert report["tables"]["agg_documents_per_place"]["items_failed"] == 1
    assert report["share_rows_ok"] < 1.0


def test_dictionary_change_supersedes_instead_of_overwriting(pengine, config, tmp_path):
    a, *_ = _crafted(pengine)
    first = _run_all(pengine, config)
    again = P.materialize_mentions(pengine, config)  # same inputs: nothing changes
    assert again["entity_mentions.rows_inserted"] == 0 and again["entity_mentions.rows_superseded"] == 0

    data = yaml.safe_load(DEFAULT_ENTITIES_PATH.read_text(encoding="utf-8"))
    data["version"] = "test-2"
    for e in data["entities"]:
        if e["id"] == "eln":  # a reviewed correction: "ELN" no longer counted as an alias
            e["aliases"]["es"] = [x for x in e["aliases"]["es"] if not (isinstance(x, dict) and x.get("text") == "ELN")]
    path = tmp_path / "entities.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    cfg2 = dataclasses.replace(config, entities_path=path)
    P.materialize_entity_dictionary(pengine, cfg2.dictionary())
    second = P.materialize_mentions(pengine, cfg2)

    with pengine.connect() as conn:
        old_eln = conn.execute(
            sa.text("SELECT count(*) FROM entity_mentions WHERE entity_id = 'eln' AND valid_to IS NOT NULL")
        ).scalar()
        cur_eln = conn.execute(sa.text("SELECT count(*) FROM entity_mentions_current WHERE entity_id = 'eln'")).scalar()
        versions = dict(
            conn.execute(sa.text("SELECT dictionary_version, count(*) FROM entity_mentions GROUP BY 1")).all()
        )
        runs = conn.execute(sa.text("SELECT count(*) FROM precompute_runs WHERE asset = 'mentions'")).scalar()
        dict_rows = conn.execute(sa.text("SELECT count(*) FROM entity_dictionary WHERE entity_id = 'eln'")).scalar()
    assert old_eln == 2 and cur_eln == 0  # the two "ELN" mentions are kept as history, not deleted
    assert second["entity_mentions.rows_superseded"] >= 2
    assert any(v.startswith("entities:test-2") for v in versions) and len(versions) == 2
    assert runs == 3 and dict_rows == 2  # the dictionary entry itself has both versions
    assert first["mentions"]["entity_mentions.rows_current"] > second["entity_mentions.rows_current"]


def _current_mentions(engine) -> dict[str, list[tuple]]:
    """Every current mention row's content and lineage, sorted (what a reader of the tables sees)."""
    out = {}
    with engine.connect() as conn:
        for name in ("entity_mentions", "place_mentions"):
            cols = T.content_columns(T.VERSIONED_TABLES[name])
            rows = conn.execute(
                sa.text(f"SELECT row_hash, run_id, {', '.join(cols)} FROM {name} WHERE valid_to IS NULL")
            ).all()
            out[name] = sorted(tuple(map(str, r)) for r in rows)
    return out


def _documents_with_mentions(engine) -> set[str]:
    with engine.connect() as conn:
        return set(
            conn.execute(
                sa.text("SELECT doc_id FROM entity_mentions_current UNION SELECT doc_id FROM place_mentions_current")
            ).scalars()
        )


def test_incremental_mentions_match_only_changed_documents_and_equal_a_full_pass(pengine, config):
    """A new, a changed (one chunk re-written) and a removed document: only the new and the changed
    ones are matched again, the removed one's rows are closed, and a full pass over every document
    afterwards finds exactly the current rows (nothing to insert, nothing to supersede)."""
    a, b, c, d = _crafted(pengine)
    P.materialize_entity_dictionary(pengine, config.dictionary())
    P.materialize_gazetteer(pengine, config.gazetteer())
    first = P.materialize_mentions(pengine, config)
    assert first["documents_matched"] == 4 and first["documents_reused"] == 0
    again = P.materialize_mentions(pengine, config)  # nothing changed: nothing matched, nothing written
    assert again["documents_matched"] == 0 and again["documents_reused"] == 4
    assert again["entity_mentions.rows_inserted"] == again["entity_mentions.rows_superseded"] == 0
    assert again["entity_mentions"] == first["entity_mentions"] and again["place_mentions"] == first["place_mentions"]

    new = add_document(pengine, "codefest/F3/F3-ALERTAS-002.txt", ["El ELN amenaza a Florencia (Caquetá)."])
    with pengine.begin() as conn:  # b re-chunked: its first passage now names Russia, not Starlink
        text = "Cosmos 2542 and Russia passed near China."
        conn.execute(
            sa.text("UPDATE chunks SET text = :t, text_sha = :s WHERE doc_id = :d AND seq = 0"),
            {"t": text, "s": hashlib.sha256(text.encode()).hexdigest(), "d": b},
        )
        for table in ("chunks", "pages", "documents"):  # c is gone
            conn.execute(sa.text(f"DELETE FROM {table} WHERE doc_id = :d"), {"d": c})
    inc = P.materialize_mentions(pengine, config)
    assert inc["documents_matched"] == 2 and inc["documents_reused"] == 2 and inc["documents"] == 4
    assert inc["entity_mentions.rows_superseded"] > 0  # Starlink in b, and c's rows
    incremental = _current_mentions(pengine)
    assert new in _documents_with_mentions(pengine) and c not in _documents_with_mentions(pengine)

    full = P.materialize_mentions(pengine, config, full=True)
    assert full["documents_matched"] == 4
    for name in ("entity_mentions", "place_mentions"):
        assert full[f"{name}.rows_inserted"] == 0 and full[f"{name}.rows_superseded"] == 0, name
    assert _current_mentions(pengine) == incremental

    # a retraction closes a document's rows and its ledger entry: it is matched again if it comes back
    P.close_document_rows(pengine, [a])
    assert a not in _documents_with_mentions(pengine)
    back = P.materialize_mentions(pengine, config)
    assert back["documents_matched"] == 1 and a in _documents_with_mentions(pengine)


def test_contract_rejects_bogota_in_cundinamarca():
    frame = pl.DataFrame(
        {
            "row_hash": ["a" * 40],
            "run_id": ["r"],
            "producer": ["x@y"],
            "place_id": ["municipality:11001"],
            "level": ["municipality"],
            "code": ["11001"],
            "country_code": ["COL"],
            "department_code": ["25"],
        }
    )
    with pytest.raises(pa.errors.SchemaErrors):
        PRECOMPUTE_SCHEMAS["place_gazetteer"].validate(frame, lazy=True)


def test_evaluation_reports_precision_recall_per_language(gazetteer, dictionary):
    passages = [
        {
            "id": "t1",
            "lang": "es",
            "phenomenon": "territorial",
            "text": "El ELN en Bogotá y la Universidad de Antioquia.",
            "mentions": [
                {"start": 3, "end": 6, "text": "ELN", "kind": "entity", "id": "eln"},
                {"start": 10, "end": 16, "text": "Bogotá", "kind": "place", "id": "municipality:11001"},
            ],
        },
        {
            "id": "t2",
            "lang": "en",
            "phenomenon": "space_security",
            "text": "Starlink over Peru.",
            "mentions": [{"start": 0, "end": 8, "text": "Starlink", "kind": "entity", "id": "starlink"}],
        },
    ]
    r = evaluate(passages, dictionary=dictionary, gazetteer=gazetteer)
    assert r["by_language"]["es"]["all"]["strict"] == {
        "tp": 2,
        "fp": 0,
        "fn": 0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }
    assert r["by_language"]["en"]["place"]["strict"]["fp"] == 1  # "Peru" was not labelled
    assert r["overall"]["all"]["strict"]["tp"] == 3


def test_shipped_labelled_sample_is_consistent():
    from evals.precompute_eval import load_labelled

    rows = load_labelled()
    assert len(rows) >= 150 and {r["lang"] for r in rows} == {"en", "es", "pt"}
    assert {r["phenomenon"] for r in rows} == {"ai_military", "space_security", "territorial"}
