"""Which phenomenon a question is about, from the question text alone.

Two signals, both built from the corpus, never from benchmark labels: (1) cosine similarity of
the question vector to each phenomenon's centroid (mean unit vector of that folder's passages,
saved with the index by ``stores.centroids``), and (2) glossary domains of the Spanish terms the question contains. The
prediction is the centroid argmax unless the glossary votes clearly for another phenomenon.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from radar_pipeline.retrieval.glossary import glossary_matches
from radar_pipeline.vocabulary import PHENOMENA


def predict_phenomenon(question: str, qvec: np.ndarray | None, centroids: dict[str, np.ndarray]) -> str | None:
    """The question's phenomenon, or None when neither signal has anything to say."""
    votes = Counter(e.domain for e in glossary_matches(question) if e.domain in PHENOMENA)
    best_c = None
    if qvec is not None and centroids:
        sims = {p: float(qvec.ravel() @ c) for p, c in centroids.items()}
        best_c = max(sims, key=sims.get)
    if votes:
        (top, n), *rest = votes.most_common()
        runner = rest[0][1] if rest else 0
        if n >= runner + 2 or best_c is None:
            return top
    return best_c
