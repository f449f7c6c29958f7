"""The knowledge-base stages as plain functions over PostgreSQL (no Dagster here).

Each stage is incremental by content hash: ``documents`` only extracts files whose SHA-256 it
has not extracted with the current extractor version; ``chunks`` only chunks documents whose
chunker version differs; ``embeddings`` only encodes chunks whose text hash has no vector for the
encoder. Each returns a stats dict that the Dagster assets attach as metadata. ``log`` is any
callable taking a string (Dagster's ``context.log.info``, ``print``, a tqdm writer).
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Collection
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures import as_completed
from pathlib import Path

import numpy as np
import polars as pl
import sqlalchemy as sa
from pebble import ProcessPool
from sqlalchemy.dialects.postgresql import insert as pg_insert

from radar_pipeline import db, history
from radar_pipeline.chunking import CHUNKER_VERSION, chunk_pages, text_sha
from radar_pipeline.collection import CollectionManifest, collection_of
from radar_pipeline.config import EncoderSpec
from radar_pipeline.corpus import (
    CONTENT_BUCKETS,
    content_bucket,
    doc_id_for,
    phenomenon_for,
    scan_corpus,
    sha256_file,
)
from radar_pipeline.encoders import Encoder, build_encoder
from radar_pipeline.ingest import EXTRACTOR_VERSION, ExtractedDocument, OcrSettings, extract
from radar_pipeline.ingest.normalize import json_safe
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index, cached_tokens
from radar_pipeline.stores.centroids import compute_centroids, save_centroids
from radar_pipeline.stores.integrity import (
    read_manifest,
    remove_stale_temporaries,
    seal_bm25,
    seal_dense,
    seal_lexical,
    seal_rerank,
    verify_index,
)
from radar_pipeline.stores.passages import PASSAGE_SCHEMA, save_passages

Log = Callable[[str], None]
# Statuses whose pages are chunked and indexed (a damaged/partial file keeps what was readable).
INDEXABLE_STATUSES = ("ok", "partial", "damaged")


def _noop(_: str) -> None:
    pass


def _bucket_set(buckets: Collection[str] | None) -> frozenset[str] | None:
    """``None`` (every content) or the validated set of content buckets a run is limited to."""
    if buckets is None:
        return None
    out = frozenset(buckets)
    bad = out - set(CONTENT_BUCKETS)
    if bad:
        raise ValueError(f"unknown content buckets {sorted(bad)}; expected some of {''.join(CONTENT_BUCKETS)}")
    return out


def _in_buckets(column, buckets: frozenset[str] | None):
    """SQL condition: ``column`` (a doc_id) falls in ``buckets`` (always true for ``None``)."""
    return sa.true() if buckets is None else sa.func.left(column, 1).in_(sorted(buckets))


# --------------------------------------------------------------------------- source_files
def sync_source_files(
    engine: sa.Engine,
    corpus_root: Path,
    log: Log = _noop,
    manifest: CollectionManifest | None = None,
    buckets: Collection[str] | None = None,
) -> dict:
    """Scan ``corpus_root`` into ``source_files`` (insert/update/delete), each file labelled with its
    collection by ``manifest`` (default: ``RADAR_COLLECTIONS_FILE``, else the top-folder rule of
    ``collection.collection_of``). With ``buckets`` (content buckets, ``corpus.CONTENT_BUCKETS``)
    only rows whose content falls in them are written or deleted: a file whose bytes moved to
    another bucket is deleted here and inserted by that bucket's run, in either order. Returns
    counts (of those buckets), by collection too."""
    t0 = time.perf_counter()
    only = _bucket_set(buckets)
    manifest = manifest if manifest is not None else CollectionManifest.from_env()
    with engine.begin() as conn:
        known = {r.path: r._asdict() for r in conn.execute(sa.select(db.source_files))}
    rows = []
    for sf in scan_corpus(corpus_root, known):
        if only is not None and content_bucket(sf.doc_id) not in only:
            continue
        coll, labels = manifest.assign(sf.path)
        rows.append(
            {**sf.as_row(), "collection": coll, "collection_labels": labels, "collection_version": manifest.version}
        )
    seen = {r["path"] for r in rows}
    changed = [r for r in rows if known.get(r["path"], {}).get("sha256") != r["sha256"]]
    mine = {p for p, r in known.items() if only is None or content_bucket(r["doc_id"]) in only}
    removed = sorted(mine - seen)
    with engine.begin() as conn:
        if removed:
            conn.execute(sa.delete(db.source_files).where(db.source_files.c.path.in_(removed)))
        for i in range(0, len(rows), 1000):
            stmt = pg_insert(db.source_files).values(rows[i : i + 1000])
            stmt = stmt.on_conflict_do_update(
                index_elements=["path"], set_={c: stmt.excluded[c] for c in rows[0] if c != "path"}
            )
            conn.execute(stmt)
    scope = "" if only is None else f" in buckets {''.join(sorted(only))}"
    log(f"source_files: {len(rows)} files{scope}, {len(changed)} new or changed, {len(removed)} removed")
    return {
        "files": len(rows),
        "new_or_changed": len(changed),
        "removed": len(removed),
        "bytes": sum(r["size_bytes"] for r in rows),
        "distinct_contents": len({r["sha256"] for r in rows}),
        "by_extension": dict(Counter(r["extension"] or "(none)" for r in rows).most_common()),
        "by_phenomenon": dict(Counter(r["phenomenon"] or "(none)" for r in rows).most_common()),
        "by_collection": dict(Counter(r["collection"] or "(none)" for r in rows).most_common()),
        "collections_version": manifest.version,
        "seconds": round(time.perf_counter() - t0, 3),
    }


def _sync_collections(conn) -> None:
    """Documents take their primary path's collection, chunks their document's (a manifest change
    re-labels rows without re-extracting or re-chunking anything)."""
    conn.execute(
        sa.text(
            "UPDATE documents d SET collection = s.collection FROM source_files s "
            "WHERE s.path = d.primary_path AND d.collection IS DISTINCT FROM s.collection"
        )
    )
    conn.execute(
        sa.text(
            "UPDATE chunks c SET collection = d.collection FROM documents d "
            "WHERE d.doc_id = c.doc_id AND c.collection IS DISTINCT FROM d.collection"
        )
    )


# --------------------------------------------------------------------------- documents + pages
def _extract_one(doc_id: str, path: str, ocr: OcrSettings) -> tuple[str, ExtractedDocument, float]:
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    t0 = time.perf_counter()
    doc = extract(Path(path), ocr=ocr)
    return doc_id, doc, time.perf_counter() - t0


def _document_row(doc_id: str, sha: str, paths: list[str], size: int, doc: ExtractedDocument, seconds: float) -> dict:
    primary = paths[0]
    n_chars = sum(len(p.text) for p in doc.pages)
    return {
        "doc_id": doc_id,
        "sha256": sha,
        "source_paths": paths,
        "primary_path": primary,
        "title": str(doc.metadata.get("title") or Path(primary).stem)[:500],
        "format": doc.format,
        "status": doc.status,
        "reason": doc.reason,
        "encoding": doc.encoding,
        "language": doc.language,
        "phenomenon": phenomenon_for(primary),
        "is_tabular": doc.is_tabular,
        "n_pages": len(doc.pages),
        "n_pages_total": doc.n_pages_total or len(doc.pages),
        "n_ocr_pages": sum(1 for p in doc.pages if "ocr" in p.source),
        "n_chars": n_chars,
        "size_bytes": size,
        "extractor_version": EXTRACTOR_VERSION,
        "extract_seconds": round(seconds, 4),
        "chunker_version": None,
        "metadata": json_safe(doc.metadata),
        "warnings": json_safe(list(doc.warnings)),
    }


def _store_document(engine: sa.Engine, row: dict, doc: ExtractedDocument) -> None:
    """Write one extracted document and its pages. A document already current (same content, new
    extractor) keeps its row's identity: the previous row and pages are closed into history with
    reason ``extractor_changed`` and the row is updated in place, so its chunks stay current until
    ``chunk_documents`` re-chunks it and closes only the passages whose text changed."""
    page_rows = [
        {
            "doc_id": row["doc_id"],
            "page_no": p.page_no,
            "text": p.text,
            "source": p.source,
            "reason": p.reason,
            "ocr_rotation": p.ocr_rotation,
            "status": p.status,
        }
        for p in doc.pages
    ]
    with engine.begin() as conn:
        doc_id = row["doc_id"]
        if history.close_document_row(conn, doc_id, "extractor_changed", doc_id):
            history.close_pages(conn, doc_id, "extractor_changed", doc_id)
            conn.execute(sa.update(db.documents).where(db.documents.c.doc_id == doc_id).values(**row))
        else:
            conn.execute(db.documents.insert(), [row])
        for i in range(0, len(page_rows), 2000):
            conn.execute(db.pages.insert(), page_rows[i : i + 2000])


def _content_at(conn: sa.Connection, corpus_root: Path, paths: Collection[str]) -> dict[str, str]:
    """path → the ``doc_id`` of the content the path holds now: its ``source_files`` row in any
    content bucket, else the file's bytes on disk (a bucket's run may close the old version of a
    changed file before the run of the new version's bucket has recorded the path). A path that
    neither knows is absent (the file was removed)."""
    if not paths:
        return {}
    sf = db.source_files
    out = dict(conn.execute(sa.select(sf.c.path, sf.c.doc_id).where(sf.c.path.in_(sorted(paths)))).all())
    for p in sorted(set(paths) - set(out)):
        f = Path(corpus_root) / p
        if f.is_file():
            out[p] = doc_id_for(sha256_file(f))
    return out


def _displaced(
    engine: sa.Engine, corpus_root: Path, files: list, only: frozenset[str] | None
) -> list[tuple[str, str, str | None]]:
    """``(doc_id, reason, successor)`` for current documents of *other* content buckets whose every
    path holds other content now — a changed file whose new version falls in this run's buckets.
    Closed by this run, so one path never has two current versions while the old version's bucket
    waits for its own run (which then finds nothing to close). Empty for an all-bucket run."""
    if only is None or not files:
        return []
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT doc_id, source_paths FROM documents WHERE left(doc_id, 1) <> ALL(:b) AND EXISTS ("
                "SELECT 1 FROM jsonb_array_elements_text(source_paths) p WHERE p = ANY(:paths))"
            ),
            {"b": sorted(only), "paths": sorted({f.path for f in files})},
        ).all()
        at = _content_at(conn, corpus_root, {p for r in rows for p in r.source_paths})
    out = []
    for r in rows:
        if any(at.get(p) == r.doc_id for p in r.source_paths):
            continue
        successor = next((at[p] for p in r.source_paths if p in at), None)
        out.append((r.doc_id, "source_changed" if successor else "source_removed", successor))
    return out


def extract_documents(
    engine: sa.Engine,
    corpus_root: Path,
    ocr: OcrSettings,
    workers: int = 2,
    log: Log = _noop,
    progress: Callable[[int, int], None] | None = None,
    timeout_s: float = 900.0,
    per_mb_s: float = 60.0,
    buckets: Collection[str] | None = None,
) -> dict:
    """Materialize ``documents`` and ``pages`` from ``source_files``; only new contents are read.
    With ``buckets`` only contents of those content buckets are extracted or removed.

    Nothing is deleted: a document whose content no path holds any more is closed into history
    (``history.close_documents``) as ``source_changed`` (superseded by the content now at its path)
    or ``source_removed``; a retracted document is neither re-extracted nor resurrected.

    A file that cannot be read still gets a ``documents`` row with its status and reason. Each
    file runs in a worker process with a time budget of ``timeout_s + per_mb_s × size in MB``
    seconds; past it the worker is killed and the file recorded as ``timeout``.
    """
    t0 = time.perf_counter()
    only = _bucket_set(buckets)
    with engine.begin() as conn:
        files = conn.execute(
            sa.select(db.source_files)
            .where(_in_buckets(db.source_files.c.doc_id, only))
            .order_by(db.source_files.c.path)
        ).all()
        existing = {
            r.doc_id: r
            for r in conn.execute(
                sa.select(db.documents.c.doc_id, db.documents.c.extractor_version, db.documents.c.source_paths).where(
                    _in_buckets(db.documents.c.doc_id, only)
                )
            )
        }
        retracted = history.retracted_doc_ids(conn)
    groups: dict[str, list] = defaultdict(list)
    for f in files:
        if f.doc_id not in retracted:
            groups[f.doc_id].append(f)
    todo = [d for d in groups if d not in existing or existing[d].extractor_version != EXTRACTOR_VERSION]
    orphans = sorted(set(existing) - set(groups))
    with engine.connect() as conn:
        doc_at = _content_at(conn, corpus_root, {p for d in orphans for p in existing[d].source_paths})
    closes = []
    for d in orphans:
        successor = next((doc_at[p] for p in existing[d].source_paths if doc_at.get(p, d) != d), None)
        closes.append((d, "source_changed" if successor else "source_removed", successor))
    closes += _displaced(engine, corpus_root, files, only)
    with engine.begin() as conn:
        if closes:
            history.close_documents(conn, closes)
        for d, fs in groups.items():  # keep path lists current for unchanged contents
            paths = sorted(f.path for f in fs)
            if d in existing and d not in todo and existing[d].source_paths != paths:
                conn.execute(
                    sa.update(db.documents)
                    .where(db.documents.c.doc_id == d)
                    .values(source_paths=paths, primary_path=paths[0], phenomenon=phenomenon_for(paths[0]))
                )
    log(f"documents: {len(groups)} contents, {len(todo)} to extract, {len(closes)} closed (kept in history)")
    # largest first so one big PDF does not finish the run alone
    todo.sort(key=lambda d: -groups[d][0].size_bytes)
    done = 0
    timings: dict[str, list[float]] = defaultdict(list)
    pages_by_fmt: Counter = Counter()

    def handle(doc_id: str, doc: ExtractedDocument, seconds: float) -> None:
        nonlocal done
        fs = groups[doc_id]
        paths = sorted(f.path for f in fs)
        row = _document_row(doc_id, fs[0].sha256, paths, fs[0].size_bytes, doc, seconds)
        row["collection"] = next(f.collection for f in fs if f.path == paths[0])
        _store_document(engine, row, doc)
        timings[doc.format].append(seconds)
        pages_by_fmt[doc.format] += len(doc.pages)
        done += 1
        if progress:
            progress(done, len(todo))
        if doc.status != "ok":
            log(f"{paths[0]}: {doc.status} ({doc.reason})")
        elif done % 100 == 0 or done == len(todo):
            log(f"documents: {done}/{len(todo)} extracted")

    def timed_out(d: str, limit: float) -> ExtractedDocument:
        return ExtractedDocument(
            format="unknown",
            status="timeout",
            pages=[],
            reason=f"extraction exceeded {limit:.0f} s; file skipped so the run can go on",
        )

    # Worker processes (pebble) isolate native crashes and hangs: a file that exceeds its time
    # budget is recorded as ``timeout`` and its worker is killed; the rest of the run goes on.
    with ProcessPool(max_workers=max(1, workers)) as pool:
        futs = {}
        for d in todo:
            limit = timeout_s + per_mb_s * groups[d][0].size_bytes / 1e6
            futs[pool.schedule(_extract_one, args=(d, str(corpus_root / groups[d][0].path), ocr), timeout=limit)] = (
                d,
                limit,
            )
        for fut in as_completed(futs):
            d, limit = futs[fut]
            try:
                handle(*fut.result())
            except FuturesTimeout:
                handle(d, timed_out(d, limit), limit)
            except Exception as exc:  # noqa: BLE001 - a worker died (native crash) or storing failed
                failed = ExtractedDocument(
                    format="unknown",
                    status="corrupt",
                    pages=[],
                    reason=f"extraction crashed: {type(exc).__name__}: {exc}"[:500],
                )
                handle(d, failed, 0.0)
    with engine.begin() as conn:
        _sync_collections(conn)
        status_counts = dict(
            conn.execute(sa.select(db.documents.c.status, sa.func.count()).group_by(db.documents.c.status)).all()
        )
        failed_rows = conn.execute(
            sa.select(db.documents.c.primary_path, db.documents.c.status, db.documents.c.reason)
            .where(db.documents.c.status != "ok")
            .order_by(db.documents.c.primary_path)
        ).all()
        n_pages, n_ocr = conn.execute(
            sa.select(sa.func.count(), sa.func.count().filter(db.pages.c.source.like("%ocr%")))
        ).one()
    return {
        "documents": len(groups),
        "extracted_now": len(todo),
        "removed": len(closes),
        "closed_by_reason": dict(Counter(reason for _, reason, _ in closes)),
        "retracted_skipped": len({f.doc_id for f in files} & retracted),
        "pages": int(n_pages),
        "ocr_pages": int(n_ocr),
        "by_status": status_counts,
        "not_ok": [f"{r.primary_path}: {r.status} ({r.reason})" for r in failed_rows],
        "seconds_by_format": {k: round(sum(v), 2) for k, v in timings.items()},
        "files_by_format": {k: len(v) for k, v in timings.items()},
        "pages_by_format": dict(pages_by_fmt),
        "seconds": round(time.perf_counter() - t0, 3),
    }


# --------------------------------------------------------------------------- chunks
def _chunk_one(
    doc_id: str,
    pages: list[tuple[int, str]],
    language: str | None,
    tabular: bool,
    budget: int,
    overlap: float,
    cap: int,
) -> list:
    return chunk_pages(
        doc_id, pages, language=language, tabular=tabular, budget=budget, overlap=overlap, tabular_max_chunks=cap
    )


def chunk_documents(
    engine: sa.Engine,
    *,
    budget: int = 500,
    overlap: float = 0.15,
    tabular_max_chunks: int = 400,
    workers: int = 1,
    log: Log = _noop,
    buckets: Collection[str] | None = None,
) -> dict:
    """Materialize ``chunks`` for documents not yet chunked with ``CHUNKER_VERSION`` (with
    ``buckets``: only documents of those content buckets).

    A re-chunked document keeps every passage whose text is unchanged (same ``chunk_id``); the
    others are closed into ``chunks_history`` (``extractor_changed``) and new texts get ids
    ``history.assign_chunk_ids`` never gave another text. ``chunks_made_now`` counts new rows.

    Sentence segmentation runs in ``workers`` processes (it is the slow part: pysbd reads
    ~0.1–0.2 MB of text per second per core); each document's chunks are written in one
    transaction together with its ``chunker_version``, so an interrupted run resumes where it stopped.
    """
    t0 = time.perf_counter()
    d = db.documents
    with engine.begin() as conn:
        todo = conn.execute(
            sa.select(d.c.doc_id, d.c.language, d.c.is_tabular, d.c.phenomenon, d.c.status, d.c.collection)
            .where(sa.or_(d.c.chunker_version.is_(None), d.c.chunker_version != CHUNKER_VERSION))
            .where(_in_buckets(d.c.doc_id, _bucket_set(buckets)))
            .order_by(d.c.n_chars.desc())
        ).all()
    meta = {doc.doc_id: doc for doc in todo}

    def pages_of(doc) -> list[tuple[int, str]]:
        if doc.status not in INDEXABLE_STATUSES:
            return []
        with engine.begin() as conn:
            return [
                (r.page_no, r.text)
                for r in conn.execute(
                    sa.select(db.pages.c.page_no, db.pages.c.text)
                    .where(db.pages.c.doc_id == doc.doc_id)
                    .order_by(db.pages.c.page_no)
                )
            ]

    def store(doc_id: str, new: list) -> int:
        doc = meta[doc_id]
        rows = [
            {
                "chunk_id": c.chunk_id,
                "doc_id": c.doc_id,
                "seq": c.seq,
                "text": c.text,
                "text_sha": c.text_sha,
                "page_start": c.page_start,
                "page_end": c.page_end,
                "n_tokens": c.n_tokens,
                "n_sentences": c.n_sentences,
                "language": doc.language,
                "phenomenon": doc.phenomenon,
                "chunker_version": CHUNKER_VERSION,
                "collection": doc.collection,
            }
            for c in new
        ]
        with engine.begin() as conn:
            place = ("seq", "page_start", "page_end", "n_tokens", "n_sentences")
            stored = {
                r.chunk_id: r
                for r in conn.execute(
                    sa.select(db.chunks.c.chunk_id, db.chunks.c.text_sha, *(db.chunks.c[k] for k in place)).where(
                        db.chunks.c.doc_id == doc_id
                    )
                )
            }
            current = {cid: r.text_sha for cid, r in stored.items()}
            used: dict[str, set[str]] = defaultdict(set)
            for cid, sha in current.items():
                used[cid].add(sha)
            for cid, sha in conn.execute(
                sa.select(db.chunks_history.c.chunk_id, db.chunks_history.c.text_sha).where(
                    db.chunks_history.c.doc_id == doc_id
                )
            ):
                used[cid].add(sha)
            ids = history.assign_chunk_ids(doc_id, [(r["seq"], r["text_sha"]) for r in rows], used)
            for r, cid in zip(rows, ids, strict=True):
                r["chunk_id"] = cid
            keep = {(r["chunk_id"], r["text_sha"]) for r in rows}
            # passages whose text changed (or that are gone) are closed, never deleted
            history.close_chunks(
                conn, [cid for cid, sha in current.items() if (cid, sha) not in keep], "extractor_changed", doc_id
            )
            unchanged = {cid for cid, sha in current.items() if (cid, sha) in keep}
            if unchanged:  # same id, same text: refresh the document-level columns in one statement
                conn.execute(
                    sa.update(db.chunks)
                    .where(db.chunks.c.chunk_id.in_(unchanged))
                    .values(
                        chunker_version=CHUNKER_VERSION,
                        language=doc.language,
                        phenomenon=doc.phenomenon,
                        collection=doc.collection,
                    )
                )
            for r in rows:  # and its position, only where it moved
                old = stored.get(r["chunk_id"])
                if r["chunk_id"] in unchanged and any(getattr(old, k) != r[k] for k in place):
                    conn.execute(
                        sa.update(db.chunks)
                        .where(db.chunks.c.chunk_id == r["chunk_id"])
                        .values(**{k: r[k] for k in place})
                    )
            fresh = [r for r in rows if r["chunk_id"] not in unchanged]
            for j in range(0, len(fresh), 2000):
                conn.execute(db.chunks.insert(), fresh[j : j + 2000])
            conn.execute(sa.update(d).where(d.c.doc_id == doc_id).values(chunker_version=CHUNKER_VERSION))
        return len(fresh)

    made = 0
    args = lambda doc: (doc.doc_id, pages_of(doc), doc.language, doc.is_tabular, budget, overlap, tabular_max_chunks)  # noqa: E731 - a named one-line closure reads better here
    if workers > 1 and len(todo) > 1:
        with ProcessPool(max_workers=workers) as pool:
            futs = {pool.schedule(_chunk_one, args=args(doc)): doc.doc_id for doc in todo}
            for i, fut in enumerate(as_completed(futs), 1):
                made += store(futs[fut], fut.result())
                if i % 200 == 0 or i == len(todo):
                    log(f"chunks: {i}/{len(todo)} documents chunked, {made} chunks")
    else:
        for i, doc in enumerate(todo, 1):
            made += store(doc.doc_id, _chunk_one(*args(doc)))
            if i % 200 == 0 or i == len(todo):
                log(f"chunks: {i}/{len(todo)} documents chunked, {made} chunks")
    with engine.begin() as conn:
        _sync_collections(conn)
        total, tokens = conn.execute(
            sa.select(sa.func.count(), sa.func.coalesce(sa.func.avg(db.chunks.c.n_tokens), 0))
        ).one()
        capped = conn.execute(
            sa.text(
                "SELECT count(*) FROM (SELECT c.doc_id FROM chunks c JOIN documents d USING (doc_id) "
                "WHERE d.is_tabular GROUP BY c.doc_id HAVING count(*) >= :cap) s"
            ),
            {"cap": tabular_max_chunks},
        ).scalar()
    return {
        "documents_chunked_now": len(todo),
        "chunks_made_now": made,
        "chunks": int(total),
        "mean_tokens": round(float(tokens), 1),
        "tabular_files_at_cap": int(capped),
        "chunker_version": CHUNKER_VERSION,
        "seconds": round(time.perf_counter() - t0, 3),
    }


# --------------------------------------------------------------------------- embeddings
_WORKER_ENCODER: Encoder | None = None  # one encoder per worker process (set by the pool initializer)


def _init_encoder_worker(spec: EncoderSpec) -> None:
    global _WORKER_ENCODER
    _WORKER_ENCODER = build_encoder(spec)


def _encode_in_worker(texts: list[str]) -> np.ndarray:
    assert _WORKER_ENCODER is not None
    return _WORKER_ENCODER.encode_passages(texts)


def embed_chunks(
    engine: sa.Engine,
    encoder: Encoder,
    *,
    batch_size: int = 256,
    log: Log = _noop,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
    spec: EncoderSpec | None = None,
    budget_seconds: float | None = None,
    buckets: Collection[str] | None = None,
) -> dict:
    """Encode every distinct chunk text that has no vector for ``encoder.name`` yet (with
    ``buckets``: only texts of chunks whose document falls in those content buckets).

    Vectors are keyed by (text SHA-256, encoder): unchanged texts are never re-encoded, whatever
    happened to their document. Vectors no chunk, current or closed (``chunks_history``), refers to
    are deleted. With
    ``workers > 1`` and the encoder's ``spec``, batches are encoded by that many processes, each
    with its own single-threaded encoder (faster than one multi-threaded encoder on small machines).
    With ``budget_seconds`` (seconds from the start of encoding, checked after each stored batch,
    so a run can overrun it by one batch), encoding stops there; what was encoded is stored, the
    rest is left for the next run. Returns encoder, dim, ``encoded_now``, ``remaining``,
    ``vectors`` (total for this encoder), ``deleted_unused``, ``passages_per_second``, seconds.
    """
    t0 = time.perf_counter()
    c, e, ch = db.chunks, db.embeddings, db.chunks_history
    have = sa.select(e.c.text_sha).where(e.c.encoder == encoder.name, e.c.text_sha == c.c.text_sha)
    missing = (
        sa.select(c.c.text_sha, sa.func.min(c.c.text).label("text"))
        .where(~sa.exists(have))
        .where(_in_buckets(c.c.doc_id, _bucket_set(buckets)))
        .group_by(c.c.text_sha)
        .order_by(c.c.text_sha)
    )
    with engine.begin() as conn:
        gc = conn.execute(
            sa.delete(e).where(
                e.c.encoder == encoder.name,
                ~sa.exists(sa.select(c.c.chunk_id).where(c.c.text_sha == e.c.text_sha)),
                ~sa.exists(sa.select(ch.c.history_id).where(ch.c.text_sha == e.c.text_sha)),
            )
        ).rowcount
        todo = conn.execute(missing).all()
    batches = [todo[i : i + batch_size] for i in range(0, len(todo), batch_size)]
    t1 = time.perf_counter()
    if workers > 1 and spec is not None and len(batches) > 1:
        pool = ProcessPool(max_workers=workers, initializer=_init_encoder_worker, initargs=(spec,))
        encoded = pool.map(_encode_in_worker, [[r.text for r in b] for b in batches]).result()
    else:
        pool, encoded = None, (encoder.encode_passages([r.text for r in b]) for b in batches)
    stored = 0
    for n, (batch, vecs) in enumerate(zip(batches, encoded, strict=False)):
        i = n * batch_size
        rows = [
            {"text_sha": r.text_sha, "encoder": encoder.name, "dim": encoder.dim, "embedding": v}
            for r, v in zip(batch, vecs, strict=False)
        ]
        stmt = pg_insert(e).values(rows).on_conflict_do_nothing(index_elements=["text_sha", "encoder"])
        with engine.begin() as conn:
            conn.execute(stmt)
        stored += len(rows)
        done = min(i + batch_size, len(todo))
        if progress:
            progress(done, len(todo))
        if (i // batch_size) % 10 == 0 or done == len(todo):
            log(f"embeddings[{encoder.name}]: {done}/{len(todo)} texts encoded")
        if budget_seconds is not None and time.perf_counter() - t1 > budget_seconds and done < len(todo):
            log(
                f"embeddings[{encoder.name}]: time budget of {budget_seconds:.0f}s spent; "
                f"{len(todo) - done} texts left for the next run"
            )
            break
    encode_seconds = time.perf_counter() - t1
    if pool is not None:
        if stored < len(todo):
            pool.stop()  # budget spent: drop the batches still queued or running
        else:
            pool.close()
        pool.join()
    with engine.begin() as conn:
        total = conn.execute(sa.select(sa.func.count()).select_from(e).where(e.c.encoder == encoder.name)).scalar()
    return {
        "encoder": encoder.name,
        "encoder_version": encoder.version,
        "dim": encoder.dim,
        "encoded_now": stored,
        "remaining": len(todo) - stored,
        "vectors": int(total),
        "deleted_unused": int(gc or 0),
        "passages_per_second": round(stored / encode_seconds, 2) if encode_seconds else None,
        "seconds": round(time.perf_counter() - t0, 3),
    }


# --------------------------------------------------------------------------- indexes
def load_passage_frame(
    engine: sa.Engine, encoder_name: str, *, with_vectors: bool = True
) -> tuple[pl.DataFrame, np.ndarray]:
    """All embedded chunks of ``encoder_name`` with their metadata (collection included), in
    (doc_id, seq) order, and the aligned vector matrix (float32, (n, dim)). With
    ``with_vectors=False``: every chunk, embedded or not, and an empty (n, 0) matrix (the lexical
    stage, which needs no embeddings)."""
    if with_vectors:
        q = sa.text(
            "SELECT c.chunk_id, c.doc_id, d.primary_path AS source_path, d.title, c.page_start, c.page_end, "
            "c.phenomenon, c.language, c.text, c.collection, e.embedding FROM chunks c JOIN documents d USING (doc_id) "
            "JOIN embeddings e ON e.text_sha = c.text_sha AND e.encoder = :enc "
            "ORDER BY c.doc_id, c.seq"
        ).columns(embedding=db.embeddings.c.embedding.type)
    else:
        q = sa.text(
            "SELECT c.chunk_id, c.doc_id, d.primary_path AS source_path, d.title, c.page_start, c.page_end, "
            "c.phenomenon, c.language, c.text, c.collection, NULL AS embedding FROM chunks c "
            "JOIN documents d USING (doc_id) ORDER BY c.doc_id, c.seq"
        )
    with engine.connect() as conn:
        conn = conn.execution_options(stream_results=True)
        rows = conn.execute(q, {"enc": encoder_name}).all()
    frame = (
        pl.DataFrame(
            [r._asdict() for r in rows],
            schema_overrides={"page_start": pl.Int32, "page_end": pl.Int32},
            infer_schema_length=None,
        )
        if rows
        else pl.DataFrame(schema={**PASSAGE_SCHEMA, "embedding": pl.Object})
    )
    vectors = (
        np.vstack([np.asarray(r.embedding, dtype=np.float32) for r in rows])
        if rows and with_vectors
        else np.zeros((len(rows), 0 if not with_vectors else 1), np.float32)
    )
    frame = frame.drop("embedding").with_columns(
        # rows chunked before collections existed: the default rule on the path
        pl.struct("collection", "source_path")
        .map_elements(lambda r: r["collection"] or collection_of(r["source_path"]), return_dtype=pl.Utf8)
        .alias("collection")
    )
    return frame, vectors


def _lexical_table_sealed(index_dir: Path) -> bool:
    """True when ``index_dir`` holds a passage table sealed by the lexical stage (``seal_lexical``)
    that its manifest still vouches for."""
    man = read_manifest(index_dir)
    return bool(man and "passages.parquet" in man.get("files", {}) and "bm25" in man) and not verify_index(
        index_dir
    ).get("passages")


def _table_is_current(engine: sa.Engine, frame) -> bool:
    """True when the passage table ``frame`` holds exactly the current chunks (same ``chunk_id``
    set and text hashes as ``chunks``): one indexed scan of two columns."""
    with engine.connect() as conn:
        current = dict(conn.execute(sa.select(db.chunks.c.chunk_id, db.chunks.c.text_sha)).all())
    if frame.height != len(current):
        return False
    return all(current.get(c) == text_sha(t) for c, t in zip(frame["chunk_id"], frame["text"], strict=True))


FAISS_ROWS_FILE = "faiss_rows.json"  # text SHA-256 of each FAISS row + the FAISS file it describes


def _previous_vectors(index_dir: Path) -> dict[str, np.ndarray]:
    """Vectors of the FAISS index the previous build left, by text hash: read back from the index
    (a memory copy) instead of decoding them from PostgreSQL again. Only when ``faiss_rows.json``
    describes exactly that file (size and SHA-256) and its row count; else empty."""
    import json

    from radar_pipeline.stores.integrity import file_record

    try:
        side = json.loads((index_dir / FAISS_ROWS_FILE).read_text(encoding="utf-8"))
        if side.get("faiss") != file_record(index_dir / faiss_store.FAISS_FILE):
            return {}
        index = faiss_store.load_index(index_dir)
    except (OSError, ValueError):
        return {}
    shas = side.get("text_sha", [])
    if index.ntotal != len(shas):
        return {}
    vectors = index.reconstruct_n(0, index.ntotal)
    return dict(zip(shas, vectors, strict=True))


def _vectors_for_table(
    engine: sa.Engine, encoder_name: str, texts: list[str], previous: dict[str, np.ndarray] | None = None
) -> tuple[np.ndarray, int]:
    """The ``encoder_name`` vectors of ``texts`` (matched by text hash), float32 (n, dim): from
    ``previous`` (text hash → vector of the last FAISS index) where present, the rest from
    PostgreSQL. Returns (vectors, how many came from PostgreSQL). Raises ``ValueError`` when a text
    has none (embeddings not yet materialized for it)."""
    rows_of: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        rows_of.setdefault(text_sha(t), []).append(i)
    previous = previous or {}
    vecs, have = None, np.zeros(len(texts), dtype=bool)

    def put(sha: str, v) -> None:
        nonlocal vecs
        v = np.asarray(v, dtype=np.float32)
        if vecs is None:
            vecs = np.zeros((len(texts), v.shape[0]), dtype=np.float32)
        vecs[rows_of[sha]], have[rows_of[sha]] = v, True

    for sha in rows_of:
        if sha in previous:
            put(sha, previous[sha])
    todo = [sha for sha in rows_of if sha not in previous]
    e = db.embeddings
    with engine.connect() as conn:
        conn = conn.execution_options(stream_results=True)
        if len(todo) > 5000:  # most of the table: one streamed scan beats a huge IN list
            rows = conn.execute(sa.select(e.c.text_sha, e.c.embedding).where(e.c.encoder == encoder_name))
        else:
            rows = (
                r
                for i in range(0, len(todo), 1000)
                for r in conn.execute(
                    sa.select(e.c.text_sha, e.c.embedding).where(
                        e.c.encoder == encoder_name, e.c.text_sha.in_(todo[i : i + 1000])
                    )
                )
            )
        fetched = 0
        for sha, emb in rows:
            if sha in rows_of and not have[rows_of[sha][0]]:
                put(sha, emb)
                fetched += 1
    if vecs is None or not have.all():
        missing = int((~have).sum())
        raise ValueError(
            f"{missing} of {len(texts)} passages have no {encoder_name!r} embedding yet: materialize embeddings first"
        )
    return vecs, fetched


def _write_faiss_rows(index_dir: Path, texts: list[str]) -> None:
    """The sidecar ``_previous_vectors`` trusts: the text hash of each FAISS row and the FAISS file's record."""
    import json

    from radar_pipeline.stores.integrity import atomic_write_text, file_record

    side = {"faiss": file_record(index_dir / faiss_store.FAISS_FILE), "text_sha": [text_sha(t) for t in texts]}
    atomic_write_text(index_dir / FAISS_ROWS_FILE, json.dumps(side))


def build_lexical_index(engine: sa.Engine, encoder_name: str, index_dir: Path, log: Log = _noop) -> dict:
    """The lexical stage, which needs no embeddings: ``passages.parquet`` (every chunk, in (doc_id,
    seq) order) and BM25 over it, sealed together (``integrity.seal_lexical``), so the service can
    answer, lexical-only, before any vector exists; ``build_faiss_index`` then aligns the FAISS index
    to this table. Raises ``ValueError`` when there is no chunk."""
    t0 = time.perf_counter()
    frame, _ = load_passage_frame(engine, encoder_name, with_vectors=False)
    if frame.height == 0:
        raise ValueError("no chunks: materialize chunks first")
    cleaned = remove_stale_temporaries(index_dir)
    if cleaned:
        log(f"bm25_index: removed temporaries of an interrupted run: {cleaned}")
    save_passages(frame, index_dir)
    t1 = time.perf_counter()
    texts = frame["text"].to_list()
    tokens, fresh = cached_tokens(index_dir, texts, [text_sha(t) for t in texts])
    t2 = time.perf_counter()
    index = Bm25Index.from_tokens(tokens)
    index.save(index_dir)
    bm25_s = time.perf_counter() - t2
    seal_lexical(index_dir, encoder_name, frame.height)
    log(
        f"bm25_index: {frame.height} passages ({fresh} tokenized now, the rest from the token cache), "
        f"{len(index.vocab)} terms (lexical search live)"
    )
    return {
        "rows": frame.height,
        "vocabulary": len(index.vocab),
        "tokenized_now": fresh,
        "tokenize_seconds": round(t2 - t1, 3),
        "bm25_build_seconds": round(bm25_s, 3),
        "seconds": round(time.perf_counter() - t0, 3),
    }


def build_faiss_index(
    engine: sa.Engine,
    encoder_name: str,
    index_dir: Path,
    log: Log = _noop,
    *,
    encoder_version: str | None = None,
    retrieval: dict | None = None,
) -> dict:
    """Write ``faiss.index`` row-aligned with ``passages.parquet`` under ``index_dir`` and seal them
    in the manifest with their ``index_version`` (passage table + ``encoder_name``/``encoder_version``
    + the ``retrieval`` configuration the caller serves them with; ``integrity.index_fingerprint``).

    When the lexical stage sealed a passage table (``build_lexical_index``), the FAISS index is
    built over exactly those rows (vectors matched by text hash) and BM25 stays vouched for;
    otherwise the passage table is written here from the embedded chunks (and BM25 must be rebuilt,
    ``build_bm25_index``). Raises ``ValueError`` when a row has no embedding."""
    t0 = time.perf_counter()
    from radar_pipeline.stores.passages import load_passages

    aligned = _lexical_table_sealed(index_dir)
    reused = 0
    if aligned:
        frame = load_passages(index_dir)
        if not _table_is_current(engine, frame):
            # a table the lexical stage sealed before the chunks changed (bm25_index not re-run
            # yet, or a caller that builds FAISS first): never align vectors to stale passages
            log("faiss_index: the sealed passage table is older than the chunks; writing a fresh one")
            aligned = False
    if aligned:
        previous = _previous_vectors(index_dir)
        vectors, fetched = _vectors_for_table(engine, encoder_name, frame["text"].to_list(), previous)
        reused = frame.height - fetched
        log(f"faiss_index: {reused} vectors reused from the previous index, {fetched} read from PostgreSQL")
    else:
        frame, vectors = load_passage_frame(engine, encoder_name)
    if frame.height == 0:
        raise ValueError(f"no embeddings for encoder {encoder_name!r}: materialize embeddings first")
    t1 = time.perf_counter()
    index = faiss_store.build_flat_ip(vectors)
    build_s = time.perf_counter() - t1
    # Each file replaces its predecessor atomically; the manifest (sizes + SHA-256) goes last, so
    # a run killed between two files leaves a set the manifest does not vouch for, which readers
    # refuse (``integrity.verify_index``) until the next run rebuilds it.
    cleaned = remove_stale_temporaries(index_dir)
    if cleaned:
        log(f"faiss_index: removed temporaries of an interrupted run: {cleaned}")
    faiss_store.save_index(index, index_dir)
    _write_faiss_rows(index_dir, frame["text"].to_list())
    if not aligned:
        save_passages(frame, index_dir)
    save_centroids(compute_centroids(vectors, frame["phenomenon"].to_list()), index_dir)
    man = seal_dense(
        index_dir,
        encoder_name,
        frame.height,
        int(vectors.shape[1]),
        aligned=aligned,
        encoder_version=encoder_version,
        retrieval=retrieval,
    )
    log(f"faiss_index: {frame.height} vectors of dim {vectors.shape[1]}, index_version {man.get('index_version')}")
    return {
        "index_version": man.get("index_version"),
        "rows": frame.height,
        "dim": int(vectors.shape[1]),
        "vectors_reused": reused,
        "build_seconds": round(build_s, 3),
        "seconds": round(time.perf_counter() - t0, 3),
        "path": str(index_dir),
    }


def export_rerank_vectors(engine: sa.Engine, encoder_name: str, index_dir: Path, log: Log = _noop) -> dict:
    """Write the re-ranker's vectors row-aligned with ``index_dir``'s passage table, matched by the
    hash of each row's text (so a re-chunked corpus can never hand a row another text's vector),
    into ``rerank/<encoder_name>.npz`` (see ``stores.rerank_vectors.rerank_vector_path``), replaced atomically.
    Returns rows, rows with a vector, coverage (0–1) and seconds. Raises ``FileNotFoundError``
    when the passage table is missing."""
    from radar_pipeline.stores.passages import load_passages
    from radar_pipeline.stores.rerank_vectors import passage_fingerprint, save_rerank_vectors

    t0 = time.perf_counter()
    texts = load_passages(index_dir)["text"].to_list()
    rows_of: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        rows_of.setdefault(text_sha(t), []).append(i)
    q = sa.select(db.embeddings.c.text_sha, db.embeddings.c.embedding).where(db.embeddings.c.encoder == encoder_name)
    vecs, have = None, np.zeros(len(texts), dtype=bool)
    with engine.connect() as conn:
        for sha, emb in conn.execution_options(stream_results=True).execute(q):
            rows = rows_of.get(sha)
            if not rows:
                continue
            v = np.asarray(emb, dtype=np.float32)
            if vecs is None:
                vecs = np.zeros((len(texts), v.shape[0]), dtype=np.float32)
            vecs[rows], have[rows] = v, True
    if vecs is None:
        vecs = np.zeros((len(texts), 0), dtype=np.float32)
    path = save_rerank_vectors(index_dir, encoder_name, vecs, have, passage_fingerprint(texts))
    cover = float(have.mean()) if len(have) else 0.0
    if read_manifest(index_dir) is not None:
        seal_rerank(index_dir, encoder_name, path, cover)
    log(f"rerank_vectors[{encoder_name}]: {int(have.sum())}/{len(have)} passages have a vector ({cover:.1%})")
    return {
        "rows": len(texts),
        "with_vector": int(have.sum()),
        "coverage": round(cover, 4),
        "seconds": round(time.perf_counter() - t0, 3),
        "path": str(path),
    }


def build_bm25_index(index_dir: Path, log: Log = _noop) -> dict:
    """BM25 over the same passage table the FAISS index wrote (same row order), swapped in whole,
    then recorded in the index manifest with the passage table's SHA-256 it was built from.
    Raises ``ValueError`` when the passage table does not match its manifest."""
    from radar_pipeline.stores.passages import load_passages

    t0 = time.perf_counter()
    man = read_manifest(index_dir)
    problems = verify_index(index_dir)
    if man is None or "passages" in problems:
        raise ValueError(
            f"passage table at {index_dir} is not vouched for by its manifest "
            f"({problems.get('passages', 'no manifest')}): materialize faiss_index first"
        )
    frame = load_passages(index_dir)
    index = Bm25Index.build(frame["text"].to_list())
    index.save(index_dir)
    seal_bm25(index_dir, frame.height)
    log(f"bm25_index: {frame.height} passages, {len(index.vocab)} terms")
    return {"rows": frame.height, "vocabulary": len(index.vocab), "seconds": round(time.perf_counter() - t0, 3)}


def export_pg_bm25(engine: sa.Engine, encoder_name: str, index_dir: Path, log: Log = _noop) -> dict:
    """Export ``index_dir``'s BM25 index into PostgreSQL (``stores.pg_lexical``) for the pgvector
    backend, its rows named by the passage table's chunk ids. Returns rows, terms, postings and
    seconds. Raises ``ValueError`` when the passage table or the BM25 index is not vouched for by
    the manifest (materialize ``faiss_index`` and ``bm25_index`` first)."""
    from radar_pipeline.stores.passages import load_passages
    from radar_pipeline.stores.pg_lexical import store_bm25

    t0 = time.perf_counter()
    problems = verify_index(index_dir)
    bad = {k: v for k, v in problems.items() if k in ("passages", "bm25")}
    if bad:
        raise ValueError(f"index at {index_dir} not vouched for ({bad}): materialize faiss_index and bm25_index first")
    chunk_ids = load_passages(index_dir)["chunk_id"].to_list()
    stats = store_bm25(engine, encoder_name, Bm25Index.load(index_dir), chunk_ids)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    log(f"pg_bm25_index: {stats['rows']} passages, {stats['terms']} terms, {stats['postings']} postings")
    return stats
