"""The BM25 token cache: a rebuild tokenizes only new texts and yields the same index as a full build."""

from __future__ import annotations

import numpy as np

from radar_pipeline.chunking import text_sha
from radar_pipeline.stores.bm25_store import TOKEN_CACHE_FILE, Bm25Index, cached_tokens, tokenize

TEXTS = [
    "Las pruebas antisatélite generan desechos orbitales de larga vida.",
    "Anti-satellite tests created thousands of trackable debris fragments.",
    "La minería ilegal de oro avanza en la Amazonía colombiana.",
    "",
]


def test_rebuild_tokenizes_only_new_texts_and_matches_a_full_build(tmp_path):
    shas = [text_sha(t) for t in TEXTS]
    tokens, fresh = cached_tokens(tmp_path, TEXTS, shas)
    assert fresh == len(TEXTS) and tokens == [tokenize(t) for t in TEXTS]
    assert (tmp_path / TOKEN_CACHE_FILE).exists()

    more = [*TEXTS[:2], "Drones armados vigilan la frontera.", TEXTS[2]]
    tokens, fresh = cached_tokens(tmp_path, more, [text_sha(t) for t in more])
    assert fresh == 1 and tokens == [tokenize(t) for t in more]

    cached = Bm25Index.from_tokens(tokens)
    full = Bm25Index.build(more)
    for query in ("desechos orbitales", "drones frontera", "minería oro"):
        a, b = cached.search(query, 4), full.search(query, 4)
        assert np.array_equal(a[1], b[1]) and np.allclose(a[0], b[0]) and a[1].size

    # a damaged cache is rebuilt, never trusted
    (tmp_path / TOKEN_CACHE_FILE).write_bytes(b"not parquet")
    tokens, fresh = cached_tokens(tmp_path, more, [text_sha(t) for t in more])
    assert fresh == len(more) and tokens == [tokenize(t) for t in more]
