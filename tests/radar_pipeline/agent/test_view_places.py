"""A place the question names must not vanish from a view (tester, 2026-12-07: "¿Qué grupos
criminales operan en Hallstatt, Austria?" became the presence map "con los filtros entidad Austria",
all 987 municipalities, Hallstatt dropped). The reading side: a country located on a territorial map
is its territory (``visualizer.propose``), and a place name the gazetteer does not know is found
(``visualizer.unrecognised_places``) so the figures can say so (``figures.not_for_place``, tested on
the materialized corpus in ``tests/api/dashboard/test_figures_chat.py``)."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.roles.visualizer import propose, unrecognised_places, validate, view_answers_without


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("¿Qué grupos criminales operan en Hallstatt, Austria?", ["Hallstatt"]),
        ("¿Qué pandillas operan en Quintana Roo?", ["Quintana Roo"]),
        ("¿Qué grupos criminales hay en Cancún?", ["Cancún"]),
        ("¿Qué grupos operan en la ciudad de Guayaquil?", ["Guayaquil"]),
        ("¿Qué bandas hay cerca de Tijuana y en Lyon?", ["Tijuana", "Lyon"]),
        ("Which gangs operate in Toronto, Canada?", ["Toronto"]),
        ("What armed groups are active in the town of Hallstatt?", ["Hallstatt"]),
        (
            "Ya que en Piñuña Blanco la disputa es entre el Clan del Golfo y el ELN, ¿cuántas personas están en riesgo?",
            ["Piñuña Blanco"],
        ),
    ],
)
def test_a_place_the_gazetteer_does_not_know_is_found(reader, question, names):
    assert unrecognised_places(question, reader.read(question), reader) == names


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué grupos armados operan en Tumaco?",  # a municipality
        "¿Qué grupos armados hacen presencia en el Catatumbo?",  # a subregion
        "¿Qué grupos armados operan en Ecuador?",  # a country
        "Mapa de presencia en Putumallo",  # a misspelt department
        "¿Qué grupos tienen presencia declarada en Argelia en Antioquia?",  # a qualifier of another place
        "¿Qué alertas tempranas hubo en Nariño en Enero de 2020?",  # a month
        "Línea de tiempo de la política de IA en Latinoamérica entre 2018 y 2024",  # a world region
        "Which armed groups operate in Latin America?",
        "¿Qué dice la ESA sobre el crecimiento de objetos en LEO?",  # an acronym
        "¿Cuántas unidades ha desplegado la Armada de Colombia en el Pacífico?",  # a region with its article
        "¿Qué pasó con los drones en Derecho Internacional Humanitario?",  # everyday words
        "¿Qué grupos operan en Estados Unidos?",  # a country by a multi-word name
    ],
)
def test_known_places_and_other_names_are_not_reported(reader, question):
    assert unrecognised_places(question, reader.read(question), reader) == []


@pytest.mark.parametrize(
    ("question", "place"),
    [
        ("¿Qué grupos criminales operan en Hallstatt, Austria?", "country:AUT"),
        ("¿Qué grupos armados hay en Lyon, Francia?", "country:FRA"),
        ("¿Qué grupos armados operan en Ecuador?", "country:ECU"),
        ("Mapa de alertas tempranas en Venezuela", "country:VEN"),
        ("¿Cuántas alertas tempranas emitió la Defensoría para Venezuela?", "country:VEN"),
        ("¿Qué grupos armados tienen presencia en Perú?", "country:PER"),
    ],
)
def test_a_country_on_a_territorial_map_is_its_territory(reader, question, place):
    comps, filtros = propose(question, reader.read(question))
    assert comps[0] in ("mapa_presencia", "mapa_alertas"), comps
    assert filtros["lugar"] == place and filtros["entidad"] is None, filtros


def test_a_country_elsewhere_stays_the_actor(reader):
    q = "¿Cómo evolucionan los documentos sobre drones en Ucrania?"
    comps, filtros = propose(q, reader.read(q))
    assert comps[0] == "linea_tiempo" and filtros["entidad"] == "country:UKR" and filtros["lugar"] is None


def test_whether_a_view_answers_without_the_unknown_place(reader):
    def vis(q):
        out, _ = validate(*propose(q, reader.read(q)), reader)
        return out

    # a map with no place filter for a question about one place: its rows are other places
    assert not view_answers_without("¿Qué grupos operan en Cancún?", vis("¿Qué grupos operan en Cancún?"))
    # another place filters it, or the places are the answer
    q = "¿Qué grupos operan en Hallstatt, Austria?"
    assert view_answers_without(q, vis(q))
    q = "Soy profesora en Quito: ¿en qué municipios hace presencia el EMC?"
    assert view_answers_without(q, vis(q))
    q = "Where is the EMC present? I work in Toronto."
    assert view_answers_without(q, vis(q))


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("¿Qué grupos armados hay en la ciudad de Marsella, Francia?", "Marsella"),
        ("¿Qué bandas operan en Córdoba, Argentina?", "Córdoba"),
        ("grupos armados en Santa Rosa (Perú)", "Santa Rosa"),
        ("Which gangs operate in Cartagena, Spain?", "Cartagena"),
    ],
)
def test_a_namesake_written_with_another_country_is_no_colombian_place(reader, question, name):
    facts = reader.read(question)
    assert facts.places == [] and facts.places_abroad == [name], (facts.places, facts.places_abroad)
    assert unrecognised_places(question, facts, reader) == [name]


@pytest.mark.parametrize(
    ("question", "place_id"),
    [
        ("¿Qué grupos operan en Cartagena, Bolívar?", "municipality:13001"),
        ("¿Qué grupos operan en Puerto Asís, Putumayo, Colombia?", "municipality:86568"),
        ("grupos en Ipiales, frontera con Ecuador", "municipality:52356"),  # a border is no country of its own
        ("¿Qué grupos operan en Tumaco y en Ecuador?", "municipality:52835"),  # two places, not one abroad
    ],
)
def test_a_colombian_place_next_to_a_country_stays(reader, question, place_id):
    facts = reader.read(question)
    assert facts.place is not None and facts.place.place_id == place_id and facts.places_abroad == []
