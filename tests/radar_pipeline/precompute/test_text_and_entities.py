"""Folding, the one-regex matcher and the entity dictionary rules."""

from __future__ import annotations

import pytest

from radar_pipeline.precompute.entities import parse_entity_dictionary
from radar_pipeline.precompute.text import PhraseMatcher, in_url, mask_spans
from radar_pipeline.textfold import fold_spans


def test_fold_keeps_length_and_removes_case_and_accents():
    s = "Bogotá D.C. – ÑANDÚ “Córdoba”"
    f = fold_spans(s)
    assert len(f) == len(s)
    assert f == 'bogota d.c. - nandu "cordoba"'


def test_matcher_longest_match_word_boundaries_and_spans_in_original_text():
    m = PhraseMatcher()
    for p in ["FARC", "disidencias de las FARC", "Norte de Santander", "Santander"]:
        m.add(p, p)
    text = "Las Disidencias de las FARC y el ELN en Norte de\nSantander; FARCEP no; Santanderes no."
    hits = list(m.finditer(text))
    assert [h.matched for h in hits] == ["Disidencias de las FARC", "Norte de\nSantander"]
    for h in hits:
        assert text[h.start : h.end] == h.matched


def test_mask_spans_and_url_detection():
    assert mask_spans("abc def ghi", [(4, 7)]) == "abc     ghi"
    t = "see www.mapp-oea.org or mapp-oea"
    assert in_url(t, 8, 16) and not in_url(t, 24, 32)


def _dict(entities, version="t-1"):
    return parse_entity_dictionary({"version": version, "entities": entities})


def test_acronyms_are_case_sensitive_and_phenomenon_restricted(dictionary):
    text = "El ELN y las AGC; the AUC score; el eln"
    ids = [h.entity_id for h in dictionary.find(text, phenomenon="territorial")]
    assert ids == ["eln", "clan_del_golfo", "auc"]
    # in an AI paper "AUC" is "area under the curve", not the Autodefensas
    assert "auc" not in [h.entity_id for h in dictionary.find(text, phenomenon="ai_military")]


def test_aliases_in_three_languages_and_entity_decoys(dictionary):
    text = (
        "Starlink y Cosmos 2542; Kosmos Energy drilled; munição vagante e munición merodeadora; "
        "loitering munitions; Comando Vermelho; Gulf Clan; Clã do Golfo"
    )
    ids = [h.entity_id for h in dictionary.find(text, phenomenon="space_security")]
    assert ids.count("kosmos") == 1  # "Kosmos Energy" is a decoy
    assert ids.count("loitering_munitions") == 3
    assert ids.count("clan_del_golfo") == 2 and "starlink" in ids and "comando_vermelho" in ids


def test_homonym_resolved_by_phenomenon_never_forced(dictionary):
    text = "el Ejército Popular de Liberación"
    assert [h.entity_id for h in dictionary.find(text, phenomenon="territorial")] == ["epl"]
    assert [h.entity_id for h in dictionary.find(text, phenomenon="ai_military")] == ["pla"]


def test_dictionary_validation_errors():
    base = {"id": "a", "category": "actor", "phenomenon": "territorial", "aliases": {"es": ["Alfa"]}}
    with pytest.raises(ValueError, match="duplicate"):
        _dict([base, dict(base)])
    with pytest.raises(ValueError, match="category"):
        _dict([{**base, "category": "score"}])
    with pytest.raises(ValueError, match="used by"):
        _dict([base, {**base, "id": "b"}])
    with pytest.raises(ValueError, match="no version"):
        parse_entity_dictionary({"entities": [base]})
    # the same alias is fine when the phenomena do not overlap
    ok = _dict(
        [
            {**base, "aliases": {"es": [{"text": "Alfa", "phenomena": ["territorial"]}]}},
            {**base, "id": "b", "aliases": {"es": [{"text": "Alfa", "phenomena": ["ai_military"]}]}},
        ]
    )
    assert set(ok.entities) == {"a", "b"}


def test_two_case_sensitive_spellings_are_both_kept():
    d = _dict(
        [
            {
                "id": "dod",
                "category": "actor",
                "phenomenon": "ai_military",
                "aliases": {"en": [{"text": "DoD", "case_sensitive": True}, {"text": "DOD", "case_sensitive": True}]},
            }
        ]
    )
    assert [h.matched for h in d.find("the DoD and the DOD, not dod")] == ["DoD", "DOD"]


def test_context_aliases_are_never_counted_as_mentions(dictionary):
    # "las disidencias" names the FARC dissidents only where the context already does: the agent's
    # coverage check reads it, the precomputes never count it
    assert "disidencias" in dictionary.entities["farc_dissidents"].context_aliases
    text = "Las disidencias crecieron; las disidencias de las FARC también."
    hits = [(h.entity_id, h.matched) for h in dictionary.find(text, phenomenon="territorial")]
    assert hits == [("farc_dissidents", "disidencias de las FARC")]
    with pytest.raises(ValueError, match="context_aliases"):
        _dict(
            [
                {
                    "id": "x",
                    "category": "actor",
                    "phenomenon": "territorial",
                    "aliases": {"es": ["X"]},
                    "context_aliases": "x",
                }
            ]
        )


def test_armed_groups_outside_latin_america_are_in_the_dictionary(dictionary):
    text = "Los hutíes y Hezbollah atacaron; the Wagner Group and the Islamic State; Sendero Luminoso."
    ids = [h.entity_id for h in dictionary.find(text, phenomenon="ai_military")]
    assert ids == ["houthis", "hezbollah", "wagner_group", "islamic_state", "sendero_luminoso"]
