"""A job's code runs in the process that started it; the others follow it, and outlive it."""

from __future__ import annotations

import signal
from datetime import timedelta

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.durable.runs import INSTANCE_FAILURE
from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.conftest import START
from tests.durable.processes import Worker
from tests.durable.worker import SLEEPER, job_request

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")


@pytest.fixture
def source(tmp_path):
    directory = tmp_path / "source"
    directory.mkdir()
    (directory / "sleeper.py").write_text(SLEEPER)
    return directory


@pytest.fixture
def owner():
    worker = Worker()
    yield worker
    worker.stop()


def _start_run(owner: Worker, root, source, seconds: float) -> None:
    with LocalBackend(root=root, start_time=START) as backend:
        backend.settings.cold_start_seconds = 0
    owner.ask("open", str(root))
    owner.ask("job", "trained", 0, str(source), seconds)
    owner.ask("advance", 1)  # training starts: the owner's process runs sleeper.py


def test_another_process_waits_for_a_run_to_its_end(tmp_path, source, owner):
    root = tmp_path / "root"
    _start_run(owner, root, source, seconds=1)
    with LocalBackend(root=root) as follower:
        job = follower.wait_for_training_job("trained")
        assert job.status == "Completed"
        described = follower.client().describe_training_job(TrainingJobName="trained")
        assert described["TrainingJobStatus"] == "Completed"
        assert _log_lines(follower, "trained") == ["sleeping", "slept"]  # the owner's output, journaled
    assert owner.ask("describe", "trained")["TrainingJobStatus"] == "Completed"
    owner.ask("close")
    with LocalBackend(root=root) as reopened:
        assert _log_lines(reopened, "trained") == ["sleeping", "slept"]


def _log_lines(backend, job: str) -> list[str]:
    logs = backend.client("logs")
    group = "/aws/sagemaker/TrainingJobs"
    streams = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=f"{job}/")["logStreams"]
    events = logs.get_log_events(logGroupName=group, logStreamName=streams[0]["logStreamName"])["events"]
    return [event["message"] for event in events]


def test_a_run_whose_process_was_killed_ends_as_an_instance_failure(tmp_path, source, owner):
    root = tmp_path / "root"
    _start_run(owner, root, source, seconds=600)
    assert owner.ask("describe", "trained")["SecondaryStatus"] == "Training"
    owner.process.send_signal(signal.SIGKILL)
    owner.process.wait()
    with LocalBackend(root=root) as reopened:
        described = reopened.client().describe_training_job(TrainingJobName="trained")
        assert described["TrainingJobStatus"] == "Failed"
        assert described["FailureReason"] == INSTANCE_FAILURE
        assert reopened.clock.now() == START + timedelta(seconds=1)
    with LocalBackend(root=root) as again:  # the failure was journaled once, for every later process
        assert (
            again.client().describe_training_job(TrainingJobName="trained")["FailureReason"]
            == INSTANCE_FAILURE
        )


def test_an_observer_never_runs_a_jobs_code_a_process_that_does_runs_it(tmp_path, source):
    root = tmp_path / "root"
    with LocalBackend(root=root, start_time=START) as runner:
        runner.settings.cold_start_seconds = 0
        runner.client().create_training_job(**job_request("watched", 0, str(source), 1))
        with LocalBackend(root=root, runs_code=False) as observer:
            observer.clock.advance(1)  # training starts where only the observer looks
            assert (
                observer.client().describe_training_job(TrainingJobName="watched")["SecondaryStatus"]
                == "Training"
            )
        # the observer is gone: had it run the code, the job would now be an instance failure
        assert runner.wait_for_training_job("watched").status == "Completed"
        assert _log_lines(runner, "watched") == ["sleeping", "slept"]


def test_after_a_restart_a_job_with_code_starts_warm_on_the_pool_a_dead_process_kept(tmp_path, source):
    root = tmp_path / "wall"
    with LocalBackend(root=root):  # a wall clock, as a notebook's default backend
        pass
    owner = Worker()
    try:
        owner.ask("open", str(root))
        owner.ask("job", "before-restart", 900, str(source), 0)
        assert owner.ask("wait", "before-restart") == "Completed"
    finally:
        owner.stop()  # the kernel dies; its pool was Available
    with LocalBackend(root=root) as restarted:
        sm = restarted.client()
        assert (
            sm.describe_training_job(TrainingJobName="before-restart")["WarmPoolStatus"]["Status"]
            == "Available"
        )
        sm.create_training_job(**job_request("after-restart", 900, str(source), 0))
        assert restarted.wait_for_training_job("after-restart").status == "Completed"
        kept = sm.describe_training_job(TrainingJobName="before-restart")["WarmPoolStatus"]
        assert kept["Status"] == "Reused" and kept["ReusedByJob"] == "after-restart"
        starting = sm.describe_training_job(TrainingJobName="after-restart")["SecondaryStatusTransitions"][0]
        assert (
            starting["EndTime"] - starting["StartTime"]
        ).total_seconds() < restarted.settings.service_seconds(
            restarted.settings.cold_start_seconds, manual_clock=False
        )  # a warm start, not a cold one
        assert _log_lines(restarted, "after-restart") == ["sleeping", "slept"]
