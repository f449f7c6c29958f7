"""Encode the re-ranker vectors the Codefest dev evaluation needs, and only those.

The second stage encodes at most ``rerank_encode_limit`` (8) passages per question at query time
and imputes the rest from the first stage; on an index whose ``rerank_vectors`` asset is
incomplete that imputation would be measured instead of the re-ranker. This script takes the
union of the top-``k`` fused candidate pools (distinct texts) of the given configurations over
the 25 dev questions, encodes the passages of that union that lack a vector, and writes them into
``<index>/rerank/<reranker>.npz`` (same format and fingerprint as the asset: ``stores.rerank_vectors``),
so every configuration is then measured with exact re-ranker scores for its whole pool. It writes
to the index under ``RADAR_HOME``: run it on a copy, never on a shared read-only index.

Usage: ``python evals/fill_rerank_pools.py [--k 200] [--configs NAME ...] [--batch 64] [--shard I/N]``, then
``--merge`` after sharded runs
(~0.15 s per 128-word passage on 2 cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.configs import CONFIGS, DEFAULT_NAME  # noqa: E402 - after the sys.path set-up above (run as a script)
from evals.datasets import load_codefest_dev  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.encoders import build_encoder, build_reranker  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.retrieval.fusion import top_distinct  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.retrieval.search import Searcher  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.stores.rerank_vectors import (  # noqa: E402 - after the sys.path set-up above
    passage_fingerprint,
    save_rerank_vectors,
)


def pool_rows(searcher: Searcher, config_names: list[str], k: int) -> list[int]:
    """Rows (passage-table numbers) of the top ``k`` distinct fused candidates of each configuration
    (second stage switched off, so the pool is the first stage's) over every dev question, ordered
    by their best first-stage rank in any pool (so an interrupted fill covers the top of every pool
    first: rows near the top are the ones that can reach the top 10 after re-ranking)."""
    best: dict[int, int] = {}
    for q in load_codefest_dev().questions:
        for name in config_names:
            cfg = CONFIGS[name].with_(rerank_k=0)
            fused, _, _ = searcher.candidates(q.question, cfg)
            scores = {c.row: c.score for c in fused}
            for rank, r in enumerate(top_distinct(scores, searcher._texts.__getitem__, k), start=1):
                best[r] = min(best.get(r, rank), rank)
    return sorted(best, key=lambda r: (best[r], r))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--configs", nargs="+", default=[DEFAULT_NAME])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument(
        "--shard",
        default=None,
        help="I/N: encode every N-th missing passage from the I-th (0-based) "
        "into rerank/fill_shard<I>.npz, so N processes share the work; then run --merge",
    )
    ap.add_argument("--merge", action="store_true", help="fold the shard files into the vectors file and exit")
    args = ap.parse_args()
    settings = get_settings()
    enc, rr = build_encoder(EncoderSpec()), build_reranker()
    index_dir = settings.index_dir / enc.name
    searcher = Searcher(index_dir, enc, reranker=rr)
    texts = searcher._texts
    n = len(texts)
    vecs = searcher._rerank_pre if searcher._rerank_pre is not None else np.zeros((n, rr.dim), dtype=np.float32)
    have = searcher._rerank_have if searcher._rerank_have is not None else np.zeros(n, dtype=bool)
    vecs, have = vecs.copy(), have.copy()
    fp = passage_fingerprint(texts)
    shard_files = sorted((index_dir / "rerank").glob("fill_shard*.npz"))
    if args.merge:
        for f in shard_files:
            with np.load(f) as z:
                vecs[z["rows"]], have[z["rows"]] = z["vectors"], True
        _copy_by_text(texts, vecs, have, range(n))
        save_rerank_vectors(index_dir, rr.name, vecs, have, fp)
        for f in shard_files:
            f.unlink()
        print(f"merged {len(shard_files)} shard files; coverage now {have.mean():.4f}", flush=True)
        return
    cache = index_dir / "rerank" / f"fill_pool_k{args.k}_{'_'.join(sorted(args.configs))}.npy"
    if cache.exists():
        rows = [int(r) for r in np.load(cache)]
    else:
        rows = pool_rows(searcher, args.configs, args.k)
        np.save(cache, np.asarray(rows, dtype=np.int64))
    for f in shard_files:  # rows another shard already encoded
        with np.load(f) as z:
            have[z["rows"]] = True
    # identical texts share one vector (the asset looks vectors up by text too)
    by_text: dict[str, int] = {}
    todo = []
    for r in rows:
        if have[r]:
            continue
        if texts[r] in by_text:
            continue
        by_text[texts[r]] = r
        todo.append(r)
    shard_path, shard_rows, shard_vecs = None, [], []
    if args.shard:
        i_shard, n_shards = (int(x) for x in args.shard.split("/"))
        shard_path = index_dir / "rerank" / f"fill_shard{i_shard}.npz"
        if shard_path.exists():  # resume this shard
            with np.load(shard_path) as z:
                shard_rows, shard_vecs = list(z["rows"]), list(z["vectors"])
        done_rows = set(int(r) for r in shard_rows)
        todo = [r for r in todo[i_shard::n_shards] if r not in done_rows]
    print(f"pool {len(rows)} rows, {len(todo)} to encode (coverage {have.mean():.4f})", flush=True)
    t0 = time.perf_counter()
    for i in range(0, len(todo), args.batch):
        part = todo[i : i + args.batch]
        out = rr.encode_passages([texts[r] for r in part])
        for r, v in zip(part, out, strict=True):
            vecs[r], have[r] = v, True
        # resumable: saved after each batch
        if shard_path is not None:
            shard_rows += part
            shard_vecs += list(out)
            tmp = shard_path.with_suffix(".tmp.npz")
            np.savez(tmp, rows=np.asarray(shard_rows, dtype=np.int64), vectors=np.asarray(shard_vecs, np.float32))
            tmp.replace(shard_path)
        else:
            save_rerank_vectors(index_dir, rr.name, vecs, have, fp)
        done = i + len(part)
        rate = done / (time.perf_counter() - t0)
        print(f"{done}/{len(todo)} encoded, {rate:.1f}/s", flush=True)
    if shard_path is None:
        _copy_by_text(texts, vecs, have, rows)
        save_rerank_vectors(index_dir, rr.name, vecs, have, fp)
        print(f"coverage now {have.mean():.4f}", flush=True)


def _copy_by_text(texts: list[str], vecs: np.ndarray, have: np.ndarray, rows) -> None:
    """Rows of ``rows`` without a vector whose text has one elsewhere get that vector (in place)."""
    text_vec = {texts[r]: vecs[r] for r in np.flatnonzero(have)}
    for r in rows:
        if not have[r] and texts[r] in text_vec:
            vecs[r], have[r] = text_vec[texts[r]], True


if __name__ == "__main__":
    main()
