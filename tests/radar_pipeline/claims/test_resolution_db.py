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
