import pytest

from radar_pipeline.agent.reading.understanding import QuestionReader
from tests.radar_pipeline.agent.support_index import *  # noqa: F403 - re-exports the agent service fixtures


@pytest.fixture(scope="module")
def reader(shared_dir):
    """The real gazetteer (../shared/geo) and entity dictionary; newest dated document: 2025."""
    return QuestionReader.from_shared(shared_dir, reference_year=2025)
