"""Idle accounts let their memory go: without a root a fresh account is dropped and one with state
suspended on disk, each made or resumed on use as it was; a durable one closed is garbage.

What is counted is live ``Emulation`` objects (one per open account), after a collection.
"""

from __future__ import annotations

import gc
import pickle
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.durable import snapshots
from sagemaker_plans_local.emulation import Emulation
from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import START
from tests.durable.worker import SLEEPER, job_request
from tests.server.clients import client, control
from tests.server.test_account_descriptors import fast_directory

A, B, C, D = "111111111111", "222222222222", "333333333333", "444444444444"
OFFERINGS = {
    "InstanceType": "ml.p5.48xlarge",
    "InstanceCount": 4,
    "DurationHours": 48,
    "TargetResources": ["training-job"],
}


def live_emulations() -> int:
    gc.collect()
    return sum(isinstance(thing, Emulation) for thing in gc.get_objects())


def small_server(root: Path | None = None, max_open: int = 2) -> LocalServer:
    server = LocalServer(root=root, start_time=START)
    server.accounts.max_open = max_open
    return server.start()


def offerings(server: LocalServer, key: str) -> list:
    """The account's offerings for :data:`OFFERINGS` (their ids left out: each search makes its own)."""
    found = client(server, key=key).search_training_plan_offerings(**OFFERINGS)["TrainingPlanOfferings"]
    return [{k: v for k, v in offering.items() if k != "TrainingPlanOfferingId"} for offering in found]


def suspended_files(server: LocalServer, account: str) -> list[Path]:
    """The suspended state files in an open account's root (a helper: an assertion would hold the backend)."""
    return list(server.accounts._open[account].root.glob("suspended*"))


def touch(server: LocalServer, count: int, first: int = 500_000_000_000) -> None:
    """One ListTrainingJobs in each of ``count`` new accounts, over HTTP."""
    for number in range(count):
        assert client(server, key=str(first + number)).list_training_jobs()["TrainingJobSummaries"] == []


@pytest.mark.parametrize("durable", [False, True], ids=["in memory", "durable"])
def test_accounts_touched_once_leave_only_the_open_ones_in_memory(durable, tmp_path):
    before = live_emulations()
    with small_server(tmp_path / "root" if durable else None, max_open=4) as server:
        touch(server, 40)
        assert live_emulations() - before <= 4 + 1  # the open ones (and the default account)
        assert len(server.accounts._idle.created) == (0 if durable else 40 - 4)
    assert live_emulations() == before


def test_a_fresh_account_made_again_is_where_it_was():
    with small_server() as server, small_server(max_open=100) as kept:
        for each in (server, kept):
            touch(each, 1, first=int(A))
            each.accounts.advance(86_400 * 10)
        touch(server, 3)
        assert A in server.accounts._idle.created  # dropped: it held nothing
        found = offerings(server, A)  # laid out from when it was first made, as if it had stayed
        assert found and found == offerings(kept, A)
        assert server.backend(A).clock.now() == START + timedelta(days=10)


def test_an_account_with_state_is_suspended_and_comes_back_with_it():
    with small_server() as server:
        sm, s3 = client(server, key=A), client(server, "s3", key=A)
        s3.create_bucket(Bucket="kept")
        s3.put_object(Bucket="kept", Key="k", Body=b"body")
        sm.create_training_job(**job_request("suspended", keep_alive=600))
        assert control(server, f"settings?account={A}", {"job_runtime_seconds": 300})[0] == 200
        before = live_emulations()
        touch(server, 3)
        assert A in server.accounts._idle.suspended and A not in server.accounts._open
        assert live_emulations() <= before  # its state left memory (the fresh ones too)
        server.accounts.advance(3600)  # its job's changes fall due: it is resumed for them
        job = sm.describe_training_job(TrainingJobName="suspended")
        assert job["TrainingJobStatus"] == "Completed"
        assert job["TrainingEndTime"] - job["TrainingStartTime"] == timedelta(seconds=300)
        assert s3.get_object(Bucket="kept", Key="k")["Body"].read() == b"body"
        assert server.backend(A).clock.now() == START + timedelta(seconds=3600)


def test_the_next_change_of_a_suspended_account_is_found():
    with small_server() as server:
        client(server, key=A).create_training_job(**job_request("suspended", keep_alive=0))
        touch(server, 3)
        assert A in server.accounts._idle.suspended
        steps = []
        while (answer := control(server, "clock", {"next_change": True})[1])["changed"]:
            steps.append(answer["now"])
        assert steps and steps == sorted(steps)
        job = client(server, key=A).describe_training_job(TrainingJobName="suspended")
        assert job["TrainingJobStatus"] == "Completed"
        assert job["TrainingEndTime"] <= server.accounts.now()


@pytest.mark.parametrize("failure", [pickle.PicklingError, OSError])
def test_an_account_whose_state_cannot_be_written_stays_in_memory(failure, monkeypatch):
    def refuse(_emulation):
        raise failure("a run in progress, or no space left on the device")

    with small_server() as server:
        client(server, "s3", key=A).create_bucket(Bucket="stays")
        monkeypatch.setattr(snapshots, "dumps", refuse)
        touch(server, 3)  # answered, though A cannot be let go
        assert A in server.accounts._open and not suspended_files(server, A)
        monkeypatch.undo()
        touch(server, 3, first=600_000_000_000)
        assert A in server.accounts._idle.suspended
        assert [b["Name"] for b in client(server, "s3", key=A).list_buckets()["Buckets"]] == ["stays"]


def test_a_reset_empties_suspended_accounts_and_keeps_their_settings():
    with small_server() as server:
        for number, key in enumerate((A, B, C, D)):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
            assert control(server, f"settings?account={key}", {"job_runtime_seconds": 100 + number})[0] == 200
        assert A in server.accounts._idle.suspended
        suspended = server.accounts._idle.suspended[A].path
        assert control(server, "reset")[1]["now"] == START.isoformat()
        assert not suspended.exists() and not server.accounts._idle.suspended
        for number, key in enumerate((A, B, C, D)):
            assert client(server, "s3", key=key).list_buckets()["Buckets"] == []
            kept = control(server, f"settings?account={key}", method="GET")[1]
            assert kept["job_runtime_seconds"] == 100 + number


def test_an_accounts_own_reset_empties_it_when_suspended_and_keeps_its_settings():
    with small_server() as server:
        for key in (A, B, C):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert control(server, f"settings?account={A}", {"job_runtime_seconds": 123})[0] == 200
        touch(server, 3)
        assert A in server.accounts._idle.suspended
        suspended = server.accounts._idle.suspended[A].path
        assert control(server, f"reset?account={A}")[0] == 200
        assert not suspended.exists() and A not in server.accounts._idle.suspended
        assert client(server, "s3", key=A).list_buckets()["Buckets"] == []
        assert control(server, f"settings?account={A}", method="GET")[1]["job_runtime_seconds"] == 123
        assert [b["Name"] for b in client(server, "s3", key=B).list_buckets()["Buckets"]] == [f"b-{B}"]


def test_a_backend_handed_out_is_suspended_not_dropped():
    with small_server() as server:
        server.backend(A).capacity.clear()  # a change the server does not see
        touch(server, 3)
        assert A in server.accounts._idle.suspended
        assert offerings(server, A) == []


def test_a_stopped_server_leaves_no_suspended_state():
    with small_server() as server:
        client(server, "s3", key=A).create_bucket(Bucket="gone")
        touch(server, 3)
        suspended = server.accounts._idle.suspended[A].path
        assert suspended.exists()
    assert not suspended.exists()


def test_an_account_whose_job_code_runs_stays_in_memory_until_it_ends(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "sleeper.py").write_text(SLEEPER)
    with small_server() as server:
        server.backend(A).settings.cold_start_seconds = 0
        sm = client(server, key=A)
        sm.create_training_job(**job_request("running", keep_alive=0, source=str(source), seconds=600))
        server.accounts.advance(1)  # training starts: sleeper.py runs (for ten real minutes)
        touch(server, 3)
        assert A in server.accounts._open
        assert sm.describe_training_job(TrainingJobName="running")["SecondaryStatus"] == "Training"
        sm.stop_training_job(TrainingJobName="running")
        server.backend(A).wait_for_training_job("running")
        touch(server, 3, first=600_000_000_000)
        assert A in server.accounts._idle.suspended
        assert sm.describe_training_job(TrainingJobName="running")["TrainingJobStatus"] == "Stopped"


ACTIONS = ["bucket", "list", "job", "describe", "offerings", "advance"]


def _step(server: LocalServer, key: str, action: str, number: int) -> object:
    """What one action answers (the parts that do not change from server to server)."""
    sm, s3 = client(server, key=key), client(server, "s3", key=key)
    if action == "bucket":
        s3.create_bucket(Bucket=f"b-{number}")
        return [b["Name"] for b in s3.list_buckets()["Buckets"]]
    if action == "list":
        return [
            (j["TrainingJobName"], j["TrainingJobStatus"])
            for j in sm.list_training_jobs()["TrainingJobSummaries"]
        ]
    if action == "job":
        sm.create_training_job(**job_request(f"job-{number}", keep_alive=300))
        return None
    if action == "describe":
        jobs = sm.list_training_jobs()["TrainingJobSummaries"]
        return [
            sm.describe_training_job(TrainingJobName=j["TrainingJobName"])["SecondaryStatusTransitions"]
            for j in jobs
        ]
    if action == "offerings":
        return offerings(server, key)
    server.accounts.advance(3 * 3600)
    return server.accounts.now()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([A, B, C, D]), st.sampled_from(ACTIONS)), min_size=1, max_size=10))
def test_accounts_let_go_answer_as_accounts_kept_in_memory(steps):
    with small_server(max_open=1) as small, small_server(max_open=100) as large:
        for number, (key, action) in enumerate(steps):
            assert _step(small, key, action, number) == _step(large, key, action, number)
        for key in {key for key, _ in steps}:
            assert small.backend(key).clock.now() == large.backend(key).clock.now()


def test_a_durable_account_closed_lets_its_state_go():
    root = fast_directory()
    try:
        before = live_emulations()
        with small_server(root / "root", max_open=2) as server:
            for key in (A, B, C, D):
                client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
            assert live_emulations() - before <= 2 + 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
