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


def _passage(n: int, text: str, collection: str) -> dict:
    doc = f"{n:016x}"
    return {
        "chunk_id": f"{doc}-0",
        "doc_id": doc,
        "text": text,
        "language": "en",
        "similarity": 0.6,
        "title": f"{collection} report {n}",
        "source_path": f"F2-{collection}-{n:03d}.txt",
        "page": 1,
        "politica": {"coleccion": collection},
    }


# Two publishers on one topic: the question names the CSIS.
COUNTERSPACE = [
    _passage(
        1,
        "Russia has developed direct-ascent and co-orbital anti-satellite capabilities and ground-based "
        "lasers that can dazzle imaging satellites. Its electronic warfare units jam GPS signals in conflict zones.",
        "SWF",
    ),
    _passage(
        2,
        "China has developed co-orbital anti-satellite capabilities and ground-based jammers for satellite "
        "communications. Its direct-ascent missiles can reach satellites in low Earth orbit.",
        "CSIS",
    ),
]


@pytest.fixture(scope="module")
def writer(use_encoder):
    from radar_pipeline.agent.roles.writer import ExtractiveWriter

    return ExtractiveWriter(use_encoder)


def test_the_writer_quotes_the_named_publisher_alone_when_it_answers(writer):
    """For "Según el CSIS…" the CSIS passage answers, so every quote is the CSIS's, none the SWF's,
    and no note; without the name both publishers are quoted."""
    q = "Según el CSIS, ¿qué capacidades antisatélite se han desarrollado?"
    draft = writer.write(q, COUNTERSPACE)
    cited = {cid for _, cid in draft.sentences}
    assert cited == {COUNTERSPACE[1]["chunk_id"]}, draft.text
    assert "Sin frase citada" not in draft.text
    plain = writer.write("¿Qué capacidades antisatélite se han desarrollado?", COUNTERSPACE)
    assert {cid for _, cid in plain.sentences} == {p["chunk_id"] for p in COUNTERSPACE}, plain.text


def test_the_writer_says_when_no_passage_of_the_named_publisher_was_read(writer):
    """For "Según la ESA…", with passages of the SWF and the CSIS only: the answer quotes them and says,
    before them, that nothing of the ESA's was read (a note the verifier accepts as the service's)."""
    from radar_pipeline.agent.roles.verifier import check_answer

    q = "Según la ESA, ¿qué capacidades antisatélite se han desarrollado?"
    draft = writer.write(q, COUNTERSPACE)
    assert draft.sentences
    note = next(line for line in draft.text.splitlines() if line.startswith("Sin frase citada para «ESA» (fuente)"))
    assert "no se leyó ningún pasaje de esa fuente" in note
    assert draft.text.index(note) < draft.text.index(draft.sentences[0][0])
    check = check_answer(draft.text, {p["chunk_id"]: p for p in COUNTERSPACE})
    assert check.ok, check.reasons


def test_a_publisher_is_named_in_answers_by_its_acronym_or_name():
    from radar_pipeline.agent.reading.publishers import display_name

    assert display_name("CSIS") == "CSIS"
    assert display_name("ATLCOUNCIL") == "Atlantic Council"
    assert display_name("NOPE") == "NOPE"
