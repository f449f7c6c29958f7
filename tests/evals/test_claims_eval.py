"""The claim measurements: the blind sample drawn from a real database carries no status or
confidence and quotes spans of its passages; the scorer's precision, stance accuracy, recall and
Wilson intervals; the alias score against official codes."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from evals.claims import aliases, make_sample, score
from radar_pipeline.claims.model import Claim, Evidence
from radar_pipeline.claims.policy import resolve
from radar_pipeline.claims.resolution import PlaceNameIndex
from radar_pipeline.claims.store import write_claims
from tests.radar_pipeline.precompute.support_precompute import add_document

TEXT = "Informe de campo. El ELN hace presencia en Tumaco desde marzo. Otra frase."


def test_blind_sample_from_the_database(engine):
    doc = add_document(engine, "radar/territorial/informe_2023.txt", [TEXT], language="es")
    span = "El ELN hace presencia en Tumaco desde marzo."
    s = TEXT.index(span)
    ev = Evidence(doc, f"{doc}-0", "supports", span, s, s + len(span), "test", 1, "2023", "es", "radar")
    claim = resolve(
        Claim(
            "entity:eln", "present_in", "municipality:52835", "ELN en Tumaco", dt.date(2023, 1, 1), None, "x", {}, [ev]
        )
    )
    write_claims(engine, [claim], run_id="r", producer="t")
    (item,) = make_sample.draw(engine, {("present_in", "es"): 5, ("present_in", "pt"): 5}, seed=1)
    assert item["quoted_span"] == span and span in item["passage"] and item["stance"] == "supports"
    assert item["claim"]["period"] == "desde 2023-01-01" and item["claim"]["in_words"] == "ELN en Tumaco"
    assert not {"status", "confidence", "policy", "prevailing_stance", "authority"} & set(json.dumps(item).split('"'))


SAMPLE = [
    {"item_id": "a", "predicate": "present_in", "language": "es", "quoted_span": "x", "passage": "xy"},
    {"item_id": "b", "predicate": "present_in", "language": "pt", "quoted_span": "y", "passage": "xy"},
    {"item_id": "c", "predicate": "early_warning_for", "language": "es", "quoted_span": "z", "passage": "xy"},
]


def test_score_precision_stance_recall():
    labels = [
        {"item_id": "a", "claim_correct": 1, "stance_correct": 1, "missing_claims": [{"predicate": "present_in"}]},
        {"item_id": "b", "claim_correct": 0, "stance_correct": 1},
        {"item_id": "c", "claim_correct": 1, "stance_correct": 0},
    ]
    r = score.score(SAMPLE, labels)
    assert r["claim_precision"]["rate"] == round(2 / 3, 4)
    assert r["claim_precision_by_predicate"]["present_in"]["rate"] == 0.5
    assert r["claim_precision_by_language"]["pt"]["rate"] == 0.0
    assert r["stance_accuracy"]["rate"] == round(2 / 3, 4)
    assert r["recall_estimate_by_predicate"]["present_in"] == {"correct": 1, "missing": 1, "recall": 0.5}
    assert r["sample_span_in_passage"] == {"items": 3, "ok": 2}
    lo, hi = score.wilson(8, 10)
    assert 0.49 < lo < 0.5 and 0.94 < hi < 0.95  # Wilson 95 % for 8/10: [0.490, 0.943]
    with pytest.raises(ValueError):
        score.score(SAMPLE, [{"item_id": "zz", "claim_correct": 1, "stance_correct": 1}])
    with pytest.raises(ValueError):
        score.score(SAMPLE, [{"item_id": "a", "claim_correct": 2, "stance_correct": 1}])


def test_alias_score_against_official_codes():
    gaz = [
        {"place_id": "department:19", "level": "department", "code": "19", "name": "Cauca", "aliases": []},
        {"place_id": "department:05", "level": "department", "code": "05", "name": "Antioquia", "aliases": []},
        {
            "place_id": "municipality:19050",
            "level": "municipality",
            "code": "19050",
            "name": "Argelia",
            "department_code": "19",
            "aliases": [],
        },
        {
            "place_id": "municipality:05055",
            "level": "municipality",
            "code": "05055",
            "name": "Argelia",
            "department_code": "05",
            "aliases": [],
        },
        {
            "place_id": "municipality:52835",
            "level": "municipality",
            "code": "52835",
            "name": "San Andrés de Tumaco",
            "department_code": "52",
            "aliases": [{"text": "Tumaco", "lang": "es"}],
        },
    ]
    items = [
        {"alias": "Argelia", "department": "Cauca", "gold": "municipality:19050", "source": "s"},
        {"alias": "Argelia", "department": "Antioquia", "gold": "municipality:05055", "source": "s"},
        {"alias": "Tumaco", "department": "Nariño", "gold": "municipality:52835", "source": "s"},
    ]
    r = aliases.score(items, PlaceNameIndex.from_gazetteer(gaz))
    assert r["with_department"]["precision"] == 1.0 and r["with_department"]["recall"] == 1.0
    assert r["name_only"]["precision"] == 1.0 and r["name_only"]["recall"] == round(1 / 3, 4)
    assert r["homonym_pairs"] == 1 and r["homonym_pairs_kept_apart"] == 1.0
