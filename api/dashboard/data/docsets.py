"""Document sets the dashboard narrows rows by: the domain library's
(``radar_pipeline.precompute.docsets``), re-exported."""

from radar_pipeline.precompute.docsets import DocSets, narrow  # noqa: F401 - re-exported
