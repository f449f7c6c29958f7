"""A /chat run's query-time re-ranker encodings are bounded per run (``AgentConfig.rerank_encodes_per_run``),
on the real test index with the real e5 re-ranker (no precomputed re-ranker vectors: every one is
encoded at query time, the state of a corpus whose ``rerank_vectors`` asset is incomplete)."""

from __future__ import annotations

from radar_pipeline.agent.runner import AgentConfig, AgentRunner
from radar_pipeline.retrieval.search import Searcher
from radar_pipeline.retrieval.service import RetrievalService


class CountingReranker:
    """The real e5 re-ranker, counting the passages it encodes."""

    def __init__(self, inner):
        self.inner, self.name, self.version, self.dim = inner, inner.name, "1", inner.dim
        self.passages = 0

    def encode_passages(self, texts):
        self.passages += len(texts)
        return self.inner.encode_passages(texts)

    def encode_queries(self, texts):
        return self.inner.encode_queries(texts)


QUESTIONS = [
    "¿Cómo evolucionó la política de ciberdefensa de Colombia entre 2011 y 2013?",  # period: year searches
    "What risks does space debris pose to satellites in low orbit?",
]


def _run(agent_index, use_encoder, e5_encoder, per_run, question):
    rr = CountingReranker(e5_encoder)
    svc = RetrievalService(Searcher(agent_index[0], use_encoder, reranker=rr))
    runner = AgentRunner(lambda: svc, use_encoder, config=AgentConfig(rerank_encodes_per_run=per_run))
    return runner.run(question), rr


def test_a_run_encodes_at_most_its_budget(agent_index, use_encoder, e5_encoder):
    for q in QUESTIONS:
        res, rr = _run(agent_index, use_encoder, e5_encoder, 3, q)
        searches = [t for t in res.tools_called if t["name"] in ("search_evidence", "search_documents")]
        assert len({t["input_parameters"]["query"] for t in searches}) >= 2  # several searches shared it
        assert res.estado in ("respondida", "incompleta") and res.citas
        assert 0 < rr.passages <= 3
        # each search's limit is in the provenance (``radar replay`` searches under it again)
        limits = {s["query"]: s["rerank_encode_limit"] for s in res.provenance["searches"]}
        assert all(v is not None and 0 <= v <= 3 for v in limits.values()) and max(limits.values()) > 0
    # budget 0: nothing encoded at query time, the second stage imputes; the run still answers
    res, rr = _run(agent_index, use_encoder, e5_encoder, 0, QUESTIONS[0])
    assert rr.passages == 0 and res.estado == "respondida" and res.citas


def test_without_a_run_budget_each_search_has_its_own_limit(agent_index, use_encoder, e5_encoder):
    """The previous behaviour (None): ≤ 8 per search, so a run of several searches encodes more."""
    res, rr = _run(agent_index, use_encoder, e5_encoder, None, QUESTIONS[0])
    assert rr.passages > 8 and res.estado == "respondida"
