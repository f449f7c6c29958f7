"""Gazetteer and place resolution: Bogotá, decoys, ambiguous municipalities, boilerplate."""

from __future__ import annotations

from radar_pipeline.precompute.boilerplate import load_boilerplate
from radar_pipeline.textfold import fold_spans


def _find(gazetteer, text):
    return [(h.matched, h.place.place_id if h.place else None, h.resolution) for h in gazetteer.find(text)]


def test_bogota_has_its_own_code_not_cundinamarca(gazetteer):
    bog = gazetteer.places["municipality:11001"]
    assert bog.department_code == "11" and gazetteer.places["department:11"].code == "11"
    hits = _find(gazetteer, "Reunión en Bogotá D.C. con la Gobernación de Cundinamarca y en Santafé de Bogotá.")
    assert ("Bogotá D.C.", "municipality:11001", "unique") in hits
    assert ("Cundinamarca", "department:25", "cue") in hits
    assert ("Santafé de Bogotá", "municipality:11001", "unique") in hits


def test_group_or_treaty_named_after_a_place_is_not_the_place(gazetteer, dictionary):
    text = (
        "Las Autodefensas Gaitanistas de Colombia, la Universidad de Antioquia, el Protocolo de Cartagena, "
        "el río Cauca, el Bloque Meta y el Cartel de Medellín."
    )
    ents = dictionary.find(text, phenomenon="territorial")
    hits = gazetteer.find(text, decoy_spans=[(h.start, h.end) for h in ents])
    assert [h for h in hits if h.place is not None] == []


def test_ambiguous_municipality_resolved_by_department_named_nearby(gazetteer):
    hits = _find(gazetteer, "En Florencia (Caquetá) hubo combates.")
    assert ("Florencia", "municipality:18001", "nearby_department") in hits
    hits = _find(gazetteer, "En el municipio de Florencia, departamento del Cauca.")
    assert ("Florencia", "municipality:19290", "nearby_department") in hits


def test_ambiguous_municipality_without_department_stays_unresolved(gazetteer):
    hits = gazetteer.find("Se registraron amenazas en Florencia durante la semana.")
    assert len(hits) == 1 and hits[0].place is None and hits[0].resolution == "unresolved"
    assert set(hits[0].candidates) == {"municipality:18001", "municipality:19290"}


def test_name_shared_by_department_and_municipalities(gazetteer):
    # "Antioquia, Caldas" is a list of departments: Caldas must not become Caldas (Antioquia)
    hits = _find(gazetteer, "Antioquia, Caldas y Risaralda")
    assert ("Caldas", None, "unresolved") in hits
    assert ("Caldas", "municipality:05129", "nearby_department") in _find(gazetteer, "Caldas (Antioquia)")
    assert _find(gazetteer, "Arauca")[0][1:] == ("department:81", "department_only")


def test_country_homonyms_and_abbreviations(gazetteer):
    hits = _find(gazetteer, "Armenia and Azerbaijan; Armenia, Quindío; the US and the U.S.; ABOUT US; us")
    assert ("Armenia", "country:ARM", "country_default") in hits
    assert ("Armenia", "municipality:63001", "nearby_department") in hits
    assert [h for h in hits if h[1] == "country:USA"] == [
        ("US", "country:USA", "unique"),
        ("U.S.", "country:USA", "unique"),
    ]


def test_context_required_names_and_lowercase_words(gazetteer):
    assert _find(gazetteer, "la meta del plan; Meta Platforms")[0][1] is None
    assert _find(gazetteer, "en el departamento del Meta")[0][1:] == ("department:50", "cue")
    assert _find(gazetteer, "la paz y la unión") == []


def test_boilerplate_address_is_stripped_before_matching(gazetteer):
    b = load_boilerplate()
    text = (
        "Respuesta institucional en Tumaco.\nCarrera 9 No. 16-21 - Bogotá D.C\n"
        "PBX: (57) (1) 314 7300 - Línea Nacional: 01 8000 914814\nwww.defensoria.gov.co"
    )
    masked, mfolded, n = b.mask(text, fold_spans(text))
    assert n >= 2 and len(masked) == len(text)
    places = [h.place.place_id for h in gazetteer.find(masked, folded=mfolded) if h.place]
    assert places == ["municipality:52835"]


def test_repeated_page_lines_are_boilerplate():
    b = load_boilerplate()
    pages = [f"Informe de seguimiento Colombia\ncontenido {i} sobre Tumaco" for i in range(5)]
    assert "informe de seguimiento colombia" in b.repeated_lines(pages)
    assert b.repeated_lines(pages[:2]) == frozenset()


def test_veredas_listed_in_capitals_are_not_municipalities(gazetteer):
    assert _find(gazetteer, "PAJAROS; PUEBLO NUEVO; LOS ANDES; SAN PEDRO; PUEBLO BELLO") == []


def test_demonyms_and_metonyms_are_words_for_a_country_not_place_mentions(gazetteer, shared_dir):
    from radar_pipeline.precompute.places import load_country_names

    countries = {c.iso3: c for c in load_country_names(shared_dir / "geo")}
    assert "Russian" in countries["RUS"].demonyms and "Kremlin" in countries["RUS"].metonyms
    assert countries["RUS"].label == "Rusia" and "Russia" in countries["RUS"].names  # Natural Earth's name
    assert countries["CHN"].label == "China" and "US" in countries["USA"].case_sensitive
    # the place matcher never reads them: "los rusos" or "the Kremlin" is not Russia the place
    assert _find(gazetteer, "Los rusos y el Kremlin hablaron; Russian officials agreed.") == []
    assert [p for _, p, _ in _find(gazetteer, "Rusia y Russia.")] == ["country:RUS", "country:RUS"]
    # without Natural Earth only the listed names are known (no "Russia"), never an error
    bare = {c.iso3: c for c in load_country_names(None)}
    assert "Rusia" in bare["RUS"].names and "Russia" not in bare["RUS"].names


def test_demonyms_for_an_unknown_country_are_refused(tmp_path, shared_dir):
    import pytest
    import yaml

    from radar_pipeline.precompute.places import DEFAULT_PLACES_PATH, load_country_names

    data = yaml.safe_load(DEFAULT_PLACES_PATH.read_text(encoding="utf-8"))
    data["demonyms"]["XXX"] = ["nadie"]
    bad = tmp_path / "places.yaml"
    bad.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ValueError, match="XXX"):
        load_country_names(shared_dir / "geo", bad)
