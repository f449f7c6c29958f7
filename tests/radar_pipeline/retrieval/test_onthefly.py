"""While only the lexical stage is live (the dense index not built yet: the first hour of `radar up`
on the full corpus), a search restricted to documents encodes the passages it scores at query time.
A long document made one such search take 86–200 s on 2 cores; the search now scores at most
``ONTHEFLY_ROWS`` passages, those naming the query's words first."""

from __future__ import annotations

import pytest

from radar_pipeline.ingest import OcrSettings
from radar_pipeline.retrieval.search import Searcher
from radar_pipeline.retrieval.service import ONTHEFLY_ROWS, RetrievalService
from radar_pipeline.stages import build_lexical_index, chunk_documents, extract_documents, sync_source_files
from radar_pipeline.stores.integrity import live_stages

pytestmark = [pytest.mark.pg, pytest.mark.model]


class CountingEncoder:
    """The real encoder, counting the passages it encodes."""

    def __init__(self, encoder):
        self._encoder, self.passages = encoder, 0

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def encode_passages(self, texts, *args, **kwargs):
        self.passages += len(texts)
        return self._encoder.encode_passages(texts, *args, **kwargs)


def test_a_long_documents_search_scores_few_passages_and_finds_the_one_naming_the_query(engine, tmp_path, use_encoder):
    root = tmp_path / "c"
    root.mkdir()
    filler = " ".join(
        f"Section {i}. The committee reviewed routine administrative matters, budgets for office supplies "
        f"and the schedule of meetings for the year, item {i} of the agenda, with no further business."
        for i in range(900)
    )
    needle = (
        "The Condor swarm programme of the army received a budget of 12 million dollars for autonomous "
        "drone swarms in 2022."
    )
    (root / "long.txt").write_text(filler[: len(filler) // 2] + " " + needle + " " + filler[len(filler) // 2 :])
    sync_source_files(engine, root)
    extract_documents(engine, root, OcrSettings(enabled=False), workers=1)
    chunk_documents(engine)
    index_dir = tmp_path / "idx"
    build_lexical_index(engine, use_encoder.name, index_dir)
    assert live_stages(index_dir)["dense"] is False
    counting = CountingEncoder(use_encoder)
    service = RetrievalService(Searcher(index_dir, counting))
    doc = service.doc_ids[0]
    assert len(service.doc_rows[doc]) > ONTHEFLY_ROWS  # a long document
    hits = service.search_passages("budget of the Condor drone swarm programme", k=5, doc_ids=[doc])
    assert any("Condor swarm programme" in h["text"] for h in hits)  # kept among the passages scored
    assert counting.passages <= ONTHEFLY_ROWS
