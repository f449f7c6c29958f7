"""A reviewer's decision changes what Radar counts, through Dagster automation, and undoing it gives
the earlier figures back exactly (issue 25 §1), on the real test PostgreSQL.

Crafted passages name "Mosquera" (a municipality of Cundinamarca and one of Nariño: the gazetteer
leaves it ``unresolved``, a review item) and the ELN. The precomputes, claims and alias decisions
are materialized by Dagster into an instance; then, as the daemon would: a reviewer decides, the
``review_sensor`` records the decision as a materialization of ``reviewer_decisions`` (who, when),
the automation conditions request the mentions, then what reads them, and those runs happen. The
place map (``agg_documents_per_place``), the mention rows, the entity aggregates and the claims
change; the decisions are undone; the same loop gives back every current row as it was."""

from __future__ import annotations

import dagster as dg
import pytest
import sqlalchemy as sa

from assets import claims as claim_assets
from assets import precompute
from assets.automation import review_sensor
from assets.definitions import defs
from radar_pipeline.claims import resolution as ER
from radar_pipeline.corpus import CONTENT_BUCKETS
from radar_pipeline.precompute import tables as T
from resources import DatabaseResource, PrecomputeResource
from tests.radar_pipeline.precompute.support_precompute import add_document

pytestmark = pytest.mark.slow  # five rounds of Dagster runs over the precompute and claims assets (~60 s)

RECORD = (
    "capa: au_compilado_R02\nfid: 1\nb_ADM2_PCODE: CO52835\nb_ADM1_PCODE: CO52\nau_country: Colombia\n"
    "au_level1: Nariño\nau_level2: San Andrés de Tumaco\nau_emc: FALSO\nau_eln: VERDADERO\nau_no_info: FALSO"
)
DOCS = {
    "codefest/F3/F3-INFORME-101.txt": ["Se reportaron amenazas del ELN contra líderes sociales en Mosquera en 2023."],
    "codefest/F3/F3-INFORME-102.txt": ["En 2023 el ELN instaló retenes en la vía que lleva a Mosquera."],
    "codefest/F3/F3-ALERTAS-045.txt": [
        "Alerta Temprana de Inminencia No. 045-23 para el municipio de Tumaco, Nariño. El ELN disputa el territorio."
    ],
}
PRECOMPUTE = ["entity_dictionary", "place_gazetteer", "entity_mentions", "place_mentions", "publication_dates"]
PRECOMPUTE += ["early_warnings", "armed_presence"]
AGGREGATES = [n for n in T.VERSIONED_TABLES if n.startswith("agg_")]
SUBSET = {*PRECOMPUTE, *AGGREGATES, "claims", "alias_decisions"}
NARINO = "municipality:52473"  # Mosquera, Nariño


def _assets():
    pre = [a for a in dg.load_assets_from_modules([precompute]) if set(a.keys) & {dg.AssetKey(k) for k in SUBSET}]
    return [
        *pre,
        claim_assets.claims,
        claim_assets.alias_decisions,
        *precompute.precompute_checks,
        *claim_assets.claims_checks,
    ]


def _resources(pg_url, shared_dir, tmp_path) -> dict:
    return {
        "database": DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused")),
        "precompute": PrecomputeResource(shared_dir=str(shared_dir), workers=1),
    }


def _materialize(instance, resources, selection) -> dg.ExecuteInProcessResult:
    result = dg.materialize(_assets(), resources=resources, selection=sorted(selection), instance=instance)
    assert result.success
    failed = [e.check_name for e in result.get_asset_check_evaluations() if not e.passed]
    assert failed == [] and result.get_asset_check_evaluations()  # every contract holds on the reviewed rows
    return result


def _requested(result) -> set[str]:
    return {r.key.to_user_string() for r in result.results if r.true_subset.size}


def _follow(instance, resources, cursor, pg_url, tmp_path, sensor: dict) -> tuple[str | None, list[set[str]], dict]:
    """What the daemon does after a reviewer acts: one review_sensor tick (its asset event recorded),
    then automation ticks, each run's requested assets materialized, until nothing more is requested.
    Returns the automation cursor, the assets of each run and the mentions' materialization metadata."""
    db = DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused"))
    with dg.build_sensor_context(instance=instance, cursor=sensor.get("cursor")) as ctx:
        tick = review_sensor(ctx, database=db)
    assert tick.asset_events, tick.skip_reason
    for ev in tick.asset_events:
        instance.report_runless_asset_event(ev)
    sensor["cursor"] = tick.cursor
    runs, mention_meta, claims_meta = [], {}, {}
    for _ in range(6):
        ev = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
        cursor = ev.cursor
        todo = _requested(ev) & SUBSET
        if not todo:
            break
        runs.append(todo)
        result = _materialize(instance, resources, todo)
        for m in result.asset_materializations_for_node("mentions"):
            if m.asset_key.to_user_string() == "place_mentions":
                mention_meta = {k: v.value for k, v in m.metadata.items()}
        for m in result.asset_materializations_for_node("claims"):
            claims_meta = {k: v.value for k, v in m.metadata.items()}
    return cursor, runs, {"event": tick.asset_events[0], "mentions": mention_meta, "claims": claims_meta}


def _figures(engine) -> dict:
    """Every current precompute row (by content hash), and the current claims."""
    out = {}
    with engine.connect() as conn:
        for t in ["entity_mentions", "place_mentions", *AGGREGATES, "early_warnings", "armed_presence"]:
            out[t] = sorted(conn.execute(sa.text(f"SELECT row_hash FROM {t} WHERE valid_to IS NULL")).scalars())
        out["claims"] = sorted(
            tuple(r)
            for r in conn.execute(
                sa.text(
                    "SELECT claim_id, status, statement, n_supporting, n_contradicting FROM claims "
                    "WHERE superseded_at IS NULL"
                )
            )
        )
    return out


def _place_docs(engine, place_id: str) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(
                sa.text(
                    "SELECT coalesce(sum(n_documents), 0) FROM agg_documents_per_place "
                    "WHERE valid_to IS NULL AND place_id = :p AND phenomenon = 'all'"
                ),
                {"p": place_id},
            ).scalar()
        )


def test_a_decision_reshapes_the_figures_and_its_undo_restores_them(engine, pg_url, shared_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RADAR_REPORTS_DIR", str(tmp_path / "reports"))
    T.drop_precompute_schema(engine)
    add_document(engine, "radar/territorial/data/presencia_2023.csv", [RECORD], is_tabular=True)
    for path, chunks in DOCS.items():
        add_document(engine, path, chunks)
    resources = _resources(pg_url, shared_dir, tmp_path)
    with dg.instance_for_test() as instance:
        # the knowledge base exists (as a corpus run leaves it); the precomputes and claims are built
        for key in ("documents", "pages", "chunks"):
            for p in CONTENT_BUCKETS:
                instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=key, partition=p))
        _materialize(instance, resources, SUBSET)
        cursor = dg.evaluate_automation_conditions(defs=defs, instance=instance).cursor
        assert not _requested(dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)) & SUBSET
        before = _figures(engine)
        sensor: dict = {}
        assert _place_docs(engine, NARINO) == 0
        (item,) = [i for i in ER.review_items(engine, kind="place") if i["alias"] == "Mosquera"]
        assert NARINO in item["candidates"] and len(item["candidates"]) == 2
        (eln,) = [
            d
            for d in ER.current_decisions(engine, alias="ELN", kind="group")
            if d["candidate_a"] == "entity:eln" and d["decision"] == "same"
        ]

        # 1. the reviewer resolves "Mosquera" to Nariño's: both documents now count there
        row = ER.decide(engine, item["decision_key"], "same", by="ana.lopez", target=NARINO, note="contexto: Nariño")
        cursor, runs, seen = _follow(instance, resources, cursor, pg_url, tmp_path, sensor)
        # one automation tick requests the mentions and, with them, everything downstream (eager)
        assert {"entity_mentions", "place_mentions", "agg_documents_per_place", "claims", "alias_decisions"} <= runs[0]
        assert seen["event"].metadata["decided_by"].value == "ana.lopez"
        assert seen["event"].metadata["decided_at"].value == row["decided_at"].isoformat()
        review = seen["mentions"]["reviewer_decisions"]
        assert review["place_rows_resolved"] == 2 and review["documents_rematched"] == 2
        assert review["decisions"] == [
            {
                "key": item["decision_key"],
                "decision": "same",
                "target": NARINO,
                "by": "ana.lopez",
                "at": row["decided_at"].isoformat(),
            }
        ]
        assert _place_docs(engine, NARINO) == 2
        assert [d["by"] for d in seen["claims"]["reviewer_decisions"]] == ["ana.lopez"]  # the claims' lineage too
        with engine.connect() as conn:
            resolved = conn.execute(
                sa.text(
                    "SELECT m.resolution, r.inputs->'reviewer_decisions'->0->>'by' FROM place_mentions m "
                    "JOIN precompute_runs r USING (run_id) WHERE m.valid_to IS NULL AND m.matched = 'Mosquera'"
                )
            ).all()
        assert sorted(resolved) == [("reviewer", "ana.lopez")] * 2  # the rows' lineage names the reviewer
        after_place = _figures(engine)
        assert after_place["place_mentions"] != before["place_mentions"]
        assert after_place["agg_documents_per_place"] != before["agg_documents_per_place"]
        assert after_place["entity_mentions"] == before["entity_mentions"]  # only what the decision concerns

        # 2. another reviewer decides "ELN" in these passages is not the group: its mentions, the
        # entity aggregates and the claims built on them change
        ER.decide(engine, eln["decision_key"], "different", by="bruno.diaz")
        cursor, runs, seen = _follow(instance, resources, cursor, pg_url, tmp_path, sensor)
        assert seen["mentions"]["reviewer_decisions"]["entity_rows_not_counted"] >= 3
        after_both = _figures(engine)
        assert len(after_both["entity_mentions"]) < len(before["entity_mentions"])
        assert after_both["agg_entity_heatmap"] != before["agg_entity_heatmap"]
        assert after_both["claims"] != before["claims"]
        assert after_both["place_mentions"] == after_place["place_mentions"]

        # 3. both decisions undone: every current row and claim is as before
        ER.undo(engine, eln["decision_key"], by="bruno.diaz")
        out = ER.undo(engine, item["decision_key"], by="ana.lopez")
        assert out["restored"]["decision"] == "unresolved" and out["restored"]["signal"] == "context_rule"
        cursor, runs, seen = _follow(instance, resources, cursor, pg_url, tmp_path, sensor)
        assert seen["event"].metadata["latest_change"].value["event"] == "undo"
        assert seen["mentions"]["reviewer_decisions"]["in_force"] == 0
        assert seen["claims"]["reviewer_decisions"] == []
        assert _figures(engine) == before
        assert _place_docs(engine, NARINO) == 0
        assert [i["decision_key"] for i in ER.review_items(engine, kind="place") if i["alias"] == "Mosquera"] == [
            item["decision_key"]
        ]  # open again
        # nothing more to do: the loop is closed
        assert not _requested(dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)) & SUBSET


def test_the_review_sensor_records_each_change_once(engine, pg_url, tmp_path):
    """No reviewer yet: nothing recorded; a decision, then an undo: one event each, with who and
    when; an evaluation with nothing new: skipped."""
    db = DatabaseResource(database_url=pg_url, pgdata=str(tmp_path / "unused"))
    decision = ER.unresolved_place_decisions(
        [
            {
                "matched": "Barbosa",
                "candidates": ["municipality:05079", "municipality:68077"],
                "doc_id": "d",
                "chunk_id": "d-0",
            }
        ]
    )
    ER.write_decisions(engine, decision)
    key = decision[0].decision_key

    def tick(cursor):
        with dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral(), cursor=cursor) as ctx:
            return review_sensor(ctx, database=db)

    first = tick(None)
    assert not first.asset_events and first.skip_reason
    row = ER.decide(engine, key, "same", by="ana.lopez", target="municipality:68077")
    decided = tick(first.cursor)
    (ev,) = decided.asset_events
    change = ev.metadata["latest_change"].value
    assert change == {
        "event": "decision",
        "key": key,
        "alias": "Barbosa",
        "decision": "same",
        "target": "municipality:68077",
        "by": "ana.lopez",
        "at": row["decided_at"].isoformat(),
    }
    assert ev.metadata["in_force"].value == 1
    assert not tick(decided.cursor).asset_events  # nothing new
    ER.undo(engine, key, by="bruno.diaz")
    undone = tick(decided.cursor)
    (ev,) = undone.asset_events
    assert ev.metadata["latest_change"].value["event"] == "undo" and ev.metadata["decided_by"].value == "bruno.diaz"
    assert ev.metadata["in_force"].value == 0
    assert not tick(undone.cursor).asset_events
