"""Answer-evaluation scoring and judging on hand-made runs and graded batches, with the expected
values worked out by hand in the comments; export and import against a real PostgreSQL."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from evals.answers import score_stored
from evals.answers.judging import PREMISE_LABELS, export_batch, import_grades, latest_grades
from evals.answers.runs import answer_hash, answer_units, blind_answer, store_run
from evals.answers.scoring import agreement, bootstrap_ratio, merge_grades, percentile, score_run
from evals.answers.sets import load_set
from evals.answers.store import answers_metadata, ensure_answer_schema

FLAGGED = PREMISE_LABELS[2]


def _record(qid, typ, ph, n_facts, cites, latency, steps, ruta="text"):
    """A run record with ``cites[i]`` = the labels of answer unit i (``[]``: no citation)."""
    lines = [
        f"- «Sentence {i} of {qid} about the question.»" + (f" [{', '.join(c)}]" if c else "")
        for i, c in enumerate(cites, 1)
    ]
    labels = sorted({lab for c in cites for lab in c})
    blind = {
        "text": "\n".join(lines),
        "passages": [{"id": lab, "text": f"passage {lab} of {qid}", "chunk_id": f"{qid}-{lab}"} for lab in labels],
        "units": answer_units("\n".join(lines)),
    }
    return {
        "question_id": qid,
        "type": typ,
        "phenomenon": ph,
        "question": f"¿Pregunta {qid}?",
        "key_facts": ["El corpus no contiene esta información"]
        if typ == "unanswerable"
        else [f"hecho {j}" for j in range(n_facts)],
        "false_premise": "premisa falsa" if typ == "false_premise" else "",
        "estado": "respondida" if cites and any(cites) else "sin_evidencia",
        "ruta": ruta,
        "respuesta": blind["text"],
        "premisa": {"estado": "falsa"} if typ == "false_premise" else None,
        "citas": [{"chunk_id": p["chunk_id"], "text": p["text"]} for p in blind["passages"]],
        "latency_ms": latency,
        "steps": [{"state": s, "role": "x", "tool": None, "ms": ms} for s, ms in steps],
        "search_stages": {"lexical": True, "dense": True, "rerank": False},
        "blind": blind,
        "answer_hash": answer_hash(blind),
    }


def _run():
    return [
        _record("r1", "factual", "space_security", 3, [["P1"], ["P1"], []], 1000, [("retrieve", 600), ("write", 200)]),
        _record("r2", "explanatory", "ai_military", 2, [["P1"], ["P2"]], 2000, [("retrieve", 1500), ("write", 100)]),
        _record(
            "r3",
            "false_premise",
            "space_security",
            2,
            [["P1"], ["P1"]],
            3000,
            [("retrieve", 1000), ("write", 1500)],
            "both",
        ),
        _record("r4", "unanswerable", "territorial", 0, [[]], 500, [("retrieve", 400)]),
        _record("r5", "factual", "territorial", 1, [["P1"]], 4000, [("retrieve", 3000), ("write", 500)]),
    ]


def _g(facts, sents, premise=None, answered=None):
    return {
        "key_facts_stated": facts,
        "sentences": [{"n": i, "supported": s, "statement": t} for i, (s, t) in enumerate(sents, 1)],
        "premise_handling": premise,
        "answered_as_if_answered": answered,
    }


ANA = {
    "r1": _g([True, True, False], [(True, True), (False, True), (None, False)]),
    "r2": _g([True, False], [(True, True), (True, True)]),
    "r3": _g([True, True], [(True, True), (True, True)], premise=FLAGGED),
    "r4": _g([], [(None, True)], answered=False),
}
BETO = {
    "r1": _g([True, False, False], [(True, True), (True, True), (None, False)]),
    "r2": _g([True, False], [(True, True), (False, True)]),
}


def _grades(run):
    out = {}
    for r in run:
        for name, judge in (("ana", ANA), ("beto", BETO)):
            if r["question_id"] in judge:
                out.setdefault((r["question_id"], r["answer_hash"]), {})[name] = judge[r["question_id"]]
    return out


def _check_hand_values(rep):
    o = rep["overall"]
    assert (o["n"], o["judged"], o["pending"]) == (5, 4, 1) and rep["pending_ids"] == ["r5"]
    # merged facts: r1 [T, tie→F, F] = 1/3, r2 [T, F] = 1/2, r3 2/2; r4 (unanswerable) not counted
    kf = o["key_facts_stated"]
    assert (kf["stated"], kf["facts"], kf["questions"]) == (4, 7, 3)
    assert kf["share"] == pytest.approx(4 / 7, abs=1e-4) and kf["macro"] == pytest.approx(
        (1 / 3 + 1 / 2 + 1) / 3, abs=1e-4
    )
    # cited sentences: r1 2 (u2 tie → False), r2 2 (u2 tie → False), r3 2 → 4 of 6
    cs = o["citation_support"]
    assert (cs["supported"], cs["cited_sentences"]) == (4, 6) and cs["share"] == pytest.approx(2 / 3, abs=1e-4)
    ns = o["non_statement_sentences"]
    assert (ns["count"], ns["sentences"]) == (1, 8) and ns["upper95_rule_of_three"] is None
    fp = o["false_premises_flagged"]
    assert (fp["flagged_false"], fp["n"], fp["share"]) == (1, 1, 1.0)
    un = o["unanswerable_answered"]
    assert (un["count"], un["n"], un["upper95_rule_of_three"]) == (0, 1, 3.0)
    assert o["auto"]["unanswerable_respondida_with_content"] == 0
    assert o["auto"]["false_premise_system_verdicts"] == {"falsa": 1}
    # per phenomenon: space_security = r1 + r3: facts 3/5, citations 3/4
    sp = rep["by_phenomenon"]["space_security"]
    assert sp["key_facts_stated"]["share"] == pytest.approx(0.6) and sp["citation_support"]["share"] == pytest.approx(
        0.75
    )
    fa = rep["by_type"]["factual"]
    assert (fa["n"], fa["judged"], fa["pending"]) == (2, 1, 1) and fa["key_facts_stated"]["share"] == pytest.approx(
        1 / 3, abs=1e-4
    )
    # latency: [500, 1000, 2000, 3000, 4000] → nearest-rank p50 = 3rd = 2000, p95 = 5th = 4000
    lat = rep["latency"]
    assert (lat["overall"]["p50_ms"], lat["overall"]["p95_ms"]) == (2000.0, 4000.0)
    assert (lat["by_route"]["text"]["p50_ms"], lat["by_route"]["text"]["p95_ms"]) == (1000.0, 4000.0)
    # retrieve: (600+1500+1000+400+3000)/5 = 1300 ms; write: 2300/5 = 460 ms; mean latency 2100
    assert lat["by_step"]["retrieve"]["mean_ms"] == 1300.0 and lat["by_step"]["write"]["mean_ms"] == 460.0
    assert lat["slowest_step"] == {"name": "retrieve", "mean_ms": 1300.0, "share_of_mean_latency": 0.619}
    assert lat["slowest_step_tool"] == {"name": "retrieve/-", "mean_ms": 1300.0}
    assert rep["meets"] == {
        "key_facts_stated": False,
        "citation_support": False,
        "non_statement_sentences": False,
        "false_premises_flagged": True,
        "unanswerable_answered": True,
        "latency_p50_ms": True,
        "latency_p95_ms": True,
    }
    # kappa on key facts, ana [1,1,0,1,0] vs beto [1,0,0,1,0]: p_o = 0.8, p_e = 0.6·0.4 + 0.4·0.6 = 0.48,
    # kappa = 0.32 / 0.52; supported (1,1) (0,1) (1,1) (1,0): p_o = 0.5, p_e = 0.625 → -1/3
    pair = rep["agreement"]["pairs"]["ana|beto"]
    assert pair["key_facts"] == {"n": 5, "exact": 0.8, "kappa": pytest.approx(0.32 / 0.52, abs=1e-4)}
    assert pair["supported"]["kappa"] == pytest.approx(-1 / 3, abs=1e-4) and pair["supported"]["exact"] == 0.5
    assert rep["agreement"]["n_multi"] == 2


def test_scoring_on_a_hand_graded_run():
    run = _run()
    _check_hand_values(score_run(run, _grades(run), set_name="hand"))


def test_merge_resolves_ties_against_the_system():
    m = merge_grades(
        {
            "a": _g([True], [(True, True)], premise=FLAGGED, answered=False),
            "b": _g([False], [(False, False)], premise=PREMISE_LABELS[1], answered=True),
        }
    )
    assert m["key_facts_stated"] == [False]
    assert m["sentences"] == [{"n": 1, "supported": False, "statement": False}]
    assert m["premise_handling"] == PREMISE_LABELS[1] and m["answered_as_if_answered"] is True
    # three judges: the majority wins either way
    three = merge_grades({"a": _g([True], []), "b": _g([True], []), "c": _g([False], [])})
    assert three["key_facts_stated"] == [True]
    with pytest.raises(ValueError, match="no grades"):
        merge_grades({})


def test_percentile_bootstrap_and_agreement_edges():
    assert percentile([], 50) is None and percentile([7.0], 95) == 7.0
    assert percentile([1, 2, 3, 4], 50) == 2.0 and percentile(list(range(1, 21)), 95) == 19.0
    # every question at the same ratio: no spread
    assert bootstrap_ratio([(1, 2)] * 10) == [0.5, 0.5]
    ci = bootstrap_ratio([(1, 1)] * 6 + [(0, 1)] * 4)
    assert ci[0] < 0.6 < ci[1] and 0.0 <= ci[0] and ci[1] <= 1.0
    assert bootstrap_ratio([(0, 0)]) is None
    assert agreement({("q", "h"): {"ana": _g([True], [])}}) == {
        "annotators": ["ana"],
        "n_multi": 0,
        "pairs": {},
        "pooled": None,
    }


def test_blind_answer_hides_the_system_and_labels_citations():
    from radar_pipeline.agent import messages

    a, b = "0123456789abcdef", "fedcba9876543210"
    respuesta = (
        f"- «Fact one is stated here.» [{a}:{a}-0]\n- «Fact two.» [{b}:{b}-3; {a}:{a}-0]\n\n"
        f"Fuentes: «Doc A» (p. 1); «Doc B» (p. 2).\n\n{messages.LEXICAL_ONLY_NOTE}\n\n"
        + messages.degraded_note([{"rol": "redactor", "motivo": "http", "por_circuito": False}])
        + "\n\nNota: el periodo considerado es 2020–2024."
    )
    blind = blind_answer(respuesta, {f"{a}-0": "text A", f"{b}-3": "text B"})
    assert a not in blind["text"] and "Fuentes" not in blind["text"] and "modo" not in blind["text"]
    assert "índice semántico" not in blind["text"]
    assert [p["id"] for p in blind["passages"]] == ["P1", "P2"] and blind["passages"][1]["text"] == "text B"
    assert [(u["n"], u["citations"]) for u in blind["units"]] == [(1, ["P1"]), (2, ["P2", "P1"]), (3, [])]
    assert blind["units"][2]["text"] == "Nota: el periodo considerado es 2020–2024."  # an ordinary note stays
    # the hash follows the content, not the ids
    same = blind_answer(respuesta.replace(a, "1111111111111111"), {"1111111111111111-0": "text A", f"{b}-3": "text B"})
    assert answer_hash(same) == answer_hash(blind)
    assert answer_hash(blind_answer(respuesta, {f"{a}-0": "text A2", f"{b}-3": "text B"})) != answer_hash(blind)


def test_a_quotation_of_several_sentences_is_one_unit():
    cases = [
        (
            "La premisa no se sostiene: el pasaje citado afirma «In November 2021 Russia tested. The debris forced the ISS crew to shelter» [P1]. Otra frase aquí.",
            2,
        ),
        ("El informe dice «La minería ilegal financia a los GAO. El ELN cobra extorsiones» [P2].", 1),
        ("The source says “Spoofing is common. Receivers showed an airport” [P1]. It is unauthenticated [P1].", 2),
        ("Primera frase sin cita. Segunda frase con cita [P1].", 2),
    ]
    for text, n in cases:
        units = answer_units(text)
        assert len(units) == n, units
        assert all(u["text"].count("«") == u["text"].count("»") for u in units)
    first = answer_units(cases[0][0])[0]
    assert first["citations"] == ["P1"] and first["text"].endswith("[P1].")


def test_sets_are_validated(tmp_path):
    good = {"id": "a", "phenomenon": "territorial", "type": "factual", "question": "¿Qué?", "key_facts": ["x"]}
    cases = [
        ({**good, "type": "opinion"}, "type must be one of"),
        ({**good, "key_facts": []}, "key_facts must hold 1–3"),
        ({**good, "key_facts": ["a", "b", "c", "d"]}, "key_facts must hold 1–3"),
        ({**good, "key_facts": "x"}, "list of non-empty strings"),
        ({**good, "question": " "}, "question is missing"),
        ({**good, "false_premise": 3}, "false_premise must be"),
    ]
    for obj, msg in cases:
        p = tmp_path / "s.jsonl"
        p.write_text(json.dumps(obj) + "\n")
        with pytest.raises(ValueError, match=msg):
            load_set(p)
    p.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(ValueError, match="appears twice"):
        load_set(p)
    p.write_text(json.dumps({**good, "type": "unanswerable", "key_facts": []}) + "\n")
    assert load_set(p)[0].type == "unanswerable"


def test_the_dev_set_loads():
    items = load_set("evals/answers/sets/dev.jsonl")
    assert len(items) >= 60 and {i.type for i in items} == {
        "factual",
        "explanatory",
        "comparison",
        "false_premise",
        "unanswerable",
    }


# -- with PostgreSQL ------------------------------------------------------------------------------
@pytest.fixture()
def aengine(engine):
    answers_metadata.drop_all(engine)
    ensure_answer_schema(engine)
    return engine


def _fill(batch, out, grades_by_question):
    """A judge's copy of ``batch`` with the hand grades of each question (matched by its text)."""
    lines = []
    for line in batch.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        qid = item["question"].removeprefix("¿Pregunta ").removesuffix("?")
        g = grades_by_question.get(qid)
        if g is not None:
            if "key_facts_stated" in item:
                item["key_facts_stated"] = g["key_facts_stated"]
            for s, gs in zip(item["sentences"], g["sentences"], strict=True):
                s["supported"], s["statement"] = gs["supported"], gs["statement"]
            if "premise_handling" in item:
                item["premise_handling"] = g["premise_handling"]
            if "answered_as_if_answered" in item:
                item["answered_as_if_answered"] = g["answered_as_if_answered"]
        lines.append(json.dumps(item, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_export_import_score_round_trip(aengine, tmp_path):
    key = store_run(aengine, "hand", _run(), {"mode": "offline"})
    batch = tmp_path / "batch.jsonl"
    s = export_batch(aengine, key, batch, seed=1)
    assert (s.n_items, s.n_already_judged) == (5, 0)
    items = [json.loads(line) for line in batch.read_text(encoding="utf-8").splitlines()]
    allowed = {
        "item_id", "question", "key_facts", "false_premise", "answer", "passages", "sentences",
        "key_facts_stated", "premise_handling", "answered_as_if_answered", "comment",
    }  # fmt: skip
    text = batch.read_text(encoding="utf-8")
    for item in items:
        assert set(item) <= allowed
        assert all(set(p) == {"id", "text"} for p in item["passages"])
    for leak in (key, "respondida", "offline", "factual", "explanatory", "space_security", "r1-P1", "answer_hash"):
        assert leak not in text
    # the item shape says what is asked: premise only on false-premise questions, etc.
    by_q = {i["question"]: i for i in items}
    assert "premise_handling" in by_q["¿Pregunta r3?"] and "premise_handling" not in by_q["¿Pregunta r1?"]
    assert "answered_as_if_answered" in by_q["¿Pregunta r4?"] and "key_facts_stated" not in by_q["¿Pregunta r4?"]
    ana = import_grades(aengine, _fill(batch, tmp_path / "ana.jsonl", ANA), "ana")
    assert (ana.round, ana.n_graded, ana.n_pending) == (1, 4, 1)
    beto = import_grades(aengine, _fill(batch, tmp_path / "beto.jsonl", BETO), "beto")
    assert (beto.n_graded, beto.n_pending) == (2, 3)
    _check_hand_values(score_stored(aengine, "hand"))
    # a second run with the same answers reuses the grades; export leaves the graded ones out
    key2 = store_run(aengine, "hand", _run(), {})
    assert score_stored(aengine, "hand")["run_key"] == key2
    _check_hand_values(score_stored(aengine, "hand"))
    again = export_batch(aengine, key2, tmp_path / "b2.jsonl")
    assert (again.n_items, again.n_already_judged) == (1, 4)
    # a re-grade by ana is a new round that supersedes the first
    regrade = dict(ANA, r4=_g([], [(None, True)], answered=True))
    assert import_grades(aengine, _fill(batch, tmp_path / "ana2.jsonl", regrade), "ana").round == 2
    assert score_stored(aengine, "hand")["overall"]["unanswerable_answered"]["count"] == 1


def _mutations():
    def facts_len(i):
        i["key_facts_stated"] = [True]

    def facts_str(i):
        i["key_facts_stated"] = ["yes", True, False]

    def uncited_supported(i):
        i["sentences"][2]["supported"] = False

    def partial(i):
        i["key_facts_stated"][2] = None

    def missing_sentence(i):
        i["sentences"].pop()

    def renumbered(i):
        i["sentences"][0]["n"] = 9

    def premise_not_asked(i):
        i["premise_handling"] = FLAGGED

    def answered_not_asked(i):
        i["answered_as_if_answered"] = False

    def statement_int(i):
        i["sentences"][0]["statement"] = 1

    return [
        (facts_len, "key_facts_stated must be a list of 3"),
        (facts_str, r"key_facts_stated\[0\] must be true, false or null"),
        (uncited_supported, "sentence 3 has no citation: supported must be null"),
        (partial, r"partly graded, missing key_facts_stated\[2\]"),
        (missing_sentence, "must be the 3 exported sentences"),
        (renumbered, "sentence 1 is missing or out of order"),
        (premise_not_asked, "premise_handling is not asked"),
        (answered_not_asked, "answered_as_if_answered is not asked"),
        (statement_int, "sentence 1 statement must be true, false or null"),
    ]


def test_import_rejects_malformed_grades_and_stores_nothing(aengine, tmp_path):
    key = store_run(aengine, "hand", _run(), {})
    batch = tmp_path / "batch.jsonl"
    export_batch(aengine, key, batch, seed=0)
    good = _fill(batch, tmp_path / "good.jsonl", ANA).read_text(encoding="utf-8").splitlines()
    r1 = next(i for i, line in enumerate(good) if "¿Pregunta r1?" in line)
    r3 = next(i for i, line in enumerate(good) if "¿Pregunta r3?" in line)

    def attempt(lines, msg):
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=msg):
            import_grades(aengine, bad, "ana")

    for mutate, msg in _mutations():
        item = json.loads(good[r1])
        mutate(item)
        attempt([*good[:r1], json.dumps(item), *good[r1 + 1 :]], msg)
    bad_premise = json.loads(good[r3])
    bad_premise["premise_handling"] = "rejected"
    attempt([*good[:r3], json.dumps(bad_premise), *good[r3 + 1 :]], "premise_handling must be one of")
    attempt([*good, good[0]], "appears twice")
    attempt([*good, json.dumps({"item_id": "nope", "sentences": []})], "not exported by `radar answers export`")
    attempt([*good, "{not json"], "invalid JSON")
    attempt([*good, json.dumps({"grade": 1})], "expected an object with item_id")
    with pytest.raises(ValueError, match="annotator"):
        import_grades(aengine, tmp_path / "good.jsonl", "  ")
    with aengine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM answer_grades")).scalar() == 0
    assert latest_grades(aengine) == {}
    assert import_grades(aengine, tmp_path / "good.jsonl", "ana", round=3).round == 3
    with pytest.raises(ValueError, match="already has round 3"):
        import_grades(aengine, tmp_path / "good.jsonl", "ana", round=3)


def test_cli_score_and_import_errors(aengine, pg_url, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from radar_cli.main import app

    monkeypatch.setenv("DATABASE_URL", pg_url)
    key = store_run(aengine, "hand", _run(), {})
    runner = CliRunner()
    batch = tmp_path / "batch.jsonl"
    res = runner.invoke(
        app, ["answers", "export", "--set", "hand", "--out", str(batch), "--mapping", str(tmp_path / "m.jsonl")]
    )
    assert res.exit_code == 0, res.output
    assert "5 answers to judge" in res.output and len((tmp_path / "m.jsonl").read_text().splitlines()) == 5
    bad = tmp_path / "bad.jsonl"
    item = json.loads(batch.read_text().splitlines()[0])
    item["sentences"][0]["statement"] = "sí"
    bad.write_text(json.dumps(item) + "\n")
    res = runner.invoke(app, ["answers", "import", str(bad), "--annotator", "ana"])
    assert res.exit_code == 2 and "must be true, false or null" in res.output
    res = runner.invoke(
        app, ["answers", "import", str(_fill(batch, tmp_path / "ana.jsonl", ANA)), "--annotator", "ana"]
    )
    assert res.exit_code == 0 and "4 answers graded stored, 1 pending" in res.output
    out = tmp_path / "answers_hand.json"
    res = runner.invoke(app, ["answers", "score", "--set", "hand", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rep = json.loads(out.read_text())
    assert rep["run_key"] == key and rep["overall"]["judged"] == 4 and rep["overall"]["pending"] == 1
    res = runner.invoke(app, ["answers", "score", "--set", "never_run"])
    assert res.exit_code == 2 and "no stored run" in res.output
