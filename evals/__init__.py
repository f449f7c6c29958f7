"""Radar's evaluation package: benchmark loaders (``evals.datasets``) and run scoring (``evals.scoring``).

The data is read in place from ``<shared>/eval`` (``RADAR_SHARED_DIR``, default ``<repo>/../shared``);
the metric definitions live in ``evals.metrics`` and the cross-chunking passage grading
in ``evals.relevance``.
"""
