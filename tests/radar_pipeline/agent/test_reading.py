"""How the offline path reads new phrasings, by kind of fault (issue 12): analysts' shorthand,
spoken period endings, English and Portuguese, request frames, counted nouns, parts of a
department, named fronts of a group, and a program or technology that is what a view shows.

Every question here was written for this file (none is copied from ``evals/stage2``): each kind
is fixed as a kind, so several phrasings of it must read alike.
"""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading import intent
from radar_pipeline.agent.reading.periods import parse_period
from radar_pipeline.agent.roles import router
from tests.radar_pipeline.agent.support_reading import read_question


def _read(reader, question):
    """``(route, components, filters without empty values)`` as the agent's offline path reads them."""
    return read_question(reader, question)[:3]


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("mapa de las AT del Cesar", "mapa de las alertas tempranas del Cesar"),
        ("cuántas ATs hubo x depto", "cuántas alertas tempranas hubo por departamento"),
        ("presencia por mpio. en el Meta", "presencia por municipio en el Meta"),
        ("q GAO hay en Tame", "que grupos armados organizados hay en Tame"),
        ("look at the map", "look at the map"),  # the English "at" is no abbreviation
    ],
)
def test_shorthand_is_written_out(text, expanded):
    assert intent.expand_shorthand(text) == expanded


@pytest.mark.parametrize(
    ("question", "desde", "hasta"),
    [
        ("presencia en el Cauca del 2017 pa' acá", 2017, None),
        ("alertas en Arauca desde 2020 pa'cá", 2020, None),
        ("documentos de 2014 a la fecha", 2014, None),
        ("menciones del ELN de 2018 hasta la actualidad", 2018, None),
        ("publications on drones from 2016 to date", 2016, None),
        ("alertas del Chocó del último año y su tendencia", 2025, 2025),  # "y …" continues the sentence
    ],
)
def test_open_and_relative_periods_in_speech(question, desde, hasta):
    p = parse_period(question, 2025)
    assert (p.desde, p.hasta) == (desde, hasta)


@pytest.mark.parametrize(
    ("question", "route", "first", "filters"),
    [
        # shorthand: "AT" is an early warning, "depto" a department
        (
            "Quiero el mapa de las AT emitidas para Tumaco",
            "visualization",
            "mapa_alertas",
            {"lugar": "municipality:52835"},
        ),
        ("alertas tempranas x depto desde 2021", "visualization", "mapa_alertas", {"desde": 2021}),
        # English and Portuguese phrasings of the same views
        (
            "Where do the FARC dissidents operate? map them",
            "visualization",
            "mapa_presencia",
            {"entidad": "farc_dissidents"},
        ),
        (
            "Which municipalities of Cauca get early warnings?",
            "visualization",
            "mapa_alertas",
            {"lugar": "department:19"},
        ),
        ("Onde atua o Clã do Golfo?", "visualization", "mapa_presencia", {"entidad": "clan_del_golfo"}),
        (
            "Com quem aparece a OTAN nos documentos? mostre a rede",
            "visualization",
            "red_entidades",
            {"entidad": "nato"},
        ),
        # a request to be told, in any person or mood, next to a view → both
        (
            "Grafica la presencia del ELN en Arauca y que me cuentes por qué creció",
            "both",
            "mapa_presencia",
            {"entidad": "eln", "lugar": "department:81"},
        ),
        (
            "¿Qué se sabe del Tren de Aragua en Cúcuta? ponlo en el mapa",
            "both",
            None,
            {"entidad": "tren_de_aragua", "lugar": "municipality:54001"},
        ),
        # what the sources say or recommend is content, not a view
        ("¿Qué recomiendan las alertas sobre reclutamiento en Tumaco?", "text", None, {}),
        ("¿Qué economías ilícitas se nombran en relación con el Catatumbo?", "text", None, {}),
        ("¿Qué tipos de misiles hipersónicos se mencionan en los textos?", "text", None, {}),
        # how a group works is explained, not mapped
        ("¿Cómo se financia el Frente Oliver Sinisterra en Tumaco?", "text", None, {}),
        ("How does the Gulf Clan recruit in Urabá?", "text", None, {}),
        # the counted nouns analysts use for documents
        (
            "Evolución de la bibliografía sobre ciberdefensa desde 2012",
            "visualization",
            "linea_tiempo",
            {"desde": 2012},
        ),
        ("¿Cómo va la producción académica sobre enjambres de drones?", "visualization", "linea_tiempo", {}),
        # the asked noun is places: the place map first, even with "junto a" or a request prefix
        (
            "¿Qué países aparecen junto a Irán en los documentos?",
            "visualization",
            "mapa_lugares",
            {"entidad": "country:IRN"},
        ),
        (
            "Dime qué municipios del Cauca tienen presencia de disidencias",
            "visualization",
            "mapa_presencia",
            {"lugar": "department:19", "entidad": "farc_dissidents"},
        ),
        # "qué grupos hay en <a name with several candidates>" is still the presence map
        ("¿Qué grupos hay en La Unión?", "visualization", "mapa_presencia", {}),
        # "municipios de <department>": the department, even when municipalities share its name
        ("¿Qué municipios de Sucre se mencionan más?", "visualization", "mapa_lugares", {"lugar": "department:70"}),
        # a named front is its group
        (
            "Red de vínculos de la Columna Móvil Jaime Martínez",
            "visualization",
            "red_entidades",
            {"entidad": "farc_dissidents"},
        ),
        ("¿Dónde opera el Frente de Guerra Oriental?", "visualization", "mapa_presencia", {"entidad": "eln"}),
        # a program or technology that the view shows is its filter; a topic of documents is not
        (
            "¿Con qué actores sale la constelación Starlink? muéstrame la red",
            "visualization",
            "red_entidades",
            {"entidad": "starlink"},
        ),
        ("heatmap de los enjambres de drones", "visualization", "matriz_calor", {"entidad": "drone_swarms"}),
        ("línea de tiempo de documentos sobre enjambres de drones", "visualization", "linea_tiempo", {}),
        # making a picture is asking for a view: "genera la red …", "dibújame un mapa …"
        (
            "genérame la red de la Segunda Marquetalia",
            "visualization",
            "red_entidades",
            {"entidad": "segunda_marquetalia"},
        ),
        ("dibújame un mapa de alertas del Cauca", "visualization", "mapa_alertas", {"lugar": "department:19"}),
        # … but a future tense or a noun that starts like one is not ("desplegará armas láser")
        ("¿Cómo afectará a los satélites que Rusia saque armas láser a la órbita?", "text", None, {}),
        (
            "¿Qué tan presentes están los Comandos de la Frontera en el Putumayo?",
            "visualization",
            "mapa_presencia",
            {"entidad": "comandos_de_la_frontera", "lugar": "department:86"},
        ),
    ],
)
def test_new_phrasings_read_as_their_kind(reader, question, route, first, filters):
    got_route, comps, got_filters = _read(reader, question)
    assert got_route == route, (question, got_route, comps, got_filters)
    if first is not None:
        assert comps and comps[0] == first, (question, comps)
    assert {k: got_filters.get(k) for k in filters} == filters, (question, got_filters)
    for key in ("entidad", "lugar"):
        if key not in filters:
            assert key not in got_filters or route == "text", (question, got_filters)


def test_case_is_a_signal_only_when_names_were_capitalised(reader):
    # an acronym or the first word says nothing about how the places were typed
    assert _read(reader, "porfa mapa de AT en santander del año pasado")[2]["lugar"] == "department:68"
    assert [p.place_id for p in reader.read("¿Qué grupos hay en barbacoas?").places] == ["municipality:52079"]
    # … but a lower-case phrase with several candidates in a sentence-case question is words
    facts = reader.read("¿Qué dice el informe sobre la paz en el Cauca?")
    assert facts.ambiguous == [] and [p.place_id for p in facts.places] == ["department:19"]
    # typed all in lower case it may be the place: the ambiguity is said
    assert [a.matched for a in reader.read("que grupos hay en la union").ambiguous] == ["la union"]


def test_telegraphic_network_request(reader):
    assert _read(reader, "red eln")[:2] == ("visualization", ["red_entidades"])
    assert _read(reader, "y ahora la red de la Segunda Marquetalia")[1] == ["red_entidades"]
    assert _read(reader, "¿Cómo opera la red de narcotráfico del Clan del Golfo?")[0] == "text"


def test_follow_up_after_thanks_without_question_mark():
    assert router.plan("gracias, ahora grafícame lo mismo para el Meta").kind == "question"
    assert router.plan("gracias, eso era todo").kind == "thanks"
