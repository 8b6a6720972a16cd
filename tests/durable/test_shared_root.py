"""Several backends and processes on one root see one state: ids stay unique and a pool has one winner."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sagemaker_plans_local import LocalBackend
from tests.conftest import START
from tests.durable.processes import Worker
from tests.durable.views import state_of
from tests.durable.worker import job_request


def test_two_backends_of_one_process_share_a_root(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as first, LocalBackend(root=tmp_path) as second:
        first.client().create_training_job(**job_request("by-first", keep_alive=900))
        assert (
            second.client().describe_training_job(TrainingJobName="by-first")["TrainingJobStatus"]
            == "InProgress"
        )
        second.clock.advance(timedelta(minutes=15))
        assert first.clock.now() == START + timedelta(minutes=15)
        first.settings.max_keep_alive_seconds = 7200
        second.client().create_training_job(
            **job_request("by-second", keep_alive=900)
        )  # reuses by-first's pool
        assert state_of(first) == state_of(second)
        assert first.settings.max_keep_alive_seconds == second.settings.max_keep_alive_seconds == 7200
        pool = second.client().describe_training_job(TrainingJobName="by-first")["WarmPoolStatus"]
        assert pool["ReusedByJob"] == "by-second"


def test_a_second_process_sees_the_first_ones_state(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        backend.client().create_training_job(**job_request("mine", keep_alive=0))
        other = Worker()
        try:
            assert other.ask("open", str(tmp_path)) == str(START)
            assert other.ask("describe", "mine")["TrainingJobStatus"] == "InProgress"
            other.ask("advance", 3600)  # the other process moves the shared clock
            assert (
                backend.client().describe_training_job(TrainingJobName="mine")["TrainingJobStatus"]
                == "Completed"
            )
            assert backend.clock.now() == START + timedelta(hours=1)
        finally:
            other.stop()


@pytest.fixture
def racers():
    workers = [Worker(), Worker()]
    yield workers
    for worker in workers:
        worker.stop()


def test_two_processes_racing_for_one_available_pool_have_exactly_one_winner(tmp_path, racers):
    trials = 8
    for trial in range(trials):
        root = tmp_path / f"trial-{trial}"
        with LocalBackend(root=root, start_time=START) as backend:
            backend.client().create_training_job(**job_request("seed", keep_alive=900))
            backend.wait_for_training_job("seed")
            assert (
                backend.client().describe_training_job(TrainingJobName="seed")["WarmPoolStatus"]["Status"]
                == "Available"
            )
        for racer in racers:
            racer.ask("open", str(root))
        for index, racer in enumerate(racers):  # both requests in flight at once
            racer.send("job", f"racer-{index}", 900, None, 0)
        for racer in racers:
            racer.answer()
        with LocalBackend(root=root) as backend:
            sm = backend.client()
            reused_by = sm.describe_training_job(TrainingJobName="seed")["WarmPoolStatus"].get("ReusedByJob")
            assert reused_by in ("racer-0", "racer-1")
            backend.clock.advance(backend.settings.cold_start_seconds)  # the loser's instances are up
            pools = {name: backend.training_job(name).pool for name in ("seed", "racer-0", "racer-1")}
            assert pools[reused_by] is pools["seed"]  # the winner took the seed's pool
            loser = ({"racer-0", "racer-1"} - {reused_by}).pop()
            assert pools[loser] is not pools["seed"]  # the loser started cold, on a pool of its own
            assert pools[loser].pool_id != pools["seed"].pool_id
            assert pools[loser].cache_dir != pools["seed"].cache_dir
        for racer in racers:
            racer.ask("close")
