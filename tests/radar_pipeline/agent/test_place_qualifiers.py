"""Places the question itself disambiguates, by kind (issue 23.2, second round): a part of the
department or the department's adjective as a homonym's qualifier, the level written as an
apposition after a name shared by a department and a municipality, a region defined by the list of
its municipalities, and the note that says which definition of a subregion was read. Every question
was written for this file (none copied from ``evals/stage2``); each kind has several phrasings."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading.place_resolver import department_adjectives
from radar_pipeline.precompute.places.subregions import municipalities_of
from tests.radar_pipeline.agent.support_reading import read_question


def _place(reader, q):
    return read_question(reader, q)[2].get("lugar")


@pytest.mark.parametrize(
    ("question", "place"),
    [
        # a cardinal part of the department between the homonym and the department
        ("Alertas tempranas en Morales, en el norte del Cauca", "municipality:19473"),
        ("¿Qué grupos operan en Argelia (oriente de Antioquia)?", "municipality:05055"),
        ("Presencia armada en La Unión, al sur de Nariño", "municipality:52399"),
        ("Grupos en El Tambo (suroccidente de Nariño)", "municipality:52260"),
        # the department's adjective, with or without an article, a noun or a part
        ("Grupos armados en Argelia antioqueña", "municipality:05055"),
        ("Alertas en El Tambo, el caucano", "municipality:19256"),
        ("Mapa de presencia en Rionegro (el santandereano)", "municipality:68615"),
        ("Grupos en Argelia, en el oriente antioqueño", "municipality:05055"),
        ("Presencia del ELN en Morales, el municipio bolivarense", "municipality:13473"),
        ("mapa de alertas en la unión nariñense", "municipality:52399"),
        # an apposition before the part, a short department name, a set-aside after the qualifier
        ("Presencia armada en San Pablo, el del sur de Bolívar", "municipality:13670"),
        ("Alertas en La Unión, Valle", "municipality:76400"),
        ("Alertas en Bolívar (Valle)", "municipality:76100"),
        ("Presencia en Suárez (Cauca), no el del Tolima", "municipality:19780"),
        ("Grupos en Florencia, Cauca, no la capital del Caquetá", "municipality:19290"),
    ],
)
def test_a_part_or_adjective_of_the_department_picks_the_homonym(reader, question, place):
    assert _place(reader, question) == place


def test_a_river_basin_is_no_part_of_a_department(reader):
    """ "Alto/Bajo/Medio" name basins that cross departments: "Bajo Cauca" is no Cauca qualifier."""
    route, comps, filters, ambiguous = read_question(reader, "Presencia armada en Argelia, en el bajo Cauca")
    assert not str(filters.get("lugar", "")).startswith("municipality:19"), filters


@pytest.mark.parametrize(
    ("question", "place"),
    [
        # the municipality, by an apposition after the shared name
        ("Presencia del ELN en Arauca capital", "municipality:81001"),
        ("Presencia armada en Arauca, el municipio", "municipality:81001"),
        ("alertas en Arauca (la ciudad), no en todo el departamento", "municipality:81001"),
        ("Grupos armados en Arauca, no todo el departamento", "municipality:81001"),
        ("presencia de grupos en Arauca, la cabecera municipal", "municipality:81001"),
        # the department, by an apposition
        ("Alertas en Sucre, el departamento", "department:70"),
        ("Presencia armada en Nariño, todo el departamento", "department:52"),
        ("Mapa de alertas en Sucre, no el municipio", "department:70"),
        ("Grupos en Córdoba (departamento)", "department:23"),
        # a department named as the qualifier still wins over the bare apposition
        ("Presencia armada en Córdoba, el municipio del Quindío", "municipality:63212"),
    ],
)
def test_the_level_written_after_a_shared_name(reader, question, place):
    assert _place(reader, question) == place


@pytest.mark.parametrize(
    ("question", "members"),
    [
        (
            "Alertas en el Pacífico caucano (Guapi, Timbiquí, López de Micay) desde 2020",
            {"19318", "19418", "19809"},
        ),
        ("Presencia armada en el corredor minero, es decir, Segovia y Remedios", {"05604", "05736"}),
        ("mapa de grupos en la zona costera: Tumaco, Francisco Pizarro y Olaya Herrera", {"52835", "52520", "52490"}),
        (
            "Alertas en el eje del Ariari (Granada, Meta; Puerto Lleras y Vista Hermosa)",
            None,
        ),  # a qualifier inside: not a plain list
    ],
)
def test_a_region_defined_by_its_municipalities_is_their_set(reader, question, members):
    got = _place(reader, question)
    if members is None:
        assert got is None or "," not in got
        return
    assert got is not None and "," in got, got
    assert {m.split(":")[1] for m in municipalities_of(got)} == members
    # the answer says how the place was read
    assert any(n.startswith("Nota:") and "municipios" in n for n in reader.read(question).place_notes)


@pytest.mark.parametrize(
    "question",
    [
        "mapa de presencia de grupos armados en Tumaco y en Buenaventura",
        "¿Hay alertas en Apartadó y Turbo?",
        "presencia del Clan del Golfo en Caucasia, Tarazá y Cáceres",
    ],
)
def test_a_bare_enumeration_names_several_places(reader, question):
    """A list that defines no name stays several places: one place filter holds one value (the sets'
    convention), so no place filter and no set."""
    assert _place(reader, question) is None


@pytest.mark.parametrize(
    ("question", "subregion", "department_form"),
    [
        (
            "¿Dónde opera el Clan del Golfo en el Bajo Cauca antioqueño?",
            "subregion:bajo_cauca_nordeste_antioqueno",
            "Antioquia",
        ),
        ("alertas en la subregión del Urabá de Antioquia", "subregion:uraba_antioqueno", "Antioquia"),
        ("Alertas en el Pacífico nariñense desde 2018", "subregion:pacifico_frontera_narinense", "Nariño"),
        ("presencia armada en el Catatumbo", "subregion:catatumbo", None),
        ("alertas en Montes de María", "subregion:montes_de_maria", None),
    ],
)
def test_the_answer_says_which_subregion_definition_it_read(reader, question, subregion, department_form):
    """Radar reads PDET subregions; a question naming the department's own subregion form is told
    that the PDET list was read and that the department's list is not held (no silent choice)."""
    assert _place(reader, question) == subregion
    notes = reader.read(question).place_notes
    assert len(notes) == 1 and "PDET" in notes[0] and "municipios" in notes[0], notes
    if department_form:
        assert f"subregión administrativa de {department_form}" in notes[0], notes
    else:
        assert "administrativa" not in notes[0], notes


def test_department_adjectives_cover_every_department(reader):
    adjs = department_adjectives()
    depts = {p.code for p in reader.gazetteer.places.values() if p.level == "department"}
    assert set(adjs.values()) == depts
    assert adjs["antioquena"] == "05" and adjs["cordobesa"] == "23" and adjs["huilenses"] == "41"
    # no adjective is also a municipality's or department's name (it would shadow a place)
    names = {p.name.lower() for p in reader.gazetteer.places.values() if p.level in ("department", "municipality")}
    assert not set(adjs) & names


def test_the_answer_carries_the_place_note(reader):
    """The run (agent/run/finishing.py) appends the resolver's note to a question's answer when the place filter is a
    subregion or a list of municipalities, and names the list by its members in follow-ups."""
    from radar_pipeline.agent.run.finishing import _with_reading_notes

    facts = reader.read("¿Dónde opera el ELN en el Bajo Cauca antioqueño?")
    out = _with_reading_notes("Respuesta.", facts)
    assert out.startswith("Respuesta.") and "Nota: «Bajo Cauca antioqueño»" in out and "PDET" in out
    facts = reader.read("alertas en la zona costera: Tumaco, Francisco Pizarro y Olaya Herrera")
    assert "3 municipios" in _with_reading_notes("Respuesta.", facts)
    # a municipality or a department needs no note
    assert _with_reading_notes("Respuesta.", reader.read("alertas en Tumaco")) == "Respuesta."
    assert (
        reader.place_name("municipality:19318,municipality:19809")
        == f"{reader.place_name('municipality:19318')} y {reader.place_name('municipality:19809')}"
    )


def test_a_list_with_an_unresolved_member_is_no_set(reader):
    """ "Armenia" may be Armenia (Quindío), Armenia (Antioquia) or the country: a list holding it is
    not a defined set, so its resolved members stay several places (found on corpus text)."""
    assert _place(reader, "alertas en el Eje Cafetero: Manizales, Pereira y Armenia") is None


@pytest.mark.parametrize(
    ("question", "place"),
    [
        # a place name right after the shared name is a place, not its level ("Pueblo Rico")
        ("alertas en Risaralda (Pueblo Rico y Mistrató)", None),
        ("presencia armada en RISARALDA Pueblo Rico", "municipality:66572"),
        # a dated list of events names no region
        ("amenazas del 23 de abril: Caloto y Caldono", None),
    ],
)
def test_guards_found_on_corpus_text(reader, question, place):
    got = _place(reader, question)
    assert got == place and (got is None or "," not in got), got


@pytest.mark.parametrize(
    ("question", "place"),
    [
        # words run together as on a phone
        ("presencia en Sanjose del Guaviare", "municipality:95001"),
        ("alertas tempranas en puertoasis", "municipality:86568"),
        ("grupos armados en elcharco", "municipality:52250"),
        # a name of three or more words without its leading article
        ("alertas en Carmen de Bolivar", "municipality:13244"),
        ("presencia armada en Carmen de Viboral", "municipality:05148"),
    ],
)
def test_names_run_together_or_without_their_article(reader, question, place):
    assert _place(reader, question) == place


@pytest.mark.parametrize(
    "question",
    [
        "alertas en Santa Cruz",  # split apart is no typo: Santa Cruz (Bolivia) is no Santacruz (Nariño)
        "presencia china en Macao",  # a real foreign place, no Maicao
        "pesca de bagre en el río",  # one word left without the article: no El Bagre
    ],
)
def test_joined_and_articleless_guards(reader, question):
    assert not str(_place(reader, question) or "").startswith(("municipality:", "department:"))
    found = reader.places.resolve(question, [], case_known=any(c.isupper() for c in question[1:]))
    assert found.corrections == [], found.corrections


@pytest.mark.parametrize(
    ("question", "typed", "written", "actual"),
    [
        ("¿Qué dijo la alerta temprana para el municipio de Miranda, en Nariño?", "Miranda", "Nariño", "Cauca"),
        ("¿Qué grupos armados operan en Tumaco, Cauca?", "Tumaco", "Cauca", "Nariño"),
        ("Riesgos en Toribío (Nariño) según la Defensoría", "Toribío", "Nariño", "Cauca"),
    ],
)
def test_a_municipality_placed_in_the_wrong_department_is_corrected(reader, question, typed, written, actual):
    """The department written as the name's qualifier holds no municipality of that name: the
    question's premise about where it lies is wrong, and the reading says where the gazetteer puts it
    (blind4: "el municipio de Miranda, en Nariño" for the Miranda of Cauca went unremarked)."""
    facts = reader.read(question)
    assert facts.places_misplaced == [
        f"Nota: no hay un municipio «{typed}» en {written}; el nomenclátor de municipios (DIVIPOLA) lo sitúa en {actual}."
    ]


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué grupos armados operan en Toribío, Cauca?",
        "Alertas en Argelia (Antioquia)",
        "Presencia armada en La Unión, al sur de Nariño",
        "¿Qué pasa en Nariño y en el Cauca?",  # two departments, no municipality qualified
        "¿Qué grupos hay en Puerto Rico, Meta?",
    ],
)
def test_a_municipality_in_its_own_department_needs_no_correction(reader, question):
    assert reader.read(question).places_misplaced == []
