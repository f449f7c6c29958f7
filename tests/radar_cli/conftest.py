from tests.radar_pipeline.agent.support_index import *  # noqa: F401,F403  (the agent service fixtures)
