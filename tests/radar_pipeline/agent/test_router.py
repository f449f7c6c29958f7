"""Routing, decomposition, coverage requirements and the visualizer's closed lists."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading import requirements
from radar_pipeline.agent.reading.understanding import QuestionReader
from radar_pipeline.agent.roles import router, visualizer


@pytest.fixture(scope="module")
def reader(shared_dir):
    """The real gazetteer (../shared/geo) and entity dictionary; newest dated document: 2025."""
    return QuestionReader.from_shared(shared_dir, reference_year=2025)


def test_kinds():
    assert router.plan("Hola").kind == "greeting"
    assert router.plan("¡Muchas gracias!").kind == "thanks"
    assert router.plan("¿Qué puedes hacer?").kind == "capabilities"
    assert router.plan("Dame una receta de paella").kind == "off_topic"
    assert router.plan("Hola, ¿qué grupos armados operan en el Cauca?").kind == "question"


@pytest.mark.parametrize(
    "text",
    [
        "mil gracias por la ayuda",
        "Mil gracias, muy útil todo",
        "Listo, chao",
        "listo, chao, nos vemos",
        "ok gracias",
        "Perfecto, muchas gracias por la información",
        "Muchas gracias por tu respuesta sobre los drones",
        "Gracias, eso es todo",
        "Hasta luego",
        "Thanks a lot, bye!",
        "Valeu, obrigado!",
    ],
)
def test_thanks_and_farewells_need_no_retrieval(text):
    assert router.plan(text).kind == "thanks"


@pytest.mark.parametrize(
    "text",
    [
        "¿Qué tiempo va a hacer mañana en Bogotá?",
        "¿Qué temperatura hace en Cali?",
        "What is the weather like in Bogotá today?",
        "Previsão do tempo para São Paulo",
        "¿Quién ganó el clásico?",
        "¿Cómo quedó la Selección Colombia?",
        "Who won the Champions League final?",
        "¿Quién es el goleador del mundial?",
        "Dame una receta de ajiaco",
        "¿Cómo se prepara una bandeja paisa?",
        "Receita de feijoada",
        "¿Cuánto está el dólar hoy?",
    ],
)
def test_weather_sports_recipes_are_off_topic(text):
    assert router.plan(text).kind == "off_topic"


@pytest.mark.parametrize(
    "text",
    [
        "Gracias, ¿y qué pasó en 2021?",
        "Gracias. Ahora dime qué grupos operan en Arauca",
        "¿Cómo afecta la lluvia a las operaciones de drones militares?",
        "¿Cómo afectó el clima a las operaciones militares en Ucrania?",
        "¿Qué grupos armados se financian con la minería gracias a la falta de Estado?",
        "¿Cómo se prepara un ataque con drones?",
    ],
)
def test_follow_ups_and_domain_questions_still_retrieve(text):
    assert router.plan(text).kind == "question"


def test_chatter_is_answered_without_retrieval(client):
    for text in ("Mil gracias, listo, chao", "¿Quién ganó el partido de ayer?", "Dame una receta de pasta"):
        body = client.post("/chat", json={"pregunta": text}).json()
        assert body["metadata"]["llamadas_herramientas"] == 0 and body["evaluacion"]["tools_called"] == [], text
        assert body["citas"] == [] and body["evaluacion"]["retrieval_context"] == [], text


def test_routes():
    assert router.plan("¿Qué riesgos genera la basura espacial?").ruta == "text"
    assert router.plan("Muéstrame un mapa de alertas tempranas en Chocó").ruta == "visualization"
    assert router.plan("Muéstrame la línea de tiempo de pruebas ASAT y explica por qué aumentaron").ruta == "both"


def test_formulations_at_most_three_and_second_clause():
    p = router.plan(
        "¿Cómo están empleando las fuerzas militares los enjambres de drones, y qué oportunidades representan para Colombia?"
    )
    assert 1 <= len(p.formulations) <= 3
    assert any(f.lower().startswith("qué oportunidades") for f in p.formulations)


def test_requirements_years_lists_countries():
    reqs = requirements.extract_requirements("Compara las pruebas antisatélite de China y Rusia en 2007 y 2021")
    kinds = {(r.kind, r.label) for r in reqs}
    assert ("year", "2007") in kinds and ("year", "2021") in kinds
    assert any(r.label == "China" for r in reqs) and any(r.label == "Rusia" for r in reqs)
    rusia = next(r for r in reqs if r.label == "Rusia")
    assert rusia.met_by("the russian federation tested a missile")
    reqs = requirements.extract_requirements("¿Cómo financia la minería a los grupos en Chocó, Antioquia y Bolívar?")
    assert [r.label for r in reqs if r.kind == "item"] == ["Chocó", "Antioquia", "Bolívar"]
    reqs = requirements.extract_requirements("¿Qué doctrina espacial tiene Corea del Norte?")
    assert reqs[0].kind == "country" and reqs[0].met_by("north korea launched")
    assert requirements.extract_requirements("¿Qué es la basura espacial?") == []


def test_visualizer_closed_lists(reader):
    # the filter values are resolved against the gazetteer: a department's name becomes its place id
    # (it was the folded name "choco" before; ids also name municipalities and homonyms unambiguously)
    vis, rejected = visualizer.validate(
        ["mapa_alertas", "pastel", "mapa_alertas"],
        {"fenomeno": "territorial", "desde": 2019, "hasta": 2022, "lugar": "Chocó", "x": 1},
        reader,
    )
    assert [c["tipo"] for c in vis["componentes"]] == ["mapa_alertas"]
    assert vis["filtros"]["lugar"] == "department:27" and vis["componentes"][0]["endpoint"].startswith(
        "/aggregates/alerts_per_department?"
    )
    assert any("pastel" in r for r in rejected) and any("'x'" in r for r in rejected)
    assert visualizer.validate([], {})[0] is None
    vis, rejected = visualizer.validate(["mapa_lugares"], {"lugar": "Atlántida", "entidad": "Nadie"}, reader)
    assert vis["filtros"]["lugar"] is None and vis["filtros"]["entidad"] is None and len(rejected) == 2
    q = "Muéstrame un mapa de calor de entidades de seguridad espacial desde 2015"
    comps, filtros = visualizer.propose(q, reader.read(q))
    assert comps == ["matriz_calor"] and filtros["fenomeno"] == "space_security" and filtros["desde"] == 2015
    assert filtros["hasta"] is None  # "desde 2015" is open-ended (it read 2015–2015 before)


def _kinds(reqs):
    return [(r.kind, r.label) for r in reqs]


def test_closed_period_requires_every_year_of_it():
    # "entre 2019 y 2021" asked for its two end years only; every year of the range is required now
    reqs = requirements.extract_requirements("¿Cómo evolucionaron las políticas de ciberdefensa entre 2019 y 2021?")
    assert _kinds(reqs) == [("range", "2019"), ("range", "2020"), ("range", "2021")]
    assert {r.span for r in reqs} == {(2019, 2021)}
    reqs = requirements.extract_requirements("¿Qué cambió en la doctrina espacial del 2016 al 2021?")
    assert [r.label for r in reqs if r.kind == "range"] == [str(y) for y in range(2016, 2022)]
    assert not [r for r in reqs if r.kind == "year"]
    # a year written outside the period stays a year of the comparison
    reqs = requirements.extract_requirements("Compara la ciberdefensa entre 2015 y 2017 con la de 2010")
    assert _kinds(reqs) == [("range", "2015"), ("range", "2016"), ("range", "2017"), ("year", "2010")]


def test_loose_years_open_and_single_periods_unchanged():
    reqs = requirements.extract_requirements("Compara las políticas de ciberdefensa de 2019 y 2023")
    assert _kinds(reqs) == [("year", "2019"), ("year", "2023")]
    assert requirements.extract_requirements("¿Qué pruebas ASAT hubo desde 2019?") == []  # open: nothing to span
    assert requirements.extract_requirements("¿Qué pruebas ASAT hubo en 2021?") == []
    assert requirements.extract_requirements("¿Qué pruebas ASAT hubo entre 2021 y 2021?") == []


def test_relative_period_resolved_by_the_reader(reader):
    q = "¿Cómo cambió la ciberdefensa en los últimos cinco años?"
    assert requirements.extract_requirements(q) == []  # without a reference year it cannot be resolved
    facts = reader.read(q)
    p = router.plan(q, facts)
    assert [r.label for r in p.requirements if r.kind == "range"] == ["2021", "2022", "2023", "2024", "2025"]
    assert all(r.span == (2021, 2025) for r in p.requirements if r.kind == "range")
    # the resolved years go to the search formulations, which the question's words do not carry
    assert any("2021" in f and "2025" in f for f in p.formulations)


def test_range_year_met_by_mention_or_publication_year():
    (y2017,) = [
        r
        for r in requirements.extract_requirements("Evolución de la ciberdefensa entre 2016 y 2017")
        if r.label == "2017"
    ]
    assert y2017.met_by_passage("in 2017 the command was created")
    assert y2017.met_by_passage("the command was created", publication_year=2017)
    assert not y2017.met_by_passage("the command was created", publication_year=2018)
    assert not y2017.met_by_passage("the command was created in 20170")
    (loose,) = [
        r for r in requirements.extract_requirements("Compara 2017 y 2019 en ciberdefensa") if r.label == "2017"
    ]
    assert not loose.met_by_passage("the command was created", publication_year=2017)  # a loose year: mentions only


def test_unmet_counts_dated_documents_for_range_years():
    from radar_pipeline.agent.roles.analyst import unmet

    reqs = requirements.extract_requirements("Evolución de la ciberdefensa entre 2011 y 2013")
    read = {
        "a-0": {"doc_id": "a", "text": "El CONPES 3701 de 2011 fijó los lineamientos."},
        "b-0": {"doc_id": "b", "text": "El Comando Conjunto Cibernético empezó a operar."},
    }
    years = {"a": None, "b": 2012}
    assert [r.label for r in unmet(reqs, read)] == ["2012", "2013"]  # mentions only
    assert [r.label for r in unmet(reqs, read, years.get)] == ["2013"]


def test_coverage_note_names_exactly_the_missing_years():
    from radar_pipeline.agent import messages

    rows = [{"requisito": y, "tipo": "range", "cubierto": False} for y in ("2017", "2018")]
    assert (
        messages.coverage_note(rows, (2015, 2020))
        == "Sin evidencia leída para 2017 y 2018 dentro del periodo 2015–2020."
    )
    rows = [{"requisito": str(y), "tipo": "range", "cubierto": False} for y in (2011, 2013, 2014, 2015, 2019)]
    note = messages.coverage_note(rows + [{"requisito": "Rusia", "tipo": "country", "cubierto": False}], (2010, 2020))
    assert note.startswith("Cobertura incompleta: no encontré evidencia en los pasajes leídos para «Rusia» (país).")
    assert note.endswith("Sin evidencia leída para 2011, 2013–2015 y 2019 dentro del periodo 2010–2020.")


def test_countries_and_groups_come_from_the_gazetteer_and_dictionary():
    from radar_pipeline.agent.reading.understanding import name_sets

    sets = {ns.key: ns for ns in name_sets()}
    # a demonym in the question names the country; a metonym in an English passage meets it
    reqs = requirements.extract_requirements("¿Qué dicen los analistas rusos sobre la guerra espacial?")
    (rus,) = [r for r in reqs if r.kind == "country"]
    assert rus.label == "Rusia" and rus.aliases == sets["country:RUS"].aliases
    assert rus.met_by("officials in moscow confirmed") and rus.met_by("the kremlin said")
    # every country of the gazetteer, not only the old list of 45: Somalia, with its English name
    (som,) = [
        r for r in requirements.extract_requirements("¿Hubo ataques con drones en Somalia?") if r.kind == "country"
    ]
    assert som.met_by("strikes in somalia increased")
    # armed groups and organisations of the entity dictionary, with their context aliases
    labels = {r.label for r in requirements.extract_requirements("¿Dónde operan las disidencias y el Grupo Wagner?")}
    assert {"disidencias de las FARC", "Grupo Wagner"} <= labels
    (nato,) = [r for r in requirements.extract_requirements("¿Qué dice la OTAN sobre drones?") if r.kind == "group"]
    assert nato.met_by("the nato summit adopted") and nato.met_by("la otan aprobo")
    # an abbreviation that folds to an everyday word is no name in folded text ("US" → "us", "ESA" → "esa")
    assert "us" not in sets["country:USA"].aliases and "u.s." in sets["country:USA"].aliases
    assert not [
        r for r in requirements.extract_requirements("¿Qué dice esa estrategia de ciberdefensa?") if r.kind == "group"
    ]


def test_named_country_is_on_topic_but_trivia_about_it_is_not():
    assert router.plan("¿Y Francia?").kind == "question"  # a follow-up naming a country
    assert router.plan("¿Qué hace Corea del Norte?").kind == "question"
    assert router.plan("¿Cuál es la capital de Francia?").kind == "off_topic"
    assert router.plan("Dame una receta de pasta italiana").kind == "off_topic"
    assert router.plan("¿Cuál es la capital de Rusia y qué doctrina militar tiene?").kind == "question"


# A question whose own words cue a view (the alerts, a presence, a change, relations, places) is
# answered with the view and the passages (route both); a view named, shown or charted, or a count
# of documents or mentions, stays the view alone. Examples written for the kind, none from a set.
@pytest.mark.parametrize(
    "question",
    [
        "¿Qué grupos armados se disputan el control de Tibú según la alerta temprana?",
        "¿Cuándo emitió la Defensoría la alerta temprana para Briceño?",
        "¿Qué grupos armados operan en Puerto Asís?",
        "¿En qué municipios tiene presencia la Segunda Marquetalia?",
        "¿Con qué actores se relaciona el Tren de Aragua?",
        "¿Dónde opera el Clan del Golfo?",
        "cuántas alertas tempranas hubo para el Cauca en 2020?",
        # asked as a request to be told, with no question mark: a comparison, what a source says, typed fast
        "Compara las alertas tempranas 012-19 y 044-20 de Tumaco: fechas, población en riesgo y grupos",
        "grupos armados en disputa en Tumaco según la alerta de la Defensoría",
        "q grupos armados hay en Tibú segun la defensoria",
        # "se ubica" is where a thing is, not a request to map it
        "¿Qué comunidades indígenas amenaza el ELN en Arauca y en qué municipios se ubican sus resguardos?",
    ],
)
def test_a_question_a_view_cues_is_also_answered_from_the_passages(reader, question):
    facts = reader.read(question)
    assert router.plan(question, facts).ruta == "visualization"  # the reading's route is unchanged
    assert router.also_told(question, facts)


@pytest.mark.parametrize(
    "question",
    [
        "Muéstrame el mapa de alertas tempranas del Cauca",
        "mapa de presencia del ELN en Arauca",
        "¿Cuántos documentos mencionan a Tumaco por año?",
        "¿Qué países se mencionan más en los documentos sobre IA militar?",
        "línea de tiempo de las pruebas antisatélite",
        "¿Qué actores ganan protagonismo en la seguridad espacial?",
        "grafica la presencia armada en Puerto Asís",
        "¿Qué es la basura espacial?",  # a text question: not a view at all
        "ubica en el mapa los municipios con alertas tempranas del Cauca",
        "compárame en un gráfico las alertas de Nariño y Cauca por año",
    ],
)
def test_a_view_asked_for_or_a_count_of_documents_stays_the_view(reader, question):
    assert not router.also_told(question, reader.read(question))


def test_the_keyword_formulation_names_countries_and_actors_as_the_corpus_does(reader):
    """A demonym or a Spanish country name is no term the mostly English corpus writes: the keyword
    formulation carries the entity dictionary's name; Colombian armed groups keep their Spanish."""
    cases = {
        "¿Qué presupuesto de defensa tenía Corea del Sur en 2023?": "South Korea",
        "¿Qué dice el discurso iraní sobre la IA de defensa?": "Iran",
        "¿Qué contratos de IA adjudicó el Ejército Popular de Liberación chino?": "People's Liberation Army",
    }
    for question, name in cases.items():
        forms = router.plan(question, reader.read(question)).formulations
        assert len(forms) <= 3 and name in forms[-1], forms
    forms = router.plan("¿Dónde opera el ELN en Arauca?", reader.read("¿Dónde opera el ELN en Arauca?")).formulations
    assert not any("National Liberation Army" in f for f in forms)


@pytest.mark.parametrize(
    "question, place",
    [
        ("¿Cuándo se emitió la alerta temprana para el municipio de Argelia (Cauca)?", "Argelia"),
        ("¿Qué grupos operan en Argelia, Cauca?", "Argelia"),
        ("riesgos en Argelia (Antioquia) según la Defensoría", "Argelia"),
    ],
)
def test_a_country_name_read_as_a_colombian_place_is_the_place(reader, question, place):
    """Argelia is a country and three Colombian municipalities: where the reader resolved the
    municipality (a level cue, a department beside it), the requirement is the place, not Algeria."""
    reqs = router.plan(question, reader.read(question)).requirements
    assert ("lugar", place) in [(r.kind, r.label) for r in reqs]
    assert not any(r.kind == "country" for r in reqs)
    algeria = router.plan(
        "¿Qué dice Argelia sobre la IA militar?", reader.read("¿Qué dice Argelia sobre la IA militar?")
    )
    assert [(r.kind, r.label) for r in algeria.requirements] == [("country", "Argelia")]


@pytest.mark.parametrize(
    "question",
    [
        "¿Cuántas empresas respondieron la encuesta y qué sector tuvo más empresas en la muestra?",
        "¿De qué tamaño fue la muestra del estudio sobre uso de IA en las fuerzas armadas?",
    ],
)
def test_a_sample_is_no_request_to_show(reader, question):
    """The noun "la muestra" (a survey's sample) is a noun, not "muestra" (show): a text question."""
    assert router.plan(question, reader.read(question)).ruta == "text"
