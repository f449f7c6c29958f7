"""The kinds of misreading a fifth blind question set found (``evals/stage2/README_final2.md``),
each fixed as a kind: typos in a view's key word, relative and open periods in every phrasing
family, views named by a synonym (Spanish, English, Portuguese) from ``views.yaml``, places written
"<municipio>, <departamento>", a municipality given as an example or only in the part to explain,
two requested views in the order asked, and a group's bare short form ("las disidencias"); and
those the seventh set (final4) found: a sub-topic of one phenomenon states it (also misspelt), one
actor and "otros actores", an actor country and the country where it acts, "visualiza las
menciones de <país>", a year only in the part to explain; and those the eighth (final5) found: an
actor's direction asked either/or ("¿sube o baja…?", "en aumento") or against the others, an
infinitive request to see and explain ("Ver la evolución… y explicar…", "Compara en el tiempo…"),
and a country that is the topic of the documents whose places are mapped.

Every question here was written for this file; none is copied from a question set.
"""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading import intent
from radar_pipeline.agent.reading.periods import parse_period
from radar_pipeline.agent.reading.views import load_view_vocabulary, view_vocabulary
from radar_pipeline.agent.roles import router, visualizer
from radar_pipeline.vocabulary import PHENOMENA
from tests.radar_pipeline.agent.support_reading import read_question

_read = read_question  # (route, components, filters, ambiguous names)


def _assert_view(reader, question: str, route: str, first: str) -> None:
    """``question`` is read with ``route`` and ``first`` as its first dashboard component."""
    got_route, comps, _, _ = _read(reader, question)
    assert (got_route, comps[:1]) == (route, [first]), (question, got_route, comps)


# --------------------------------------------------------------------------- the vocabulary is data
def test_view_vocabulary_is_the_yaml_and_names_known_components():
    vocab = view_vocabulary()
    assert set(vocab.names) | set(vocab.cues) <= set(visualizer.COMPONENTS)
    assert set(vocab.phenomena) == set(PHENOMENA)
    assert {"presencia", "alertas", "evolucion", "matriz"} <= vocab.triggers
    assert vocab.version


def test_view_vocabulary_rejects_a_malformed_entry(tmp_path):
    bad = tmp_path / "views.yaml"
    bad.write_text('version: "x"\ncomponents:\n  red_entidades:\n    names: [{pattern: "red"}]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="phrase or"):
        load_view_vocabulary(bad)
    bad.write_text('version: "x"\nphenomena:\n  cyber: [ciber]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="unknown phenomena"):
        load_view_vocabulary(bad)


# --------------------------------------------------------------------------- 1. typos
@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("presensia del clan", "presencia"),  # substitution
        ("alretas tempranas", "alertas"),  # transposition (Damerau)
        ("evolusion de publicaciones", "evolucion"),
        ("matris de calor", "matriz"),
        ("la dsitribucion territorial", "distribucion"),
        ("los departametnos con mas alertas", "departamentos"),  # two edits, nine letters or more
        ("precensia de grupos", "presencia"),  # c and s swapped apart: two edits
        ("linea de tiemop", "tiempo"),
    ],
)
def test_a_misspelt_trigger_word_is_read_as_meant(typed, read):
    text, fixes = view_vocabulary().correct(typed)
    assert read in text.split(), (typed, text)
    assert len(fixes) == 1


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué autores escriben sobre drones?",  # one edit from "actores": a real word, never corrected
        "¿Está presente el ELN en Arauca?",  # an inflection of the same root is no typo
        "el documento más reciente",  # "documento" is "documentos" without its plural
        "una lectura tendencial del conflicto",  # "tendencia" is a prefix: an inflection
        "mapas y matices",  # short or far words are left alone
        "¿Qué regiones resultan afectadas?",
        "la evaluación de la presidencia",  # two edits from "evolucion"/"presencia": listed real words
        "muéstralo y los mencionaban",  # enclitics and tenses are forms of the word
        "las municiones de la temporada",
    ],
)
def test_real_words_are_not_corrected(question):
    assert view_vocabulary().correct(question)[1] == ()


def test_typos_in_a_telegraphic_request_give_the_view(reader):
    route, comps, filters, _ = _read(reader, "presensia clan del golfo antioquia")
    assert (route, comps[:1]) == ("visualization", ["mapa_presencia"])
    assert filters == {"entidad": "clan_del_golfo", "lugar": "department:05"}
    assert _read(reader, "alretas tempranas en el Cauca")[1][:1] == ["mapa_alertas"]
    assert _read(reader, "evolusion de las publicaciones sobre drones")[1][:1] == ["linea_tiempo"]


# --------------------------------------------------------------------------- 2. periods
@pytest.mark.parametrize(
    ("question", "desde", "hasta"),
    [
        ("documentos sobre drones desde hace tres lustros", 2011, 2025),
        ("alertas en el último decenio", 2016, 2025),
        ("menciones durante los pasados siete años", 2019, 2025),
        ("las dos últimas décadas de la basura espacial", 2006, 2025),
        ("over the past two decades", 2006, 2025),
        ("nos últimos dez anos", 2016, 2025),
        ("de hace cuatro años para acá", 2022, 2025),
        ("los 3 años más recientes", 2023, 2025),
        ("¿qué se publicaba hace cuatro años?", 2021, 2021),
        ("en lo que va del año", 2025, 2025),
        ("el año anterior", 2024, 2024),
        ("de 2016 en adelante", 2016, None),
        ("2017 en adelante", 2017, None),
        ("posteriores al 2019", 2020, None),
        ("después del 2010", 2011, None),
        ("tras 2014", 2015, None),
        ("previo al 2014", None, 2013),
        ("del 2019 al 23", 2019, 2023),
        ("periodo 2016-21", 2016, 2021),
        ("entre 2012 e 2016", 2012, 2016),
        ("la década de los noventa", 1990, 1999),
        ("los años 80", 1980, 1989),
        ("la década de 2010", 2010, 2019),
        ("desde el año pasado", 2024, None),
        ("alertas 2013 a 2016", 2013, 2016),
        ("de 2011 al presente", 2011, None),
    ],
)
def test_relative_and_open_periods_every_family(question, desde, hasta):
    p = parse_period(question, 2025)
    assert p is not None and (p.desde, p.hasta) == (desde, hasta), (question, p)


@pytest.mark.parametrize(
    "question",
    [
        "en los últimos años",  # no number: no period
        "del 19 al 23",  # two two-digit years read as days as often as years
        "los sesenta municipios del Cauca",  # a number, not the sixties
        "2018 a 22 municipios",  # a count after a year
    ],
)
def test_vague_or_ambiguous_periods_stay_unread(question):
    p = parse_period(question, 2025)
    assert p is None or (p.desde, p.hasta) == (2018, 2018), (question, p)


def test_a_two_digit_end_before_a_month_is_a_date():
    p = parse_period("del 2019 al 23 de mayo", 2025)
    assert (p.desde, p.hasta) == (2019, 2019)


def test_a_leading_period_is_no_premise(reader):
    # "Desde hace N años, ¿…?" opens like "Desde que <event>, ¿…?" but presupposes nothing
    from radar_pipeline.agent.roles.premise import extract_premise

    assert extract_premise("Desde hace ocho años, ¿dónde actúa el Frente Oliver Sinisterra?") is None
    assert extract_premise("Desde que la India probó su misil antisatélite, ¿qué cambió?") is not None
    route, comps, filters, _ = _read(reader, "Desde hace ocho años, ¿dónde actúa el Frente Oliver Sinisterra?")
    assert route == "visualization" and comps[:1] == ["mapa_presencia"] and filters["desde"] == 2018


def test_relative_period_through_the_reader_and_a_misspelling(reader):
    assert _read(reader, "serie temporal de la OTAN desde hace dos lustros")[2].get("desde") == 2016
    p = reader.read("alertas de las ultimas dos decadas").period
    assert (p.desde, p.hasta) == (2006, 2025)


# --------------------------------------------------------------------------- 3. views by synonym
@pytest.mark.parametrize(
    ("question", "first", "filters"),
    [
        ("conexiones de la Segunda Marquetalia en forma de grafo", "red_entidades", {"entidad": "segunda_marquetalia"}),
        ("mapa de relaciones de la OTAN", "red_entidades", {"entidad": "nato"}),
        ("rede de atores da OTAN", "red_entidades", {"entidad": "nato"}),
        ("tabla cruzada de actores y categorías en Nariño", "matriz_calor", {"lugar": "department:52"}),
        ("cross-tab of entities by category for military AI", "matriz_calor", {"fenomeno": "ai_military"}),
        ("actores x categoría en seguridad del espacio", "matriz_calor", {"fenomeno": "space_security"}),
        (
            "gráfico de dispersión de las entidades de la seguridad espacial",
            "cuadrante",
            {"fenomeno": "space_security"},
        ),
        ("Linha do tempo dos documentos sobre a OTAN", "linea_tiempo", {"entidad": "nato"}),
        ("distribución territorial de las alertas tempranas desde 2020", "mapa_alertas", {"desde": 2020}),
        ("ranking de los departamentos con más alertas", "mapa_alertas", {}),
        ("hay grupos armados en Tibú?", "mapa_presencia", {"lugar": "municipality:54810"}),
        ("grupos armados en Sardinata, Norte de Santander", "mapa_presencia", {"lugar": "municipality:54720"}),
        ("Segunda Marquetalia en Nariño", "mapa_presencia", {"entidad": "segunda_marquetalia"}),  # telegraphic
        ("presencia del ELN en el sur de Bolívar", "mapa_presencia", {"entidad": "eln"}),
        ("¿Qué tan concentradas están las alertas en la costa pacífica?", "mapa_alertas", {}),
        ("¿Han disminuido los documentos sobre armas autónomas?", "linea_tiempo", {}),
        ("¿Qué organizaciones están perdiendo relevancia en la IA militar?", "cuadrante", {"fenomeno": "ai_military"}),
        ("serie anual de alertas del Putumayo", "linea_tiempo", {"lugar": "department:86"}),
        ("gráfico con las tendencias de los actores de IA militar", "cuadrante", {"fenomeno": "ai_military"}),
        ("Onde estão os elenos?", "mapa_presencia", {"entidad": "eln"}),
    ],
)
def test_views_named_by_a_synonym(reader, question, first, filters):
    route, comps, got, _ = _read(reader, question)
    assert route == "visualization" and comps[:1] == [first], (question, route, comps)
    assert {k: got.get(k) for k in filters} == filters, (question, got)


def test_a_map_word_inside_another_views_name_is_that_view():
    assert intent.classify("mapa de relaciones del ELN").components == ["red_entidades"]
    assert intent.classify("mapa de calor de la IA militar").components == ["matriz_calor"]


def test_cruce_needs_entities_or_categories():
    # border crossings are no heat matrix
    assert "matriz_calor" not in intent.classify("¿Dónde ocurre el cruce de la frontera con Venezuela?").components


def test_a_space_subtopic_states_the_phenomenon():
    assert intent.stated_phenomenon("línea de tiempo de los desechos orbitales") == "space_security"
    assert intent.stated_phenomenon("presencia en temas territoriales") == "territorial"
    # (round 7: "drones" now states military AI, see evals/stage2/README.md; satellites alone state nothing)
    assert intent.stated_phenomenon("satélites comerciales y sensores") is None


@pytest.mark.parametrize(
    "question",
    [
        "¿Cómo se distribuyen los recursos del Estado en las zonas PDET?",  # not something counted
        "¿Cómo imponen normas los grupos armados donde hay baja presencia del Estado?",
        "¿Por qué se concentra la violencia en la costa pacífica?",
        "¿Qué papel juegan las disidencias en la economía de la coca?",
    ],
)
def test_content_questions_with_view_words_stay_text(reader, question):
    assert _read(reader, question)[0] == "text", question


def test_muestran_is_no_request():
    assert intent.classify("¿Qué muestran los estudios sobre enjambres de drones?").route == "text"


# --------------------------------------------------------------------------- 4. places
@pytest.mark.parametrize(
    ("question", "lugar"),
    [
        ("Puerto Asís (Putumayo): ¿qué grupos operan?", "municipality:86568"),
        ("Tumaco, Nariño: ¿qué grupos hay?", "municipality:52835"),
        ("¿Qué grupos armados hay en Toribío del Cauca?", "municipality:19821"),
        ("¿qué grupos operan en el Guaviare?", "department:95"),  # a department alone stays one
        # a department that is itself ambiguous or unresolved still qualifies the name before it
        ("grupos armados en La Unión de Nariño", "municipality:52399"),
        ("¿Qué grupos tienen presencia en Puerto Rico, Meta?", "municipality:50590"),
        ("alertas en La Unión (Valle del Cauca)", "municipality:76400"),
        # a municipality given as an example of its department's: the department
        ("Ubica las alertas de Antioquia, especialmente las de Segovia", "department:05"),
        ("presencia de disidencias en el Meta, sobre todo en Puerto Rico", "department:50"),
    ],
)
def test_place_patterns(reader, question, lugar):
    assert _read(reader, question)[2].get("lugar") == lugar, question


def test_a_place_only_in_the_part_to_explain_is_not_the_map(reader):
    route, comps, filters, _ = _read(
        reader, "Muestra la presencia de disidencias en el Guaviare y explica por qué crecen en Calamar"
    )
    assert route == "both" and comps[:1] == ["mapa_presencia"]
    assert filters.get("lugar") == "department:95"


def test_a_department_elsewhere_does_not_pick_a_homonym(reader):
    # "Córdoba" is a department and a municipality of Bolívar; Bolívar named apart is no qualifier
    facts = reader.read("alertas en Bolívar y también en Córdoba")
    assert "municipality:13212" not in [p.place_id for p in facts.places]


def test_an_ambiguous_municipality_stays_unresolved(reader):
    route, comps, filters, ambiguous = _read(reader, "¿Qué grupos armados hay en El Tambo?")
    assert comps[:1] == ["mapa_presencia"] and "lugar" not in filters and ambiguous == ["El Tambo"]


# --------------------------------------------------------------------------- 5. two views
@pytest.mark.parametrize(
    ("question", "order"),
    [
        ("Primero el mapa de calor y después la línea de tiempo del ELN", ["matriz_calor", "linea_tiempo"]),
        ("la cronología y luego la red de la OTAN", ["linea_tiempo", "red_entidades"]),
        ("la red y la cronología de la OTAN", ["red_entidades", "linea_tiempo"]),
    ],
)
def test_two_views_in_the_order_asked(question, order):
    assert intent.classify(question).components[:2] == order


def test_a_bare_request_verb_names_no_view_of_its_own(reader):
    route, comps, filters, _ = _read(reader, "Enséñame y explícame los textos que nombran a Tumaco")
    assert route == "both" and comps[:1] == ["mapa_lugares"] and filters.get("lugar") == "municipality:52835"


def test_a_view_question_then_a_content_question_is_both(reader):
    route, comps, _, _ = _read(reader, "¿En qué municipios del Huila opera el Clan del Golfo y qué dicen las alertas?")
    assert route == "both" and comps[:1] == ["mapa_presencia"]
    assert _read(reader, "Dame la matriz de categorías de la IA militar y un análisis breve")[0] == "both"
    # the second question may open with a few words before its content cue
    route, comps, _, _ = _read(
        reader, "¿Qué municipios del Cauca tienen alertas, y cuáles son los motivos principales?"
    )
    assert route == "both" and comps[:1] == ["mapa_alertas"]
    # … but a first part that is only a trend is no view of its own
    assert _read(reader, "¿Ha crecido el Clan del Golfo y por qué razones?")[0] == "text"


# --------------------------------------------------------------------------- 6. group short forms
def test_bare_short_form_of_a_group(reader):
    route, comps, filters, _ = _read(reader, "¿Las disidencias ganan terreno? muéstrame el cuadrante")
    assert comps[:1] == ["cuadrante"] and filters.get("entidad") == "farc_dissidents"
    # qualified by something else, or in another phenomenon's question, it is not the group
    assert all(e.value != "farc_dissidents" for e in reader.read("las disidencias del partido en el Congreso").entities)
    assert all(
        e.value != "farc_dissidents"
        for e in reader.read("¿Qué disidencias hay sobre la IA militar en la OTAN?").entities
    )


# ---- the kinds of misreading a sixth blind set found (evals/stage2/README_final3.md) ----


@pytest.mark.parametrize(
    ("question", "first", "filters"),
    [
        # two dimensions crossed are the heat matrix, even next to a quadrant or timeline word
        (
            "número de documentos por año y por actor en seguridad espacial",
            "matriz_calor",
            {"fenomeno": "space_security"},
        ),
        ("intensidad por grupo y por año de las menciones en el Cauca", "matriz_calor", {"lugar": "department:19"}),
        ("alertas por municipio y por año en Nariño", "matriz_calor", {"lugar": "department:52"}),
        ("cruzar actores con años en la IA militar", "matriz_calor", {"fenomeno": "ai_military"}),
        ("Cruce años y grupos armados en el Cauca", "matriz_calor", {"lugar": "department:19"}),
        # countries linked to an actor are the network; countries named with it are the map
        (
            "¿Qué países están vinculados a Irán en los documentos de drones?",
            "red_entidades",
            {"entidad": "country:IRN"},
        ),
        ("¿Qué países se nombran junto a Japón?", "mapa_lugares", {"entidad": "country:JPN"}),
        # a request whose head noun is places is the map, even with a co-mention word after it
        (
            "lugares nombrados junto al Clan del Golfo desde 2020",
            "mapa_lugares",
            {"entidad": "clan_del_golfo", "desde": 2020},
        ),
        # the ombudsman alerting (a verb) is the alerts map, not the presence map
        ("¿Dónde ha alertado la Defensoría sobre reclutamiento por parte de las disidencias?", "mapa_alertas", {}),
        ("¿En qué departamentos alertaron la Defensoría y el SAT por el ELN?", "mapa_alertas", {"entidad": "eln"}),
        ("¿Dónde advirtió la Defensoría riesgos por el Clan del Golfo?", "mapa_alertas", {"entidad": "clan_del_golfo"}),
        ("municipios con alertas por las disidencias", "mapa_alertas", {"entidad": "farc_dissidents"}),
    ],
)
def test_views_that_share_words(reader, question, first, filters):
    route, comps, got, _ = _read(reader, question)
    assert route == "visualization" and comps[:1] == [first], (question, route, comps)
    assert {k: got.get(k) for k in filters} == filters, (question, got)


def test_one_dimension_or_two_places_is_no_matrix(reader):
    for question in ("documentos por año sobre drones", "presencia armada por departamento y municipio"):
        _, comps, _, _ = _read(reader, question)
        assert "matriz_calor" not in comps, (question, comps)


def test_alerting_about_a_topic_is_no_alerts_map(reader):
    _, comps, _, _ = _read(reader, "¿En qué países han alertado sobre los riesgos de la IA militar?")
    assert comps[:1] == ["mapa_lugares"], comps
    # what the ombudsman warned is content, not where
    route, _, _, _ = _read(reader, "¿Qué advirtió la Defensoría sobre el reclutamiento en el Putumayo?")
    assert route == "text"


@pytest.mark.parametrize(
    ("question", "route", "first", "filters"),
    [
        # two actors related: no single entity filter
        ("red de vínculos entre el Clan del Golfo y el ELN", "visualization", "red_entidades", {}),
        ("grafo de las relaciones entre las disidencias y el Clan del Golfo", "visualization", "red_entidades", {}),
        # the one actor of the part that asks for the view is its filter
        (
            "la red alrededor de China en IA militar, y explícame qué papel tiene Estados Unidos",
            "both",
            "red_entidades",
            {"entidad": "country:CHN", "fenomeno": "ai_military"},
        ),
        # …also when the explanation names another actor and the view's centre is a program
        (
            "la red del programa Replicator y explícame cómo se relaciona con el Pentágono",
            "both",
            "red_entidades",
            {"entidad": "replicator"},
        ),
        # a sub-topic that states the phenomenon is the topic, never an entity filter
        ("cronología de los desechos espaciales desde 2010", "visualization", "linea_tiempo", {"desde": 2010}),
    ],
)
def test_entity_filter_is_the_centre_of_the_view(reader, question, route, first, filters):
    got_route, comps, got, _ = _read(reader, question)
    assert got_route == route and comps[:1] == [first], (question, got_route, comps)
    assert {k: got.get(k) for k in filters} == filters, (question, got)
    assert got.get("entidad") == filters.get("entidad"), (question, got)


@pytest.mark.parametrize(
    ("question", "first", "filters"),
    [
        # a country whose mentions are mapped is the place filter (the map of places takes one)
        (
            "Muéstrame en el mapa las menciones de Ecuador desde 2019",
            "mapa_lugares",
            {"lugar": "country:ECU", "desde": 2019},
        ),
        ("¿En qué documentos y dónde aparece nombrado Perú?", "mapa_lugares", {"lugar": "country:PER"}),
        ("¿Cómo se distribuyen geográficamente las menciones de Irán?", "mapa_lugares", {"lugar": "country:IRN"}),
        ("¿En qué lugares se menciona a Chile?", "mapa_lugares", {"lugar": "country:CHL"}),
        # the places named with it, or places of another level, are the answer: the country anchors them
        ("mapa de los lugares que se mencionan con Chile", "mapa_lugares", {"entidad": "country:CHL"}),
        ("¿En qué departamentos se habla de Ecuador?", "mapa_lugares", {"entidad": "country:ECU"}),
        # a country in any other view is an actor: the entity filter
        ("línea de tiempo de China en IA militar", "linea_tiempo", {"entidad": "country:CHN"}),
        ("serie anual de documentos sobre drones en Brasil", "linea_tiempo", {"entidad": "country:BRA"}),
        ("red de actores de Rusia en seguridad espacial", "red_entidades", {"entidad": "country:RUS"}),
    ],
)
def test_a_country_as_place_or_as_actor(reader, question, first, filters):
    route, comps, got, _ = _read(reader, question)
    assert comps[:1] == [first], (question, route, comps)
    assert {k: got.get(k) for k in ("entidad", "lugar")} == {"entidad": None, "lugar": None} | {
        k: v for k, v in filters.items() if k in ("entidad", "lugar")
    }, (question, got)
    assert all(got.get(k) == v for k, v in filters.items()), (question, got)


def test_a_country_as_place_passes_validation(reader):
    vis, rejected = visualizer.validate(["mapa_lugares"], {"lugar": "Venezuela"}, reader)
    assert vis["filtros"]["lugar"] == "country:VEN" and not rejected


def test_phenomenon_stated_as_fenomeno_espacial():
    assert intent.stated_phenomenon("matriz del fenómeno espacial desde 2020") == "space_security"


@pytest.mark.parametrize("question", ["menciones de Tumaco en los informes", "Tumaco en el corpus"])
def test_mentions_of_a_place_are_its_map(reader, question):
    route, comps, got, _ = _read(reader, question)
    assert route == "visualization" and comps[:1] == ["mapa_lugares"] and got.get("lugar") == "municipality:52835"


def test_what_happened_in_a_place_per_the_documents_stays_text(reader):
    assert _read(reader, "¿qué pasó en Tumaco según los documentos?")[0] == "text"


def test_a_comparison_after_a_view_is_explained(reader):
    route, comps, _, _ = _read(
        reader, "la cronología de las políticas de IA en la región y compara México con Argentina"
    )
    assert route == "both" and comps[:1] == ["linea_tiempo"], (route, comps)
    route, comps, _, _ = _read(reader, "la serie anual de la NASA, compárala con la ESA")
    assert route == "both" and comps[:1] == ["linea_tiempo"], (route, comps)
    route, comps, _, _ = _read(reader, "muestra el mapa de alertas del Cauca y compara en el mapa con Nariño")
    assert route == "visualization" and comps[:1] == ["mapa_alertas"], (route, comps)


@pytest.mark.parametrize(
    "question",
    [
        "¿quién ganó el clásico de anoche entre Santa Fe y Millonarios?",
        "¿Quién ganó la final de la copa ayer?",
        "¿qué hora es ahora en Medellín?",
        "el partido de Argentina hoy a qué hora empieza",
        "¿a qué hora juega Brasil?",
        "cuál es la hora en Leticia",
    ],
)
def test_chatter_with_a_place_is_off_topic(reader, question):
    assert router.plan(question, reader.read(question)).kind == "off_topic", question


def test_a_political_party_or_an_hour_in_history_is_no_chatter(reader):
    for question in (
        "¿qué partido político ganó la gobernación de Arauca según los documentos?",
        "¿A qué hora se lanzó el misil antisatélite ruso según los informes?",
    ):
        assert router.plan(question, reader.read(question)).kind == "question", question


# --------------------------------------------------------------------------- final4 kinds
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
        "mapa de las menciones de un régimen especial",  # "especial" is no typo of "espacial"
        "evolución de las zonas económicas especiales",
        "red de actores que militan en partidos",
        "timeline of the laws on land",
    ],
)
def test_no_phenomenon_from_words_that_do_not_state_one(question):
    assert intent.stated_phenomenon(question) is None


def test_a_sub_topic_sets_the_view_filter(reader):
    _, comps, filtros = _read(reader, "Muéstrame la evolución de los documentos sobre armas autónomas desde 2015")[:3]
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
    _, comps, filtros = _read(reader, question)[:3]
    assert comps == ["red_entidades"]
    assert filtros.get("entidad") == entidad


def test_two_actors_related_still_have_no_single_filter(reader):
    _, comps, filtros = _read(reader, "red de relaciones entre China y Rusia en seguridad espacial")[:3]
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
    _, comps, filtros = _read(reader, question)[:3]
    assert comps == ["linea_tiempo"]
    assert filtros.get("entidad") == entidad
    assert filtros.get("lugar") == lugar


def test_two_countries_compared_are_no_place(reader):
    _, _, filtros = _read(reader, "compara en una línea de tiempo a Brasil y Chile")[:3]
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
    _, comps, filtros = _read(reader, question)[:3]
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
    _, comps, filtros = _read(reader, question)[:3]
    assert comps == ["linea_tiempo"]
    assert "desde" not in filtros and "hasta" not in filtros


def test_a_year_in_the_view_part_stays_its_period(reader):
    question = "Muéstrame la línea de tiempo de las pruebas ASAT desde 2007 y explícame qué pasó"
    _, comps, filtros, _ = _read(reader, question)
    assert comps == ["linea_tiempo"]
    assert filtros.get("desde") == 2007


# ------------------------------------------------- kinds the eighth blind set (final5) found
@pytest.mark.parametrize(
    ("question", "first"),
    [
        # an actor's direction asked either/or or as "en aumento": the quadrant's trend axis
        ("¿La Segunda Marquetalia va subiendo o bajando?", "cuadrante"),
        ("qué actores de la seguridad espacial van en aumento", "cuadrante"),
        ("grupos armados con muchas menciones y en ascenso", "cuadrante"),
        # one actor placed among the others
        ("¿Cómo está el ELN comparado con el resto de grupos?", "cuadrante"),
        # a count of documents going down is the timeline, not an actor's trend
        ("¿los documentos sobre armas autónomas van bajando?", "linea_tiempo"),
    ],
)
def test_an_actors_direction_is_the_quadrant_and_a_counts_the_timeline(reader, question, first):
    route, comps, _, _ = _read(reader, question)
    assert route == "visualization" and comps[:1] == [first], (question, route, comps)


@pytest.mark.parametrize(
    "question",
    [
        "Ver la cronología de las pruebas antisatélite y explicar por qué preocupan",
        "ver en el mapa las alertas del Cauca y resumir qué riesgos señalan",
        "Hacer una red de los actores de IA militar y comentar los vínculos más fuertes",
        "Compara a lo largo del tiempo los documentos sobre China y Rusia y explica la diferencia",
    ],
)
def test_an_infinitive_request_to_see_and_explain_is_both(reader, question):
    route, comps, _, _ = _read(reader, question)
    assert route == "both" and comps, (question, route, comps)


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué capacidades mostraron los ejercicios de la OTAN con IA?",  # past tense: no request
        "Si Rusia va a desplegar armas en órbita, ¿qué dicen los tratados?",  # deploying weapons, not a view
        "ver qué dicen los informes de la ESA sobre fragmentaciones",  # "ver qué dicen" asks to be told
    ],
)
def test_past_or_deploy_verbs_are_no_request_to_see(reader, question):
    assert _read(reader, question)[0] == "text", question


def test_a_comparison_over_time_is_the_timeline_without_the_compared_entities(reader):
    route, comps, filtros, _ = _read(
        reader, "Compara en el tiempo las alertas que nombran a las disidencias y al ELN desde 2018 y explica"
    )
    assert (route, comps[:1]) == ("both", ["linea_tiempo"])
    assert filtros.get("desde") == 2018 and "entidad" not in filtros


def test_a_country_that_is_the_documents_topic_is_the_actor_of_the_places_map(reader):
    _, comps, filtros, _ = _read(reader, "sitios nombrados en los textos sobre Rusia desde 2015")
    assert comps[:1] == ["mapa_lugares"]
    assert filtros.get("entidad") == "country:RUS" and "lugar" not in filtros
    # the country asked about as the place stays the place
    _, comps, filtros, _ = _read(reader, "¿Dónde se nombra a Rusia en los documentos?")
    assert filtros.get("lugar") == "country:RUS"


# ------------------------------------- kinds the ninth and tenth blind sets (final6, final7) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        # a telegraphic view word after the question, with "y/+ explicación/análisis/contexto"
        ("¿con quién aparece el ELN? red + breve análisis", "both", "red_entidades"),
        ("alertas del Chocó en el mapa y contexto de lo que pasó", "both", "mapa_alertas"),
        # the noun of a change over time heads the request
        ("evolución de los documentos sobre enjambres desde 2016 y explícame los picos", "both", "linea_tiempo"),
        # how much a topic is written about, changing ("el tema de", "lo de", "la atención")
        ("cómo ha ido cambiando el tema de las armas espaciales desde 2012", "visualization", "linea_tiempo"),
        ("lo de la minería ilegal sube o no?", "visualization", "linea_tiempo"),
        ("¿Cuándo se publicaron los informes que nombran a Buenaventura?", "visualization", "linea_tiempo"),
        # places heading a telegraphic request, qualified by armed groups
        ("municipios del Cauca con grupos armados desde 2021", "visualization", "mapa_presencia"),
        ("de los informes de 2022, ¿cuáles son los sitios más citados?", "visualization", "mapa_lugares"),
        # every form of "advertir" is the alerts' verb
        (
            "¿En qué municipios ha advertido la Defensoría riesgos para líderes sociales?",
            "visualization",
            "mapa_alertas",
        ),
        # "¿cómo se conectan / se reparten…?" is a view, not an explanation
        ("Muéstrame cómo se vinculan los actores de la IA militar", "visualization", "red_entidades"),
        ("¿Cómo se reparten las menciones de China entre categorías?", "visualization", "matriz_calor"),
        ("¿Qué tecnologías aparecen más ligadas a cada actor en el Putumayo?", "visualization", "matriz_calor"),
        # two named actors weighed on a trend: the quadrant, even about documents
        ("¿Quién va más al alza en los documentos sobre satélites, Rusia o India?", "visualization", "cuadrante"),
        ("los grupos más calientes del último año en lo territorial", "visualization", "cuadrante"),
        ("el ELN va en alza o de bajada?", "visualization", "cuadrante"),
    ],
)
def test_views_asked_in_analysts_shorthand(reader, question, route, first):
    _assert_view(reader, question, route, first)


@pytest.mark.parametrize(
    ("question", "phenomenon"),
    [
        ("red de actores en lo espacial", "space_security"),
        ("matriz de categorías p/ lo territorial", "territorial"),
        ("entidades que salen en los informes espaciales", "space_security"),
        ("cronología de las economías ilegales en la Amazonía", "territorial"),
        ("actores de los drones en conflictos armados por año", "ai_military"),
    ],
)
def test_a_domain_named_in_shorthand_states_the_phenomenon(question, phenomenon):
    assert intent.stated_phenomenon(question) == phenomenon


def test_what_the_documents_mention_is_content_not_a_map(reader):
    assert _read(reader, "entre 2016 y 2020 qué delitos ambientales mencionan los informes del Guaviare?")[0] == "text"
    # naming a place still asks where: "¿qué documentos mencionan a Tumaco?"
    assert _read(reader, "¿qué documentos mencionan a Tumaco?")[0] == "visualization"


def test_a_trend_asked_with_a_tag_is_no_premise(reader):
    route, comps, _, _ = _read(reader, "lo de los enjambres de drones crece o no? por año")
    assert route == "visualization" and comps[:1] == ["linea_tiempo"]


def test_an_off_topic_place_question_opens_no_map(reader):
    facts = reader.read("¿me recomiendas dónde almorzar en Medellín?")
    assert router.plan("¿me recomiendas dónde almorzar en Medellín?", facts).kind == "off_topic"


def test_a_range_in_the_part_to_explain_still_bounds_the_view(reader):
    _, comps, filtros, _ = _read(
        reader, "¿Dónde alertó la Defensoría por reclutamiento? Quiero el mapa y una explicación de 2017 a 2021"
    )
    assert comps[:1] == ["mapa_alertas"]
    assert (filtros.get("desde"), filtros.get("hasta")) == (2017, 2021)


def test_the_unit_said_once_counts_for_the_last_n():
    p = parse_period("cobertura del ELN año a año, últimos 4", 2025)
    assert (p.desde, p.hasta) == (2022, 2025)
    assert parse_period("los últimos 3 informes", 2025) is None


def test_a_long_abbreviation_typed_lower_case_is_the_country(reader):
    assert any(e.value == "country:USA" for e in reader.read("drones de eeuu en somalia").entities)
    assert not any(e.value == "country:USA" for e in reader.read("el ejército usa drones").entities)


def test_a_greeting_after_an_interjection_is_a_greeting(reader):
    assert router.plan("oye, ¿cómo estás?", reader.read("oye, ¿cómo estás?")).kind == "greeting"
    q = "oye, ¿qué grupos hay en Tumaco?"
    assert router.plan(q, reader.read(q)).kind == "question"


# ------------------------------------------ kinds found by probing every view with our own phrasings
@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("concentración de menciones de la OTAN por país", "mapa_lugares"),
        ("¿Quiénes lideran la discusión sobre armas autónomas?", "cuadrante"),
        ("¿Qué organizaciones emergen en lo espacial?", "cuadrante"),
        ("top 5 actores en los documentos de seguridad espacial", "cuadrante"),
        ("¿Qué temas dominan en los textos sobre las disidencias?", "matriz_calor"),
        ("¿Quiénes rodean al Clan del Golfo en los documentos?", "red_entidades"),
        ("¿Desde cuándo se habla de enjambres de drones?", "linea_tiempo"),
        ("picos de menciones de la India en lo espacial", "linea_tiempo"),
        ("¿Cómo se ve la red de Estados Unidos en IA militar?", "red_entidades"),
        ("el panorama de actores armados en el Guaviare", "mapa_presencia"),
        ("grupos en Tibú", "mapa_presencia"),
    ],
)
def test_views_asked_without_their_usual_words(reader, question, first):
    route, comps, _, _ = _read(reader, question)
    assert route == "visualization" and comps[:1] == [first], (question, route, comps)


def test_top_actors_linked_to_one_stay_the_network(reader):
    assert _read(reader, "los top actores conectados con el ELN")[1][:1] == ["red_entidades"]


@pytest.mark.parametrize(
    ("question", "desde", "hasta"),
    [
        ("red del ELN antes del acuerdo de 2016", None, 2015),
        ("alertas después de la prueba india de 2019", 2020, None),
        ("documentos desde el informe de la ESA de 2020", 2020, None),
    ],
)
def test_a_dated_event_bounds_the_period_like_its_year(question, desde, hasta):
    p = parse_period(question, 2025)
    assert (p.desde, p.hasta) == (desde, hasta)


# ---------------------------------------- kinds the eleventh and twelfth blind sets (final8, final9) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        ("dame la cronología de las pruebas ASAT y explícame los hitos", "both", "linea_tiempo"),
        ("¿En qué textos se menciona Briceño?", "visualization", "mapa_lugares"),
        ("¿Qué clases de hechos aparecen más con el ELN?", "visualization", "matriz_calor"),
        (
            "¿Qué relación hay entre China y Estados Unidos en los documentos de IA militar?",
            "visualization",
            "red_entidades",
        ),
        ("cruce entre países y tipos de programa en lo espacial", "visualization", "matriz_calor"),
        ("Desglose por categoría de lo que se dice del Clan del Golfo", "visualization", "matriz_calor"),
        ("Ubica a China en el cuadrante de la seguridad espacial", "visualization", "cuadrante"),
        ("presencia de las disidencias en el Meta + contexto: qué buscan allí", "both", "mapa_presencia"),
        ("¿Creció o cayó con los años la documentación sobre la OTAN?", "visualization", "linea_tiempo"),
    ],
)
def test_views_the_last_blind_sets_asked_for(reader, question, route, first):
    _assert_view(reader, question, route, first)


def test_a_relation_between_topics_stays_content(reader):
    assert _read(reader, "¿Qué relación hay entre la minería ilegal y la deforestación?")[0] == "text"


def test_a_country_as_the_agent_of_what_is_mapped_stays_the_actor(reader):
    _, comps, filtros, _ = _read(reader, "¿Dónde se mencionan las pruebas antisatélite de la India? en el mapa")
    assert comps[:1] == ["mapa_lugares"]
    assert filtros.get("entidad") == "country:IND" and "lugar" not in filtros
    assert _read(reader, "¿Dónde se nombra a la India en los documentos?")[2].get("lugar") == "country:IND"


@pytest.mark.parametrize(
    ("question", "phenomenon"),
    [
        ("red de actores sobre debris", "space_security"),
        ("timeline del contraespacio ruso", "space_security"),
        ("killer robots en los documentos, matriz", "ai_military"),
        ("línea de tiempo de drones", "ai_military"),
    ],
)
def test_more_words_that_state_a_phenomenon(question, phenomenon):
    assert intent.stated_phenomenon(question) == phenomenon


def test_a_one_word_technology_is_the_views_subject_and_states_its_phenomenon(reader):
    _, comps, filtros, _ = _read(reader, "matriz de calor drones")
    assert comps[:1] == ["matriz_calor"]
    assert filtros.get("entidad") == "military_drones" and filtros.get("fenomeno") == "ai_military"


def test_an_acronym_typed_lower_case_in_a_capitalised_question_is_read(reader):
    facts = reader.read("presencia del eln en el departamento de Arauca")
    assert any(e.value == "eln" for e in facts.entities)
    # a place name inside a longer word is not written in the view's part ("Tame" in "departamento")
    _, _, filtros, _ = _read(
        reader, "Muéstrame la presencia del ELN en el departamento de Arauca y explícame por qué crece en Tame"
    )
    assert filtros.get("lugar") == "department:81"


def test_who_the_assistant_is_and_its_favourites_are_smalltalk(reader):
    for q in ("oye, ¿cómo te llamas? ¿eres una persona?", "¿cuál es tu película favorita?"):
        assert router.plan(q, reader.read(q)).kind in ("capabilities", "off_topic"), q


def test_portuguese_mostram_is_no_request(reader):
    q = "O que os relatórios mostram sobre mineração ilegal em 2020?"
    assert _read(reader, q)[0] == "text"


# ------------------------------------------------- round 8: views asked as how much / who most
@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("¿Cuánto se escribe sobre la guerra espacial?", "linea_tiempo"),
        ("¿hay menos publicaciones que antes sobre enjambres?", "linea_tiempo"),
        ("¿Cuál es más nombrado, la OTAN o el Pentágono?", "cuadrante"),
        ("¿Qué organización acumula más menciones en IA militar?", "cuadrante"),
        ("los actores más influyentes en lo espacial", "cuadrante"),
        ("¿Qué entidades pierden visibilidad desde 2020?", "cuadrante"),
        ("¿De qué se habla más en los textos sobre Chile?", "matriz_calor"),
        ("Where do armed groups operate in Cauca?", "mapa_presencia"),
        ("¿Cómo se distribuyen territorialmente las alertas por reclutamiento?", "mapa_alertas"),
        ("alertas de la Defensoría en el Magdalena Medio", "mapa_alertas"),
        ("ranking de países más mencionados en lo espacial", "mapa_lugares"),
    ],
)
def test_views_asked_as_how_much_or_who_most(reader, question, first):
    route, comps, _, _ = _read(reader, question)
    assert route == "visualization" and comps[:1] == [first], (question, route, comps)


# ---------------------------------------- kinds the thirteenth and fourteenth blind sets (final10, final11) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        # the usted forms: "Muestre… y analice…", "Visualice… y comente…", "Grafique…"
        ("Muestre la cronología de las pruebas ASAT y analice los hitos", "both", "linea_tiempo"),
        ("Visualice la red de la OTAN y comente sus vínculos", "both", "red_entidades"),
        ("Grafique la evolución de los documentos sobre Starlink", "visualization", "linea_tiempo"),
        ("ubíqueme las alertas del Cauca y deme un breve contexto", "both", "mapa_alertas"),
        # "lo que dicen" is what a view shows
        ("línea de tiempo de lo que dicen los informes sobre la OTAN", "visualization", "linea_tiempo"),
        # "por qué municipios" is where
        ("¿Por qué municipios se mueve el ELN?", "visualization", "mapa_presencia"),
        ("¿Cuál es la huella territorial del Clan del Golfo?", "visualization", "mapa_presencia"),
        # topics an actor is in
        ("¿en qué temas sale más la OTAN?", "visualization", "matriz_calor"),
        ("Compara Chile y Brasil por tipo de tema en IA militar", "visualization", "matriz_calor"),
        ("¿Qué temas ligados a las disidencias de las FARC sobresalen en el Cauca?", "visualization", "matriz_calor"),
        # co-mentioned actors, and growth of what is published
        ("qué actores se nombran con el ELN en los documentos", "visualization", "red_entidades"),
        (
            "¿Qué ha crecido más: lo publicado sobre drones o lo escrito sobre satélites?",
            "visualization",
            "linea_tiempo",
        ),
        ("Which actors are trending in space security?", "visualization", "cuadrante"),
    ],
)
def test_views_the_thirteenth_and_fourteenth_sets_asked_for(reader, question, route, first):
    _assert_view(reader, question, route, first)


def test_a_country_adjective_names_the_actor(reader):
    _, comps, filtros, _ = _read(reader, "map of places mentioned with Russian anti-satellite tests")
    assert comps[:1] == ["mapa_lugares"] and filtros.get("entidad") == "country:RUS" and "lugar" not in filtros
    # two adjectives compared: no single actor
    assert not any(e.category == "country" for e in reader.read("programas chinos y rusos").entities)


def test_a_country_as_the_documents_topic_and_as_the_place(reader):
    assert _read(reader, "lugares citados en los informes sobre Irán")[2].get("entidad") == "country:IRN"
    assert (
        _read(reader, "¿Qué lugares de Perú aparecen en los informes sobre minería?")[2].get("lugar") == "country:PER"
    )


def test_a_place_the_question_sets_aside_is_no_candidate(reader):
    facts = reader.read("grupos en el municipio de Sucre, en el Cauca (no el departamento de Sucre)")
    assert [p.place_id for p in facts.places if p.level != "department" or p.place_id == "department:70"] == [
        "municipality:19785"
    ]


def test_that_is_all_is_a_farewell(reader):
    assert (
        router.plan("ok, perfecto. eso es todo por hoy", reader.read("ok, perfecto. eso es todo por hoy")).kind
        == "thanks"
    )


# ------------------------------------------ round 10 (no set read): months, "hasta el año pasado", naive requests
@pytest.mark.parametrize(
    ("question", "desde", "hasta"),
    [
        ("alertas de los últimos 24 meses", 2024, 2025),
        ("red de la OTAN hasta el año pasado", None, 2024),
        ("documentos antes del año pasado", None, 2023),
    ],
)
def test_months_and_last_year_as_bounds(question, desde, hasta):
    p = parse_period(question, 2025)
    assert (p.desde, p.hasta) == (desde, hasta)


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("quiero ver algo gráfico de los grupos armados en el Meta", "mapa_presencia"),
        ("¿cómo puedo ver qué departamentos salen más en las alertas?", "mapa_alertas"),
        ("¿tienes algo que me muestre los temas por entidad?", "matriz_calor"),
    ],
)
def test_naive_requests_for_a_view(reader, question, first):
    route, comps, _, _ = _read(reader, question)
    assert route == "visualization" and comps[:1] == [first], (question, route, comps)


def test_what_finances_armed_groups_in_a_place_stays_content(reader):
    assert (
        _read(reader, "qué economías ilegales financian a los grupos armados en Tumaco según los informes")[0] == "text"
    )


# --------------------------- kinds the fifteenth to seventeenth blind sets (final12-final14) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        # one actor's course in time, asked as when it started or whether it grew
        ("¿Cuándo empezó a sonar la OTAN en el corpus y cómo ha ido creciendo?", "visualization", "linea_tiempo"),
        (
            "el tema de las disidencias ha crecido o ha bajado? muéstramelo en el tiempo",
            "visualization",
            "linea_tiempo",
        ),
        ("curva de cuánto se ha hablado de Starlink", "visualization", "linea_tiempo"),
        ("hasta 2018, ¿cómo venía la producción de documentos sobre ASAT?", "visualization", "linea_tiempo"),
        # several actors' direction stays the quadrant
        ("ver y explicar: quiénes suben y quiénes bajan entre los actores espaciales", "both", "cuadrante"),
        ("¿qué potencias vienen pisando fuerte en IA militar?", "visualization", "cuadrante"),
        ("que entidades son tendencia desde 2020", "visualization", "cuadrante"),
        # places and alerts in everyday words
        ("Distribución departamental de las alertas desde 2019", "visualization", "mapa_alertas"),
        ("¿en qué parte del país hay más avisos de riesgo?", "visualization", "mapa_alertas"),
        ("dnde estan los elenos, por municipio", "visualization", "mapa_presencia"),
        ("¿Cuál es la zona de influencia del Clan del Golfo?", "visualization", "mapa_presencia"),
        ("Tumaco: documentos que lo nombran desde 2015", "visualization", "mapa_lugares"),
        # co-appearance and relations between actors
        (
            "¿Qué relaciones hay entre la OTAN, Rusia y China según los documentos? visualízalo",
            "visualization",
            "red_entidades",
        ),
        ("quiero ver qué países salen juntos en lo espacial", "visualization", "red_entidades"),
        ("¿Qué otros actores aparecen en los mismos documentos que el ELN?", "visualization", "red_entidades"),
        ("¿Qué países, empresas u organizaciones se nombran junto a China?", "visualization", "red_entidades"),
        ("¿Con quién aparece más mencionada la OTAN?", "visualization", "red_entidades"),
        # topics per actor
        ("una tabla que cruce los grupos armados con los tipos de hechos", "visualization", "matriz_calor"),
        ("comparar en qué asuntos se concentran Chile y Brasil en IA", "visualization", "matriz_calor"),
        ("Muéstrame los temas que más pesan para la OTAN", "visualization", "matriz_calor"),
        ("dime y muéstrame con quién aparece el ELN en Arauca", "both", "red_entidades"),
    ],
)
def test_views_the_fifteenth_to_seventeenth_sets_asked_for(reader, question, route, first):
    _assert_view(reader, question, route, first)


def test_a_relation_between_an_actor_and_a_territory_stays_content(reader):
    assert _read(reader, "¿qué relación hay entre el ELN y el territorio venezolano?")[0] == "text"
    assert _read(reader, "¿Cómo cambió la discusión en la ONU sobre armas autónomas entre 2019 y 2023?")[0] == "text"


def test_countries_as_border_place_adjective_and_documents_the_actor_is_in(reader):
    _, _, filtros, _ = _read(reader, "alertas en Ipiales, Nariño, frontera con Ecuador, desde 2020")
    assert "entidad" not in filtros and filtros.get("lugar") == "municipality:52356"
    assert not any(e.category == "country" for e in reader.read("deforestación en la Amazonía brasileña").entities)
    _, _, filtros, _ = _read(
        reader, "¿Qué lugares aparecen en los documentos de IA militar donde figura China? en el mapa"
    )
    assert filtros.get("entidad") == "country:CHN" and "lugar" not in filtros
    assert _read(reader, "documentos que mencionan a Brasil, en el mapa")[2].get("lugar") == "country:BRA"


def test_more_phenomenon_phrases(reader):
    assert intent.stated_phenomenon("cuántos documentos hablan de basura en órbita") == "space_security"
    assert intent.stated_phenomenon("los actores del espacio que crecen") == "space_security"
    assert intent.stated_phenomenon("heatmap de categorías territoriales") == "territorial"


def test_leisure_and_thanks_for_an_explanation_are_smalltalk(reader):
    q = "¿me recomiendas una serie de espías para el fin de semana?"
    assert router.plan(q, reader.read(q)).kind == "off_topic"
    q = "Gracias, muy útil la explicación."
    assert router.plan(q, reader.read(q)).kind == "thanks"


# ------------------------------------------ round 12 (no set read): phone typing and everyday words
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        ("kiero ver como va lo d los enjambres de drones", "visualization", "linea_tiempo"),
        ("quien anda con las disidencias en los docs", "visualization", "red_entidades"),
        ("¿me muestras en qué sitios hay más actividad de grupos armados?", "visualization", "mapa_presencia"),
        ("¿qué tan seguido aparece la OTAN en los papeles sobre el espacio?", "visualization", "linea_tiempo"),
        ("¿quiénes son los que más suenan en lo territorial?", "visualization", "cuadrante"),
        ("me gustaría ver un resumen visual de las alertas del Cauca", "visualization", "mapa_alertas"),
        ("¿cómo se compara la OTAN con Rusia en cuanto a menciones?", "visualization", "cuadrante"),
        ("¿qué tanto ha crecido la preocupación por las armas autónomas?", "visualization", "linea_tiempo"),
        ("cuáles son los temas que más se tocan sobre Starlink", "visualization", "matriz_calor"),
    ],
)
def test_views_asked_in_phone_typing_and_everyday_words(reader, question, route, first):
    _assert_view(reader, question, route, first)


def test_a_summary_asked_in_words_stays_content(reader):
    assert _read(reader, "hazme un resumen de las alertas del Cauca")[0] != "visualization"


# ---------------------------- kinds the eighteenth to twentieth blind sets (final15-final17) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        (
            "Muéstrame los municipios que aparecen en los documentos sobre minería ilegal",
            "visualization",
            "mapa_lugares",
        ),
        ("hasta 2019, ¿qué departamentos tuvieron más alertas por reclutamiento?", "visualization", "mapa_alertas"),
        ("¿el ELN está en Tame o no?", "visualization", "mapa_presencia"),
        ("tibu grupos armados desde 2020", "visualization", "mapa_presencia"),
        ("con kien sale mas el clan del golfo", "visualization", "red_entidades"),
        ("¿Qué organizaciones aparecen siempre al lado de Rusia?", "visualization", "red_entidades"),
        ("q temas tocan los informes sobre la OTAN", "visualization", "matriz_calor"),
        ("¿Qué aspectos predominan en lo que se escribe de las disidencias?", "visualization", "matriz_calor"),
        ("comparar de qué se habla sobre Chile y Brasil, tema por tema", "visualization", "matriz_calor"),
        ("¿Qué entidades están tomando fuerza y cuáles se están apagando?", "visualization", "cuadrante"),
        ("¿Quién es protagonista hoy en lo espacial?", "visualization", "cuadrante"),
        ("¿Cuándo se habló más de la India en temas del espacio?", "visualization", "linea_tiempo"),
        ("¿Cómo ha evolucionado lo que se dice de la OTAN?", "visualization", "linea_tiempo"),
        ("¿Está subiendo o bajando lo que se publica sobre armas autónomas?", "visualization", "linea_tiempo"),
        ("como fue creciendo lo del ELN desde el 2018", "visualization", "linea_tiempo"),
        ("q actores crecen en lo espacial y xq", "both", "cuadrante"),
        ("con quien se relaciona el ELN y q alianzas mencionan los docs", "both", "red_entidades"),
        ("alertas en Tumaco: ver y resumir q riesgos advierten", "both", "mapa_alertas"),
    ],
)
def test_views_the_eighteenth_to_twentieth_sets_asked_for(reader, question, route, first):
    _assert_view(reader, question, route, first)


@pytest.mark.parametrize(
    "question",
    [
        "¿qué economías ilegales financian a los grupos armados en el Meta?",  # asks what, not where
        "¿Qué riesgos para los líderes sociales describen las alertas sobre Tumaco?",
        "cuando la OTAN cambie su doctrina, q va a pasar con los drones",  # a prediction
    ],
)
def test_questions_that_stay_content(reader, question):
    assert _read(reader, question)[0] == "text", question


def test_more_phenomena_shorthand_periods_and_smalltalk(reader):
    assert intent.stated_phenomenon("conexiones de la NASA con otros actores en el espacio") == "space_security"
    assert intent.stated_phenomenon("¿Qué actores espaciales crecen?") == "space_security"
    assert intent.stated_phenomenon("la inteligencia artificial en lo militar") == "ai_military"
    p = parse_period("mapa de alertas ult 10 años", 2025)
    assert (p.desde, p.hasta) == (2016, 2025)
    for q in ("buenas, ¿qué más pues?", "q clima hace hoy en medellin"):
        assert router.plan(q, reader.read(q)).kind in ("greeting", "off_topic"), q
    # a Colombian department's capital is no trivia question
    q = "¿Cómo ha cambiado con el tiempo lo que se dice de Mocoa, la capital del Putumayo?"
    assert router.plan(q, reader.read(q)).kind == "question"


# ------------------------ kinds the twenty-first to twenty-third blind sets (final18-final20) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        ("Evolución en el tiempo de las alertas en Tumaco, y un resumen de lo que advierten", "both", "linea_tiempo"),
        ("¿Se habla cada vez más de la OTAN o es algo estable?", "visualization", "linea_tiempo"),
        ("compara la OTAN y Rusia según el tipo de actividad", "visualization", "matriz_calor"),
        ("¿Qué relación hay entre Rusia y China? Quiero la red y una explicación.", "both", "red_entidades"),
        ("en qué regiones vio la defensoría riesgo en 2022", "visualization", "mapa_alertas"),
        ("connections: who shows up alongside NATO?", "visualization", "red_entidades"),
        ("¿Perú aparece en los documentos? ¿cuántos lo nombran?", "visualization", "mapa_lugares"),
        ("¿qué entidades están emergiendo en lo espacial?", "visualization", "cuadrante"),
        ("Señálame dónde se concentran las alertas y explícame qué riesgos describen", "both", "mapa_alertas"),
        ("china y quienes mas?? en los textos de seguridad espacial", "visualization", "red_entidades"),
        ("Quiero ver si las menciones de la OTAN subieron o bajaron desde 2015", "visualization", "linea_tiempo"),
        ("quién viene subiendo en lo territorial? y quién ya está consolidado", "visualization", "cuadrante"),
        ("de que categorias se habla mas en IA militar, y por que", "both", "matriz_calor"),
        ("documentos sobre la OTAN en los ultimos 10 años, como van", "visualization", "linea_tiempo"),
        ("alertas de riesgo inminente del ultimo ano", "visualization", "mapa_alertas"),
        ("sitios q aparecen en los informes de drones", "visualization", "mapa_lugares"),
        ("quienes se nombran con el eln antes de 2016", "visualization", "red_entidades"),
        ("ver alertas en tumaco y resumir los riesgos q señalan", "both", "mapa_alertas"),
        ("menciones de china en el tiempo y explica q paso con su prueba asat de 2007", "both", "linea_tiempo"),
    ],
)
def test_views_the_twenty_first_to_twenty_third_sets_asked_for(reader, question, route, first):
    _assert_view(reader, question, route, first)


def test_declined_views_premises_and_requests_without_a_view(reader):
    assert _read(reader, "Quiero entender, sin gráficos, qué papel tiene la IA en el mando y control")[0] == "text"
    assert _read(reader, "Ya que China lanzó su estación en 2021, junto con Rusia, ¿qué planean ahora?")[0] == "text"
    route, comps, _, _ = _read(reader, "Show me y explícame los documentos que mencionan Tumaco")
    assert route == "both" and comps[:1] == ["mapa_lugares"]


def test_places_countries_and_phenomena_of_the_last_sets(reader):
    # "le toca" is a verb, not Toca (Boyacá)
    assert _read(reader, "quiero ver por categorías qué le toca a cada grupo armado")[2].get("lugar") is None
    # two coordinated countries: no single place, no actor
    filtros = _read(reader, "sitios q aparecen en los reportes de ataques con drones en yemen y pakistan")[2]
    assert "lugar" not in filtros and "entidad" not in filtros
    # "ubica los documentos que hablan de Brasil" locates Brazil
    assert _read(reader, "Ubica los documentos que hablan de Chile en temas de IA")[2].get("lugar") == "country:CHL"
    assert intent.stated_phenomenon("menciones de rusia en el tiempo, seg espacial") == "space_security"
    assert router.plan("q hora es en lima", reader.read("q hora es en lima")).kind == "off_topic"


# ------------------------ kinds the twenty-fourth to twenty-seventh blind sets (final21-final24) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        ("intensity vs trend de la OTAN", "visualization", "cuadrante"),
        ("¿En qué pueblos anda metido el Clan del Golfo? Quiero verlo.", "visualization", "mapa_presencia"),
        ("grupos ilegales en tumaco nariño... quienes estan ahi", "visualization", "mapa_presencia"),
        ("What municipalities does the ELN control in Arauca?", "visualization", "mapa_presencia"),
        (
            "Quisiera ver, por departamento, las advertencias de riesgo de los últimos cinco años",
            "visualization",
            "mapa_alertas",
        ),
        ("¿Dónde se concentraron los avisos de la Defensoría en 2023?", "visualization", "mapa_alertas"),
        ("riesgo inminente vs estructural en el cauca, verlo en el mapa", "visualization", "mapa_alertas"),
        ("¿Cómo fue la tendencia de Rusia en seguridad espacial entre 2015 y 2022?", "visualization", "linea_tiempo"),
        ("¿Cuándo se concentraron los documentos sobre la OTAN?", "visualization", "linea_tiempo"),
        ("¿Qué relación tiene el Clan del Golfo con otros grupos? algo gráfico", "visualization", "red_entidades"),
        ("desglose por temas de lo que dicen sobre China entre 2018 y 2022", "visualization", "matriz_calor"),
        ("quiero ver por temas qué se dice de la OTAN, con una explicación corta", "both", "matriz_calor"),
        ("otan vs rusia vs china en lo espacial, x categoria", "visualization", "matriz_calor"),
        ("¿India está cobrando más relevancia en lo espacial?", "visualization", "cuadrante"),
        ("Me gustaría ver la matriz de la OTAN y entender qué temas dominan", "both", "matriz_calor"),
        ("¿Dónde está el Clan del Golfo y qué hace allí según los documentos?", "both", "mapa_presencia"),
        ("Presencia de grupos armados en Tibú; primero el mapa, gracias.", "visualization", "mapa_presencia"),
    ],
)
def test_views_the_twenty_fourth_to_twenty_seventh_sets_asked_for(reader, question, route, first):
    _assert_view(reader, question, route, first)


def test_courtesy_is_no_premise_and_thanks_first_is_thanks(reader):
    q = "Si no es mucha molestia, quisiera ver las alertas del Cauca anteriores a 2018."
    route, comps, filtros, _ = _read(reader, q)
    assert (route, comps[:1], filtros.get("hasta")) == ("visualization", ["mapa_alertas"], 2017)
    for q in ("gracias, muy útil el mapa", "¿Quién te programó?"):
        assert router.plan(q, reader.read(q)).kind in ("thanks", "capabilities"), q
    assert (
        _read(reader, "q reporta el IDEAM sobre deforestacion en la amazonia y su relacion con grupos armados")[0]
        == "text"
    )


def test_phenomena_periods_and_places_of_the_last_sets(reader):
    assert intent.stated_phenomenon("¿Con quién aparece la India cuando se habla del espacio?") == "space_security"
    assert intent.stated_phenomenon("q temas tocan los docs de rusia sobre el espacio") == "space_security"
    assert intent.stated_phenomenon("cuadrante intensidad vs tendencia en territorial") == "territorial"
    assert intent.stated_phenomenon("documentos de inteligencia artificial para defensa") == "ai_military"
    p = parse_period("mapa alertas defensoria antes d 2018", 2025)
    assert (p.desde, p.hasta) == (None, 2017)
    # "municipios de Colombia" is the country's scope, not Colombia (Huila)
    assert (
        _read(reader, "¿qué municipios de Colombia se mencionan en los documentos de tierras?")[2].get("lugar") is None
    )


# -------------------- kinds the twenty-eighth to thirty-first blind sets (final25-final28) found
@pytest.mark.parametrize(
    ("question", "route", "first"),
    [
        ("con cuales grupos armados convive el municipio de Tibú?", "visualization", "mapa_presencia"),
        ("¿en qué pueblos está metido el Clan del Golfo?", "visualization", "mapa_presencia"),
        ("¿Cómo quedaron repartidas por el país las alertas de 2023?", "visualization", "mapa_alertas"),
        ("¿Cómo fue la cosa con el ELN desde 2016 para acá?", "visualization", "linea_tiempo"),
        ("China: con qué programas o tecnologías la mencionan en temas de espacio", "visualization", "red_entidades"),
        ("Quiero una vista de actores contra tipos de tema en lo espacial", "visualization", "matriz_calor"),
        ("Which topics, por actor, en lo territorial?", "visualization", "matriz_calor"),
        ("comparame por temas a la OTAN y a Rusia", "visualization", "matriz_calor"),
        ("Muéstrame lo que se dice de Tumaco y resúmeme el contexto", "both", "mapa_lugares"),
        ("¿Qué pasó con las menciones de China en lo espacial en 2020? Grafícalo y explícame", "both", "linea_tiempo"),
        ("¿Qué tanto se mencionan juntas la OTAN y Rusia?", "visualization", "red_entidades"),
        ("¿Qué actores del conflicto vienen ganando espacio desde 2019?", "visualization", "cuadrante"),
        ("q grupos ay en tumaco", "visualization", "mapa_presencia"),
        ("Necesito la curva temporal de publicaciones sobre drones de 2015 a 2020", "visualization", "linea_tiempo"),
        ("Quisiera entender con quién se menciona a la OTAN; ¿me muestra la red?", "visualization", "red_entidades"),
        ("Dime qué actores son tendencia en lo espacial", "visualization", "cuadrante"),
        ("¿Qué avisos ha dado la Defensoría sobre Tumaco?", "visualization", "mapa_alertas"),
    ],
)
def test_views_the_twenty_eighth_to_thirty_first_sets_asked_for(reader, question, route, first):
    _assert_view(reader, question, route, first)


def test_content_jokes_and_comparison_years(reader):
    assert _read(reader, "¿Qué ha dicho la NASA sobre el crecimiento de los desechos en órbita?")[0] == "text"
    q = "Cuéntame un chiste sobre satélites, que el día ha sido largo."
    assert router.plan(q, reader.read(q)).kind == "off_topic"
    assert parse_period("¿Se publicó más sobre el ELN antes de 2018 o después?", 2025) is None
    p = parse_period("documentos que nombran a Venezuela dsde 2018", 2025)
    assert (p.desde, p.hasta) == (2018, None)
    assert intent.stated_phenomenon("informes sobre tierras y conflicto") == "territorial"


@pytest.mark.parametrize(
    "question,route",
    [
        ("¿Qué está pasando con las alertas en Arauca, el departamento? Muéstramelo", "both"),
        ("que esta pasando en el catatumbo? muestrame el mapa", "both"),
        ("¿Qué está sucediendo con el ELN en Arauca?", "text"),
        ("q esta pasando con los drones en ucrania??", "text"),
        ("¿qué están ocurriendo allí con las disidencias?", "text"),
    ],
)
def test_what_is_happening_is_a_content_question(question, route):
    # "¿qué está pasando con…?" asks to be told (as "¿qué ha pasado con…?"); with a show request it is both
    assert intent.classify(question).route == route, intent.classify(question)


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué países han realizado pruebas antisatélite destructivas?",
        "¿Qué países desarrollan armas autónomas letales?",
        "¿Qué países firmaron el compromiso de no realizar pruebas ASAT?",
        "¿Qué estados han usado enjambres de drones en combate?",
        "Which countries tested direct-ascent anti-satellite missiles?",
        "que paises ya lanzaron megaconstelaciones?",
    ],
)
def test_countries_that_did_something_are_answered_from_the_passages(question):
    # the map of the documents naming each country does not say which country did it
    assert intent.classify(question).route in ("text", "both"), question


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué países se mencionan junto a la India?",
        "¿Qué países aparecen más en los documentos de seguridad espacial?",
        "¿En qué países hay más documentos sobre IA militar?",
        "que paises tienen mas menciones en 2020",
        "¿Qué municipios tienen presencia del ELN?",
        "¿Qué países están vinculados a Irán en los documentos de drones?",
        "¿En qué países han alertado sobre los riesgos de la IA militar?",
    ],
)
def test_places_named_counted_or_where_a_group_is_stay_the_map(question):
    assert intent.classify(question).route == "visualization", question
