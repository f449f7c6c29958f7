"""Insert crafted rows into the core tables (documents, pages, chunks) of the test database; rewrite a
database in another storage order (``scramble_storage``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.chunking import text_sha
from radar_pipeline.collection import collection_of


def add_document(
    engine: sa.Engine,
    path: str,
    chunks: Sequence[str],
    *,
    pages: Sequence[str] | None = None,
    phenomenon: str | None = "territorial",
    language: str | None = "es",
    is_tabular: bool = False,
    doc_id: str | None = None,
    page_of_chunk: Sequence[tuple[int, int]] | None = None,
) -> str:
    """One ``ok`` document with the given passages (``chunk_id`` = ``<doc_id>-<seq>``), in the
    default collection of its path (``collection_of``: Codefest institution code, else top folder).

    ``pages`` default: one page per chunk. ``page_of_chunk``: (page_start, page_end) per chunk.
    Returns the doc_id (SHA-256 of path + texts, first 16 hex digits, unless given).
    """
    body = path + "\x00" + "\x00".join(chunks)
    sha = hashlib.sha256(body.encode()).hexdigest()
    doc_id = doc_id or sha[:16]
    pages = list(pages) if pages is not None else list(chunks)
    with engine.begin() as conn:
        conn.execute(
            db.documents.insert().values(
                doc_id=doc_id,
                sha256=sha,
                source_paths=[path],
                primary_path=path,
                title=path.rsplit("/", 1)[-1],
                format="txt",
                status="ok",
                reason=None,
                encoding="utf-8",
                language=language,
                phenomenon=phenomenon,
                is_tabular=is_tabular,
                n_pages=len(pages),
                n_pages_total=len(pages),
                n_ocr_pages=0,
                n_chars=sum(len(p) for p in pages),
                size_bytes=len(body),
                extractor_version="test",
                extract_seconds=0.0,
                chunker_version="test",
                metadata={},
                warnings=[],
                collection=collection_of(path),
            )
        )
        if pages:
            conn.execute(
                db.pages.insert(),
                [
                    {
                        "doc_id": doc_id,
                        "page_no": i + 1,
                        "text": t,
                        "source": "record" if is_tabular else "plain",
                        "status": "ok",
                    }
                    for i, t in enumerate(pages)
                ],
            )
        rows = []
        for i, t in enumerate(chunks):
            ps, pe = page_of_chunk[i] if page_of_chunk else (min(i + 1, max(len(pages), 1)),) * 2
            rows.append(
                {
                    "chunk_id": f"{doc_id}-{i}",
                    "doc_id": doc_id,
                    "seq": i,
                    "text": t,
                    "text_sha": text_sha(t),
                    "page_start": ps,
                    "page_end": pe,
                    "n_tokens": max(1, len(t.split())),
                    "n_sentences": 1,
                    "language": language,
                    "phenomenon": phenomenon,
                    "chunker_version": "test",
                    "collection": collection_of(path),
                }
            )
        if rows:
            conn.execute(db.chunks.insert(), rows)
    return doc_id


def scramble_storage(engine: sa.Engine) -> None:
    """Rewrite every table of ``engine`` with its rows in reverse storage order, then ANALYZE.

    Two databases holding the same rows keep them in different physical orders (updates, autovacuum
    freeing space at a different moment, a different insertion history) and may plan the same query
    differently (autoanalyze ran or not): a query without ORDER BY then returns its rows in a
    different order. Reversing one side makes any answer that depends on storage order differ on
    every run, instead of on the run where autovacuum happened to differ."""
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL session_replication_role = replica"))  # no FK checks while rewriting
        tables = conn.execute(
            sa.text(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"
            )
        ).scalars()
        for t in list(tables):
            conn.execute(sa.text(f'CREATE TEMP TABLE _rev ON COMMIT DROP AS SELECT * FROM "{t}" ORDER BY ctid DESC'))
            conn.execute(sa.text(f'DELETE FROM "{t}"'))
            conn.execute(sa.text(f'INSERT INTO "{t}" SELECT * FROM _rev ORDER BY ctid'))
            conn.execute(sa.text("DROP TABLE _rev"))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE"))
