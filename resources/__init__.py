"""Dagster resources: thin, typed wrappers that own Radar's external systems, one per settings concern.

Every field is optional: unset, it is read from the environment (``radar_pipeline.config``) when a
run uses the resource, so loading the code location evaluates no settings.
"""

from resources.database import DatabaseResource
from resources.encoder import EncoderResource, RerankerResource
from resources.stages import ChunkingResource, PrecomputeResource
from resources.storage import CorpusResource, IndexStoreResource, OcrResource

__all__ = [
    "DatabaseResource",
    "EncoderResource",
    "RerankerResource",
    "CorpusResource",
    "IndexStoreResource",
    "OcrResource",
    "ChunkingResource",
    "PrecomputeResource",
]
