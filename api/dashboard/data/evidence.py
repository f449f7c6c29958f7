"""The passages behind rows of a dashboard view: the domain library's
(``radar_pipeline.precompute.view_evidence``), re-exported."""

from radar_pipeline.precompute.view_evidence import (  # noqa: F401 - re-exported
    ALERT_LABELS,
    EVIDENCE_FILTERS,
    GROUP_LABELS,
    ROW_COLUMNS,
    STATE_LABELS,
    Evidence,
    row_label,
)
