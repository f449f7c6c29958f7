from tests.radar_pipeline.agent.support_index import *  # noqa: F403 - re-exports the agent service fixtures (offline_service)
