"""Entity resolution on the real test PostgreSQL: decisions from the real dictionary and gazetteer,
no forced merge, the review queue, and a reviewer's decision that supersedes the automatic one and
survives re-materialization."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from radar_pipeline.claims import resolution as ER

from .conftest import at


@pytest.fixture(scope="module")
def rows(config):
    dictionary = config.dictionary()
    return dictionary.rows(), config.gazetteer().rows()


MENTIONS = [
    {
        "matched": "Argelia",
        "candidates": ["municipality:05055", "municipality:19050"],
        "doc_id": "d1",
        "chunk_id": "d1-0",
    },
    {
        "matched": "ARGELIA",
        "candidates": ["municipality:05055", "municipality:19050"],
        "doc_id": "d2",
        "chunk_id": "d2-3",
    },
    {"matched": "Bogotá", "candidates": ["municipality:11001"], "doc_id": "d1", "chunk_id": "d1-0"},
]
PRESENCE = [
    {"municipality_id": "CO52835", "level2": "Tumaco", "level1": "Nariño", "divipola_code": "52835"},
    {"municipality_id": "CO19050", "level2": "Argelia", "level1": "Cauca", "divipola_code": "19050"},
]


def _decisions(rows):
    dict_rows, gaz_rows = rows
    index = ER.PlaceNameIndex.from_gazetteer(gaz_rows)
    known = {g["place_id"] for g in gaz_rows}
    return [
        *ER.entity_decisions(dict_rows),
        *ER.presence_place_decisions(PRESENCE, index, known),
        *ER.unresolved_place_decisions(MENTIONS),
    ]


def test_decisions_carry_their_signal_and_never_merge_ambiguity(rows):
    ds = _decisions(rows)
    eln = [d for d in ds if d.candidate_a == "entity:eln" and d.decision == "same"]
    assert {("ELN", "acronym"), ("National Liberation Army", "name")} <= {(d.alias, d.detail.get("form")) for d in eln}
    assert all(d.signal == "curated_dictionary" for d in eln)
    assert any(d.alias == "eln" and d.detail.get("source", "").startswith("presence.GROUPS") for d in eln)
    diff = [d for d in ds if d.decision == "different"]
    assert diff and all(d.candidate_b and d.candidate_a != d.candidate_b for d in diff)
    (tumaco,) = [d for d in ds if d.alias == "Tumaco"]
    assert (tumaco.decision, tumaco.signal, tumaco.candidate_a) == ("same", "official_code", "municipality:52835")
    (argelia_code,) = [d for d in ds if d.signal == "official_code" and d.alias == "Argelia"]
    assert argelia_code.candidate_a == "municipality:19050" and argelia_code.detail["name_rule"] == "same"  # Cauca
    (argelia,) = [d for d in ds if d.decision == "unresolved"]  # "Argelia"/"ARGELIA" alone: one review item
    assert argelia.signal == "context_rule" and argelia.candidate_a is None and argelia.detail["mentions"] == 2
    index = ER.PlaceNameIndex.from_gazetteer(rows[1])
    assert index.resolve("Argelia")[0] == "unresolved" and len(index.resolve("Argelia")[1]) == 3
    assert index.resolve("Argelia", "Valle del Cauca") == ("same", ["municipality:76054"])


def test_reviewer_decision_supersedes_and_survives_rematerialization(engine, rows):
    ds = _decisions(rows)
    first = ER.write_decisions(engine, ds, now=at("2026-11-01"))
    assert first["inserted"] == len({d.decision_key for d in ds}) and first["review_opened"] == 1
    (item,) = ER.review_items(engine)
    assert item["alias"] == "Argelia" and item["examples"][0]["chunk_id"] == "d1-0"

    with pytest.raises(ER.ReviewError):
        ER.decide(engine, item["decision_key"], "same", by="ana", target="municipality:11001")  # not a candidate
    with pytest.raises(ER.ReviewError):
        ER.decide(engine, "nope", "different", by="ana")
    row = ER.decide(engine, item["decision_key"], "same", by="ana", target="municipality:19050", now=at("2026-11-02"))
    assert row["signal"] == "reviewer" and row["decided_by"] == "ana"
    assert ER.review_items(engine) == []
    (closed,) = ER.review_items(engine, open_only=False)
    assert closed["closed_by"] == "ana" and closed["closed_at"] == at("2026-11-02")

    again = ER.write_decisions(engine, ds, now=at("2026-11-03"))
    assert again["kept_reviewer"] == 1 and again.get("inserted", 0) == 0 and again["review_open"] == 0
    (cur,) = ER.current_decisions(engine, alias="argelia", kind="place")[:1]
    assert (cur["decision"], cur["signal"], cur["decided_by"]) == ("same", "reviewer", "ana")
    with engine.connect() as conn:
        hist = conn.execute(
            sa.text("SELECT signal, superseded_at FROM alias_decisions WHERE decision_key = :k ORDER BY id"),
            {"k": item["decision_key"]},
        ).all()
    assert [(h.signal, h.superseded_at) for h in hist] == [("context_rule", at("2026-11-02")), ("reviewer", None)]
    assert isinstance(cur["decided_at"], dt.datetime)


def test_alias_cluster_of_an_entity_and_a_place(engine, rows):
    ER.write_decisions(engine, _decisions(rows), now=at("2026-11-01"))
    eln = ER.cluster(engine, "entity:eln")
    aliases = {(a["alias"], a["lang"]) for a in eln["aliases"]}
    assert {("ELN", "es"), ("National Liberation Army", "en"), ("Exército de Libertação Nacional", "pt")} <= aliases
    assert all(a["signal"] == "curated_dictionary" for a in eln["aliases"])
    argelia = ER.cluster(engine, "municipality:19050")
    assert [a["alias"] for a in argelia["aliases"]] == ["Argelia"]  # by its DIVIPOLA code
    assert [u["alias"] for u in argelia["unresolved"]] == ["Argelia"]  # the bare name: not merged


def test_undo_restores_the_replaced_decision_and_reopens_the_item(engine, rows):
    ds = _decisions(rows)
    ER.write_decisions(engine, ds, now=at("2026-11-01"))
    (item,) = ER.review_items(engine)
    with pytest.raises(ER.ReviewError):
        ER.undo(engine, item["decision_key"], by="ana")  # the current decision is no reviewer's
    ER.decide(engine, item["decision_key"], "same", by="ana", target="municipality:19050", now=at("2026-11-02"))
    assert (
        ER.reviewer_overrides(engine)[item["decision_key"]]["sig"] == f"{item['decision_key']}:same:municipality:19050"
    )
    with pytest.raises(ER.ReviewError):
        ER.undo(engine, item["decision_key"], by=" ")
    out = ER.undo(engine, item["decision_key"], by="bruno", now=at("2026-11-03"))
    assert out["undone"]["detail"]["undone_by"] == "bruno" and out["restored"]["signal"] == "context_rule"
    assert ER.reviewer_overrides(engine) == {}
    (reopened,) = ER.review_items(engine)
    assert reopened["decision_key"] == item["decision_key"] and reopened["closed_by"] is None
    # the restored decision is the automatic one as it was: a re-materialization finds it unchanged
    again = ER.write_decisions(engine, ds, now=at("2026-11-04"))
    assert again.get("changed", 0) == 0 and again.get("inserted", 0) == 0 and again["review_open"] == 1
    with pytest.raises(ER.ReviewError):
        ER.undo(engine, item["decision_key"], by="bruno")  # nothing left to undo


def _entity_row(entity_id: str, alias: str, doc: str, category: str = "armed_group") -> dict:
    return {"entity_id": entity_id, "category": category, "alias": alias, "doc_id": doc, "matched": alias}


def _place_row(matched: str, candidates: list[str], doc: str, place_id: str | None = None) -> dict:
    return {
        "place_id": place_id,
        "level": None,
        "code": None,
        "country_code": None,
        "department_code": None,
        "matched": matched,
        "candidates": candidates,
        "resolution": "unresolved" if place_id is None else "cue",
        "doc_id": doc,
    }


def _override(key: str, decision: str, target: str | None) -> dict:
    return {"decision": decision, "target": target, "sig": f"{key}:{decision}:{target or '-'}"}


def test_reviewer_decisions_change_exactly_the_rows_they_concern():
    """Every kind of decision on the rows it concerns, and rows it does not concern left alone:
    Spanish and English aliases, upper-case and accented forms of a place name."""
    mosq = ["municipality:25473", "municipality:52473"]
    barb = ["municipality:05079", "municipality:68077"]
    entities = [
        _entity_row("eln", "ELN", "d1"),
        _entity_row("eln", "National Liberation Army", "d2"),
        _entity_row("clan_del_golfo", "Clan del Golfo", "d1"),
        _entity_row("fuerza_publica", "Ejército", "d3", category="actor"),
    ]
    places = [
        _place_row("Mosquera", mosq, "d1"),
        _place_row("MOSQUERA", mosq, "d2"),
        _place_row("Barbosa", barb, "d1"),
        _place_row("Bárbosa", barb, "d4"),
        _place_row("Mosquera", ["municipality:25473"], "d3", place_id="municipality:25473"),  # settled by a cue
        _place_row("Tumaco", ["municipality:52835"], "d2", place_id="municipality:52835"),
    ]
    k_eln_es = ER.entity_mention_key(entities[0])
    k_eln_en = ER.entity_mention_key(entities[1])
    k_clan = ER.entity_mention_key(entities[2])
    k_mosq = ER.place_mention_key(places[0])
    k_barb = ER.place_mention_key(places[2])
    assert k_mosq == ER.place_mention_key(places[1]) and k_barb == ER.place_mention_key(places[3])  # folded names
    assert ER.place_mention_key(places[5]) is None and len({k_eln_es, k_eln_en, k_clan}) == 3
    gaz = {
        "municipality:52473": {"level": "municipality", "code": "52473", "country_code": "COL", "department_code": "52"}
    }

    # nothing decided: the rows as matched
    e, p, applied = ER.apply_reviewer_decisions(entities, places, {}, gaz)
    assert (e, p, applied) == (entities, places, {})

    overrides = {
        k_eln_es: _override(k_eln_es, "different", None),  # "ELN" here is not the group
        k_eln_en: _override(k_eln_en, "same", "entity:eln"),  # confirmed: unchanged
        k_clan: _override(k_clan, "unresolved", None),  # not sure: not counted as the group
        k_mosq: _override(k_mosq, "same", "municipality:52473"),
        k_barb: _override(k_barb, "different", None),
    }
    e, p, applied = ER.apply_reviewer_decisions(entities, places, overrides, gaz)
    assert [(r["entity_id"], r["alias"]) for r in e] == [
        ("eln", "National Liberation Army"),
        ("fuerza_publica", "Ejército"),
    ]
    resolved = [r for r in p if r["resolution"] == "reviewer"]
    assert [(r["matched"], r["doc_id"], r["place_id"], r["department_code"]) for r in resolved] == [
        ("Mosquera", "d1", "municipality:52473", "52"),
        ("MOSQUERA", "d2", "municipality:52473", "52"),
    ]
    assert all(r["candidates"] == mosq for r in resolved)  # what the matcher found is kept
    assert not any(r["matched"] in ("Barbosa", "Bárbosa") for r in p)  # none of its candidates: not counted
    assert places[4] in p and places[5] in p  # rows the decisions do not concern
    assert applied == {
        "d1": {overrides[k]["sig"] for k in (k_eln_es, k_clan, k_mosq, k_barb)},
        "d2": {overrides[k_mosq]["sig"]},
        "d4": {overrides[k_barb]["sig"]},
    }
    with pytest.raises(KeyError):  # a 'same' target the gazetteer lacks is the caller's to filter
        ER.apply_reviewer_decisions([], places, {k_mosq: _override(k_mosq, "same", "municipality:25473")}, gaz)
