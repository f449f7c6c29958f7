"""The spool: trace and audit rows that PostgreSQL could not take are kept on disk and written, in
order, once it answers again (real PostgreSQL; the outage is an engine pointed at a closed port)."""

from __future__ import annotations

import datetime as dt
import socket

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.access import AuditLog
from radar_pipeline.agent.trace import Step, TraceStore
from radar_pipeline.spool import Spool


def _dead_engine() -> sa.Engine:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return sa.create_engine(f"postgresql+psycopg2://postgres@127.0.0.1:{port}/postgres", pool_pre_ping=True)


def _run(run_id: str) -> dict:
    return {
        "run_id": run_id,
        "conversacion_id": "c",
        "pregunta": "¿Qué pasó?",
        "estado": "respondida",
        "ruta": "text",
        "modo": "offline",
        "termination_reason": "respondida",
        "started_at": dt.datetime.now(dt.UTC),
        "latency_ms": 1.0,
        "model_calls": 0,
        "tool_calls": 1,
        "tokens_input": 0,
        "tokens_output": 0,
        "response": {"respuesta": "x"},
    }


def test_spool_keeps_order_and_stops_at_the_first_failure(tmp_path):
    sp = Spool(tmp_path / "s.jsonl")
    for i in range(4):
        sp.add({"i": i})
    seen = []

    def apply(rec):
        if rec["i"] == 2:
            raise RuntimeError("still down")
        seen.append(rec["i"])

    assert sp.drain(apply) == 2 and seen == [0, 1] and sp.pending() == 2
    assert sp.drain(lambda rec: seen.append(rec["i"])) == 2 and seen == [0, 1, 2, 3]
    assert sp.pending() == 0 and not sp.path.exists()


def test_traces_and_audit_rows_survive_an_outage(engine, tmp_path):
    store = TraceStore(engine, spool=Spool(tmp_path / "traces.jsonl"))
    with engine.begin() as conn:  # the session's database may hold these ids from an earlier run
        conn.execute(sa.text("DELETE FROM agent_steps WHERE run_id IN ('r1', 'r2', 'r3')"))
        conn.execute(sa.text("DELETE FROM agent_runs WHERE run_id IN ('r1', 'r2', 'r3')"))
    audit = AuditLog(engine, spool=Spool(tmp_path / "audit.jsonl"))
    live = store.engine
    store.engine = audit.engine = _dead_engine()  # the database goes away
    step = Step(
        step_no=1, turn=1, role="analista", state="retrieve", ms=1.0, tool="search_evidence", arguments={"q": "x"}
    )
    assert store.save(_run("r1"), [step]) is False and store.save(_run("r2"), []) is False
    row = {
        "at": dt.datetime.now(dt.UTC),
        "key_id": None,
        "key_name": None,
        "auth": "open",
        "method": "POST",
        "route": "/chat",
        "status": 200,
        "query": "q",
        "chunk_ids": ["a-1"],
        "run_id": "r1",
        "client": "127.0.0.1",
        "ms": 3.0,
    }
    assert audit.write(row) is False
    assert store.spool.pending() == 2 and audit.spool.pending() == 1
    store.engine = audit.engine = live  # back: the next write replays what was spooled, in order
    assert store.save(_run("r3"), []) is True and audit.write({**row, "run_id": "r3"}) is True
    with engine.connect() as conn:  # (the session's database also holds other tests' traces)
        runs = [
            r[0]
            for r in conn.execute(
                sa.text("SELECT run_id FROM agent_runs WHERE run_id IN ('r1', 'r2', 'r3') ORDER BY run_id")
            )
        ]
        steps = conn.execute(sa.text("SELECT count(*) FROM agent_steps WHERE run_id = 'r1'")).scalar()
        audited = conn.execute(
            sa.select(sa.func.count()).select_from(db.audit_log).where(db.audit_log.c.run_id.in_(["r1", "r3"]))
        ).scalar()
    assert runs == ["r1", "r2", "r3"] and steps == 1 and audited == 2
    assert store.spool.pending() == 0 and audit.spool.pending() == 0


def test_a_trace_stored_and_spooled_at_once_does_not_block_the_spool(engine, tmp_path):
    # PostgreSQL stopping during a commit: the row is stored but the client saw an error and spooled
    # it too. Replaying it must not stop the spool at a duplicate key (every later trace would stay
    # on disk for ever; seen in tests/api/test_faults.py under load).
    spool = Spool(tmp_path / "traces.jsonl")
    store = TraceStore(engine, spool=spool)  # (creates the agent tables)
    with engine.begin() as conn:  # the session's database may hold these ids from an earlier run
        conn.execute(sa.text("DELETE FROM agent_runs WHERE run_id LIKE 'dup-%'"))
    assert store.save(_run("dup-0001"), [])
    spool.add({"run": _run("dup-0001"), "steps": []})  # the same run, spooled as well
    spool.add({"run": _run("dup-0002"), "steps": []})  # a later run that did fail
    assert store.save(_run("dup-0003"), [])
    assert spool.pending() == 0 and not spool.path.exists()
    with engine.connect() as conn:
        ids = {r[0] for r in conn.execute(sa.text("SELECT run_id FROM agent_runs WHERE run_id LIKE 'dup-%'"))}
    assert ids == {"dup-0001", "dup-0002", "dup-0003"}
