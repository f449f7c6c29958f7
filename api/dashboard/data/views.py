"""The dashboard's views: the domain library's (``radar_pipeline.precompute.views``), re-exported.

The view computations live in the domain library so that the agent's figures
(``radar_pipeline.agent.roles.figures``) and the dashboard read the one definition.
"""

from radar_pipeline.precompute.views import (  # noqa: F401 - re-exported
    GROUP_ENTITY,
    TABLES,
    VIEWS,
    Views,
    alert_kept,
    alerts_narrowed,
    municipality,
    period_year,
)
