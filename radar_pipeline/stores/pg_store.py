"""pgvector: HNSW (cosine) partial expression index per encoder over ``embeddings``.

HNSW: Malkov & Yashunin 2018 (IEEE TPAMI); pgvector defaults ``m=16``, ``ef_construction=64``.
The index is built on ``embedding::vector(dim)`` restricted to one encoder, so encoders of
different dimensions share one table; queries must use the same expression and predicate.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import sqlalchemy as sa

from radar_pipeline.collection import collection_of
from radar_pipeline.stores.passages import PASSAGE_SCHEMA
from radar_pipeline.vocabulary import PHENOMENA


def hnsw_index_name(encoder: str) -> str:
    return "embeddings_hnsw_" + re.sub(r"[^a-z0-9_]", "_", encoder.lower())[:40]


def ensure_hnsw_index(engine: sa.Engine, encoder: str, dim: int, m: int = 16, ef_construction: int = 64) -> bool:
    """Create the encoder's HNSW index if missing; return True when it was created now.

    New rows inserted later are added to the graph by PostgreSQL itself (no rebuild needed).
    """
    if not re.fullmatch(r"[A-Za-z0-9_\-.]+", encoder):
        raise ValueError(f"unsafe encoder name {encoder!r}")
    name = hnsw_index_name(encoder)
    with engine.begin() as conn:
        exists = conn.execute(sa.text("SELECT to_regclass(:n) IS NOT NULL"), {"n": name}).scalar()
        if exists:
            return False
        conn.execute(sa.text("SET maintenance_work_mem = '512MB'"))
        conn.execute(
            sa.text(
                f"CREATE INDEX {name} ON embeddings USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) "
                f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) WHERE encoder = '{encoder}'"
            )
        )
    return True


def search_pgvector(
    engine: sa.Engine,
    encoder: str,
    dim: int,
    query: np.ndarray,
    k: int = 10,
    ef_search: int = 100,
    collections: frozenset[str] | None = None,
) -> list[tuple[str, float]]:
    """Approximate top-``k`` ``(chunk_id, cosine_similarity)`` for one unit query vector of ``dim``.

    The HNSW index ranks distinct texts; chunks sharing a text all come back with its score.
    ``collections`` (None = all) restricts the search inside the query: only texts of a chunk of
    those collections are candidates (a ``WHERE EXISTS`` with pgvector's iterative index scan, so
    the top ``k`` is taken over allowed texts, not filtered afterwards), and only such chunks return.
    """
    vec = "[" + ",".join(f"{x:.7g}" for x in np.asarray(query, dtype=np.float32).ravel()) + "]"
    d = int(dim)
    params: dict = {"q": vec, "enc": encoder, "k": int(k)}
    where, chunk_where = "", ""
    if collections is not None:
        params["colls"] = sorted(collections)
        where = (
            " AND EXISTS (SELECT 1 FROM chunks a WHERE a.text_sha = embeddings.text_sha AND a.collection = ANY(:colls))"
        )
        chunk_where = " WHERE c.collection = ANY(:colls)"
    with engine.begin() as conn:
        conn.execute(sa.text(f"SET LOCAL hnsw.ef_search = {int(ef_search)}"))
        if collections is not None:
            conn.execute(sa.text("SET LOCAL hnsw.iterative_scan = strict_order"))
        rows = conn.execute(
            sa.text(
                f"WITH top AS (SELECT text_sha, (embedding::vector({d})) <=> CAST(:q AS vector({d})) AS dist "
                f"FROM embeddings WHERE encoder = :enc{where} "
                f"ORDER BY (embedding::vector({d})) <=> CAST(:q AS vector({d})) "
                f"LIMIT :k) SELECT c.chunk_id, 1 - top.dist AS score FROM top JOIN chunks c USING (text_sha)"
                f"{chunk_where} ORDER BY top.dist, c.chunk_id"
            ),
            params,
        ).all()
    return [(r[0], float(r[1])) for r in rows]


def load_pg_passages(engine: sa.Engine, encoder: str) -> pl.DataFrame:
    """The passage table of ``encoder`` straight from PostgreSQL: every chunk with a vector of that
    encoder, in (doc_id, seq) order, with the columns of ``stores.passages`` plus ``text_sha`` —
    the same rows, in the same order, as ``stages.load_passage_frame`` (what the FAISS index was
    built from), without the vectors. Rows without a collection get the default of their path."""
    q = sa.text(
        "SELECT c.chunk_id, c.doc_id, d.primary_path AS source_path, d.title, c.page_start, c.page_end, "
        "c.phenomenon, c.language, c.text, c.collection, c.text_sha FROM chunks c JOIN documents d USING (doc_id) "
        "JOIN embeddings e ON e.text_sha = c.text_sha AND e.encoder = :enc ORDER BY c.doc_id, c.seq"
    )
    with engine.connect() as conn:
        rows = conn.execute(q, {"enc": encoder}).all()
    schema = {**PASSAGE_SCHEMA, "text_sha": pl.Utf8}
    frame = pl.DataFrame([tuple(r) for r in rows], schema=schema, orient="row")
    return frame.with_columns(
        pl.struct("collection", "source_path")
        .map_elements(lambda r: r["collection"] or collection_of(r["source_path"]), return_dtype=pl.Utf8)
        .alias("collection")
    )


def vectors_by_sha(engine: sa.Engine, encoder: str, shas: list[str]) -> dict[str, np.ndarray]:
    """``text_sha → vector`` (float32) of ``encoder`` for those of ``shas`` that have one."""
    if not shas:
        return {}
    q = sa.text("SELECT text_sha, embedding::real[] FROM embeddings WHERE encoder = :enc AND text_sha = ANY(:shas)")
    with engine.connect() as conn:
        return {
            r[0]: np.asarray(r[1], dtype=np.float32) for r in conn.execute(q, {"enc": encoder, "shas": list(set(shas))})
        }


def count_passages_with_vector(engine: sa.Engine, encoder: str, first_stage: str) -> int:
    """How many chunks with a ``first_stage`` vector also have an ``encoder`` vector (e.g. the re-ranker's)."""
    q = sa.text(
        "SELECT count(*) FROM chunks c JOIN embeddings f ON f.text_sha = c.text_sha AND f.encoder = :f "
        "JOIN embeddings e ON e.text_sha = c.text_sha AND e.encoder = :enc"
    )
    with engine.connect() as conn:
        return int(conn.execute(q, {"f": first_stage, "enc": encoder}).scalar())


def phenomenon_centroids(engine: sa.Engine, encoder: str, dim: int) -> dict[str, np.ndarray]:
    """Phenomenon → unit mean vector of its passages (one per chunk, as ``stores.centroids``
    computes it for the on-disk index), averaged by pgvector's ``avg(vector)``."""
    d = int(dim)
    q = sa.text(
        f"SELECT c.phenomenon, avg(e.embedding::vector({d}))::real[] FROM chunks c "
        "JOIN embeddings e ON e.text_sha = c.text_sha AND e.encoder = :enc "
        "WHERE c.phenomenon IS NOT NULL GROUP BY c.phenomenon"
    )
    out = {}
    with engine.connect() as conn:
        for phen, mean in conn.execute(q, {"enc": encoder}):
            if phen not in PHENOMENA:
                continue
            v = np.asarray(mean, dtype=np.float32)
            out[phen] = v / (np.linalg.norm(v) or 1.0)
    return out
