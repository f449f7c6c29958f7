"""Which past answers a materialization left stale, per kind of closing (issue 25 §2), on the real
knowledge-base stages over three Codefest mini-corpus files: new bytes at a path (the same text
served under a new id, or another text), a removed file, a re-chunk; a replacement itself replaced
(the chain is followed to today's version); a passage current again (the mark is cleared, kept)."""

from __future__ import annotations

import datetime as dt
import shutil
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from radar_pipeline.agent.staleness import (
    answer_validity,
    ensure_staleness_schema,
    find_stale_citations,
    flag_stale_answers,
    stale_counts,
)
from radar_pipeline.agent.trace import agent_runs
from radar_pipeline.ingest import OcrSettings
from radar_pipeline.stages import chunk_documents, extract_documents, sync_source_files

FILES = ("F1-CSET-005.txt", "F1-ATLCOUNCIL-009.txt", "F3-RESDAL-094.txt")


def _run(engine, root: Path, budget: int = 120) -> None:
    sync_source_files(engine, root)
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine, budget=budget)


@pytest.fixture()
def corpus(engine, tmp_path, shared_dir) -> Path:
    ensure_staleness_schema(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM agent_runs"))
        conn.execute(sa.text("DELETE FROM answer_stale_citations"))
    root = tmp_path / "corpus"
    root.mkdir()
    for name in FILES:
        shutil.copy(shared_dir / "eval" / "codefest_mini_corpus" / name, root / name)
        (root / name).chmod(0o644)
    _run(engine, root)
    return root


def _chunks(engine, path: str) -> list[tuple[str, str, str, str]]:
    """``(doc_id, chunk_id, text, text_sha)`` of the current passages of ``path``, in order."""
    with engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                sa.text(
                    "SELECT c.doc_id, c.chunk_id, c.text, c.text_sha FROM chunks c JOIN documents d USING (doc_id) "
                    "WHERE d.primary_path = :p ORDER BY c.seq"
                ),
                {"p": path},
            )
        ]


def _answer(engine, cited: list[tuple[str, str, str, str]]) -> str:
    """Store an answer as the trace does (``agent_runs``): ``response.citas`` numbered in order and
    ``provenance.passages`` with the SHA-256 of each cited text."""
    run_id = uuid.uuid4().hex
    citas = [
        {"n": i, "doc_id": d, "chunk_id": c, "fuente": "x", "titulo": None, "pagina": None}
        for i, (d, c, _, _) in enumerate(cited, 1)
    ]
    passages = [{"doc_id": d, "chunk_id": c, "sha256": s, "cited": True} for d, c, _, s in cited]
    with engine.begin() as conn:
        conn.execute(
            agent_runs.insert().values(
                run_id=run_id, pregunta="¿Qué dicen?", estado="respondida", ruta="text", modo="offline",
                started_at=dt.datetime.now(dt.UTC), latency_ms=1.0, model_calls=0, tool_calls=1,
                tokens_input=0, tokens_output=0, response={"respuesta": "…", "citas": citas},
                provenance={"passages": passages},
            )
        )  # fmt: skip
    return run_id


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _word_of(text: str, whole: str) -> str:
    """The longest alphabetic word of ``text`` found once in ``whole`` (so the edit lands there)."""
    return max((w for w in text.split() if w.isalpha() and whole.count(w) == 1), key=len)


def test_each_kind_of_closing_marks_the_citation_with_why_and_what_replaced_it(engine, corpus):
    a, b, c = (_chunks(engine, f) for f in FILES)
    assert len(a) >= 3 and len(c) >= 2
    stale_run = _answer(engine, [a[0], a[1], b[0], c[0]])
    fresh_run = _answer(engine, [c[0], c[1]])
    assert flag_stale_answers(engine, detected_by="test")["stale_answers"] == 0

    # A: one word of its second passage changes (new bytes: every passage closed, the first served
    # again with the same text); B: removed
    whole = (corpus / FILES[0]).read_text(encoding="utf-8")
    word = _word_of(a[1][2], whole)
    _edit(corpus / FILES[0], word, word.upper() + " (corregido)")
    (corpus / FILES[1]).unlink()
    _run(engine, corpus)
    a2 = _chunks(engine, FILES[0])
    st = flag_stale_answers(engine, detected_by="dagster:first")
    assert (st["stale_answers"], st["stale_citations"], st["flagged"]) == (1, 3, 3)
    assert st["by_reason"] == {"superseded": 3} and st["text_changed"] == 1
    v = answer_validity(engine, stale_run)
    assert v["estado"] == "desactualizada"
    by = {x["chunk_id"]: x for x in v["citas_no_vigentes"]}
    assert set(by) == {a[0][1], a[1][1], b[0][1]}
    same, changed, removed = by[a[0][1]], by[a[1][1]], by[b[0][1]]
    assert same["n"] == 1 and same["supersede_reason"] == "source_changed" and same["superseded_by"] == a2[0][0]
    assert same["reemplazo"] == {"chunk_id": a2[0][1], "doc_id": a2[0][0], "texto_cambiado": False}
    assert changed["n"] == 2 and changed["reemplazo"]["texto_cambiado"] is True
    assert changed["reemplazo"]["doc_id"] == a2[0][0]
    assert removed["n"] == 3 and removed["supersede_reason"] == "source_removed" and removed["reemplazo"] is None
    assert all(x["motivo"] == "superseded" and x["detectado_por"] == "dagster:first" for x in by.values())
    assert answer_validity(engine, fresh_run) == {"estado": "vigente", "citas_no_vigentes": []}

    # A again (another passage's word): the first answer's replacements were themselves replaced;
    # the chain is followed to today's version, and the marks say so (cleared and re-inserted)
    whole = (corpus / FILES[0]).read_text(encoding="utf-8")
    _edit(corpus / FILES[0], _word_of(a2[2][2], whole), "PALABRA")
    _run(engine, corpus)
    a3 = _chunks(engine, FILES[0])
    assert a3[0][0] != a2[0][0]
    st = flag_stale_answers(engine, detected_by="dagster:second")
    assert (st["flagged"], st["updated"], st["cleared"], st["stale_citations"]) == (0, 2, 0, 3)
    by = {x["chunk_id"]: x for x in answer_validity(engine, stale_run)["citas_no_vigentes"]}
    assert by[a[0][1]]["reemplazo"] == {"chunk_id": a3[0][1], "doc_id": a3[0][0], "texto_cambiado": False}
    assert by[a[0][1]]["superseded_by"] == a2[0][0]  # what closed the cited passage, then
    assert by[a[0][1]]["detectado_por"] == "dagster:second" and by[b[0][1]]["detectado_por"] == "dagster:first"
    with engine.connect() as conn:
        kept = conn.execute(
            sa.text("SELECT count(*) FROM answer_stale_citations WHERE cleared_at IS NOT NULL")
        ).scalar()
    assert kept == 2  # the earlier marks stay, closed
    assert stale_counts(engine)["stale_answers"] == 1


def test_a_rechunk_marks_the_changed_passages_and_the_marks_clear_when_they_return(engine, corpus):
    doc = _chunks(engine, FILES[2])
    run_id = _answer(engine, doc)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE documents SET chunker_version = NULL WHERE doc_id = :d"), {"d": doc[0][0]})
    chunk_documents(engine, budget=60)  # another chunker setting: most passages change
    after = {c for _, c, _, _ in _chunks(engine, FILES[2])}
    closed = [x for x in doc if x[1] not in after]
    assert closed
    st = flag_stale_answers(engine, detected_by="dagster:rechunk")
    assert st["stale_citations"] == st["flagged"] == len(closed)
    v = answer_validity(engine, run_id)
    assert [x["chunk_id"] for x in v["citas_no_vigentes"]] == [x[1] for x in closed]
    for x in v["citas_no_vigentes"]:
        assert x["supersede_reason"] == "extractor_changed" and x["superseded_by"] == doc[0][0]
        assert x["reemplazo"]["doc_id"] == doc[0][0] and x["reemplazo"]["chunk_id"] in after
    # back to the first setting: the original ids are current again, the marks are cleared (kept)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE documents SET chunker_version = NULL WHERE doc_id = :d"), {"d": doc[0][0]})
    chunk_documents(engine, budget=120)
    st = flag_stale_answers(engine, detected_by="dagster:back")
    assert (st["stale_citations"], st["cleared"]) == (0, len(closed))
    assert answer_validity(engine, run_id)["estado"] == "vigente"
    assert find_stale_citations(engine, run_id) == []
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM answer_stale_citations")).scalar() == len(closed)


def test_bad_input_and_an_empty_home(engine, corpus):
    with pytest.raises(ValueError, match="detected_by"):
        flag_stale_answers(engine, detected_by="  ")
    assert answer_validity(engine, "0" * 32) == {"estado": "vigente", "citas_no_vigentes": []}
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE answer_stale_citations"))
    assert stale_counts(engine) == {"stale_answers": 0, "stale_citations": 0, "by_reason": {}, "examples": []}
    assert answer_validity(engine, "0" * 32)["estado"] == "vigente"
    ensure_staleness_schema(engine)
