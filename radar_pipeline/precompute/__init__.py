"""Stage 1b — precomputes the dashboard and the agent read (SPEC "Stage 1b").

Plain Python, no Dagster (the assets live in ``assets/precompute.py``):

- ``text``        length-preserving case/accent folding; one trie-shaped regex per dictionary
- ``entities``    the reviewed entity dictionary (``data/entities.yaml``) and its matcher
- ``places``      the gazetteer from ``../shared/geo`` + ``data/places.yaml``, place resolution
- ``boilerplate`` page headers/footers and postal addresses blanked before matching
- ``dates``       publication dates from source metadata only, with the rule that produced them
- ``alerts``      Ombudsman early warnings (code, type when stated, groups, places, passages)
- ``presence``    Amazon Underworld armed-group presence per municipality (three states)
- ``aggregates``  dashboard aggregates, each row with the passages it counts
- ``evidence``    the check that cited passages really contain the counted mention
- ``tables`` / ``versioning``  history-keeping tables (supersede, never overwrite)
- ``schemas``     pandera contracts; ``pipeline`` the ``materialize_*`` functions the assets call
- ``reader`` / ``filters``  the one reader of these tables (API, agent, dashboard) and its ``Filters``
"""
