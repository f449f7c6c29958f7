"""The conflict policy and the rules' span helpers, as pure functions."""

from __future__ import annotations

import datetime as dt

import pytest

from radar_pipeline.claims.model import Claim, Evidence, RetractionInfo, claim_id
from radar_pipeline.claims.policy import authority_of, resolve
from radar_pipeline.claims.rules import find_flexible, period_of, window


def _ev(doc, stance, authority=1, date=None):
    return Evidence(doc, f"{doc}-0", stance, "x", 0, 1, "test", authority, date)


def _claim(*evidence):
    return Claim("entity:eln", "present_in", "municipality:52835", "s", None, None, "undated", {}, list(evidence))


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        ([_ev("a", "supports")], ("asserted", "supports", "uncontested")),
        ([_ev("a", "supports", 1), _ev("b", "contradicts", 3)], ("contested", "contradicts", "authority")),
        (
            [_ev("a", "supports", 2, "2024"), _ev("b", "contradicts", 2, "2023-05")],
            ("contested", "supports", "recency"),
        ),
        ([_ev("a", "supports", 2, "2023"), _ev("b", "contradicts", 2, "2023")], ("contested", None, "tie")),
        ([_ev("b", "contradicts")], ("contested", "contradicts", "only_contradicting")),
    ],
)
def test_authority_then_recency(evidence, expected):
    c = resolve(_claim(*evidence))
    assert (c.status, c.prevailing_stance, c.policy) == expected


def test_retracted_evidence_no_longer_counts():
    c = resolve(_claim(_ev("a", "supports", 1), _ev("b", "contradicts", 3)), {"b": RetractionInfo("b", "error")})
    assert (c.status, c.policy) == ("asserted", "uncontested") and c.evidence[1].retracted
    c = resolve(_claim(_ev("a", "supports")), {"a": RetractionInfo("a")})
    assert c.status == "retracted" and c.prevailing_stance is None
    c = resolve(_claim(_ev("a", "supports")), superseded_chunks=frozenset({"a-0"}))
    assert c.status == "retracted"


def test_authority_ranks_and_claim_identity():
    assert authority_of("ALERTAS") > authority_of("AMAZONUW") > authority_of("CSIS") == authority_of(None) == 1
    a = claim_id("entity:eln", "present_in", "municipality:52835", dt.date(2023, 1, 1), dt.date(2023, 12, 31))
    assert a == claim_id("entity:eln", "present_in", "municipality:52835", dt.date(2023, 1, 1), dt.date(2023, 12, 31))
    assert a != claim_id("entity:eln", "present_in", "municipality:52835", dt.date(2023, 1, 2), dt.date(2023, 12, 31))


def test_periods_spans_and_flexible_quotes():
    assert period_of("2023") == (dt.date(2023, 1, 1), dt.date(2023, 12, 31))
    assert period_of("2024-02") == (dt.date(2024, 2, 1), dt.date(2024, 2, 29))
    assert period_of("2023-12") == (dt.date(2023, 12, 1), dt.date(2023, 12, 31))
    assert period_of("2023-05-04") == (dt.date(2023, 5, 4),) * 2
    assert period_of(None) == period_of("s.f.") == (None, None)
    text = "Primera frase. El ELN llegó a Tumaco en marzo. Tercera frase sin relación alguna con nada."
    s = text.index("ELN")
    lo, hi = window(text, s, s + 3)
    assert text[lo:hi] == "El ELN llegó a Tumaco en marzo."
    text2 = "b_ADM2_PCODE: CO52835,\n  au_eln:   VERDADERO"
    lo, hi = find_flexible(text2, "b_ADM2_PCODE: CO52835, au_eln: VERDADERO")
    assert text2[lo:hi] == text2
    assert find_flexible(text2, "au_emc: VERDADERO") is None
