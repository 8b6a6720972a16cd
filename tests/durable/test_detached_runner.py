"""A root's detached runner: jobs outlive the process that created them (a notebook kernel restart).

Each "notebook" (``tests/durable/notebook.py``) opens the root with ``runner="detached"``
and creates jobs with code; the root's runner runs them. The notebooks carry a marker in
their environment, which the runner and the jobs' processes inherit: once the runner has
exited, no process on the machine may carry it.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.journal import DATABASE
from sagemaker_plans_local.durable import detached
from sagemaker_plans_local.durable.runs import INSTANCE_FAILURE
from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.durable.processes import REPO
from tests.durable.worker import SLEEPER
from tests.runtime.test_nothing_outlives import marked, poll

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")

#: Generous: how long a runner may take to start a job's code, end it, or exit.
LIMIT = 120.0


class Notebooks:
    """Starts notebooks on one wall-clock root, each with the marker; kills what is left at the end."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "root"
        self.source = tmp_path / "source"
        self.source.mkdir()
        (self.source / "sleeper.py").write_text(SLEEPER)
        self.marker = f"PLANS_LOCAL_TEST_NOTEBOOK={uuid.uuid4().hex}".encode()
        self.started: list[subprocess.Popen] = []

    def start(self, jobs: list, **plan) -> subprocess.Popen:
        name, value = self.marker.decode().split("=")
        document = {"root": str(self.root), "source": str(self.source), "jobs": jobs, **plan}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.durable.notebook", json.dumps(document)],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), name: value},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.started.append(process)
        return process

    def run(self, jobs: list, **plan) -> None:
        """A notebook that creates the jobs and exits."""
        process = self.start(jobs, **plan)
        out, _ = process.communicate("", timeout=LIMIT)
        assert process.returncode == 0 and out.splitlines() == ["created"]

    def processes(self) -> dict[int, str]:
        """The live processes carrying the marker but the notebooks (the runner, the jobs' processes)."""
        notebooks = {process.pid for process in self.started}
        return {pid: command for pid, command in marked(self.marker).items() if pid not in notebooks}

    def close(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.kill()
            process.communicate()
        for pid in marked(self.marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def notebooks(tmp_path):
    with LocalBackend(root=tmp_path / "root"):  # a wall-clock root, as the default backend's
        pass
    made = Notebooks(tmp_path)
    yield made
    made.close()


def observer(notebooks: Notebooks) -> LocalBackend:
    return LocalBackend(root=notebooks.root, runner="detached")


def wait_until_training(backend: LocalBackend, job: str) -> None:
    """Until the job's code runs (its first line is journaled)."""
    poll(lambda: log_lines(backend, job)[:1] == ["sleeping"], f"{job} runs its code", LIMIT)


def log_lines(backend: LocalBackend, job: str) -> list[str]:
    logs = backend.client("logs")
    group = "/aws/sagemaker/TrainingJobs"
    try:
        streams = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=f"{job}/")["logStreams"]
    except logs.exceptions.ResourceNotFoundException:  # no run has written a line yet
        return []
    if not streams:
        return []
    events = logs.get_log_events(logGroupName=group, logStreamName=streams[0]["logStreamName"])["events"]
    return [event["message"] for event in events]


def assert_completed_with_outputs(backend: LocalBackend, job: str) -> None:
    described = backend.client().describe_training_job(TrainingJobName=job)
    assert described["TrainingJobStatus"] == "Completed"
    artifact = described["ModelArtifacts"]["S3ModelArtifacts"]
    assert artifact == f"s3://bucket/output/{job}/output/model.tar.gz"
    body = backend.client("s3").get_object(Bucket="bucket", Key=artifact.removeprefix("s3://bucket/"))["Body"]
    with tarfile.open(fileobj=io.BytesIO(body.read())) as archive:
        assert archive.getnames() == []  # sleeper.py writes no model file: the archive is there, empty
    assert log_lines(backend, job) == ["sleeping", "slept"]


def runner_exits(notebooks: Notebooks) -> None:
    poll(lambda: detached.runner_pid(notebooks.root) is None, "the runner exits", LIMIT)
    poll(lambda: not notebooks.processes(), "no process of the runner is left", LIMIT)


def test_a_job_runs_on_after_the_process_that_created_it_exits(notebooks):
    notebooks.run([["trained", 1]])
    assert detached.runner_pid(notebooks.root) is not None  # up before create_training_job returned
    with observer(notebooks) as later:
        job = later.wait_for_training_job("trained")
        assert (job.status, job.failure_reason) == ("Completed", None)
        assert_completed_with_outputs(later, "trained")
    runner_exits(notebooks)  # nothing to run, nobody on the root: it is gone
    with observer(notebooks) as reopened:  # the run's end was journaled once, for every later process
        assert_completed_with_outputs(reopened, "trained")
    assert detached.runner_pid(notebooks.root) is None  # a root with nothing to run starts no runner


def test_a_job_runs_on_after_its_process_is_killed(notebooks):
    kernel = notebooks.start([["survivor", 1]], hold=True)
    assert kernel.stdout is not None and kernel.stdout.readline() == "created\n"
    kernel.send_signal(signal.SIGKILL)
    kernel.communicate()
    runner_exits(notebooks)  # it ran the job to its end, then left
    with observer(notebooks) as later:
        assert_completed_with_outputs(later, "survivor")


def test_a_stop_from_another_process_reaches_the_run(notebooks):
    notebooks.run([["stopped", 600]])
    with observer(notebooks) as other:
        wait_until_training(other, "stopped")
        assert any("sleeper.py" in command for command in notebooks.processes().values())
        other.client().stop_training_job(TrainingJobName="stopped")
        job = other.wait_for_training_job("stopped")
        assert (job.status, job.secondary_status) == ("Stopped", "Stopped")
        poll(
            lambda: not any("sleeper.py" in command for command in notebooks.processes().values()),
            "the stopped job's process ends",
            LIMIT,
        )
    runner_exits(notebooks)


def test_several_processes_racing_share_one_runner(notebooks):
    kernels = [notebooks.start([[f"raced-{index}", 2]], barrier=True, hold=True) for index in range(4)]
    for kernel in kernels:
        assert kernel.stdout is not None and kernel.stdout.readline() == "open\n"
    for kernel in kernels:  # as close together as they can
        assert kernel.stdin is not None
        kernel.stdin.write("go\n")
        kernel.stdin.flush()
    for kernel in kernels:
        assert kernel.stdout is not None and kernel.stdout.readline() == "created\n"
    with observer(notebooks) as other:
        for index in range(4):
            assert other.wait_for_training_job(f"raced-{index}").status == "Completed"
    for kernel in kernels:
        kernel.communicate("", timeout=LIMIT)
    runner_exits(notebooks)
    with sqlite3.connect(notebooks.root / DATABASE) as database:
        claims = database.execute("SELECT job, owner FROM runs").fetchall()
    assert sorted(job for job, _ in claims) == [f"raced-{index}" for index in range(4)]
    assert len({owner for _, owner in claims}) == 1  # one process ran every job
    assert (notebooks.root / detached.LOG).read_text().count("running the jobs of") == 1


def test_a_runner_killed_mid_run_fails_its_job_as_an_instance_failure(notebooks):
    notebooks.run([["orphaned", 600]])
    with observer(notebooks) as other:
        wait_until_training(other, "orphaned")
        runner = detached.runner_pid(notebooks.root)
        assert runner is not None
        os.kill(runner, signal.SIGKILL)
        job = other.wait_for_training_job("orphaned")
        assert (job.status, job.failure_reason) == ("Failed", INSTANCE_FAILURE)
        poll(lambda: not notebooks.processes(), "the job's processes die with the runner", LIMIT)


def test_an_idle_runner_exits_while_a_process_still_has_the_root_open(notebooks):
    kernel = notebooks.start([["quick", 0]], settings={"runner_idle_seconds": 1}, hold=True)
    assert kernel.stdout is not None and kernel.stdout.readline() == "created\n"
    with observer(notebooks) as other:
        assert other.wait_for_training_job("quick").status == "Completed"
        runner_exits(notebooks)  # a second of nothing journaled, with nothing to run
        assert kernel.poll() is None  # the kernel is still there
    kernel.communicate("", timeout=LIMIT)


@pytest.mark.parametrize("root", [None, "given"])
def test_a_runner_other_than_detached_or_without_a_root_is_refused(tmp_path, root):
    with pytest.raises(ValueError, match="runner takes None or 'detached'"):
        LocalBackend(root=root and tmp_path / root, runner="elsewhere" if root else "detached")
