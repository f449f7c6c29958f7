"""Induce a Spanish→English term lexicon from the multilingual encoder (issue 17, item (d)).

Bilingual lexicon induction by mutual nearest neighbours in a shared cross-lingual embedding space
(Conneau et al. 2018, "Word translation without parallel data", ICLR; here the space is the
multilingual USE encoder the index already uses, with each term encoded on its own):

1. vocabularies from the corpus index: BM25 tokens (folded, stop words removed,
   ``stores.bm25_store.tokenize``) of the Spanish-language passages and of the English-language
   passages, each kept when it occurs in at least ``--min-df`` passages of its language, is
   alphabetic and ≥ 4 letters, and is at least ``--lang-ratio`` times more frequent (per passage)
   in its own language than in the other (so "drones" or "cyber", common to both, are left out);
2. a pair (s, e) is kept when e is s's nearest English term, s is e's nearest Spanish term, the
   cosine is ≥ ``--min-cos`` and the folded strings differ (identical strings BM25 matches already).

Writes ``radar_pipeline/retrieval/data/lexicon_induced_es_en.tsv`` (``spanish<TAB>english<TAB>cosine``,
sorted by Spanish term) and prints its size. Unreviewed: the reviewed glossary stays the default;
``RetrievalConfig.induced_lexicon`` switches it on for the lexical query.

Usage: ``python evals/induce_lexicon.py [--min-df 20] [--min-cos 0.5]``
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from radar_pipeline.config import EncoderSpec, get_settings  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.encoders import build_encoder  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.retrieval.glossary import INDUCED_LEXICON_PATH  # noqa: E402 - after the sys.path set-up
from radar_pipeline.stores.bm25_store import tokenize  # noqa: E402 - after the sys.path set-up above
from radar_pipeline.stores.passages import load_passages  # noqa: E402 - after the sys.path set-up above

_ALPHA = re.compile(r"^[a-zñ]{4,}$")


def language_df(texts: list[str]) -> Counter:
    """Passage frequency of each token over ``texts``."""
    df: Counter = Counter()
    for t in texts:
        df.update(set(tokenize(t)))
    return df


def vocabularies(
    texts: list[str], langs: list[str], min_df: int, lang_ratio: float
) -> tuple[list[str], list[str], Counter, Counter]:
    """``(spanish terms, english terms, spanish df, english df)`` per the module docstring."""
    es_texts = [t for t, lang in zip(texts, langs, strict=True) if lang == "es"]
    en_texts = [t for t, lang in zip(texts, langs, strict=True) if lang == "en"]
    df_es, df_en = language_df(es_texts), language_df(en_texts)
    n_es, n_en = max(len(es_texts), 1), max(len(en_texts), 1)

    def keep(term: str, own: Counter, n_own: int, other: Counter, n_other: int) -> bool:
        if own[term] < min_df or not _ALPHA.match(term):
            return False
        return own[term] / n_own >= lang_ratio * (other[term] / n_other)

    es = sorted(t for t in df_es if keep(t, df_es, n_es, df_en, n_en))
    en = sorted(t for t in df_en if keep(t, df_en, n_en, df_es, n_es))
    return es, en, df_es, df_en


def mutual_nn(a: np.ndarray, b: np.ndarray, block: int = 2048) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For unit rows ``a`` (n, d) and ``b`` (m, d): ``(a→b argmax (n,), its cosine (n,), b→a argmax (m,))``,
    computed in blocks (memory ~ block × max(n, m) floats)."""
    ab = np.empty(a.shape[0], dtype=np.int64)
    ab_cos = np.empty(a.shape[0], dtype=np.float32)
    for i in range(0, a.shape[0], block):
        s = a[i : i + block] @ b.T
        ab[i : i + block] = s.argmax(axis=1)
        ab_cos[i : i + block] = s.max(axis=1)
    ba = np.empty(b.shape[0], dtype=np.int64)
    for j in range(0, b.shape[0], block):
        ba[j : j + block] = (b[j : j + block] @ a.T).argmax(axis=1)
    return ab, ab_cos, ba


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-df", type=int, default=20)
    ap.add_argument("--min-cos", type=float, default=0.5)
    ap.add_argument("--lang-ratio", type=float, default=4.0)
    ap.add_argument("--out", default=str(INDUCED_LEXICON_PATH))
    args = ap.parse_args()
    settings = get_settings()
    enc = build_encoder(EncoderSpec())
    p = load_passages(settings.index_dir / enc.name)
    texts, langs = p["text"].to_list(), [x or "" for x in p["language"].to_list()]
    es, en, df_es, df_en = vocabularies(texts, langs, args.min_df, args.lang_ratio)
    print(f"vocabularies: {len(es)} Spanish, {len(en)} English terms", flush=True)
    ve = enc.encode_queries(es).astype(np.float32)
    vn = enc.encode_queries(en).astype(np.float32)
    ab, ab_cos, ba = mutual_nn(ve, vn)
    pairs = [
        (es[i], en[ab[i]], float(ab_cos[i]))
        for i in range(len(es))
        if ba[ab[i]] == i and ab_cos[i] >= args.min_cos and es[i] != en[ab[i]]
    ]
    out = Path(args.out)
    with out.open("w", encoding="utf-8") as f:
        f.write(
            "# Spanish→English term lexicon induced by mutual nearest neighbours in the multilingual USE space\n"
            f"# (evals/induce_lexicon.py: min df {args.min_df}, min cosine {args.min_cos}, language ratio "
            f"{args.lang_ratio}; {len(es)} Spanish × {len(en)} English corpus terms). UNREVIEWED.\n"
            "# spanish<TAB>english<TAB>cosine (folded BM25 tokens)\n"
        )
        for s, e, c in sorted(pairs):
            f.write(f"{s}\t{e}\t{c:.3f}\n")
    print(f"{len(pairs)} pairs written to {out}", flush=True)


if __name__ == "__main__":
    main()
