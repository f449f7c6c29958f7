"""Run a retrieval configuration over the evaluation sets and score it.

* Codefest dev: the 25 Spanish questions against the materialized full index (``Searcher``),
  scored by ``evals.scoring.score_codefest_run`` (NDCG@10 graded passages, F1@3 documents,
  Recall@10, MRR@10, and Recall@200 of judged passages among the candidates), with Judged@10 and
  the condensed NDCG'@10, on the original and on the deepened judgments separately.
* XQuAD es→en (``xquad_es_en``, ``xquad_es_en_hard``): each over its own small index built with
  the same encoder and the same ``Searcher`` code (vectors cached on disk by text hash), scored
  as BEIR runs (binary qrels).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from evals.datasets import BeirDataset, CodefestDev, load_codefest_dev, load_xquad
from evals.scoring import RunScores, build_deep_index, build_judged_index, score_beir_run, score_codefest_run
from evals.sentence_vectors import build_sentence_vectors
from radar_pipeline.encoders import Encoder
from radar_pipeline.retrieval.search import RetrievalConfig, Searcher
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.passages import PASSAGE_COLUMNS, save_passages
from radar_pipeline.stores.rerank_vectors import passage_fingerprint, save_rerank_vectors


@dataclass
class EvalReport:
    dataset: str
    config: str
    scores: RunScores
    seconds: float
    extra: dict

    @property
    def per_query(self) -> pl.DataFrame:
        return self.scores.per_query

    @property
    def aggregate(self) -> dict:
        return {**self.scores.aggregate, **self.extra}


# How deep the ranking goes for the condensed-list NDCG' (unjudged passages dropped, judged ones
# from below rank 10 move up): the policy's own ranking, cut at this depth instead of 10.
CONDENSED_DEPTH = 100


def run_codefest(
    searcher: Searcher,
    cfg: RetrievalConfig,
    dev: CodefestDev | None = None,
    deep_records: Iterable | None = None,
) -> EvalReport:
    """Search every dev question with ``cfg`` and score the run; also Recall@200 of candidates.

    Scored on both judgment sets, separately (``evals.scoring``): the original pooled judgments of
    ``dev`` and the deepened ones, ``deep_records`` (records with ``query_id``, ``chunk_id``,
    ``text``, ``grade``; the evaluation passes the merged qrels of ``evals.judging``; default the
    shared ``qrels_deepened.jsonl`` alone when ``dev`` is the shared set, none for a hand-made
    ``dev``). The condensed NDCG' reads the same policy's ranking down to ``CONDENSED_DEPTH``.
    """
    shared_dev = dev is None
    dev = dev or load_codefest_dev()
    index = build_judged_index(dev)
    deep_index = (
        build_deep_index(deep_records) if deep_records is not None else (build_deep_index() if shared_dev else None)
    )
    deep_cfg = cfg.with_(policy=replace(cfg.policy, k_passages=max(CONDENSED_DEPTH, cfg.policy.k_passages)))
    t0 = time.perf_counter()
    results, cand_recall = [], []
    for q in dev.questions:
        fused, dense, phen = searcher.candidates(q.question, cfg)  # once: the result and the pool's recall
        res = searcher.apply_policy(q.question, fused, dense, phen, cfg)
        deep = searcher.apply_policy(q.question, fused, dense, phen, deep_cfg)
        results.append(
            {
                "query_id": q.query_id,
                "documents": res.documents,
                "passages": res.passages,
                "passages_deep": [{"rank": p["rank"], "text": p["text"]} for p in deep.passages],
            }
        )
        judged_pos = {j.chunk_id for j in dev.qrels_chunks[q.query_id] if j.grade >= 1}
        found = set()
        for c in fused:
            for m in index.matches(q.query_id, c.text):
                if m.grade >= 1:
                    found.add(m.judged_id)
        cand_recall.append(len(found & judged_pos) / len(judged_pos) if judged_pos else 0.0)
    seconds = time.perf_counter() - t0
    scores = score_codefest_run(results, dev=dev, index=index, deep_index=deep_index)
    per_query = scores.per_query.with_columns(pl.Series("recall@cand", cand_recall))
    scores = RunScores(per_query, scores.aggregate)
    return EvalReport(
        "codefest_dev",
        cfg.name,
        scores,
        seconds,
        {
            "recall@candidates": round(float(np.mean(cand_recall)), 4),
            "ms_per_query": round(seconds * 1000 / len(dev.questions), 1),
        },
    )


def _cached_vectors(encoder: Encoder, texts: list[str], cache_dir: Path, kind: str) -> np.ndarray:
    key = hashlib.sha256(("\x1f".join(texts) + encoder.name + kind).encode()).hexdigest()[:20]
    path = cache_dir / f"{encoder.name}-{kind}-{key}.npy"
    if path.exists():
        return np.load(path)
    vecs = encoder.encode_passages(texts) if kind == "passages" else encoder.encode_queries(texts)
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    return vecs


def build_beir_index(dataset: BeirDataset, encoder: Encoder, work_dir: Path) -> Path:
    """Write passages.parquet + FAISS + BM25 for a BEIR corpus under ``work_dir/<name>/<encoder>``."""
    out = work_dir / dataset.name / encoder.name
    texts = [d.text for d in dataset.corpus]
    vecs = _cached_vectors(encoder, texts, work_dir / "vectors", "passages")
    frame = pl.DataFrame(
        {
            "chunk_id": [d.doc_id for d in dataset.corpus],
            "doc_id": [d.doc_id for d in dataset.corpus],
            "source_path": [d.title for d in dataset.corpus],
            "title": [d.title for d in dataset.corpus],
            "page_start": [1] * len(texts),
            "page_end": [1] * len(texts),
            "phenomenon": [None] * len(texts),
            "language": ["en"] * len(texts),
            "text": texts,
        },
        schema_overrides={"phenomenon": pl.Utf8},
    ).select(PASSAGE_COLUMNS)
    save_passages(frame, out)
    faiss_store.save_index(faiss_store.build_flat_ip(vecs), out)
    Bm25Index.build(texts).save(out)
    build_sentence_vectors(
        out,
        encoder,
        texts,
        ["en"] * len(texts),
        cache=lambda sents: _cached_vectors(encoder, sents, work_dir / "vectors", "passages"),
    )
    return out


def run_xquad(
    name: str, encoder: Encoder, cfg: RetrievalConfig, work_dir: Path, reranker: Encoder | None = None
) -> EvalReport:
    """Score ``cfg`` on one XQuAD set: passages ranked by the same Searcher code, top 10. With a
    ``reranker`` (and ``cfg.rerank_k``), its passage vectors are cached on disk like the encoder's."""
    ds = load_xquad(name)
    index_dir = build_beir_index(ds, encoder, work_dir)
    if reranker is not None and cfg.rerank_k:
        texts = [d.text for d in ds.corpus]
        vecs = _cached_vectors(reranker, texts, work_dir / "vectors", "passages")
        save_rerank_vectors(index_dir, reranker.name, vecs, np.ones(len(texts), dtype=bool), passage_fingerprint(texts))
    searcher = Searcher(index_dir, encoder, cfg, reranker=reranker)
    # one paragraph per "document": the per-document cap and dedupe must not hide paragraphs
    cfg = cfg.with_(
        policy=cfg.policy.__class__(
            k_passages=10, k_documents=3, max_per_doc=1, dedupe_texts=cfg.policy.dedupe_texts, doc_top_n=1
        )
    )
    t0 = time.perf_counter()
    run = {}
    for q in ds.queries:
        res = searcher.search(q.text, cfg)
        run[q.query_id] = [(p["chunk_id"], p["score"]) for p in res.passages]
    seconds = time.perf_counter() - t0
    return EvalReport(
        name, cfg.name, score_beir_run(run, ds), seconds, {"ms_per_query": round(seconds * 1000 / len(ds.queries), 2)}
    )
