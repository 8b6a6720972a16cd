import pytest

from tests.runtime.world import World


@pytest.fixture
def world(tmp_path):
    world = World(tmp_path)
    yield world
    world.executor.close(10)
