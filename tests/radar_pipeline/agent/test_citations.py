"""Citation parsing, normalisation (odd hyphens, spaces, brackets) and the code-level checks."""

from __future__ import annotations

from radar_pipeline.agent.roles.verifier import canonicalize, check_answer, parse_citations
from radar_pipeline.retrieval.service import normalize_id

D = "3fa9c2d1e0b7a4c5"
C = f"{D}-12"
READ = {
    C: {"doc_id": D, "chunk_id": C, "text": "The 2007 test created more than 3,000 trackable fragments in orbit."},
    f"{D}-13": {"doc_id": D, "chunk_id": f"{D}-13", "text": "Debris threatens satellites for decades."},
}


def test_normalize_id_variants():
    for raw in (
        f"{D}\u201112",
        f"{D}\u201012",
        f"{D}\u201312",
        f"{D}\u221212",
        f"{D}\uff0d12",
        f" {D} - 12 ",
        f"{D}\u00ad-12",
        f"{D.upper()}-12",
        f"{D}\u200b-12",
    ):
        assert normalize_id(raw) == C, repr(raw)


def test_parse_forms():
    text = (
        f"Uno [{D}:{D}\u201112]. Dos [ {D} : {D}-13 ]. Tres [{C}]. Cuatro 【{D}:{D}-12】. "
        f"Cinco [{D}:{D}-12; {D}:{D}-13]. Nota [1]. Falsa [deadbeefdeadbeef:deadbeefdeadbeef-1]."
    )
    cites = parse_citations(text)
    ids = [c.chunk_id for c in cites]
    assert ids == [C, f"{D}-13", C, C, C, f"{D}-13", "deadbeefdeadbeef-1"]


def test_check_accepts_read_and_rejects_unread():
    ok = check_answer(f"Se crearon más de 3,000 fragmentos [{D}:{D}\u201112].", READ)
    assert ok.ok and ok.valid == [C]
    bad = check_answer("Hubo 5 pruebas nuevas [deadbeefdeadbeef:deadbeefdeadbeef-1].", READ)
    assert not bad.ok and bad.rejected[0]["motivo"] == "pasaje no leído en esta ejecución"


def test_doc_mismatch_rejected():
    res = check_answer(f"Texto con soporte suficiente aquí [0000000000000000:{C}].", READ)
    assert not res.ok and res.rejected[0]["motivo"] == "doc_id no corresponde al chunk"


def test_quotes_and_numbers_must_match_cited_text():
    assert check_answer(f"- «The 2007 test created more than 3,000 trackable fragments in orbit.» [{D}:{C}]", READ).ok
    assert not check_answer(f"- «The 2009 test created 5,000 fragments in orbit today.» [{D}:{C}]", READ).ok
    assert not check_answer(f"La prueba generó 9,999 fragmentos rastreables en órbita [{D}:{C}].", READ).ok


def test_uncited_claim_sentence_is_unsupported():
    res = check_answer(
        f"Los fragmentos amenazan satélites durante décadas [{D}:{D}-13]. "
        "Además la prueba fue condenada por todos los países del mundo.",
        READ,
    )
    assert not res.ok and len(res.unsupported) == 1


def test_no_citation_at_all():
    res = check_answer("Una respuesta sin ninguna cita aunque tenga muchas palabras.", READ)
    assert not res.ok and "no cita" in res.reasons[0]


def test_canonicalize():
    out = canonicalize(f"A [ {D} : {D}\u201112 ]. B [deadbeefdeadbeef:deadbeefdeadbeef-1]. C [{D}-13].", READ)
    assert out == f"A [{D}:{C}]. B. C [{D}:{D}-13]."
