"""Claims on the real test PostgreSQL: crafted documents → precomputes → claims, then the
bitemporal questions the issue asks (as-of / valid-at, a validity correction, contested claims,
retraction) and the evidence checks."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from radar_pipeline.claims.build import materialize_claims
from radar_pipeline.claims.model import RetractionInfo
from radar_pipeline.claims.store import (
    check_evidence,
    check_single_current,
    claim_history,
    provenance_coverage,
    query_claims,
)
from radar_pipeline.collection import AccessScope, collection_of

from ..precompute.support_precompute import add_document
from .conftest import at, run_precomputes

TUMACO = "municipality:52835"
RECORD = (
    "capa: au_compilado_R02\nfid: {fid}\nb_ADM2_PCODE: CO52835\nb_ADM1_PCODE: CO52\nau_country: Colombia\n"
    "au_level1: Nariño\nau_level2: San Andrés de Tumaco\nau_emc: {emc}\nau_eln: {eln}\nau_cv: FALSO\nau_no_info: FALSO"
)
ALERT = (
    "Alerta Temprana de Inminencia No. 045-23 para el municipio de Tumaco, Nariño. "
    "El ELN y las AGC disputan el territorio."
)


def _presence_doc(engine, path, fid, *, emc="FALSO", eln="FALSO", collection=None):
    rec = RECORD.format(fid=fid, emc=emc, eln=eln)
    doc = add_document(engine, path, [rec], is_tabular=True)
    collection = collection or collection_of(path)
    if collection:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE documents SET collection = :c WHERE doc_id = :d"), {"c": collection, "d": doc})
            conn.execute(sa.text("UPDATE chunks SET collection = :c WHERE doc_id = :d"), {"c": collection, "d": doc})
    return doc


def _who_in_tumaco(engine, **kw):
    return {r["subject"] for r in query_claims(engine, predicate="present_in", obj=TUMACO, **kw)}


def test_what_radar_knew_on_1_nov_about_tumaco_2023(pengine, config):
    _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, eln="VERDADERO")
    run_precomputes(pengine, config)
    first = materialize_claims(pengine, now=at("2026-10-15"))
    assert first["by_predicate"]["present_in"] == 1
    # a second source, recorded after 1 Nov, adds the EMC for the same year
    _presence_doc(pengine, "radar/territorial/data/informe_presencia_2023.csv", 2, emc="VERDADERO", eln="VERDADERO")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-20"))

    in_2023 = dt.date(2023, 6, 30)
    assert _who_in_tumaco(pengine, valid_at=in_2023, as_of=dt.date(2026, 11, 1)) == {"entity:eln"}
    assert _who_in_tumaco(pengine, valid_at=in_2023) == {"entity:eln", "entity:emc"}
    assert _who_in_tumaco(pengine, valid_at=dt.date(2022, 6, 30)) == set()  # valid time: 2023 only
    assert _who_in_tumaco(pengine, valid_at=in_2023, as_of=dt.date(2026, 10, 1)) == set()  # not yet known

    (eln,) = query_claims(pengine, subject="entity:eln", obj=TUMACO)
    assert (eln["valid_from"], eln["valid_to"]) == (dt.date(2023, 1, 1), dt.date(2023, 12, 31))
    assert eln["status"] == "asserted" and eln["n_supporting"] == 2 and len(eln["evidence"]) == 2
    # the ELN claim changed (a second supporting passage): the old version is closed, not deleted
    hist = claim_history(pengine, eln["claim_id"])
    assert [h["superseded_at"] is None for h in hist] == [False, True]
    assert hist[0]["superseded_at"] == at("2026-11-20") and len(hist[0]["evidence"]) == 1


def test_correction_recorded_today_changes_a_validity_that_started_yesterday(pengine, config):
    today = dt.datetime.now(dt.UTC).date()
    yesterday = today - dt.timedelta(days=1)
    doc = _presence_doc(pengine, f"radar/territorial/data/presencia_{yesterday.isoformat()}.csv", 1, eln="VERDADERO")
    run_precomputes(pengine, config)
    t1 = dt.datetime.combine(yesterday, dt.time(9), tzinfo=dt.UTC)
    materialize_claims(pengine, now=t1)
    (old,) = query_claims(pengine, obj=TUMACO)
    assert old["valid_from"] == yesterday

    # today the source is corrected: the record is dated today, not yesterday
    new_path = f"radar/territorial/data/presencia_{today.isoformat()}.csv"
    with pengine.begin() as conn:
        conn.execute(
            sa.text("UPDATE documents SET primary_path = :p, source_paths = CAST(:j AS jsonb) WHERE doc_id = :d"),
            {"p": new_path, "j": f'["{new_path}"]', "d": doc},
        )
    run_precomputes(pengine, config)
    t2 = dt.datetime.now(dt.UTC)
    out = materialize_claims(pengine, now=t2)
    assert out["write"]["inserted"] == 1 and out["write"]["superseded"] == 1

    # what Radar knew yesterday about yesterday: the presence held
    assert _who_in_tumaco(pengine, valid_at=yesterday, as_of=yesterday) == {"entity:eln"}
    # what Radar knows today about yesterday: nothing held; the old claim is superseded by the new one
    assert _who_in_tumaco(pengine, valid_at=yesterday) == set()
    (tomb,) = query_claims(pengine, obj=TUMACO, valid_at=yesterday, include_superseded=True)
    (new,) = query_claims(pengine, obj=TUMACO, valid_at=today)
    assert tomb["status"] == "superseded" and tomb["superseded_by"] == new["claim_id"] != old["claim_id"]
    assert new["valid_from"] == today and new["status"] == "asserted"
    hist = claim_history(pengine, old["claim_id"])
    assert [h["status"] for h in hist] == ["asserted", "superseded"] and hist[0]["superseded_at"] == t2
    assert check_single_current(pengine)["ok"]


def test_a_claim_with_supporting_and_contradicting_evidence(pengine, config):
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
    (c,) = query_claims(pengine, subject="entity:eln", obj=TUMACO, valid_at=dt.date(2023, 5, 1))
    assert c["status"] == "contested" and (c["n_supporting"], c["n_contradicting"]) == (1, 1)
    sides = {e["stance"]: e for e in c["evidence"]}
    assert sides["supports"]["doc_id"] == sup and "au_eln: VERDADERO" in sides["supports"]["span"]
    assert sides["contradicts"]["doc_id"] == con and "au_eln: FALSO" in sides["contradicts"]["span"]
    # source authority first: the curated dataset (2) outranks an unlisted report (1)
    assert (c["prevailing_stance"], c["policy"]) == ("contradicts", "authority")
    # a caller restricted to the report's collection sees the claim with its side only
    (scoped,) = query_claims(pengine, subject="entity:eln", obj=TUMACO, scope=AccessScope.of(["radar"], "k1"))
    assert [e["stance"] for e in scoped["evidence"]] == ["supports"]
    assert query_claims(pengine, subject="entity:eln", scope=AccessScope.of(["CSET"], "k2")) == []
    # no claim for the EMC: every record denies it, and a denial alone is not a claim
    assert query_claims(pengine, subject="entity:emc") == []


def test_retracted_evidence_retracts_the_claim_and_keeps_the_trail(pengine, config):
    doc = _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, eln="VERDADERO")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    out = materialize_claims(
        pengine, retracted={doc: RetractionInfo(doc, "fuente falsa", at("2026-11-02"), "ana")}, now=at("2026-11-02")
    )
    assert out["by_status"] == {"retracted": 1} and out["write"]["changed"] == 1
    assert query_claims(pengine, obj=TUMACO, status=["asserted", "contested"]) == []
    (c,) = query_claims(pengine, obj=TUMACO)
    assert c["status"] == "retracted" and c["evidence"][0]["retracted"] and c["n_supporting"] == 0
    (before,) = query_claims(pengine, obj=TUMACO, as_of=at("2026-11-01", 18))
    assert before["status"] == "asserted"


def test_rematerializing_is_idempotent_append_only_and_checked(pengine, config):
    add_document(pengine, "codefest/F3/F3-ALERTAS-045.txt", [ALERT])
    _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, eln="VERDADERO")
    add_document(
        pengine,
        "radar/space_security/report_2021-03-04.pdf",
        ["Starlink satellites passed near the station."],
        phenomenon="space_security",
        language="en",
    )
    run_precomputes(pengine, config)
    first = materialize_claims(pengine, now=at("2026-11-01"))
    assert set(first["by_predicate"]) >= {"present_in", "figures_in_phenomenon"}
    again = materialize_claims(pengine, now=at("2026-11-02"))
    assert again["write"]["unchanged"] == first["claims"] and again["write"]["inserted"] == 0
    ev = check_evidence(pengine)
    assert ev["ok"] and ev["claims"] == first["claims"] and ev["evidence_rows"] >= first["claims"]
    assert check_single_current(pengine)["ok"]
    assert provenance_coverage(pengine)["coverage"] == 1.0
    (st,) = query_claims(pengine, subject="entity:starlink")
    assert st["object"] == "phenomenon:space_security" and st["valid_from"] == dt.date(2021, 1, 1)
    assert st["evidence"][0]["span"] == "Starlink satellites passed near the station."
    # a span that no longer matches its passage is caught by the check
    with pengine.begin() as conn:
        conn.execute(sa.text("UPDATE claim_evidence SET span = 'otra cosa' WHERE claim_id = :c"), {"c": st["claim_id"]})
    bad = check_evidence(pengine)
    assert not bad["ok"] and bad["evidence_span_mismatch"] == 1


def test_evidence_in_closed_passages_resolves_from_history(pengine, config):
    """Issue 13: evidence ids must resolve "current or superseded". A real retraction moves the
    source's passages into chunks_history; the claim's current ``retracted`` version and its earlier
    ``asserted`` version both cite them. The blocking evidence check and the provenance coverage
    resolve them there, while a current asserted claim citing a closed passage is still caught."""
    from radar_pipeline import history
    from radar_pipeline.claims.links import retractions

    doc = _presence_doc(pengine, "radar/territorial/data/presencia_2023.csv", 1, eln="VERDADERO")
    run_precomputes(pengine, config)
    materialize_claims(pengine, now=at("2026-11-01"))
    history.retract_document(pengine, doc, "fuente falsa", "ana")
    with pengine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM chunks WHERE doc_id = :d"), {"d": doc}).scalar() == 0
    out = materialize_claims(pengine, retracted=retractions(pengine), now=at("2026-11-02"))
    assert out["write"]["retracted"] == 1  # its passages are gone: a retracted tombstone version
    ev = check_evidence(pengine)
    assert ev["ok"] and ev["claims"] == 1 and ev["evidence_chunk_missing"] == 0, ev
    assert check_evidence(pengine, current_only=False)["ok"]
    cov = provenance_coverage(pengine)
    assert cov["claim_versions"] == 2 and cov["coverage"] == 1.0, cov
    # the same evidence on a claim that still asserts something: it must cite current passages
    with pengine.begin() as conn:
        conn.execute(sa.text("UPDATE claims SET status = 'asserted' WHERE superseded_at IS NULL"))
    bad = check_evidence(pengine)
    assert not bad["ok"] and bad["evidence_chunk_missing"] == 1
