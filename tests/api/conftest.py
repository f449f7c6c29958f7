from tests.agent.fixtures import *  # noqa: F401,F403
