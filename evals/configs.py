"""Named retrieval configurations: every rule of the policy as a switch, so each can be measured.

``DEFAULT`` is the configuration `radar search`, the API and the eval assets use; the table of
measurements behind the choice is in evals/README.md.
"""
from __future__ import annotations

from radar_pipeline.retrieval.policy import PolicyConfig
from radar_pipeline.retrieval.search import RetrievalConfig

_BASE = RetrievalConfig(name="dense", dense_weight=1.0, bm25_weight=0.0, glossary_bm25=False, glossary_dense=False,
                        phenomenon_boost=1.0, passage_ranking="dense")

CONFIGS: dict[str, RetrievalConfig] = {
    c.name: c for c in [
        _BASE,
        _BASE.with_(name="dense_nodedupe", policy=PolicyConfig(dedupe_texts=False, max_per_doc=10)),
        _BASE.with_(name="bm25", dense_weight=0.0, bm25_weight=1.0, passage_ranking="fused"),
        _BASE.with_(name="bm25_glossary", dense_weight=0.0, bm25_weight=1.0, glossary_bm25=True, passage_ranking="fused"),
        _BASE.with_(name="dense_boost", phenomenon_boost=1.05),
        _BASE.with_(name="dense_glossary", glossary_dense=True),
        _BASE.with_(name="hybrid", bm25_weight=0.3, passage_ranking="fused"),
        _BASE.with_(name="hybrid_glossary", bm25_weight=0.3, glossary_bm25=True, passage_ranking="fused"),
        _BASE.with_(name="hybrid_glossary_boost", bm25_weight=0.3, glossary_bm25=True, phenomenon_boost=1.05,
                    passage_ranking="fused"),
        _BASE.with_(name="hybrid_rrf", bm25_weight=1.0, glossary_bm25=True, fusion="rrf", passage_ranking="fused"),
    ]
}

DEFAULT_NAME = "hybrid_glossary_boost"


def get_config(name: str | None) -> RetrievalConfig:
    """The named configuration (``None`` → the default). Raises ``KeyError`` listing valid names."""
    name = name or DEFAULT_NAME
    if name not in CONFIGS:
        raise KeyError(f"unknown configuration {name!r}; known: {', '.join(CONFIGS)}")
    return CONFIGS[name]
