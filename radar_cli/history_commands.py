"""``radar retract``, ``radar impact`` and ``radar replay``: the knowledge base's history from the
command line (``radar_pipeline.history`` and ``radar_pipeline.provenance``). Each function returns a
process exit code: 0 done, 1 refused or not found, 2 no database."""

from __future__ import annotations

import getpass
import json
import sys

from radar_pipeline.config import get_settings


def _engine():
    """The engine of ``DATABASE_URL`` or the embedded server, schema ensured (an existing install
    gains the history tables here); None when PostgreSQL cannot be reached."""
    from radar_pipeline import db

    settings = get_settings()
    try:
        engine = db.create_engine(db.resolve_database_url(settings.database_url, settings.pgdata))
        db.ensure_schema(engine)
    except Exception as exc:  # noqa: BLE001 - reported as the exit code the caller documents
        print(f"error: PostgreSQL is not available: {exc}", file=sys.stderr)
        return None
    return engine


def rebuild_index(engine, log=print) -> dict:
    """Re-materialize the configured encoder's FAISS index, passage table, BM25 index and re-ranker
    vectors from the current passages (after a retraction), as the ``faiss_index``, ``bm25_index``
    and ``rerank_vectors`` assets do, without encoding anything new. Returns their stats."""
    from radar_pipeline.config import EncoderSpec
    from radar_pipeline.encoders import build_encoder, build_reranker
    from radar_pipeline.retrieval.search import retrieval_fingerprint_config
    from radar_pipeline.stages import build_bm25_index, build_faiss_index, export_rerank_vectors

    enc = build_encoder(EncoderSpec())
    index_dir = get_settings().index_dir / enc.name
    out = {
        "faiss_index": build_faiss_index(
            engine, enc.name, index_dir, log, encoder_version=enc.version, retrieval=retrieval_fingerprint_config()
        )
    }
    out["bm25_index"] = build_bm25_index(index_dir, log)
    rr = build_reranker()
    if rr is not None:
        out["rerank_vectors"] = export_rerank_vectors(engine, rr.name, index_dir, log)
    return out


def retract(doc_id: str, reason: str, by: str | None, rebuild: bool, resume: bool = False) -> int:
    """Retract ``doc_id`` (``history.retract_document``), then re-materialize the derived tables
    (``propagate_retraction``) and, with ``rebuild``, the index. ``resume``: the document is already
    retracted (an earlier propagation failed): only propagate."""
    from radar_pipeline import history
    from radar_pipeline.config import StorageSettings
    from radar_pipeline.precompute.pipeline import PrecomputeConfig, propagate_retraction

    engine = _engine()
    if engine is None:
        return 2
    doc_id = doc_id.strip().lower()
    if resume:
        if doc_id not in history.retracted_doc_ids(engine):
            print(f"error: {doc_id} is not retracted", file=sys.stderr)
            return 1
        out = {"doc_id": doc_id}
    else:
        try:
            out = history.retract_document(engine, doc_id, reason, by or f"cli:{getpass.getuser()}")
        except history.RetractionError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    print(json.dumps(out, ensure_ascii=False, default=str))
    cfg = PrecomputeConfig(shared_dir=StorageSettings().shared_dir)
    prop = propagate_retraction(engine, cfg, [doc_id], log=lambda m: print(m, file=sys.stderr))
    print(json.dumps({"propagated": prop}, ensure_ascii=False, default=str))
    if rebuild:
        idx = rebuild_index(engine, log=lambda m: print(m, file=sys.stderr))
        print(json.dumps({"index": {k: v.get("rows") for k, v in idx.items()}}, ensure_ascii=False))
    else:
        print("index not rebuilt: materialize faiss_index+ before serving it again", file=sys.stderr)
    return 0


def impact(target: str, as_json: bool) -> int:
    """Print what depends on ``target`` (a doc_id or a corpus path; ``provenance.impact``)."""
    from radar_pipeline.provenance import UnknownSource
    from radar_pipeline.provenance import impact as _impact

    engine = _engine()
    if engine is None:
        return 2
    try:
        out = _impact(engine, target, get_settings().corpus)
    except UnknownSource as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(out, ensure_ascii=False, indent=1, default=str))
        return 0
    for d, info in out["documents"].items():
        extra = f" → {info['superseded_by']}" if info["superseded_by"] else ""
        why = f" ({info['supersede_reason']}{extra})" if info["supersede_reason"] else ""
        print(f"documento {d}  {info['estado']}{why}  {info['primary_path']}")
        if info["retraction"]:
            r = info["retraction"]
            print(f"  retractado por {r['retracted_by']} el {r['retracted_at']}: {r['reason']}")
    ch = out["chunks"]
    print(f"pasajes: {len(ch['current'])} vigentes, {len(ch['closed'])} cerrados")
    if ch["text_changed"]:
        more = f" (+{len(ch['text_changed']) - 10})" if len(ch["text_changed"]) > 10 else ""
        print(f"  con texto cambiado ({len(ch['text_changed'])}): {', '.join(ch['text_changed'][:10])}{more}")
    if ch["same_text_now"]:
        print(f"  cerrados con el mismo texto vigente bajo otro id: {len(ch['same_text_now'])}")
    for table, v in out["derived"].items():
        cur = v["current"] if isinstance(v["current"], int) else len(v["current"])
        if cur or v["closed"]:
            print(f"  {table}: {cur} vigentes, {v['closed']} cerrados")
    print(f"respuestas que lo leyeron o citaron: {len(out['answers'])}")
    for a in out["answers"]:
        stale = ", ".join(
            f"{c} ({s['estado']}{', texto cambiado' if s.get('texto_cambiado') else ''})"
            for c, s in a["citas_no_vigentes"].items()
        )
        print(
            f"  {a['run_id']}  {a['started_at']}  {a['pregunta'][:80]!r}"
            + (f"  citas no vigentes: {stale}" if stale else "")
        )
    print("afirmaciones: " + ("(aún no existen en esta instalación)" if out["claims"] is None else str(out["claims"])))
    return 0


def replay(run_id: str, as_json: bool) -> int:
    """Re-run a past answer's retrieval against today's index (``provenance.replay``)."""
    from radar_pipeline.agent.service import AgentService
    from radar_pipeline.provenance import replay as _replay
    from radar_pipeline.retrieval.service import IndexUnavailable

    engine = _engine()
    if engine is None:
        return 2
    service = AgentService(engine=engine)
    try:
        out = _replay(engine, run_id, service.corpus())
    except IndexUnavailable as exc:
        print(f"error: no index to replay against: {exc}", file=sys.stderr)
        return 2
    except (LookupError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(out, ensure_ascii=False, indent=1, default=str))
        return 0
    print(f"run {out['run_id']}: {out['pregunta'][:100]!r}")
    same = "el mismo índice" if out["same_index"] else "otro índice"
    print(f"índice entonces {out['index_version_then']}, hoy {out['index_version_now']} ({same})")
    for p in out["passages"]:
        rank = f"rango {p['rank_then']} → {p['rank_now']}"
        print(f"  {p['chunk_id']}  {p['estado']:<7} {rank}" + (f"  {p['why']}" if p["why"] else ""))
    s = out["summary"]
    print(f"{s['same']} iguales, {s['changed']} cambiados, {s['gone']} desaparecidos")
    return 0
