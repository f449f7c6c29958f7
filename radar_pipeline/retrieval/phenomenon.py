"""Which phenomenon a question is about, from the question text alone.

Two signals, both built from the corpus, never from benchmark labels: (1) cosine similarity of
the question vector to each phenomenon's centroid (mean unit vector of that folder's passages,
saved with the index), and (2) glossary domains of the Spanish terms the question contains. The
prediction is the centroid argmax unless the glossary votes clearly for another phenomenon.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from radar_pipeline.retrieval.glossary import glossary_matches

CENTROIDS_FILE = "phenomenon_centroids.json"
PHENOMENA = ("ai_military", "space_security", "territorial")


def compute_centroids(vectors: np.ndarray, phenomena: list[str | None]) -> dict[str, list[float]]:
    """Unit-normalised mean vector per phenomenon over the passages labelled with it."""
    out = {}
    labels = np.array([p or "" for p in phenomena])
    for p in PHENOMENA:
        mask = labels == p
        if mask.any():
            c = vectors[mask].mean(axis=0)
            out[p] = (c / (np.linalg.norm(c) or 1.0)).astype(float).tolist()
    return out


def save_centroids(centroids: dict[str, list[float]], index_dir: Path) -> None:
    (index_dir / CENTROIDS_FILE).write_text(json.dumps(centroids))


def load_centroids(index_dir: Path) -> dict[str, np.ndarray]:
    path = index_dir / CENTROIDS_FILE
    if not path.exists():
        return {}
    return {k: np.asarray(v, dtype=np.float32) for k, v in json.loads(path.read_text()).items()}


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
