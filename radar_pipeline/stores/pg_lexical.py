"""BM25 in PostgreSQL: the lexical ranker of the service's pgvector backend.

The bm25s index of one encoder's passage table (``stores.bm25_store``: Lucene BM25, k1 = 1.5,
b = 0.75, the same tokenizer) is exported term by term into ``bm25_terms`` (postings and their
precomputed weights, the values of bm25s's own score matrix) and ``bm25_rows`` (row → chunk).
A query's score for a passage is the sum, over the query's tokens with their multiplicity, of the
token's weight in that passage: exactly what ``bm25s.BM25.get_scores`` computes (summed in
float32 there, in float8 then rounded to float4 here), so both backends rank lexical candidates
the same way, equal scores by row.

Why not PostgreSQL full-text search: ``ts_rank``/``ts_rank_cd`` have no inverse document
frequency and no BM25 length normalisation, so the lexical run fed to fusion would change; and no
built-in text search configuration folds accents and drops English, Spanish and Portuguese stop
words together as ``bm25_store.tokenize`` does ('simple' keeps accents and stop words, a
per-language configuration stems one language of a mixed corpus). The table keeps the measured
lexical ranker and its glossary expansion, and stays a plain SQL aggregate.

Collections are enforced inside the query (a join on ``chunks.collection``), before the top-k.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable

import numpy as np
import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.stores.bm25_store import Bm25Index

_BATCH_TERMS = 5000


def store_bm25(engine: sa.Engine, encoder: str, index: Bm25Index, chunk_ids: list[str]) -> dict:
    """Replace ``encoder``'s BM25 tables with ``index`` (rows aligned with ``chunk_ids``) in one
    transaction: readers see the old index until it commits. Returns ``{rows, terms, postings}``.
    Raises ``ValueError`` when the index and ``chunk_ids`` differ in length."""
    sc = index.retriever.scores
    if int(sc["num_docs"]) != len(chunk_ids):
        raise ValueError(f"BM25 index has {sc['num_docs']} rows, passage table {len(chunk_ids)}")
    data, indices, indptr = sc["data"], sc["indices"], sc["indptr"]
    # bm25s's vocabulary also names an empty token with no column in the score matrix: skipped
    terms = sorted(((t, i) for t, i in index.vocab.items() if i < len(indptr) - 1), key=lambda kv: kv[1])
    with engine.begin() as conn:
        conn.execute(sa.delete(db.bm25_terms).where(db.bm25_terms.c.encoder == encoder))
        conn.execute(sa.delete(db.bm25_rows).where(db.bm25_rows.c.encoder == encoder))
        cur = conn.connection.cursor()
        rows = io.StringIO("".join(f"{encoder}\t{i}\t{c}\n" for i, c in enumerate(chunk_ids)))
        cur.copy_expert("COPY bm25_rows (encoder, pos, chunk_id) FROM STDIN", rows)
        for start in range(0, len(terms), _BATCH_TERMS):
            buf = io.StringIO()
            for term, tid in terms[start : start + _BATCH_TERMS]:
                lo, hi = int(indptr[tid]), int(indptr[tid + 1])
                if hi == lo:
                    continue
                pos = ",".join(map(str, indices[lo:hi].tolist()))
                wts = ",".join(map(repr, data[lo:hi].astype(np.float64).tolist()))
                buf.write(f"{encoder}\t{_copy_escape(term)}\t{{{pos}}}\t{{{wts}}}\n")
            buf.seek(0)
            cur.copy_expert("COPY bm25_terms (encoder, term, pos, weight) FROM STDIN", buf)
        cur.close()
    return {"rows": len(chunk_ids), "terms": len(terms), "postings": int(indptr[-1])}


def _copy_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def query_terms(tokens: Iterable[str]) -> tuple[list[str], list[int]]:
    """``(distinct tokens, multiplicity of each)`` of a tokenized query."""
    counts = Counter(tokens)
    return list(counts), list(counts.values())


_SCORES = """
WITH q AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:counts AS int[])) AS q(term, n)),
s AS (
  SELECT u.pos, SUM(u.w::float8 * q.n)::real AS score
  FROM bm25_terms t JOIN q ON t.term = q.term CROSS JOIN LATERAL unnest(t.pos, t.weight) AS u(pos, w)
  WHERE t.encoder = :enc
  GROUP BY u.pos
)
"""
# unrestricted: the top k by score first, then their chunk ids (k index probes, not one per match)
_TOP = (
    _SCORES + ", top AS (SELECT pos, score FROM s WHERE score > 0 ORDER BY score DESC, pos LIMIT :k) "
    "SELECT r.chunk_id, top.score FROM top JOIN bm25_rows r ON r.encoder = :enc AND r.pos = top.pos "
    "ORDER BY top.score DESC, top.pos"
)
# restricted to collections (or to given chunks): the filter joins before the top k
_FILTERED = _SCORES + (
    "SELECT r.chunk_id, s.score FROM s JOIN bm25_rows r ON r.encoder = :enc AND r.pos = s.pos "
    "JOIN chunks c ON c.chunk_id = r.chunk_id WHERE s.score > 0 AND {where} ORDER BY s.score DESC, s.pos"
)


def search_bm25(
    engine: sa.Engine,
    encoder: str,
    tokens: list[str],
    k: int,
    collections: frozenset[str] | None = None,
    chunk_ids: list[str] | None = None,
) -> list[tuple[str, float]]:
    """``(chunk_id, BM25 score)`` of the top ``k`` passages for ``tokens`` (positive scores only,
    best first, ties by row). ``collections`` (None = all) restricts the candidates inside the
    query, before the top ``k``; ``chunk_ids`` asks for the scores of those chunks only (then
    ``k`` is ignored). Unknown tokens score nothing; no tokens → ``[]``."""
    if not tokens or (collections is not None and not collections):
        return []
    terms, counts = query_terms(tokens)
    params: dict = {"terms": terms, "counts": counts, "enc": encoder, "k": int(k)}
    if collections is None and chunk_ids is None:
        sql = _TOP
    else:
        where = []
        if collections is not None:
            where.append("c.collection = ANY(:colls)")
            params["colls"] = sorted(collections)
        if chunk_ids is not None:
            where.append("r.chunk_id = ANY(:ids)")
            params["ids"] = list(chunk_ids)
        sql = _FILTERED.format(where=" AND ".join(where)) + (" LIMIT :k" if chunk_ids is None else "")
    with engine.connect() as conn:
        return [(r[0], float(r[1])) for r in conn.execute(sa.text(sql), params)]


def bm25_size(engine: sa.Engine, encoder: str) -> int:
    """Rows of ``encoder``'s exported BM25 index (0 = never exported)."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count()).select_from(db.bm25_rows).where(db.bm25_rows.c.encoder == encoder)
            ).scalar()
        )
