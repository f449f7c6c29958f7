"""Kinds of misses the blind24 tuning sets showed (issue 23, third round), each read with questions
written for this file (none copied from ``evals/stage2``), several per kind, Spanish and English
where relevant:

* small talk: a greeting with a doubled last letter ("holaa", "buenass") or the singular "buen día";
* views named in everyday words: the heat matrix as "tabla de calor", the quadrant as the actors
  that rise or the newcomers, who else is named with an actor (network);
* phenomena: command and control (AI-military), the armed groups' economies named bare (coca,
  extorsión, minería: territorial, never data mining or mining in space);
* a view's entity: a product or programme named as the subject is the entity filter, named as an
  example of a class ("tipo Starlink") or as the documents' topic ("cuando se habla de…") it is not;
* places: a department set aside in the next clause or sentence, and a misspelt name that needs
  context (Segovia, Caucasia, Florencia) read where the question gives it;
* follow-ups: a pronoun for the conversation's actor, a degree word ("¿por qué tantas?"), a verb
  that narrows ("acótalo"), a demonstrative before a noun ("esa conversación"), a filter dropped
  by naming it ("olvida el ELN"), a named product, a country on the map of places, the alerts map
  for a question about the alerts answered in text, politeness ("¿se puede…?").
"""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading.intent import stated_phenomenon
from radar_pipeline.agent.reading.views import view_vocabulary
from radar_pipeline.agent.roles import followup, router
from tests.radar_pipeline.agent.support_reading import read_question


# ------------------------------------------------------------------------------ small talk
@pytest.mark.parametrize("q", ["holaa", "buenass tardes", "heyy, qué tal", "holis", "buen día", "buenas noche"])
def test_a_greeting_with_a_doubled_letter_or_singular_is_small_talk(reader, q):
    assert router.plan(q, reader.read(q)).kind == "greeting", q


@pytest.mark.parametrize("q", ["hola, quiero ver el mapa de alertas de Arauca", "holaa, ¿qué grupos hay en Nariño?"])
def test_a_greeting_before_a_request_stays_a_question(reader, q):
    assert router.plan(q, reader.read(q)).kind == "question", q


# ------------------------------------------------------------------ views in everyday words
@pytest.mark.parametrize(
    "q",
    [
        "quiero una tabla de calor de grupos por tema",
        "cuadro de calor de actores y categorías en IA militar",
        "un gráfico de calor por categoría de basura espacial",
        "a heat table of actors by topic",
    ],
)
def test_the_heat_matrix_named_after_its_colour_scale(reader, q):
    assert read_question(reader, q)[1][:1] == ["matriz_calor"], q


@pytest.mark.parametrize(
    "q",
    [
        "¿cuáles actores crecen en IA militar?",
        "qué empresas suben en lo espacial",
        "¿qué actores caen en seguridad espacial?",
        "quiénes empezaron a sonar en lo de drones armados",
        "los recién llegados al tema espacial",
        "¿quiénes son los nuevos en basura espacial?",
    ],
)
def test_the_quadrant_as_actors_that_rise_or_newcomers(reader, q):
    assert read_question(reader, q)[1][:1] == ["cuadrante"], q


@pytest.mark.parametrize(
    "q", ["¿cuándo empezaron a aparecer las disidencias en Nariño?", "¿en qué año comenzaron a aparecer los drones?"]
)
def test_when_something_began_to_appear_is_no_quadrant(reader, q):
    assert "cuadrante" not in read_question(reader, q)[1], q


@pytest.mark.parametrize(
    ("q", "entity"),
    [("¿quiénes más aparecen con el ELN?", "eln"), ("quienes mas salen junto a China en satélites", "country:CHN")],
)
def test_who_else_is_named_with_an_actor_is_its_network(reader, q, entity):
    route, comps, filters, _ = read_question(reader, q)
    assert comps[:1] == ["red_entidades"] and filters.get("entidad") == entity, (q, comps, filters)


# --------------------------------------------------------------------------------- phenomena
@pytest.mark.parametrize(
    ("q", "phenomenon"),
    [
        ("IA para el comando y control", "ai_military"),
        ("drones en mando y control", "ai_military"),
        ("command and control systems with AI", "ai_military"),
        ("¿dónde se habla de extorsión?", "territorial"),
        ("cultivos de coca en el sur", "territorial"),
        ("cocaleros del Putumayo", "territorial"),
        ("minería en el Bajo Cauca", "territorial"),
    ],
)
def test_phenomena_named_by_a_function_or_an_economy(q, phenomenon):
    assert stated_phenomenon(q) == phenomenon


@pytest.mark.parametrize(
    "q", ["minería de datos con IA", "minería espacial de asteroides", "Coca-Cola en Colombia", "la coca-cola"]
)
def test_mining_data_or_asteroids_and_the_soft_drink_are_not_territorial(q):
    assert stated_phenomenon(q) != "territorial", q


# ----------------------------------------------------------------------- the view's entity
@pytest.mark.parametrize(
    ("q", "entity"),
    [
        ("¿cuántos documentos hablan de Starlink por año?", "starlink"),
        ("evolución de menciones del Proyecto Maven", "project_maven"),
    ],
)
def test_a_product_or_programme_by_name_is_the_entity(reader, q, entity):
    assert read_question(reader, q)[2].get("entidad") == entity, q


@pytest.mark.parametrize(
    "q",
    [
        "lo de las megaconstelaciones tipo Starlink por año",  # an example of a class
        "red de actores cuando se habla de drones militares",  # the documents' topic
        "¿quiénes aparecen juntos en el tema de los drones militares?",
        "menciones de drones por año",  # a class of technology
    ],
)
def test_an_example_or_the_documents_topic_is_no_entity(reader, q):
    assert "entidad" not in read_question(reader, q)[2], q


def test_an_actor_right_after_the_network_is_its_centre(reader):
    assert read_question(reader, "red del ELN")[2].get("entidad") == "eln"


# ------------------------------------------------------------------------------------ places
@pytest.mark.parametrize(
    ("q", "place"),
    [
        ("Alertas en Argelia, Antioquia. Ojo: no la del Cauca", "municipality:05055"),
        ("alertas en Argelia en el Cauca? no la de Antioquia", "municipality:19050"),
        ("¿Grupos en Balboa en Risaralda? No el del Cauca", "municipality:66075"),
        ("Mapa de presencia en El Tambo, Nariño — no el del Cauca", "municipality:52260"),
    ],
)
def test_a_department_set_aside_in_the_next_clause(reader, q, place):
    assert read_question(reader, q)[2].get("lugar") == place, q


@pytest.mark.parametrize(
    ("q", "place"),
    [
        ("Segobia, Antioquia: alertas", "municipality:05736"),  # the department written after it
        ("Florensia, Caquetá: grupos armados", "municipality:18001"),
        ("presencia armada en Caucacia", "municipality:05154"),  # a presence question gives context
    ],
)
def test_a_misspelt_name_that_needs_context_where_the_question_gives_it(reader, q, place):
    assert read_question(reader, q)[2].get("lugar") == place, q


@pytest.mark.parametrize("q", ["documentos de Caucacia", "¿Qué dice la prensa sobre Segobia?"])
def test_a_misspelt_name_that_needs_context_without_it_reads_no_place(reader, q):
    assert "lugar" not in read_question(reader, q)[2], q


# -------------------------------------------------------------------------------- follow-ups
def _prev(q, ruta, comps, **filtros) -> followup.PreviousTurn:
    base = dict.fromkeys(("fenomeno", "desde", "hasta", "entidad", "lugar"))
    return followup.PreviousTurn(q, ruta, tuple(comps), {**base, **filtros})


PRESENCE = _prev(
    "Mapa de presencia del ELN en el Cauca desde 2018",
    "visualization",
    ["mapa_presencia"],
    desde=2018,
    entidad="eln",
    lugar="department:19",
)
QUADRANT = _prev(
    "Cuadrante de actores de IA militar desde 2020", "visualization", ["cuadrante"], fenomeno="ai_military", desde=2020
)
TIMELINE = _prev("Evolución de menciones de Starlink", "visualization", ["linea_tiempo"], entidad="starlink")
PLACES = _prev("¿Dónde se menciona el narcotráfico?", "visualization", ["mapa_lugares"], fenomeno="territorial")


def _follow(reader, q, prev):
    return followup.follow(q, reader.read(q), lambda: prev, reader, view_vocabulary())


def test_a_pronoun_stands_for_the_conversations_actor(reader):
    got = _follow(reader, "¿quiénes más aparecen con ellos?", PRESENCE)
    assert got is not None and got.componentes[:1] == ("red_entidades",)
    assert (got.filtros["entidad"], got.filtros["lugar"]) == ("eln", "department:19")
    assert {"entidad", "lugar"} <= set(got.carried)


@pytest.mark.parametrize("q", ["¿por qué tantas?", "¿por qué tan pocos?", "¿por qué sale tan arriba?", "why so many?"])
def test_a_degree_word_asks_why_about_the_view_shown(reader, q):
    got = _follow(reader, q, PRESENCE)
    assert got is not None, q
    assert got.ruta == "both" and got.componentes == ("mapa_presencia",)
    assert set(got.carried) >= {"entidad", "lugar", "periodo", "vista"}


@pytest.mark.parametrize(
    ("q", "desde"), [("acótalo a 2021", 2021), ("limítalo desde 2019", 2019), ("redúcelo a partir de 2022", 2022)]
)
def test_a_narrowing_verb_changes_the_period_and_keeps_the_rest(reader, q, desde):
    got = _follow(reader, q, PRESENCE)
    assert got is not None and got.filtros["desde"] == desde, q
    assert (got.filtros["entidad"], got.filtros["lugar"]) == ("eln", "department:19")
    assert got.componentes == ("mapa_presencia",)


@pytest.mark.parametrize(
    ("q", "view"),
    [
        ("¿quiénes dominan esa conversación?", "cuadrante"),
        ("¿quiénes lideran este asunto?", "cuadrante"),
        ("¿y ese tema por año?", "linea_tiempo"),
        ("esa discusión en una red", "red_entidades"),
    ],
)
def test_a_demonstrative_noun_is_the_previous_subject(reader, q, view):
    got = _follow(reader, q, QUADRANT)
    assert got is not None and got.componentes[:1] == (view,), q
    assert (got.filtros["fenomeno"], got.filtros["desde"]) == ("ai_military", 2020)
    assert {"fenomeno", "periodo"} <= set(got.carried)


@pytest.mark.parametrize(
    ("q", "dropped", "kept"),
    [
        ("olvida el ELN", "entidad", "lugar"),
        ("quítale el ELN, todos los grupos", "entidad", "lugar"),
        ("sin el ELN", "entidad", "lugar"),
        ("forget the ELN", "entidad", "lugar"),
        ("olvida el Cauca, todo el país", "lugar", "entidad"),
    ],
)
def test_a_filter_dropped_by_naming_it(reader, q, dropped, kept):
    got = _follow(reader, q, PRESENCE)
    assert got is not None, q
    assert got.filtros[dropped] is None and got.filtros[kept] == PRESENCE.filtros[kept], (q, got.filtros)
    assert dropped in got.changed and got.componentes == ("mapa_presencia",)


@pytest.mark.parametrize(("q", "entity"), [("¿y OneWeb?", "oneweb"), ("y para el Proyecto Maven?", "project_maven")])
def test_a_named_product_replaces_the_previous_one(reader, q, entity):
    got = _follow(reader, q, TIMELINE)
    assert got is not None and got.filtros["entidad"] == entity and got.componentes == ("linea_tiempo",), q


@pytest.mark.parametrize(
    ("q", "desde", "hasta"), [("entre 2019 y 2022 nomás", 2019, 2022), ("el año pasado nada más", 2024, 2024)]
)
def test_a_period_closed_by_nomas_keeps_the_product(reader, q, desde, hasta):
    got = _follow(reader, q, TIMELINE)
    assert got is not None and (got.filtros["desde"], got.filtros["hasta"]) == (desde, hasta), q
    assert got.filtros["entidad"] == "starlink" and "entidad" in got.carried


@pytest.mark.parametrize(
    ("q", "country"),
    [("solo Brasil", "country:BRA"), ("¿y en Venezuela?", "country:VEN"), ("solo Ecuador", "country:ECU")],
)
def test_a_country_on_the_map_of_places_is_its_place(reader, q, country):
    got = _follow(reader, q, PLACES)
    assert got is not None and got.filtros["lugar"] == country and got.filtros["entidad"] is None, q
    assert got.componentes == ("mapa_lugares",) and got.filtros["fenomeno"] == "territorial"


@pytest.mark.parametrize(
    "prev_q",
    [
        "¿Qué advierte la Defensoría sobre Tibú?",
        "resume las alertas tempranas de Tibú",
        "what do the early warnings say about Tibú?",
    ],
)
@pytest.mark.parametrize("q", ["¿y eso en mapa?", "muéstralo en un mapa", "ponlo en el mapa"])
def test_an_alerts_question_answered_in_text_goes_to_the_alerts_map(reader, prev_q, q):
    prev = _prev(prev_q, "text", [], lugar="municipality:54810")
    got = _follow(reader, q, prev)
    assert got is not None and got.componentes[:1] == ("mapa_alertas",), (prev_q, q)
    assert got.filtros["lugar"] == "municipality:54810"


def test_a_text_question_not_about_alerts_still_goes_to_the_map_of_places(reader):
    prev = _prev("¿Qué dicen los documentos sobre Tibú?", "text", [], lugar="municipality:54810")
    got = _follow(reader, "¿y eso en mapa?", prev)
    assert got is not None and got.componentes[:1] == ("mapa_lugares",)


@pytest.mark.parametrize("q", ["¿se puede ver por año?", "¿podrías verlo por año?"])
def test_a_polite_request_is_a_follow_up(reader, q):
    got = _follow(reader, q, PRESENCE)
    assert got is not None and got.componentes[:1] == ("linea_tiempo",), q
    assert got.filtros["entidad"] == "eln" and "entidad" in got.carried


@pytest.mark.parametrize("q", ["¿y por dónde actúa?", "¿dónde operan?"])
def test_where_an_actor_operates_is_its_presence(reader, q):
    prev = _prev("¿Qué se sabe del Clan del Golfo desde 2019?", "text", [], entidad="clan_del_golfo", desde=2019)
    got = _follow(reader, q, prev)
    assert got is not None and got.componentes[:1] == ("mapa_presencia",), q
    assert got.filtros["entidad"] == "clan_del_golfo" and "entidad" in got.carried
