"""Sentence vectors for the multi-granularity dense score (``RetrievalConfig.sentence_weight``).

Only the evaluation builds them (one more encoding pass over the corpus); the file format is
``radar_pipeline.stores.sentence_vectors``.
"""

from __future__ import annotations

from pathlib import Path

from radar_pipeline.encoders import Encoder
from radar_pipeline.sentences import split_sentences
from radar_pipeline.stores.sentence_vectors import save_sentence_vectors


def build_sentence_vectors(
    index_dir: Path, encoder: Encoder, texts: list[str], languages: list[str | None], cache=None
) -> int:
    """Encode every sentence of every passage (row order of the passage table) and save the
    vectors with their owning row. ``cache(texts) -> vectors`` may replace direct encoding.
    Returns the sentence count. Cost ≈ one more encoding pass over the corpus."""
    sents, owner = [], []
    for row, (text, lang) in enumerate(zip(texts, languages, strict=False)):
        for s in split_sentences(text, lang):
            if s.strip():
                sents.append(s.strip())
                owner.append(row)
    vecs = cache(sents) if cache else encoder.encode_passages(sents)
    save_sentence_vectors(index_dir, vecs, owner)
    return len(sents)
