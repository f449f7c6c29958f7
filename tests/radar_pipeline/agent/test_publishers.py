"""The publishers a question names, read from the registry of the corpus's source collections
(``reading/data/publishers.toml``), and the analyst's search inside the named collection."""

from __future__ import annotations

import pytest

from radar_pipeline.agent.reading.publishers import PUBLISHERS_PATH, load_publishers, publishers_named


@pytest.mark.parametrize(
    "question, codes",
    [
        ("¿Por qué sugiere la ESA probar primero las constelaciones en órbitas bajas?", ["ESA"]),
        ("Según la Agencia Espacial Europea, ¿cuánta basura reentra cada año?", ["ESA"]),
        ("¿Qué recomienda el CSET sobre la adopción de IA en la Fuerza Aérea?", ["CSET"]),
        ("segun el sipri q paso con las misiones de paz en haiti", ["SIPRI"]),  # typed in lower case
        ("Compara lo que dicen el Atlantic Council y el CSET sobre los chips", ["ATLCOUNCIL", "CSET"]),
        ("¿Qué riesgos advierte la Defensoría del Pueblo para Tibú?", ["ALERTAS"]),
        ("¿Cuántos militares tiene Chile según el Atlas Comparativo de la Defensa?", ["RESDAL"]),
        ("What does the Secure World Foundation say about Russian co-orbital tests?", ["SWF"]),
        ("¿Qué informó la MAPP/OEA en su último informe?", ["MAPPOEA"]),
    ],
)
def test_the_publishers_a_question_names(question, codes):
    assert publishers_named(question) == codes


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué es la basura espacial?",
        "¿Por qué esa prueba antisatélite generó tantos desechos?",  # "esa" is a demonstrative, not the ESA
        "¿Qué grupos armados operan en Tumaco?",
        "¿Cómo usa China la IA en sus satélites?",
    ],
)
def test_no_publisher_is_read_where_none_is_named(question):
    assert publishers_named(question) == []


def test_every_code_once_and_a_name_belongs_to_one_publisher(tmp_path):
    codes = [p.code for p in load_publishers()]
    assert len(codes) == len(set(codes)) >= 19
    bad = tmp_path / "p.toml"
    bad.write_text(
        PUBLISHERS_PATH.read_text(encoding="utf-8")
        + '\n[[publisher]]\ncode = "OTRO"\nacronyms = []\nnames = ["SIPRI"]\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="also SIPRI"):
        load_publishers(bad)
    missing = tmp_path / "m.toml"
    missing.write_text('[[publisher]]\ncode = ""\nnames = ["x"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="needs a code"):
        load_publishers(missing)


def test_the_analyst_searches_a_named_publisher_absent_from_its_picks(offline_service):
    """The test index's collections are its top folders: the CSIS's collection is none of the
    passages picked, so the run searches inside it (once; it holds nothing here) and answers from
    the others, with no error and no passage from outside the scope."""
    res = offline_service.runner().run(
        "Según el CSIS, ¿qué cambios doctrinales ha tenido Corea del Norte en el espacio?"
    )
    calls = [s.arguments for s in res.steps if s.tool == "search_evidence"]
    assert sum(c.get("coleccion") == "CSIS" for c in calls) == 1, calls
    assert res.estado in ("respondida", "incompleta") and res.citas
    plain = offline_service.runner().run("¿Qué cambios doctrinales ha tenido Corea del Norte en el espacio?")
    assert not any(s.arguments.get("coleccion") for s in plain.steps if s.tool == "search_evidence")
