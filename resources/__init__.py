"""Dagster resources: thin, typed wrappers that own Radar's external systems."""
from resources.database import DatabaseResource
from resources.encoder import EncoderResource, RerankerResource
from resources.storage import CorpusResource, IndexStoreResource, OcrResource

__all__ = ["DatabaseResource", "EncoderResource", "RerankerResource", "CorpusResource", "IndexStoreResource", "OcrResource"]
