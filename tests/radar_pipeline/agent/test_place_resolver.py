"""The one place resolver (``agent.place_resolver``) by kind: appositions and qualifiers that pick a
homonym, a department set aside, the level a cue chooses, subregions as sets of municipalities, and
misspelt names with their guards. Every question was written for this file (none copied from
``evals/stage2``); each kind has several phrasings."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading.place_resolver import FuzzyPlaces, sound_key
from tests.radar_pipeline.agent.support_reading import read_question


def _place(reader, q):
    return read_question(reader, q)[2].get("lugar")


@pytest.mark.parametrize(
    ("question", "place"),
    [
        # a municipality told from its namesakes by its department, as an apposition or a qualifier
        ("Mapa de presencia armada en Mercaderes, el del Cauca, no otro", "municipality:19450"),
        ("Presencia armada en Bolívar, el del Cauca", "municipality:19100"),
        ("Presencia armada en Bolívar del Cauca", "municipality:19100"),
        ("Grupos armados en Puerto Rico (Caquetá)", "municipality:18592"),
        ("Grupos armados en Puerto Rico, Caquetá", "municipality:18592"),
        ("Grupos armados en Puerto Rico en el Meta", "municipality:50590"),
        ("Grupos armados en Puerto Rico, el que queda en el Meta", "municipality:50590"),
        ("Presencia armada en Córdoba, el municipio del Quindío", "municipality:63212"),
        ("mapa de grupos en Argelia, Antioquia", "municipality:05055"),
        ("armed presence in Argelia, Cauca", "municipality:19050"),
        ("Grupos armados en La Unión en Nariño", "municipality:52399"),
        ("Alertas tempranas en Riosucio (Chocó)", "municipality:27615"),
        ("Presencia armada en Riosucio, el del Chocó", "municipality:27615"),
        # the one namesake left once a department is set aside
        ("Alertas tempranas en Riosucio, no el de Caldas", "municipality:27615"),
        # the department against the municipality of the same name
        ("Alertas en el departamento de Córdoba, no el municipio del Quindío", "department:23"),
        ("¿Qué grupos hay en el municipio de Arauca?", "municipality:81001"),
        ("Mapa de alertas del departamento de Arauca", "department:81"),
        ("Presencia armada en el municipio de Nariño, Antioquia", "municipality:05483"),
    ],
)
def test_homonyms_the_question_resolves(reader, question, place):
    assert _place(reader, question) == place


@pytest.mark.parametrize(
    "question",
    [
        "Grupos armados en La Unión, no el de Nariño",
        "Presencia armada en La Unión (no la del Valle)",
        "Grupos armados en Bolívar, no el del Cauca ni el de Santander",
    ],
)
def test_a_department_set_aside_is_no_place_of_its_own(reader, question):
    """The department set aside removes its candidates; it never becomes the place filter."""
    route, comps, filters, ambiguous = read_question(reader, question)
    aside = {"Nariño": "52", "Valle": "76", "Cauca": "19"}
    for name, code in aside.items():
        if f"de {name}" in question or f"del {name}" in question or f"la del {name}" in question:
            assert filters.get("lugar") not in (f"department:{code}",), question
            assert not str(filters.get("lugar", "")).startswith(f"municipality:{code}"), question


@pytest.mark.parametrize(
    ("question", "subregion"),
    [
        ("presencia armada en el Catatumbo", "subregion:catatumbo"),
        ("Mapa de alertas tempranas en el Catatumbo, Norte de Santander", "subregion:catatumbo"),
        ("mapa de alertas en Montes de María", "subregion:montes_de_maria"),
        ("presencia del ELN en el Bajo Cauca", "subregion:bajo_cauca_nordeste_antioqueno"),
        ("grupos armados en el Pacífico nariñense", "subregion:pacifico_frontera_narinense"),
        ("grupos armados en Urabá", "subregion:uraba_antioqueno"),
        ("alertas en la subregión Sur de Córdoba desde 2019", "subregion:sur_de_cordoba"),
        ("muéstrame alertas en la subregión PDET de Arauca", "subregion:arauca"),
        ("armed groups in the Catatumbo region", "subregion:catatumbo"),
    ],
)
def test_subregions_are_sets_of_municipalities(reader, question, subregion):
    assert _place(reader, question) == subregion


def test_a_department_named_alone_stays_the_department(reader):
    # "Arauca", "Chocó", "Putumayo" name PDET subregions too, and "el sur de Córdoba" is a part of
    # the department as a person reads it: only "subregión … de" picks those subregions
    assert _place(reader, "presencia armada en Arauca") == "department:81"
    assert _place(reader, "mapa de alertas en el Chocó") == "department:27"
    assert _place(reader, "Muéstrame dónde opera el ELN en el sur de Córdoba") == "department:23"
    assert _place(reader, "alertas en el sur del Tolima") == "department:73"


@pytest.mark.parametrize(
    ("question", "place"),
    [
        # a municipality of the subregion named too is the place; the subregion only situates it
        ("Para un informe sobre el Catatumbo: ¿qué alertas hay sobre Tibú?", "municipality:54810"),
        ("Presencia armada en El Tarra, en pleno Catatumbo", "municipality:54250"),
        ("mapa de menciones de Apartadó, en el Urabá antioqueño", "municipality:05045"),
        # a department named apart is the place
        ("Muéstrame el ELN en Norte de Santander y explica qué pasa en el Catatumbo", "department:54"),
    ],
)
def test_a_more_precise_place_wins_over_the_subregion(reader, question, place):
    assert _place(reader, question) == place


@pytest.mark.parametrize(
    ("question", "place"),
    [
        ("presencia armada en Putumallo", "department:86"),
        ("grupos armados en Antiokia", "department:05"),
        ("mapa de alertas en Cundinamarka", "department:25"),
        ("presencia armada en Tumako", "municipality:52835"),
        ("grupos armados con presencia en buenaventra", "municipality:76109"),
        ("presencia armada en el municipio de Santander de Quilichau", "municipality:19698"),
    ],
)
def test_misspelt_places_are_read(reader, question, place):
    assert _place(reader, question) == place


@pytest.mark.parametrize(
    "question",
    [
        "¿me recomiendas una película para el fin de semana?",  # "semana" is no Samaná
        "¿Qué dice la ley sobre restitución de tierras a víctimas?",  # "tierras a" is no Tierralta
        "la orden ejecutiva de la Casa Blanca sobre IA",  # no Casabianca
        "q tal el clima en bogota hoy",  # "bogota hoy" is Bogotá, not a misspelling
        "presencia de grupos en la frontera con Venezuela",
        "Documentos sobre el Cartel de Sinaloa en México",
        "desplazados en Cazucá y Soacha",  # a locality of Soacha, no Cauca (measured on the corpus)
        "Relaciones de Colombia con Suecia y con Quito",  # a country and a foreign capital
        "¿Cuántas veces se nombra la Ciénaga Grande en los documentos?",  # a gazetteer name is never corrected
    ],
)
def test_real_words_are_no_misspelt_places(reader, question):
    facts = reader.read(question)
    found = reader.places.resolve(question, [], case_known=any(c.isupper() for c in question[1:]))
    assert found.corrections == [], (question, found.corrections)
    assert all(p.place_id.split(":")[0] in ("department", "municipality", "country") for p in facts.places)


def test_fuzzy_guards(reader):
    fz: FuzzyPlaces = reader.places.fuzzy
    assert fz.nearest("putumallo") == "putumayo"  # ll/y: by sound
    assert fz.nearest("narino") is None  # an exact name is no typo
    assert fz.nearest("cali") is None and fz.nearest("cafi") is None  # short names are never guessed at
    assert fz.nearest("tierras a") is None  # a typo changes letters, not words
    assert sound_key("antioquia") == sound_key("antiokia")
    # every listed real word stays itself
    assert all(fz.nearest(w) is None for w in sorted(fz.not_typos))
