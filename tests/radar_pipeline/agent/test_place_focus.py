"""Issue 22 (a fresh tester's empty-view questions): an answer about a Colombian place quotes what is
said about that place. The question's municipality, department or subregion is a ``lugar``
requirement met only where the place itself is named (not inside "Valle del Cauca", "Bajo Cauca",
"Norte de Santander", nor as a river); the extractive writer quotes only sentences that name it (or
sit under a heading that does), and says so before the quotes when none does; the run's years are
checked against the quotes, not only the passages read."""

from __future__ import annotations

import pytest

from radar_pipeline.agent import messages
from radar_pipeline.agent.reading.requirements import Requirement, place_requirements
from radar_pipeline.agent.reading.understanding import longer_names
from radar_pipeline.agent.roles import router
from radar_pipeline.agent.roles.analyst import states_about_place, thin_places
from radar_pipeline.agent.roles.verifier import check_answer
from radar_pipeline.agent.roles.writer import ExtractiveWriter, names_other_place, place_met
from radar_pipeline.textfold import fold_question


def _p(n: int, text: str, lang: str = "es") -> dict:
    doc = f"{n:016x}"
    return {
        "chunk_id": f"{doc}-{n}",
        "doc_id": doc,
        "text": text,
        "language": lang,
        "similarity": 0.6,
        "title": f"doc {n}",
        "source_path": f"d{n}.txt",
        "page": 1,
    }


def _quotes(text: str) -> list[str]:
    """The quoted sentences of an extractive answer: its «…» lines (not the sources' titles)."""
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    return [part.split("»")[0] for line in lines for part in line.split("«")[1:2] if "»" in part]


def test_longer_names_are_the_other_places_that_contain_a_name():
    names = {
        "department:19": {"cauca"},
        "department:76": {"valle del cauca"},
        "subregion:bajo_cauca": {"bajo cauca"},
        "department:68": {"santander"},
        "department:54": {"norte de santander"},
        "municipality:19698": {"santander de quilichao"},
        "department:81": {"arauca"},
        "municipality:81001": {"arauca"},  # a namesake of the same name is no longer name
    }
    out = longer_names(names)
    assert set(out["cauca"]) == {"valle del cauca", "bajo cauca"}
    assert set(out["santander"]) == {"norte de santander", "santander de quilichao"}
    assert "arauca" not in out
    assert "valle del cauca" not in out  # nothing contains it


@pytest.mark.parametrize(
    "question, expected",
    [
        ("¿Qué grupos armados hacen presencia en Riosucio, Chocó?", ["Riosucio"]),  # the department qualifies
        ("¿Qué actores armados hay en Toribío, Cauca?", ["Toribío"]),
        ("¿Qué riesgos señalaron las alertas tempranas en Cauca en 2019?", ["Cauca"]),
        ("¿Qué grupos armados operan en Barbacoas?", ["Barbacoas"]),
        ("What armed groups operate in Tumaco?", ["San Andrés de Tumaco"]),
        ("¿Qué pasa con el reclutamiento en el Catatumbo?", ["Catatumbo"]),
        ("¿Qué pruebas antisatélite ha hecho China?", []),  # a country is a country requirement
        ("¿Qué grupos hay en Tumaco Nariño?", ["San Andrés de Tumaco"]),  # typed without the comma
        # a municipality's name at the start of a longer capitalised name is not the municipality
        ("¿Qué financia la Fundación Nacional de Ciencias Naturales de China en IA?", []),
        ("¿Qué recomienda la Gobernación de Nariño sobre el reclutamiento?", ["Nariño"]),
    ],
)
def test_the_places_a_question_is_about_are_requirements(reader, question, expected):
    plan = router.plan(question, reader.read(question))
    assert [r.label for r in plan.requirements if r.kind == "lugar"] == expected


def test_a_place_inside_a_longer_name_or_a_river_is_not_the_place(reader):
    q = "¿Qué riesgos señalaron las alertas tempranas en Cauca en 2019?"
    (cauca,) = [r for r in router.plan(q, reader.read(q)).requirements if r.kind == "lugar"]
    for other in (
        "Los enfrentamientos se concentraron en el Valle del Cauca.",
        "En el Bajo Cauca antioqueño persisten las disputas.",
        "Las comunidades ribereñas del río Cauca fueron desplazadas.",
        "The fighting spread along the Cauca River.",
        "Similar cases occurred in Caucasia, Antioquia.",
    ):
        assert not cauca.met_by(fold_question(other)), other
    for same in (
        "En el departamento del Cauca se registraron homicidios.",
        "Similar cases occurred in Timbiquí, Cauca.",
        "In northern Cauca the groups recruited children.",
        "El sur del Valle del Cauca está afectado por el conflicto en el norte del Cauca.",  # both: the second is Cauca
    ):
        assert cauca.met_by(fold_question(same)), same
    q = "¿Qué grupos hay en Santander?"
    (santander,) = [r for r in router.plan(q, reader.read(q)).requirements if r.kind == "lugar"]
    assert not santander.met_by(fold_question("En Norte de Santander opera el ELN."))
    assert santander.met_by(fold_question("En Barrancabermeja, Santander, opera el ELN."))


TUMACO = Requirement("lugar", "San Andrés de Tumaco", ("san andres de tumaco", "tumaco"))


@pytest.mark.parametrize(
    "sentence, lead, met",
    [
        ("En Tumaco operan el ELN y la Segunda Marquetalia.", "", True),
        ("ELN fighters were seen in rural Tumaco in 2022.", "", True),
        # under an alert's heading that names it, a sentence that does not repeat the name
        (
            "El escenario de riesgo se configura por la presencia del ELN.",
            "Alerta Temprana N° 045-18 para el municipio de Tumaco, Nariño.",
            True,
        ),
        # ... but not a sentence that names its own place
        (
            "En el municipio de Barbacoas el ELN recluta menores.",
            "Alerta Temprana N° 045-18 para el municipio de Tumaco, Nariño.",
            False,
        ),
        ("In the department of Meta the FARC dissidents grew.", "Risk report for the municipality of Tumaco", False),
        # a footnote or the tail of a sentence cut at the passage's start heads nothing
        ("Las comunidades denuncian amenazas.", "44 Conformada por los municipios de Roberto Payán y Tumaco.", False),
        ("Las comunidades denuncian amenazas.", "del río Mejicano, de los municipios de Tumaco y Barbacoas.", False),
        ("En Nariño operan varios grupos.", "", False),
    ],
)
def test_a_sentence_speaks_of_the_place_itself_or_under_its_heading(sentence, lead, met):
    assert place_met(TUMACO, sentence, lead) is met


def test_names_other_place():
    assert names_other_place("En el municipio del Alto Baudó la Misión conoció casos.", TUMACO)
    assert names_other_place("in the municipality of Calamar in Guaviare", TUMACO)
    assert not names_other_place("En el municipio de Tumaco la Misión conoció casos.", TUMACO)
    assert not names_other_place("La Misión conoció casos de reclutamiento.", TUMACO)


@pytest.fixture(scope="module")
def writer(use_encoder):
    return ExtractiveWriter(use_encoder)


NARINO = [
    _p(
        1,
        "En el departamento de Nariño operan el Clan del Golfo y las disidencias de las FARC en varias subregiones. "
        "Los grupos armados se disputan las rutas del narcotráfico hacia el Pacífico.",
    ),
    _p(
        2,
        "Alerta Temprana N° 045-18 para el municipio de Tumaco, Nariño.\n"
        "El escenario de riesgo se configura por la presencia del ELN y de la Segunda Marquetalia en la zona rural.",
    ),
    _p(
        3,
        "del río Mejicano, de los municipios de Tumaco y Barbacoas. Las comunidades denuncian amenazas de los grupos armados "
        "contra sus líderes.",
    ),
    _p(
        4,
        "In Tumaco, the Frente Oliver Sinisterra has been fighting Los Contadores for control of the coca routes since 2021.",
        "en",
    ),
    _p(5, "En Antioquia, Caquetá y Norte de Santander los grupos armados dejaron mensajes alusivos a su presencia."),
]


def test_the_writer_quotes_only_what_speaks_of_the_place(writer):
    q = "¿Qué grupos armados operan en Tumaco?"
    draft = writer.write(q, NARINO, [TUMACO])
    quotes = _quotes(draft.text)
    assert quotes, draft.text
    assert any("Segunda Marquetalia" in s for s in quotes)  # under the alert's heading
    assert any("Frente Oliver Sinisterra" in s for s in quotes)  # names it, in English
    for s in quotes:
        assert "Nariño operan" not in s and "Antioquia" not in s and "denuncian amenazas" not in s, s
    assert TUMACO not in draft.unmet and "Sin frase citada" not in draft.text


def test_when_no_sentence_speaks_of_the_place_it_is_said_before_the_quotes(writer):
    barbacoas = Requirement("lugar", "Barbacoas", ("barbacoas",))
    draft = writer.write("¿Qué grupos armados operan en Barbacoas?", [NARINO[0], NARINO[4]], [barbacoas])
    assert barbacoas in draft.unmet
    note = "Sin frase citada para «Barbacoas» (lugar)"
    assert note in draft.text and draft.text.index(note) < draft.text.index("«", draft.text.index(note) + len(note))
    # the note is the service's own line: the verifier checks the quotes, not it
    read = {p["chunk_id"]: p for p in NARINO}
    assert check_answer(draft.text, read).ok, check_answer(draft.text, read)


def test_years_not_quoted_note_is_a_note_line():
    text = "- «En Tumaco operan el ELN y la Segunda Marquetalia.» [0000000000000001:0000000000000001-1]\n\n"
    text += messages.years_not_quoted(["2016"])
    read = {"0000000000000001-1": _p(1, "En Tumaco operan el ELN y la Segunda Marquetalia.")}
    assert check_answer(text, read).ok
    assert "2016 (año)" in messages.years_not_quoted(["2016"])
    assert "2016 y 2018 (años)" in messages.years_not_quoted(["2016", "2018"])


def test_the_analyst_reads_more_where_a_place_is_only_listed():
    listed = {"a": {"text": "33. Resguardo Awá de los municipios de Tumaco y Barbacoas.", "doc_id": "d"}}
    stated = {
        "b": {
            "text": "En Barbacoas, el ELN y las disidencias se disputan el control de la minería ilegal.",
            "doc_id": "d",
        },
    }
    barbacoas = Requirement("lugar", "Barbacoas", ("barbacoas",))
    assert not states_about_place(barbacoas, listed["a"]["text"])
    assert states_about_place(barbacoas, stated["b"]["text"])
    assert thin_places([barbacoas], listed) == [barbacoas]
    assert thin_places([barbacoas], {**listed, **stated}, enough=1) == []
    assert thin_places([Requirement("country", "China", ("china",))], listed) == []


def test_place_requirements_skip_a_qualifying_department_and_countries(reader):
    facts = reader.read("¿Qué actores armados hay en San Jacinto, Bolívar?")
    reqs = place_requirements(facts.places)
    assert [r.label for r in reqs] == ["San Jacinto"]
    assert "san jacinto del cauca" in reqs[0].excluding
    assert place_requirements([]) == []


@pytest.mark.parametrize(
    "question, label",
    [
        ("¿Dónde operan Los Mexicanos?", "Los Mexicanos"),  # a country's people, capitalised: a gang
        ("¿Qué territorios disputan Los Chinos en Medellín?", "Los Chinos"),
        ("¿Qué actividades tienen Los Paisas?", "Los Paisas"),
    ],
)
def test_a_capitalised_article_opens_a_name_even_of_known_words(question, label):
    from radar_pipeline.agent.reading.anchors import question_anchors

    assert label in [a.label for a in question_anchors(question) if a.kind == "nombre"]


def test_a_country_people_in_lower_case_is_no_name():
    from radar_pipeline.agent.reading.anchors import question_anchors

    assert not [a for a in question_anchors("¿Qué opinan los mexicanos de la IA militar?") if a.kind == "nombre"]


def test_names_not_quoted_note_is_a_note_line():
    note = messages.names_not_quoted([("Los Paisas", "nombre")])
    assert note.startswith("Sin frase citada para «Los Paisas» (nombre):")
    text = "- «En Tumaco operan el ELN y la Segunda Marquetalia.» [0000000000000001:0000000000000001-1]\n\n" + note
    read = {"0000000000000001-1": _p(1, "En Tumaco operan el ELN y la Segunda Marquetalia.")}
    assert check_answer(text, read).ok


def test_the_writer_quotes_the_named_subject_first(writer):
    passages = [
        _p(11, "Las bandas criminales de Buenaventura controlan las rutas del puerto y cobran extorsiones."),
        _p(12, "Los Espartanos declararon una tregua con Los Shottas que fue extendida hasta febrero de 2024."),
    ]
    draft = writer.write("¿Contra quién se enfrentan Los Espartanos?", passages, [])
    quotes = _quotes(draft.text)
    assert quotes and all("Espartanos" in s for s in quotes), draft.text


@pytest.mark.parametrize(
    "question, label",
    [
        ("What is ClearSpace's debris removal mission?", "ClearSpace"),
        ("How does Starlink’s network resist jamming?", "Starlink"),
    ],
)
def test_an_english_possessive_is_no_part_of_a_name(question, label):
    from radar_pipeline.agent.reading.anchors import question_anchors

    assert label in [a.label for a in question_anchors(question)]


def test_an_empty_view_before_the_passages_says_the_documents_answer():
    from radar_pipeline.agent.roles.figures import EMPTY_VIEW, Figure, then_passages

    fig = Figure(
        "mapa", "armed_presence", "el mapa de presencia", {}, "sin_datos", f"Según el mapa, no hay datos{EMPTY_VIEW}"
    )
    assert "respondo con lo que dicen los documentos" in then_passages(fig).texto
    full = Figure("mapa", "armed_presence", "el mapa", {}, "con_datos", "- X: 3 grupos")
    assert then_passages(full).texto == "- X: 3 grupos"


@pytest.mark.parametrize(
    "question, label, source",
    [
        (
            "¿Cuánto ha asignado Israel a la IA de defensa según el estudio del Defense AI Observatory?",
            "Observatory",
            True,
        ),
        (
            "En el estudio de Andrew Lohn (CSET) sobre IA y ciberespacio, ¿cuántos argumentos recopila?",
            "Andrew Lohn",
            True,
        ),
        ("En el estudio de Andrew Lohn (CSET) sobre IA y ciberespacio, ¿cuántos argumentos recopila?", "CSET", True),
        ("According to RAND, how does Starlink resist jamming?", "RAND", True),
        ("According to RAND, how does Starlink resist jamming?", "Starlink", False),
        ("¿Qué dice el informe sobre Los Paisas?", "Los Paisas", False),
        ("¿Contra quién se enfrentan Los Espartanos?", "Los Espartanos", False),
    ],
)
def test_a_name_given_as_the_source_is_not_what_the_question_is_about(question, label, source):
    from radar_pipeline.agent.reading.anchors import names_a_source, question_anchors

    (anchor,) = [a for a in question_anchors(question) if a.label == label]
    assert names_a_source(question, anchor) is source


@pytest.mark.parametrize(
    "question, label, source",
    [
        ("¿Cuántos objetos rastrean según el informe ambiental de la ESA 2025?", "ESA 2025", True),
        ("¿Cuántas pruebas del sistema ruso Nudol recoge la Secure World Foundation?", "Secure World Foundation", True),
        ("¿Cuántas pruebas del sistema ruso Nudol recoge la Secure World Foundation?", "Nudol", False),
        ("¿Qué publicó el informe acerca de Los Espartanos?", "Los Espartanos", False),
    ],
)
def test_reporting_verbs_and_qualified_documents_name_a_source(question, label, source):
    from radar_pipeline.agent.reading.anchors import names_a_source, question_anchors

    (anchor,) = [a for a in question_anchors(question) if a.label == label]
    assert names_a_source(question, anchor) is source
