"""An alert's covered territory needs a territorial frame (``precompute.coverage``), and ambiguous
entity aliases need their context (``entities.Alias.context_ok``).

Every example here is written for the test (none is a labelled sample item's text)."""

from __future__ import annotations

import pytest

from radar_pipeline.precompute.alerts import AlertDoc, build_early_warnings
from radar_pipeline.precompute.coverage import coverage_frame, department_after
from radar_pipeline.precompute.entities import load_entity_dictionary, parse_entity_dictionary


def _frame(text: str, name: str, level: str, **kw) -> str | None:
    s = text.index(name)
    return coverage_frame(text, s, s + len(name), level, **kw)


# ---------------------------------------------------------------------- rejections
@pytest.mark.parametrize(
    ("text", "name", "level"),
    [
        # a vereda list: names that are also a department, a country, a municipality elsewhere
        ("Mapa Veredas: LOS MANGOS; EL HUILA; CUBA; SANTA ROSA Clan del Golfo ELN", "EL HUILA", "department"),
        ("Mapa Veredas: LOS MANGOS; EL HUILA; CUBA; SANTA ROSA Clan del Golfo ELN", "CUBA", "country"),
        ("Mapa Veredas: LOS MANGOS; EL HUILA; CUBA; SANTA ROSA Clan del Golfo ELN", "SANTA ROSA", "municipality"),
        # a resguardo / community-council / barrio list, the header on the same passage
        ("Resguardos indígenas: ALTO ORITO; TAMINANGO Y LA PLAYA Frente 48", "TAMINANGO", "municipality"),
        ("Consejos Comunitarios: RÍO MIRA; ROBERTO PAYÁN Población afro", "ROBERTO PAYÁN", "municipality"),
        ("Barrios: VILLA FLOR; NUEVO CARTAGO; EL PROGRESO Comerciantes", "CARTAGO", "municipality"),
        # an upper-case list item whose header is on an earlier passage
        ("GUADUAS; EL SILENCIO; BRISAS Comerciantes; Docentes", "GUADUAS", "municipality"),
        # a locality word right before the name
        ("la comunidad de la vereda Mallama alto reporta", "Mallama", "municipality"),
        ("el resguardo indígena Cumbal Gran Tescual", "Cumbal", "municipality"),
        ("el corredor del río Caquetá hacia el sur", "Caquetá", "department"),
        # part of a person's or unit's name
        ("la Compañía Raúl Eduardo Mahecha del ELN y el Frente Rafael Uribe Uribe", "Uribe", "municipality"),
        ("el Bloque Magdalena Medio Jorge Briceño avanza", "Briceño", "municipality"),
        # countries: a letterhead and a passing remark
        ("REPÚBLICA DE COLOMBIA - DEFENSORÍA DEL PUEBLO Ibagué, 4 de julio de 2021", "COLOMBIA", "country"),
        ("la cooperación entre las fuerzas de Colombia y Panamá es escasa", "Panamá", "country"),
        # a place named without a frame ("hacia el X", "desde X")
        ("la estructura avanza desde el sur del Tolima hacia el Quindío", "Quindío", "department"),
    ],
)
def test_mentions_without_a_territorial_frame_are_not_coverage(text, name, level):
    assert _frame(text, name, level) is None


# ---------------------------------------------------------------------- frames
@pytest.mark.parametrize(
    ("text", "name", "level", "frame"),
    [
        (
            "Referencia: Seguimiento a la Alerta Temprana N° 17-21 para el municipio de Ricaurte, Nariño.",
            "Ricaurte",
            "municipality",
            "cue",
        ),
        (
            "el riesgo para la población de los municipios de Barbacoas, Magüí y Roberto Payán es alto",
            "Roberto Payán",
            "municipality",
            "cue",
        ),
        ("en zona rural del municipio Puerto Asís se registran", "Puerto Asís", "municipality", "cue"),
        ("la expansión en el departamento del Guaviare", "Guaviare", "department", "cue"),
        ("Alerta 009-22 - Tadó, Istmina y Condoto, departamento del Chocó.", "Tadó", "municipality", "department"),
        ("Alerta 009-22 - Tadó, Istmina y Condoto, departamento del Chocó.", "Istmina", "municipality", "department"),
        ("la disputa en Bojayá (Chocó) continúa", "Bojayá", "municipality", "department"),
        ("la disputa en Bojayá (Chocó) continúa", "Chocó", "department", "qualifier"),
    ],
)
def test_framed_mentions_are_coverage(text, name, level, frame):
    assert _frame(text, name, level) == frame


def test_a_department_mention_after_a_comma_and_the_capital_district_frame_a_name():
    text = "la disputa llega a Fusagasugá y Silvania, Cundinamarca, desde el sur"
    dept = {text.index("Cundinamarca")}
    assert _frame(text, "Fusagasugá", "municipality", department_starts=dept) == "department"
    assert _frame(text, "Fusagasugá", "municipality") is None  # "Cundinamarca" not read as a department
    assert _frame(text, "Cundinamarca", "department") == "qualifier"
    assert _frame("amenazas en Bogotá D.C. y sus localidades", "Bogotá D.C.", "municipality") == "district"
    assert _frame("DEFENSORÍA DEL PUEBLO Bogotá D.C., 14 de marzo de 2022", "Bogotá D.C.", "municipality") is None


def test_a_follow_up_reference_window_frames_its_names_but_never_a_country():
    text = "Seguimiento AT N° 031-19 Barbacoas y Ricaurte"
    assert _frame(text, "Ricaurte", "municipality", in_reference=True) == "reference"
    assert _frame(text, "Ricaurte", "municipality") is None
    assert _frame("Seguimiento AT N° 031-19 Colombia", "Colombia", "country", in_reference=True) is None


def test_department_after_reads_through_a_list_of_names():
    text = "Samaniego, Santacruz y Policarpa, en el departamento de Nariño."
    assert text[department_after(text, len("Samaniego")) :].startswith("Nariño")
    assert department_after("Samaniego tiene clima frío en el departamento de Nariño", len("Samaniego")) is None


# ---------------------------------------------------------------------- the alert's places
def _m(chunk, text, name, place_id, level, candidates=None):
    s = text.index(name)
    dept = place_id.split(":")[1][:2] if place_id and level in ("municipality", "department") else None
    return {
        "chunk_id": chunk,
        "char_start": s,
        "char_end": s + len(name),
        "place_id": place_id,
        "level": level,
        "code": place_id.split(":")[1] if place_id else None,
        "department_code": dept,
        "candidates": candidates,
    }


def test_alert_places_keep_framed_territories_and_pick_homonyms_in_the_stated_department():
    text = (
        "Mapa Veredas: EL TAMBO; ARGENTINA; LA PLATA Resguardos indígenas: PUERTO RICO Frente 30. "
        "El riesgo afecta al municipio de El Tambo, departamento de Nariño, donde la Compañía Mario "
        "Ospina Cajamarca recluta."
    )
    second = text.index("El Tambo,")
    pm = [
        _m("a-0", text, "EL TAMBO", "municipality:19256", "municipality", ["municipality:19256", "municipality:52260"]),
        _m("a-0", text, "ARGENTINA", "country:ARG", "country"),
        _m("a-0", text, "LA PLATA", "municipality:41396", "municipality"),
        _m("a-0", text, "PUERTO RICO", "municipality:18592", "municipality"),
        # the framed homonym, resolved by the matcher to Cauca's El Tambo
        {
            **_m(
                "a-0",
                text,
                "El Tambo,",
                "municipality:19256",
                "municipality",
                ["municipality:19256", "municipality:52260"],
            ),
            "char_start": second,
            "char_end": second + len("El Tambo"),
        },
        _m("a-0", text, "Nariño", "department:52", "department"),
        _m("a-0", text, "Cajamarca", "municipality:73124", "municipality"),
    ]
    rows, stats = build_early_warnings(
        [AlertDoc("a", "alert", "051-21")], {"a": [("a-0", text)]}, pm, [], {}, {}, set()
    )
    (row,) = rows
    assert [p["place_id"] for p in row["places"]] == ["department:52", "municipality:52260"]
    assert row["department_codes"] == ["52"]
    assert stats["place_homonym_by_alert_department"] == 1
    assert stats["place_mentions_not_coverage"] == 5  # 4 list items + the unit named after a person
    place_ev = {e["key"]: e for e in row["evidence"] if e["role"] == "place"}
    assert set(place_ev) == {"department:52", "municipality:52260"}
    # the evidence points at the framed mention, not at the vereda of the same name listed before it
    assert place_ev["municipality:52260"]["char_start"] == second

    from radar_pipeline.claims.rules import alert_claims

    claims, _ = alert_claims(rows, {}, {"a-0": (text, "es")}, {}, {}, {}, {})
    (tambo,) = [c for c in claims if c.object == "municipality:52260"]
    assert tambo.evidence[0].span.startswith("El riesgo afecta al municipio de El Tambo")


# ---------------------------------------------------------------------- entity context rules
@pytest.fixture(scope="module")
def entities():
    return load_entity_dictionary()


def _ids(d, text, phen="territorial"):
    return [(h.entity_id, h.matched) for h in d.find(text, phenomenon=phen)]


@pytest.mark.parametrize(
    "text",
    [
        "El control lo disputa el grupo disidente de las extintas FARC-EP conocido como Frente 7.",
        "Llegaron estructuras armadas disidentes de la antigua FARC al río Guayabero.",
        "hombres de la facción disidente de las ex-FARC que opera en Tumaco",
        "las disidencias de las otrora FARC-EP se reorganizaron",
        "combates entre disidentes de FARC y el Ejército en la vereda",
    ],
)
def test_dissidence_phrases_map_to_the_dissidents_never_to_the_2016_guerrilla(entities, text):
    hits = _ids(entities, text)
    assert [e for e, _ in hits] == ["farc_dissidents"], hits


def test_farc_next_to_a_dissidence_word_is_not_the_guerrilla_but_history_still_is(entities):
    hits = _ids(entities, "la disidencia que se hace llamar Frente Carolina Ramírez (antes FARC) controla el río")
    assert "farc_ep" not in [e for e, _ in hits]
    assert _ids(entities, "tras la firma del Acuerdo con las FARC-EP en 2016, el ELN ocupó la zona")[0] == (
        "farc_ep",
        "FARC-EP",
    )


def test_nasa_the_people_is_not_nasa_the_agency(entities):
    assert _ids(entities, "las autoridades del pueblo Nasa de Toribío denunciaron", "space_security") == []
    assert _ids(entities, "el cabildo indígena NASA de Caldono", "space_security") == []
    assert _ids(entities, "la cosmovisión nasa y el territorio", "space_security") == []
    assert _ids(entities, "NASA and ESA share debris tracking data", "space_security")[0] == ("nasa", "NASA")


def test_iadc_needs_space_debris_context_and_never_the_defense_college(entities):
    assert (
        _ids(
            entities, "He graduated from the IADC in Washington, the Inter-American Defense College.", "space_security"
        )
        == []
    )
    assert _ids(entities, "The delegation included IADC faculty and OAS officials.", "space_security") == []
    hits = _ids(entities, "The IADC mitigation guidelines limit orbital lifetime to 25 years.", "space_security")
    assert ("iadc", "IADC") in hits
    # chart labels of a space-environment report: the debris committee's protected regions
    assert _ids(entities, "Payload share 12.4 IADC GEO (abs) 310.2 0.0", "space_security") == [("iadc", "IADC")]


def test_a_generic_early_warning_system_is_not_the_ombudsmans_sat(entities):
    assert _ids(entities, "The plan funds an early warning system for floods in the delta.") == []
    assert _ids(entities, "The Famine Early Warning System publishes monthly outlooks.") == []
    assert _ids(entities, "El municipio instaló un sistema de alertas tempranas contra inundaciones.") == []
    hits = _ids(entities, "El Sistema de Alertas Tempranas de la Defensoría del Pueblo emitió la alerta.")
    assert hits[0] == ("sistema_alertas_tempranas", "Sistema de Alertas Tempranas")


def test_context_rules_are_declared_in_the_dictionary_and_validated():
    base = {"version": "t", "entities": [{"id": "x", "name": "X", "category": "actor", "phenomenon": "territorial"}]}
    ok = {
        **base,
        "entities": [
            {
                **base["entities"][0],
                "aliases": {
                    "en": [
                        {
                            "text": "XYZ",
                            "context_required": ["alpha"],
                            "context_forbidden": ["beta*"],
                            "context_window": 20,
                        }
                    ]
                },
            }
        ],
    }
    d = parse_entity_dictionary(ok)
    assert [h.matched for h in d.find("alpha XYZ")] == ["XYZ"]
    assert d.find("XYZ alone") == [] and d.find("alpha XYZ betamax") == []
    assert d.find("alpha " + "z" * 30 + " XYZ") == []  # outside the 20-character window
    assert d.stats["rejected_context"] == 3
    assert d.rows()[0]["aliases"][0]["context_forbidden"] == ["beta*"]
    bad = {
        **base,
        "entities": [{**base["entities"][0], "aliases": {"en": [{"text": "XYZ", "context_required": [""]}]}}],
    }
    with pytest.raises(ValueError, match="context phrases"):
        parse_entity_dictionary(bad)
