"""Multi-instance jobs run as a cluster: algo-<i> resolve, instances meet by hostname and exchange data."""

from __future__ import annotations

import json

import pytest

from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.runtime.network import AddressBlocks, block_address, hosts_file
from tests.runtime.test_container import container_job
from tests.runtime.world import SCRIPTS

pytestmark = pytest.mark.skipif(views.unavailable() is not None, reason="no views on this machine")


def seen_lines(world, run) -> list[dict]:
    found = []
    for stream in run.streams:
        lines = [line for line in world.lines(stream) if line.startswith("seen ")]
        assert len(lines) == 1, world.lines(stream)
        found.append(json.loads(lines[0][len("seen ") :]))
    return found


@pytest.mark.parametrize("count", [2, 4])
def test_script_instances_rendezvous_by_hostname_and_exchange_data(world, count):
    job = world.job(f"meet{count}", "rendezvous.py", count=count)
    run, result = world.run(job, timeout=120)
    assert result.exit_code == 0, result.failure_reason
    names = [f"algo-{i}" for i in range(1, count + 1)]
    seen = seen_lines(world, run)
    assert [s["hostname"] for s in seen] == names  # each instance's own hostname
    assert all(s["heard"] == names for s in seen)  # algo-1 heard every other, and each heard back
    addresses = seen[0]["addresses"]
    assert all(s["addresses"] == addresses for s in seen)  # one view of the cluster
    assert len(set(addresses.values())) == count
    assert all(a.startswith("127.") and not a.startswith("127.0.") for a in addresses.values())


def test_two_jobs_at_once_each_have_their_own_algo_1(world):
    runs = [
        world.executor.start(world.job(name, "rendezvous.py", count=2), world.clock.now()) for name in "ab"
    ]
    results = [run.wait(120) for run in runs]
    assert [r.exit_code for r in results] == [0, 0], [r.failure_reason for r in results]
    first, second = (seen_lines(world, run)[0]["addresses"]["algo-1"] for run in runs)
    assert first != second  # the same port on algo-1, two listeners: separate addresses


def test_container_instances_rendezvous_by_hostname(world):
    command = ["python", "/opt/ml/input/data/code/rendezvous.py"]
    job = container_job(world, "cmeet", command, count=3)
    world.store.put_object("bucket", "cmeet/code/rendezvous.py", (SCRIPTS / "rendezvous.py").read_bytes())
    run, result = world.run(job, timeout=120)
    assert result.exit_code == 0, result.failure_reason
    seen = seen_lines(world, run)
    assert [s["hostname"] for s in seen] == ["algo-1", "algo-2", "algo-3"]
    assert all(s["heard"] == ["algo-1", "algo-2", "algo-3"] for s in seen)


def test_address_blocks_are_never_shared_by_two_runs():
    blocks = AddressBlocks(seed=7)
    first, second = blocks.reserve(2), blocks.reserve(300)  # 300 instances: two blocks
    assert second not in (first,) and first not in (second, second + 1)
    assert block_address(second, 254) == block_address(second + 1, 0)
    blocks.release(first, 2)
    assert {blocks.reserve(1) for _ in range(3)}.isdisjoint({second, second + 1})


def test_the_hosts_file_keeps_the_machines_lines_and_names_every_instance(tmp_path):
    machine = tmp_path / "hosts"
    machine.write_text("127.0.0.1 localhost\n10.0.0.5 db")
    text = hosts_file(["algo-1", "algo-2"], 0, machine)
    assert text.splitlines()[:2] == ["127.0.0.1 localhost", "10.0.0.5 db"]
    assert text.splitlines()[-2:] == ["127.1.0.1\talgo-1", "127.1.0.2\talgo-2"]
