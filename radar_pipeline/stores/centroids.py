"""Phenomenon centroids of an index: ``<index>/phenomenon_centroids.json``.

Built with the dense index (mean unit vector of each phenomenon folder's passages), read by the
searcher to predict a question's phenomenon (``retrieval.phenomenon``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from radar_pipeline.stores.integrity import atomic_write_text
from radar_pipeline.vocabulary import PHENOMENA

CENTROIDS_FILE = "phenomenon_centroids.json"


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
    """Write ``<index>/phenomenon_centroids.json`` (phenomenon → list of floats) atomically."""
    atomic_write_text(index_dir / CENTROIDS_FILE, json.dumps(centroids))


def load_centroids(index_dir: Path) -> dict[str, np.ndarray]:
    """Phenomenon → float32 centroid ``(dim,)``; ``{}`` when the index has no centroid file."""
    path = index_dir / CENTROIDS_FILE
    if not path.exists():
        return {}
    return {k: np.asarray(v, dtype=np.float32) for k, v in json.loads(path.read_text()).items()}
