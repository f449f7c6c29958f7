"""Reading the question: what it asks and names, with no role of the run (no retrieval, no model).

``understanding`` (period, places, entities: ``QuestionReader``), ``intent`` (which view the words ask
for), ``views`` (the vocabulary of ``precompute/data/views.yaml``), ``rules`` (the one interpreter of
the phrasing rules kept as data, ``precompute/data/reading_rules.yaml``), ``periods``, ``place_resolver``,
``anchors``, ``requirements`` (the coverage a run must meet, the question's terms) and ``learned``
(the learned reader beside the rules). Nothing here imports ``agent.roles`` or the runner
(import-linter contracts in pyproject.toml).
"""
