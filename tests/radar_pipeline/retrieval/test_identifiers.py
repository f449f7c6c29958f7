"""Identifier priority (issue 26 §4): what a question names exactly, which passages name it, and the
score component on a real small index (real USE vectors, FAISS, BM25)."""

from __future__ import annotations

import polars as pl
import pytest

from radar_pipeline.retrieval.identifiers import PassageNamer, naming_rows, question_identifiers
from radar_pipeline.retrieval.policy import PolicyConfig
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.passages import PASSAGE_COLUMNS, save_passages
from tests.radar_pipeline.agent.support_index import agent_index, client, offline_service  # noqa: F401 - session fixtures

RARE = {"shakti", "perseo", "burnt", "frost", "soberanía"}


def rare(word: str) -> bool:
    return word.lower() in RARE


def keys(q: str) -> list[str]:
    return [i.key for i in question_identifiers(q, rare)]


# -- what a question names -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "question, expected",
    [
        # alert codes: with alert words, or three digits alone; the code zero-padded
        ("¿Qué advierte la AT 010-18 sobre Tumaco?", ["alert:010-18"]),
        ("¿Qué riesgos señaló la alerta temprana 045-20?", ["alert:045-20"]),
        ("¿Qué municipios cubre la N.º 060-18?", ["alert:060-18"]),
        ("¿Qué dice la alerta 45-18 del Cauca?", ["alert:045-18"]),
        ("¿Qué recomendaciones hizo la 083-18?", ["alert:083-18"]),
        ("What did early warning AT 026-18 say?", ["alert:026-18"]),
        # designations: a capitalised name and a number, or letters and digits in one token
        ("¿Qué consecuencias tuvo la destrucción de Cosmos 1408?", ["designation:cosmos 1408"]),
        ("¿Qué fue el USA-193 y el Fengyun-1C?", ["designation:usa 193", "designation:fengyun 1c"]),
        ("¿Qué misiones cumplió el X-37B?", ["designation:x 37b"]),
        ("What happened to Kosmos 2553?", ["designation:kosmos 2553"]),
        # programmes and treaties of the entity dictionary, in any of its languages
        ("¿Qué prohíbe el Tratado del Espacio Ultraterrestre?", ["entity:outer_space_treaty"]),
        ("What does the Outer Space Treaty ban?", ["entity:outer_space_treaty"]),
        ("¿Qué países firmaron los Acuerdos Artemis?", ["entity:artemis_accords"]),
        ("¿Qué objetivos tenía el Project Maven?", ["entity:project_maven"]),
        ("¿Cómo avanza el PNIS en el Cauca?", ["entity:pnis"]),
        # names by shape: a head noun and a capitalised name that is rare in the index
        ("¿Qué demostró la Misión Shakti de la India?", ["name:shakti"]),
        ("What did Mission Shakti demonstrate?", ["name:shakti"]),
        ("¿Qué logró la Operación Perseo?", ["name:perseo"]),
        ("¿Qué fue la operación Burnt Frost contra el USA-193?", ["name:burnt frost", "designation:usa 193"]),
    ],
)
def test_question_identifiers_by_kind(question, expected):
    assert keys(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "¿Entre 2019 y 2020 hubo más de 300 ataques con drones?",  # years and counts are no identifiers
        "¿Qué dice el informe en las páginas 10-18?",  # two digits without alert words: a range
        "¿Cuál es la Estrategia Nacional de IA de Colombia?",  # "Nacional" is not rare: a phrase, no name
        "¿Qué es el programa Nacional de drones?",
        "¿Qué significa el 5G y el 3er plan de paz?",  # short labels and ordinals
        "Entre 500 soldados y 20 drones, ¿qué cambió en 2022?",
        "¿Qué grupos armados operan en el Cauca?",  # an armed group is no programme
        "How did autonomous weapons change targeting?",
    ],
)
def test_no_identifier_in_ordinary_questions(question):
    assert keys(question) == []


def test_names_need_an_index_to_be_judged_rare():
    assert question_identifiers("¿Qué demostró la Misión Shakti?", rare=None) == []


# -- which passages name it ------------------------------------------------------------------------
def _namer(question: str) -> PassageNamer:
    (ident,) = question_identifiers(question, rare)
    return PassageNamer(ident)


def test_alert_code_in_passages_and_file_names():
    n = _namer("¿Qué advierte la AT 083-18?")
    assert n.names("La Defensoría emitió la Alerta Temprana de Inminencia N° 083-18 para Tumaco.")
    assert n.names("según el informe AT 83-18, los riesgos persisten")  # a reference with its words
    assert n.names("seguimiento a la 083-2018")  # the zero-padded code alone, four-digit year
    assert n.names("texto del documento", "codefest/F3/ALERTAS_083-18-12345.txt")  # the alert's own file
    assert not n.names("ver las páginas 83-18 del anexo")  # no alert words, not zero-padded
    assert not n.names("la AT 083-19 cubre otro año")
    assert not n.names("texto", "codefest/F1/paper_083-18.txt")  # not an alert collection


def test_designation_programme_and_name_in_passages():
    d = _namer("¿Qué pasó con Cosmos 1408?")
    assert d.names("Russia destroyed COSMOS-1408 in 2021") and d.names("the Cosmos 1408 debris")
    assert not d.names("Cosmos 14080 is another object") and not d.names("1408 fragments")
    t = _namer("¿Qué prohíbe el Tratado del Espacio Ultraterrestre?")
    assert t.names("Article IV of the Outer Space Treaty bans nuclear weapons in orbit.")  # cross-lingual
    assert t.names("el Tratado sobre el Espacio Ultraterrestre de 1967")
    assert not t.names("space treaties are few")
    s = _namer("¿Qué demostró la Misión Shakti?")
    assert s.names("India's Mission Shakti destroyed Microsat-R in 2019.")
    assert not s.names("shakti as a common word in lower case")  # a name is capitalised where it names


def test_naming_rows_over_a_table():
    idents = question_identifiers("¿Qué dice la AT 083-18 sobre Cosmos 1408?", rare)
    texts = ["AT 083-18 y Cosmos 1408", "solo la AT 083-18", "Cosmos-1408 debris", "nada"]
    paths = ["a.txt", "b.txt", "c.txt", "d.txt"]
    assert naming_rows(idents, texts, paths) == {
        0: ["alert:083-18", "designation:cosmos 1408"],
        1: ["alert:083-18"],
        2: ["designation:cosmos 1408"],
    }
    assert naming_rows(idents, texts, paths, rows=[1, 3]) == {1: ["alert:083-18"]}


# -- the score component on a real small index ------------------------------------------------------
DOCS = [
    # semantically close to the questions below, naming no identifier
    (
        "a0",
        "space_security",
        "en",
        "Anti-satellite missile tests destroy satellites and create long-lived orbital debris clouds.",
    ),
    (
        "a1",
        "space_security",
        "en",
        "A destructive anti-satellite test in low orbit threatens the space station and other satellites.",
    ),
    (
        "a2",
        "space_security",
        "en",
        "Treaties on outer space prohibit weapons of mass destruction and national appropriation.",
    ),
    (
        "a3",
        "territorial",
        "es",
        "La Defensoría del Pueblo advierte riesgos para líderes sociales por la presencia de grupos armados.",
    ),
    (
        "a4",
        "territorial",
        "es",
        "Los escenarios de riesgo incluyen reclutamiento forzado y desplazamiento en zonas rurales.",
    ),
    # naming the identifiers, less close in meaning
    (
        "b0",
        "space_security",
        "en",
        "In November 2021 Russia struck Cosmos 1408 with a Nudol interceptor from Plesetsk.",
    ),
    (
        "b1",
        "space_security",
        "en",
        "Article IV of the Outer Space Treaty is read differently by delegations in Geneva.",
    ),
    (
        "b2",
        "territorial",
        "es",
        "Seguimiento de la Alerta Temprana N° 083-18: respuesta institucional en el municipio.",
    ),
    ("b3", "space_security", "en", "Mission Shakti was announced by the prime minister in a televised address."),
]


@pytest.fixture(scope="module")
def id_index(tmp_path_factory, use_encoder):
    d = tmp_path_factory.mktemp("idx_identifiers")
    texts = [t for *_, t in DOCS]
    frame = pl.DataFrame(
        {
            "chunk_id": [f"{k}-0" for k, *_ in DOCS],
            "doc_id": [k for k, *_ in DOCS],
            "source_path": [f"{'space' if p == 'space_security' else 'alertas'}/{k}.txt" for k, p, *_ in DOCS],
            "title": [k for k, *_ in DOCS],
            "page_start": [1] * len(DOCS),
            "page_end": [1] * len(DOCS),
            "phenomenon": [p for _, p, _, _ in DOCS],
            "language": [lang for _, _, lang, _ in DOCS],
            "text": texts,
        }
    ).select(PASSAGE_COLUMNS)
    save_passages(frame, d)
    faiss_store.save_index(faiss_store.build_flat_ip(use_encoder.encode_passages(texts)), d)
    Bm25Index.build(texts).save(d)
    return d


QUESTIONS = [
    ("¿Qué consecuencias tuvo la destrucción del satélite Cosmos 1408?", "b0", "designation:cosmos 1408"),
    ("¿Qué prohíbe el Tratado del Espacio Ultraterrestre en materia de armas?", "b1", "entity:outer_space_treaty"),
    ("¿Qué riesgos advierte la alerta temprana 083-18 para los líderes sociales?", "b2", "alert:083-18"),
]


@pytest.mark.parametrize("question, doc, key", QUESTIONS)
def test_identifier_component_puts_the_naming_passage_first(id_index, use_encoder, question, doc, key):
    s = Searcher(id_index, use_encoder)
    cfg = RetrievalConfig(rerank_k=0)
    off = s.search(question, cfg.with_(identifier_weight=0.0))
    on = s.search(question, cfg)
    rank_off = next(p["rank"] for p in off.passages if p["doc_id"] == doc)
    assert on.passages[0]["doc_id"] == doc and on.passages[0]["identifiers"] == [key]
    assert any(i["key"] == key for i in on.identifiers) and off.identifiers == []
    top = on.passages[0]
    assert top["score_components"]["identifier"] == pytest.approx(2.0)  # names the question's only identifier
    assert top["score"] == pytest.approx(top["score_components"]["ranking"] + top["score_components"]["identifier"])
    # every other passage names nothing: no component, and their order is the ranking's
    rest = [p for p in on.passages[1:]]
    assert all(p["score_components"]["identifier"] == 0.0 and p["identifiers"] == [] for p in rest)
    assert [p["doc_id"] for p in rest] == [p["doc_id"] for p in off.passages if p["doc_id"] != doc]
    assert rank_off >= 1  # it was in the ranking before; now first (it was not first for every question)


def test_a_naming_passage_outside_the_candidate_pool_joins_it(id_index, use_encoder):
    s = Searcher(id_index, use_encoder)
    q = "¿Qué nubes de desechos orbitales dejaron las pruebas antisatélite como la Misión Shakti?"
    small = RetrievalConfig(rerank_k=0, candidates=1, bm25_weight=0.0)  # a pool of the densest passage
    assert "Shakti" not in " ".join(p["text"] for p in s.search(q, small.with_(identifier_weight=0.0)).passages)
    on = s.search(q, small)
    assert on.passages[0]["doc_id"] == "b3" and on.passages[0]["identifiers"] == ["name:shakti"]
    assert [i["kind"] for i in on.identifiers] == ["name"]  # "Shakti" is rare in this index
    # no joining allowed: the passage stays out
    out = s.search(q, small.with_(identifier_new=0))
    assert "b3" not in [p["doc_id"] for p in out.passages]


def test_restricted_rows_and_documents(id_index, use_encoder):
    s = Searcher(id_index, use_encoder)
    q, doc, _ = QUESTIONS[0]
    space = s.row_mask(frozenset({"space"}))
    assert s.search(q, RetrievalConfig(rerank_k=0), allowed=space).passages[0]["doc_id"] == doc
    # a passage naming the identifier outside the caller's collections never joins
    q_alert, doc_alert, _ = QUESTIONS[2]
    res = s.search(q_alert, RetrievalConfig(rerank_k=0), allowed=space)
    assert doc_alert not in [p["doc_id"] for p in res.passages]
    assert all(p["score_components"]["identifier"] == 0.0 for p in res.passages)
    # the document ranking reads the same scores: the naming document comes first too
    assert s.search(q, RetrievalConfig(rerank_k=0, policy=PolicyConfig(k_documents=2))).documents[0]["doc_id"] == doc


def test_search_endpoint_reports_the_component(client):  # noqa: F811 - the session fixture
    r = client.get("/search", params={"q": "¿Qué ocurrió en la prueba contra Kosmos 1408?"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [i["key"] for i in body["identifiers"]] == ["designation:kosmos 1408"]
    top = body["passages"][0]
    assert "Kosmos 1408" in top["text"] and top["identifiers"] == ["designation:kosmos 1408"]
    assert top["score_components"]["identifier"] > 0
    plain = client.get("/search", params={"q": "¿Cómo afectan las pruebas antisatélite a los desechos?"}).json()
    assert plain["identifiers"] == [] and all(p["score_components"]["identifier"] == 0 for p in plain["passages"])


def test_radar_search_json_reports_the_component(id_index, tmp_path, monkeypatch):
    import json
    import shutil

    from typer.testing import CliRunner

    from radar_cli.main import app

    home = tmp_path / "home"
    shutil.copytree(id_index, home / "indexes" / "usem3")
    monkeypatch.setenv("RADAR_HOME", str(home))
    monkeypatch.setenv("RADAR_INDEX_BACKEND", "faiss")
    q = "¿Qué consecuencias tuvo la destrucción del satélite Cosmos 1408?"
    r = CliRunner().invoke(app, ["search", "--json", q])
    assert r.exit_code == 0, r.output
    res = json.loads(r.output[r.output.index("{") :])
    assert [i["key"] for i in res["identifiers"]] == ["designation:cosmos 1408"]
    top = res["passages"][0]
    assert top["doc_id"] == "b0" and top["identifiers"] == ["designation:cosmos 1408"]
    assert top["score_components"]["identifier"] == pytest.approx(2.0)
    assert top["score"] == pytest.approx(top["score_components"]["ranking"] + 2.0, abs=1e-5)
    text = CliRunner().invoke(app, ["search", q])
    assert "Identifiers: Cosmos 1408 (designation)" in text.output and "identificador +2.00" in text.output
