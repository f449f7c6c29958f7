"""Insert crafted rows into the core tables (documents, pages, chunks) of the test database."""

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
