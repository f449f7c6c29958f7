from tests.radar_pipeline.agent.support_index import *  # noqa: F403  (the agent service fixtures)
