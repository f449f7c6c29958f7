"""Kinds the seventh Stage-2 set (final4) found, in phrasings written for this file (none copied
from ``evals/stage2``): a sub-topic that belongs to one phenomenon sets it (Spanish, English,
Portuguese, with a typo in the phenomenon phrase); "EE.UU." and one actor with "otros actores" are
that actor's filter; "visualiza las menciones de <país>" is the places map.
"""

from __future__ import annotations

import pytest

from radar_pipeline.agent import intent, router, visualizer
from radar_pipeline.agent.understanding import QuestionReader


@pytest.fixture(scope="module")
def reader(shared_dir):
    """The real gazetteer (../shared/geo) and entity dictionary; newest dated document: 2025."""
    return QuestionReader.from_shared(shared_dir, reference_year=2025)


def _read(reader, question):
    """``(route, components, filters without empty values)`` as the agent's offline path reads them."""
    facts = reader.read(question)
    plan = router.plan(question, facts)
    if plan.kind != "question" or plan.ruta == "text":
        return plan.ruta if plan.kind == "question" else plan.kind, [], {}
    comps, filtros = visualizer.propose(question, facts)
    vis, _ = visualizer.validate(comps, filtros, reader)
    return plan.ruta, [c["tipo"] for c in vis["componentes"]], {k: v for k, v in vis["filtros"].items() if v}


@pytest.mark.parametrize(
    ("question", "phenomenon"),
    [
        ("cronología de los sistemas de armas autónomas letales", "ai_military"),
        ("matriz de calor de los documentos sobre armas autonomas", "ai_military"),
        ("mapa de países con políticas nacionales de inteligencia artificial", "ai_military"),
        ("timeline of documents on lethal autonomous weapons", "ai_military"),
        ("linha do tempo dos drones militares", "ai_military"),
        ("red de actores de las megaconstelaciones", "space_security"),
        ("timeline of satellite constellations and orbital collisions", "space_security"),
        ("evolución de las menciones del síndrome de Kessler", "space_security"),
        ("línea de tiempo de seguridad espasial", "space_security"),  # a typo in the phrase
        ("red de actores en seguridad espaciall desde 2020", "space_security"),
        ("mapa de la deforestación en los documentos", "territorial"),
        ("evolución de los documentos sobre zonas de reserva campesina", "territorial"),
        ("línea de tiempo de la minería ilícita", "territorial"),
    ],
)
def test_a_sub_topic_of_one_phenomenon_states_it(question, phenomenon):
    assert intent.stated_phenomenon(question) == phenomenon


@pytest.mark.parametrize(
    "question",
    [
        "línea de tiempo de los drones",  # drones are civil too: no scope
        "matriz de calor de drones",
        "mapa de las menciones de un régimen especial",  # "especial" is no typo of "espacial"
        "evolución de las zonas económicas especiales",
        "red de actores que militan en partidos",
        "timeline of the laws on land",
    ],
)
def test_no_phenomenon_from_words_that_do_not_state_one(question):
    assert intent.stated_phenomenon(question) is None


def test_a_sub_topic_sets_the_view_filter(reader):
    _, comps, filtros = _read(reader, "Muéstrame la evolución de los documentos sobre armas autónomas desde 2015")
    assert comps == ["linea_tiempo"]
    assert filtros.get("fenomeno") == "ai_military"
    assert filtros.get("desde") == 2015


@pytest.mark.parametrize(
    ("question", "entidad"),
    [
        ("red de vínculos entre China y los demás actores del sector espacial", "country:CHN"),
        ("grafo de relaciones entre Rusia y otros países en seguridad espacial", "country:RUS"),
        ("network of relations between the United States and other actors", "country:USA"),
    ],
)
def test_one_actor_and_the_others_is_that_actors_filter(reader, question, entidad):
    _, comps, filtros = _read(reader, question)
    assert comps == ["red_entidades"]
    assert filtros.get("entidad") == entidad


def test_two_actors_related_still_have_no_single_filter(reader):
    _, comps, filtros = _read(reader, "red de relaciones entre China y Rusia en seguridad espacial")
    assert comps == ["red_entidades"]
    assert "entidad" not in filtros


@pytest.mark.parametrize(
    ("question", "entidad", "lugar"),
    [
        ("cronología de los bombardeos de EE.UU. en Yemen desde 2010", "country:USA", "country:YEM"),
        ("línea de tiempo de las operaciones militares de Rusia en Siria", "country:RUS", "country:SYR"),
    ],
)
def test_an_actor_country_and_the_country_where_it_acts(reader, question, entidad, lugar):
    _, comps, filtros = _read(reader, question)
    assert comps == ["linea_tiempo"]
    assert filtros.get("entidad") == entidad
    assert filtros.get("lugar") == lugar


def test_two_countries_compared_are_no_place(reader):
    _, _, filtros = _read(reader, "compara en una línea de tiempo a Brasil y Chile")
    assert "lugar" not in filtros


@pytest.mark.parametrize(
    "question",
    [
        "Muéstrame las menciones de Argentina y explícame qué dicen de su defensa",
        "visualiza las menciones de Chile",
        "enséñame las apariciones de Tumaco",
    ],
)
def test_show_the_mentions_of_a_place_is_its_map(reader, question):
    _, comps, filtros = _read(reader, question)
    assert comps == ["mapa_lugares"]
    assert filtros.get("lugar")
    assert "entidad" not in filtros


@pytest.mark.parametrize(
    "question",
    [
        "Muéstrame la cronología de las pruebas antisatélite y explícame qué hizo India en 2019",
        "enséñame la línea de tiempo de los drones militares y explícame qué pasó en 2020",
    ],
)
def test_a_year_only_in_the_explanation_is_a_requirement_not_the_views_period(reader, question):
    facts = reader.read(question)
    plan = router.plan(question, facts)
    assert plan.ruta == "both"
    assert any(str(y) in str(r) for r in plan.requirements for y in (2019, 2020))
    _, comps, filtros = _read(reader, question)
    assert comps == ["linea_tiempo"]
    assert "desde" not in filtros and "hasta" not in filtros


def test_a_year_in_the_view_part_stays_its_period(reader):
    _, comps, filtros = _read(
        reader, "Muéstrame la línea de tiempo de las pruebas ASAT desde 2007 y explícame qué pasó"
    )
    assert comps == ["linea_tiempo"]
    assert filtros.get("desde") == 2007
