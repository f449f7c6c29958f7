"""Dagster resources: thin, typed wrappers that own Radar's external systems."""
from resources.database import DatabaseResource
from resources.encoder import EncoderResource
from resources.storage import CorpusResource, IndexStoreResource, OcrResource

__all__ = ["DatabaseResource", "EncoderResource", "CorpusResource", "IndexStoreResource", "OcrResource"]
