"""Claims in answers (issue 22, item 2), on the real test PostgreSQL: crafted documents → the real
precomputes → claims by the real rules → ``agent.claims_answer`` and the runner's "Afirmaciones
registradas" section, under the caller's scope."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from radar_pipeline.agent.reading.understanding import QuestionReader
from radar_pipeline.agent.roles import verifier
from radar_pipeline.agent.roles.claims_answer import find_claims, lookups
from radar_pipeline.agent.runner import AgentConfig, AgentRunner
from radar_pipeline.claims.build import materialize_claims
from radar_pipeline.claims.model import RetractionInfo
from radar_pipeline.collection import AccessScope
from radar_pipeline.precompute.reader import PrecomputeReader
from tests.radar_pipeline.agent.support_index import agent_index, offline_service  # noqa: F401 - fixtures

from ..precompute.support_precompute import add_document
from .conftest import at, run_precomputes
from .test_claims_db import _presence_doc

PRESENCE_Q = "¿Qué grupos armados tienen presencia en Tumaco en 2023?"
ALERT_TEXT = (
    "Alerta Temprana de Inminencia No. 045-23 para el municipio de Tumaco, Nariño. "
    "El ELN y las AGC disputan el territorio."
)


@pytest.fixture(scope="module")
def reader(shared_dir) -> QuestionReader:
    return QuestionReader.from_shared(shared_dir, reference_year=2025)


def _find(engine, reader, question, **kw):
    facts = reader.read(question)
    return find_claims(engine, question, facts, **kw)


def _passage(engine, chunk_id: str) -> str:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT text FROM chunks WHERE chunk_id = :c"), {"c": chunk_id}).scalar_one()


def test_the_lookups_follow_the_question(reader):
    def kinds(q, phen=None):
        return {(x.subject, x.predicate, x.obj) for x in lookups(q, reader.read(q), phen)}

    assert kinds(PRESENCE_Q) == {(None, "present_in", "municipality:52835")}
    assert kinds("¿El ELN está en Tumaco?") == {("entity:eln", "present_in", "municipality:52835")}
    assert ("entity:eln", "present_in", None) in kinds("¿Dónde hace presencia el ELN?")
    assert kinds("¿Qué alertas tempranas emitió la Defensoría para Tumaco?") == {
        (None, "early_warning_for", "municipality:52835")
    }
    assert ("alert:018-18", None, None) in kinds("¿Cuándo se emitió la AT 018-18 para Argelia?")
    assert ("entity:starlink", "figures_in_phenomenon", "phenomenon:space_security") in kinds(
        "¿Qué se dice de Starlink en 2021?", "space_security"
    )
    # an actor in a phenomenon and year only for a question about what documents say or name, not
    # for one about what the actor did (the claim is "documents of the year name X")
    assert ("entity:starlink", "figures_in_phenomenon", "phenomenon:space_security") in kinds(
        "¿Cuántos documentos mencionan a Starlink en 2021?", "space_security"
    )
    assert not any(
        p == "figures_in_phenomenon"
        for q in ("¿Qué satélites lanzó Starlink en 2021?", "¿Por qué creció Starlink en 2021?")
        for _, p, _ in kinds(q, "space_security")
    )
    # no claim subject or object named: no lookup
    assert kinds("¿Qué riesgos generan los desechos espaciales?", "space_security") == set()
    assert kinds("¿Qué es la guerra electrónica?") == set()


def test_an_asserted_presence_claim_with_its_valid_time_and_citation(pengine, config, reader):
    doc = _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, eln="VERDADERO")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    found = _find(pengine, reader, PRESENCE_Q)
    (claim,) = found.claims
    assert claim["subject"] == "entity:eln" and claim["status"] == "asserted"
    section = found.section()
    assert section.startswith("- Afirmación registrada: ")
    # a year's validity is written as the year: no passage states "2023-01-01"
    assert "afirmada; vigencia 2023 (según la fecha de publicación de la fuente)" in section
    ev = claim["evidence"][0]
    assert f"[{doc}:{ev['chunk_id']}]" in section and ev["chunk_id"] in found.passages
    # the quote is verbatim from the passage it cites (whitespace aside); the valid time says its basis
    line = section.splitlines()[0]
    quote = line.split("«", 1)[1].split("»", 1)[0]
    assert "au_eln: VERDADERO" in quote and quote in " ".join(found.passages[ev["chunk_id"]]["text"].split()), line
    assert "(según la fecha de publicación de la fuente)" in line
    # the citation check of the answer accepts it (cited passage known, doc id right)
    assert not verifier.check_answer(line, found.passages).rejected
    # another year's question does not see it
    assert _find(pengine, reader, "¿Qué grupos armados tienen presencia en Tumaco en 2020?").claims == []


def test_a_contested_claim_shows_both_sides(pengine, config, reader):
    sup = _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, eln="VERDADERO")
    con = _presence_doc(pengine, "codefest/F3/F3-AMAZONUW-901.txt", 2, eln="FALSO", collection="AMAZONUW")
    with pengine.begin() as conn:  # same year as the supporting source
        conn.execute(
            sa.text("UPDATE documents SET primary_path = :p, source_paths = CAST(:j AS jsonb) WHERE doc_id = :d"),
            {
                "p": "radar/territorial/2023/amazon_records.txt",
                "j": '["radar/territorial/2023/amazon_records.txt"]',
                "d": con,
            },
        )
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    found = _find(pengine, reader, "¿El ELN está presente en Tumaco?")
    (claim,) = found.claims
    line = found.line(claim)
    assert line.startswith("- En disputa: Radar registra que Ejército de Liberación Nacional (ELN) tiene presencia")
    assert "1 pasaje(s) a favor y 1 en contra; prevalece la evidencia en contra por la autoridad de la fuente" in line
    assert "A favor: «" in line and f"[{sup}:" in line and "En contra: «" in line and f"[{con}:" in line
    assert not verifier.check_answer(line, found.passages).rejected
    # a caller restricted to the report's collection sees its side only, judged on it alone
    scoped = _find(pengine, reader, "¿El ELN está presente en Tumaco?", scope=AccessScope.of(["radar"], "k1"))
    (only,) = scoped.claims
    assert only["status"] == "asserted" and "En contra" not in scoped.line(only) and f"[{con}:" not in scoped.section()
    assert _find(pengine, reader, "¿El ELN está presente en Tumaco?", scope=AccessScope.of(["CSET"], "k2")).claims == []


def test_retracted_and_superseded_claims_are_never_stated_as_current(pengine, config, reader):
    today = dt.datetime.now(dt.UTC).date()
    yesterday = today - dt.timedelta(days=1)
    doc = _presence_doc(pengine, f"radar/territorial/data/presencia_{yesterday.isoformat()}.csv", 1, eln="VERDADERO")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=dt.datetime.combine(yesterday, dt.time(9), tzinfo=dt.UTC))
    # a correction of the source's date: the old claim is superseded by a new one
    new_path = f"radar/territorial/data/presencia_{today.isoformat()}.csv"
    with pengine.begin() as conn:
        conn.execute(
            sa.text("UPDATE documents SET primary_path = :p, source_paths = CAST(:j AS jsonb) WHERE doc_id = :d"),
            {"p": new_path, "j": f'["{new_path}"]', "d": doc},
        )
    run_precomputes(pengine, config)
    materialize_claims(pengine)
    found = _find(pengine, reader, "¿El ELN está presente en Tumaco?")
    by_status = {c["status"]: found.line(c) for c in found.claims}
    assert set(by_status) == {"asserted", "superseded"}
    assert by_status["superseded"].startswith(
        "- Sustituida por otra versión con otra vigencia (ya no vigente): Radar registró que"
    )
    assert f"vigencia {yesterday.isoformat()}" in by_status["superseded"] and "[" not in by_status["superseded"]
    assert found.section().splitlines()[0] == by_status["asserted"].replace(
        "- ", "- Afirmación registrada: ", 1
    )  # the current one first
    # the source is retracted: the claim is retracted and its passage is not cited
    materialize_claims(pengine, retracted={doc: RetractionInfo(doc, "fuente falsa", at("2026-11-02"), "ana")})
    found = _find(pengine, reader, "¿El ELN está presente en Tumaco?")
    retracted = [found.line(c) for c in found.claims if c["status"] == "retracted"]
    assert retracted and retracted[0].startswith("- Retirada (ya no se afirma): Radar registró que")
    assert "la fuente que la sostenía fue retirada" in retracted[0] and "[" not in retracted[0]
    assert not [c for c in found.claims if c["status"] in ("asserted", "contested")]


def test_a_claim_whose_support_was_retracted_is_not_stated(pengine, config, reader):
    sup = _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, emc="VERDADERO")
    con = _presence_doc(pengine, "radar/territorial/data/informe_presencia_2023.csv", 2, emc="FALSO")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    materialize_claims(pengine, retracted={sup: RetractionInfo(sup, "registro erróneo", at("2026-11-02"), "ana")})
    found = _find(pengine, reader, "¿El EMC está presente en Tumaco?")
    (claim,) = found.claims
    line = found.line(claim)
    assert line.startswith("- En disputa: Radar registra que Estado Mayor Central (EMC) tiene presencia"), line
    assert (
        "0 pasaje(s) a favor y 1 en contra; prevalece la evidencia en contra porque solo quedan pasajes en contra"
        in line
    )
    assert f"[{con}:" in line and f"[{sup}:" not in line and "A favor" not in line


def test_an_early_warning_claim_by_code_and_by_place(pengine, config, reader):
    doc = add_document(pengine, "radar/territorial/alertas/AT_045-23_2023-03-10.txt", [ALERT_TEXT])
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    by_place = _find(pengine, reader, "¿Qué alertas tempranas emitió la Defensoría para Tumaco?")
    assert by_place.claims and all(c["predicate"] == "early_warning_for" for c in by_place.claims)
    line = by_place.line(by_place.claims[0])
    assert "045-23" in line and "afirmada" in line and f"[{doc}:{doc}-0]" in line
    by_code = _find(pengine, reader, "¿Qué dice la alerta temprana 045-23?")
    assert {c["predicate"] for c in by_code.claims} >= {"early_warning_for", "alert_names_group"}


# --------------------------------------------------------------------------- through the runner
def _runner(offline_service, pengine) -> AgentRunner:  # noqa: F811 - fixture name
    return AgentRunner(
        offline_service.corpus,
        offline_service.encoder,
        aggregates=PrecomputeReader(pengine),
        config=AgentConfig(),
    )


def test_the_answer_carries_the_claims_section(pengine, config, offline_service):  # noqa: F811
    doc = _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, eln="VERDADERO")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    res = _runner(offline_service, pengine).run(PRESENCE_Q)
    assert res.estado in ("respondida", "incompleta", "sin_evidencia", "no_verificada"), res.respuesta
    text = res.respuesta
    assert "Afirmación registrada" in text and "afirmada; vigencia 2023 " in text, text
    # the claim's passage is in the source list, with its path
    cited = {c["chunk_id"]: c for c in res.citas}
    chunk = next(iter(c for c in cited if c.startswith(doc)))
    assert cited[chunk]["fuente"] == "radar/territorial/data/presencia_2023.csv"
    assert "au_eln: VERDADERO" in _passage(pengine, chunk)
    step = next(s for s in res.steps if "afirmaciones" in s.detail)
    assert (
        step.detail["afirmaciones"][0]["estado"] == "asserted" and step.detail["consultas"][0]["motivo"] == "presencia"
    )
    # a question touching no claim gets no section
    other = _runner(offline_service, pengine).run(
        "¿Qué incidentes recientes de spoofing han comprometido servicios satelitales?"
    )
    assert "Afirmación registrada" not in other.respuesta


def test_the_premise_check_reads_a_claims_passage(pengine, config, offline_service):  # noqa: F811
    """The alert's passage is not in the search index the run reads; the claim brings it, and the
    premise's wrong year is called false on it, cited."""
    doc = add_document(
        pengine,
        "radar/territorial/alertas/AT_045-23_2023-03-10.txt",
        [
            "La Alerta Temprana No. 045-23 fue emitida el 10 de marzo de 2023 para el municipio de Tumaco, Nariño. "
            "El ELN y las AGC disputan el territorio."
        ],
    )
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    res = _runner(offline_service, pengine).run(
        "Dado que la alerta temprana 045-23 se emitió en 2019, ¿qué respuesta dio la CIPRAT?"
    )
    assert res.premisa is not None and res.premisa["estado"] == "falsa", (res.respuesta, res.premisa)
    assert res.premisa["cita"] == {"doc_id": doc, "chunk_id": f"{doc}-0"}
    assert res.respuesta.startswith("La pregunta da por sentado que la alerta temprana 045-23 se emitió en 2019, pero")
    assert "(fecha el mismo hecho en otro año)" in res.respuesta.split("\n\n")[0]
    assert f"{doc}-0" in [c["chunk_id"] for c in res.citas]


# --------------------------------------------------------------------------- the question's years
def _alert(engine, code: str, date: str, where: str) -> str:
    text = f"Alerta Temprana de Inminencia No. {code} para el municipio de {where}. El ELN y las AGC disputan el territorio."
    return add_document(engine, f"radar/territorial/alertas/AT_{code}_{date}.txt", [text])


def test_the_claims_keep_the_question_s_years_and_say_when_none_is_left(pengine, config, reader):
    """An alert's validity is open ("vigente desde" its date): it answers a question about its own
    year, never one about a later year (tester, 2026-12-07: alerts of 2018 listed for "en 2019")."""
    _alert(pengine, "018-18", "2018-04-02", "Tumaco, Nariño")
    _alert(pengine, "045-20", "2020-03-10", "Tumaco, Nariño")
    _alert(pengine, "031-18", "2018-06-01", "Toribío, Cauca")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))

    def codes(q):
        found = _find(pengine, reader, q)
        return {c["subject"] for c in found.claims}, found

    # one year, Spanish and English: only that year's alerts
    got, _ = codes("¿Qué alertas tempranas emitió la Defensoría para Tumaco en 2020?")
    assert got == {"alert:045-20"}
    got, _ = codes("Which early warnings were issued for Tumaco in 2018?")
    assert got == {"alert:018-18"}
    # loose years and a range
    got, _ = codes("alertas tempranas para Tumaco en 2018 y 2020")
    assert got == {"alert:018-18", "alert:045-20"}
    got, _ = codes("¿Qué alertas tempranas hubo en Tumaco entre 2019 y 2021?")
    assert got == {"alert:045-20"}
    got, _ = codes("¿Qué alertas tempranas hubo en Tumaco desde 2019?")
    assert got == {"alert:045-20"}
    # no year: every alert of the place
    got, _ = codes("¿Qué alertas tempranas emitió la Defensoría para Tumaco?")
    assert got == {"alert:018-18", "alert:045-20"}
    # a year with none: no other year's line; a sentence that says so, with the years there are
    for q in (
        "¿Qué riesgos señalaron las alertas tempranas en Toribío en 2019?",
        "What did the early warnings for Toribío say in 2021?",
    ):
        got, found = codes(q)
        assert got == set(), q
        section = found.section()
        assert "Afirmación registrada" not in section and "031-18" not in section, section
        assert "Ninguna afirmación registrada" in section and "(las que hay son de 2018)" in section, section
    # the place: Tumaco's alerts never answer a question about Toribío
    got, _ = codes("¿Qué alertas tempranas emitió la Defensoría para Toribío en 2020?")
    assert got == set()


def test_an_open_validity_meets_a_window_only_from_its_start():
    from radar_pipeline.agent.roles.claims_answer import _overlaps

    open_2018 = {"valid_from": dt.date(2018, 1, 1), "valid_to": None}
    closed_2018_2020 = {"valid_from": dt.date(2018, 1, 1), "valid_to": dt.date(2020, 12, 31)}
    undated = {"valid_from": None, "valid_to": None}
    assert _overlaps(open_2018, [(2018, 2018)]) and not _overlaps(open_2018, [(2019, 2019)])
    assert _overlaps(open_2018, [(None, 2019)]) and not _overlaps(open_2018, [(2019, None)])
    assert _overlaps(open_2018, [(2016, 2016), (2018, 2018)])
    assert _overlaps(closed_2018_2020, [(2019, 2019)]) and not _overlaps(closed_2018_2020, [(2021, 2022)])
    assert _overlaps(undated, [(2019, 2019)]) and _overlaps(open_2018, [])


def test_valid_time_bounds_are_written_as_precise_as_the_source():
    """An alert dated by its year starts its validity on 1 January, a day no passage states (two
    blind judges marked "vigente desde 2018-01-01" unsupported where the alert was of 9 April 2018):
    a year's first or last day is written as the year; any other day in full."""
    import datetime as dt

    from radar_pipeline.agent.roles.claims_answer import _valid_time

    d = dt.date
    basis = {"valid_basis": "alert_publication_date"}
    assert _valid_time({"valid_from": d(2018, 1, 1), "valid_to": None, **basis}) == (
        "vigente desde 2018 (desde la fecha de la alerta)"
    )
    assert _valid_time({"valid_from": d(2018, 4, 9), "valid_to": None, **basis}).startswith("vigente desde 2018-04-09")
    assert _valid_time({"valid_from": d(2019, 1, 1), "valid_to": d(2020, 12, 31)}) == "vigencia 2019 a 2020"
    assert _valid_time({"valid_from": d(2019, 3, 1), "valid_to": d(2019, 9, 30)}) == "vigencia 2019-03-01 a 2019-09-30"
    assert _valid_time({"valid_from": None, "valid_to": None}) == "vigencia sin fecha declarada por la fuente"
