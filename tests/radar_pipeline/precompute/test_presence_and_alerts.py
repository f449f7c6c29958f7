"""Armed presence (three states, dedup, shapes) and early-warning parsing."""

from __future__ import annotations

from radar_pipeline.precompute.alerts import (
    AlertDoc,
    build_early_warnings,
    classify_alert_document,
    find_code_references,
    find_type_statements,
)
from radar_pipeline.precompute.presence import (
    Located,
    aggregate_presence,
    build_shape_index,
    parse_flag,
    parse_records,
    record_core,
)

CAPA = (
    "capa: au_compilado_R02, fid: {fid}, b_ADM2_ES: {name}, b_ADM2_PCODE: {code}, b_ADM1_ES: {dept}, "
    "b_ADM1_PCODE: {code4}, au_country: {country}, au_level1: {dept}, au_level2: {name}, au_population: 10, "
    "au_c_d_f: FALSO, au_emc: {emc}, au_embf: FALSO, au_seg_marq: FALSO, au_eln: {eln}, au_lobos: FALSO, "
    "au_choneros: FALSO, au_cv: FALSO, au_pcc: FALSO, au_others: FALSO, au_no_info: {noinfo}, "
    "au_invest. with presence: VERDADEIRO, au_popup_window_es: - EMC: Frente X\n- otro, au_area km: 1.5"
)
TILE = (
    "tile_zoom: 6, fid: {fid}, au_ID_concatenated: x, au_country: {country}, au_level1: {dept}, au_level2: {name}, "
    "b_ADM1_PCODE: {code4}, b_ADM2_PCODE: {code}, au_no_info: {noinfo}, grupo_EMC: {emc}, grupo_ELN: {eln}, "
    "grupo_CDF_AGC: NO, total_grupos_presentes: 1.0"
)


def rec(template=CAPA, **kw):
    base = dict(
        fid=1,
        name="El Paujíl",
        code="CO18256",
        dept="Caquetá",
        code4="CO18",
        country="Colombia",
        emc="FALSO",
        eln="FALSO",
        noinfo="FALSO",
    )
    base.update(kw)
    return template.format(**base)


def test_flags_in_spanish_portuguese_english():
    assert [parse_flag(v) for v in ["VERDADERO", "VERDADEIRO", "TRUE", "SI", "FALSO", "NO", "0", "", "n/d"]] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        None,
        None,
    ]


def test_three_states_never_shows_unknown_as_absent():
    text = "\n\n".join(
        [
            rec(fid=1, eln="VERDADEIRO"),  # present
            rec(fid=2, code="CO18001", name="Florencia"),  # absent (declared)
            rec(fid=3, code="CO18410", name="La Montañita", noinfo="VERDADEIRO"),  # no information
            rec(TILE, fid=4, code="CO18247", name="El Doncello", noinfo="NO", emc="SI", eln="NO"),
            "capa: au_compilado_R02, fid: 9, b_ADM2_PCODE: EC0401, b_adm2_geral: Tulcan",  # boundary only
        ]
    )
    recs = parse_records(text)
    assert len(recs) == 4
    assert [r.state("eln") for r in recs] == ["present", "absent", "no_info", "absent"]
    assert recs[2].state("emc") == "no_info" and recs[3].state("emc") == "present"
    assert recs[0].state("pcc") == "absent" and recs[3].state("pcc") == "no_info"  # no grupo_PCC field
    assert record_core(recs[0], "eln").startswith("b_ADM2_PCODE: CO18256") and record_core(recs[0], "eln").endswith(
        "au_eln: VERDADEIRO"
    )


def test_dedup_by_municipality_and_shapes(shared_dir):
    shapes = build_shape_index(shared_dir / "geo")
    r1 = parse_records(rec(fid=1, eln="VERDADEIRO"))[0]
    r2 = parse_records(rec(TILE, fid=1, noinfo="NO", eln="NO", emc="NO"))[0]
    r3 = parse_records(rec(fid=7, code="PE0101", code4="PE01", name="Chachapoyas", dept="Amazonas", country="Peru"))[0]
    r4 = parse_records(rec(fid=8, code="BR1400308", code4="BR14", name="Mucajaí", dept="Roraima", country="Brasil"))[0]
    r5 = parse_records(rec(fid=9, code="CO18999", code4="CO18", name="Florencia", dept="Caquetá"))[0]
    rows = aggregate_presence(
        [
            Located("d1", r1, {"eln": "d1-0"}),
            Located("d2", r2, {"eln": "d2-0"}),
            Located("d3", r3, {}),
            Located("d4", r4, {}, "beyond_tabular_cap"),
            Located("d5", r5, {}),
        ],
        shapes,
    )
    eln = {r["municipality_id"]: r for r in rows if r["group_key"] == "eln"}
    paujil = eln["CO18256"]
    assert (paujil["state"], paujil["n_records"], paujil["n_present"], paujil["n_absent"]) == ("present", 2, 1, 1)
    assert [e["chunk_id"] for e in paujil["evidence"]] == ["d1-0"]  # cites what declares the state
    assert (paujil["shape_match"], paujil["divipola_code"]) == ("code", "18256")
    assert eln["PE0101"]["shape_match"] == "code"
    assert eln["BR1400308"]["shape_match"] == "none"
    assert eln["BR1400308"]["evidence"][0] == {
        "doc_id": "d4",
        "chunk_id": None,
        "quote": record_core(r4, "eln"),
        "reason": "beyond_tabular_cap",
    }
    assert eln["CO18999"]["shape_match"] == "name"  # unknown code, name found inside Caquetá
    assert len({r["municipality_id"] for r in rows}) == 4


def test_alert_documents_codes_and_types():
    inv = {
        "F3-ALERTAS-001": {
            "nombre_estandarizado": "ALERTAS_001-17-91689.json",
            "carpeta": "F3/Alertas_Tempranas/alertas",
        },
        "F3-ALERTAS-364": {
            "nombre_estandarizado": "ALERTAS_informes001.pdf",
            "carpeta": "F3/Alertas_Tempranas/pdfs/Informes",
        },
    }
    assert classify_alert_document("a", ["codefest/F3/F3-ALERTAS-001.txt"], inv) == AlertDoc("a", "alert", "001-17")
    assert classify_alert_document("b", ["codefest/F3/F3-ALERTAS-364.txt"], inv) == AlertDoc("b", "follow_up", None)
    assert classify_alert_document("c", ["radar/ai_military/x_001-17.pdf"], inv) is None
    refs = find_code_references(
        "Referencia: Seguimiento Alerta Temprana de Inminencia No. 010-18 y AT 37-18; "
        "Alerta Temprana 063 del 24 de Julio de 2018"
    )
    assert [(c, t) for c, t, _, _ in refs] == [("010-18", "imminent"), ("037-18", None), ("063-18", None)]
    assert [
        t
        for t, _, _ in find_type_statements(
            "El escenario de riesgo de inminencia; una ATE; la alerta temprana estructural"
        )
    ] == ["imminent", "structural", "structural"]


def test_early_warnings_types_never_summed_and_places_by_department():
    docs = [
        AlertDoc("a1", "alert", "001-18"),
        AlertDoc("a2", "alert", "002-18"),
        AlertDoc("a3", "alert", "003-18"),
        AlertDoc("f1", "follow_up", None),
    ]
    chunks = {
        "a1": [("a1-0", "El escenario de riesgo de inminencia en Teorama")],
        "a2": [("a2-0", "Alerta Temprana Estructural para Tibú")],
        "a3": [("a3-0", "Riesgo en Tibú")],
        "f1": [
            (
                "f1-0",
                "Bogotá D.C., 24 de mayo. Seguimiento Alerta Temprana N° 04-18 para el municipio de Algeciras - Huila",
            ),
            ("f1-1", "AT de inminencia 004-18 y la AT 099-19 citada de paso"),
        ],
    }
    pm = [
        {
            "chunk_id": "a1-0",
            "place_id": "municipality:54800",
            "level": "municipality",
            "code": "54800",
            "department_code": "54",
        },
        {
            "chunk_id": "a2-0",
            "place_id": "municipality:54810",
            "level": "municipality",
            "code": "54810",
            "department_code": "54",
        },
        {
            "chunk_id": "a3-0",
            "place_id": "municipality:54810",
            "level": "municipality",
            "code": "54810",
            "department_code": "54",
        },
        {
            "chunk_id": "f1-0",
            "char_start": 0,
            "place_id": "municipality:11001",
            "level": "municipality",
            "code": "11001",
            "department_code": "11",
        },  # the letter's dateline: not what the alert names
        {
            "chunk_id": "f1-0",
            "char_start": 83,
            "place_id": "municipality:41020",
            "level": "municipality",
            "code": "41020",
            "department_code": "41",
        },
    ]
    em = [{"chunk_id": "a1-0", "entity_id": "eln"}, {"chunk_id": "a1-0", "entity_id": "pnis"}]
    dates = {"a1": {"date": "2018", "rule": "alert_number"}}
    rows, stats = build_early_warnings(docs, chunks, pm, em, dates, {}, {"eln"})
    by = {r["alert_code"]: r for r in rows}
    assert by["001-18"]["alert_type"] == "imminent" and by["001-18"]["armed_groups"] == ["eln"]
    assert by["001-18"]["date"] == "2018" and by["001-18"]["code_year"] == 2018
    assert by["002-18"]["alert_type"] == "structural" and by["003-18"]["alert_type"] == "unspecified"
    assert by["004-18"]["alert_type"] == "imminent" and by["004-18"]["department_codes"] == ["41"]
    assert by["004-18"]["date"] is None and by["004-18"]["documents"] == [{"doc_id": "f1", "role": "follow_up"}]
    assert "099-19" not in by and stats["codes_mentioned_in_passing"] == 1

    from radar_pipeline.precompute.aggregates import AggInputs, alerts_per_department

    places = {
        "municipality:54800": {"level": "municipality", "code": "54800", "department_code": "54"},
        "municipality:54810": {"level": "municipality", "code": "54810", "department_code": "54"},
        "municipality:41020": {"level": "municipality", "code": "41020", "department_code": "41"},
        "department:54": {"level": "department", "code": "54", "name": "Norte de Santander"},
        "department:41": {"level": "department", "code": "41", "name": "Huila"},
    }
    inp = AggInputs({}, {}, {}, [], [], places, {}, rows)
    agg = {(r["department_code"], r["alert_type"]): r for r in alerts_per_department(inp)}
    assert set(agg) == {("54", "imminent"), ("54", "structural"), ("54", "unspecified"), ("41", "imminent")}
    assert all(r["n_alerts"] == 1 for r in agg.values())  # one per type: imminent and structural never added
    assert agg[("54", "structural")]["evidence"] == [{"doc_id": "a2", "chunk_id": "a2-0"}]
