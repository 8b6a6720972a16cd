"""Real processes on a manual clock: advance waits for them; stop and MaxRuntime end them."""

import io
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
from datetime import timedelta

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.durable import detached
from sagemaker_plans_local.durable.runs import INSTANCE_FAILURE
from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.runtime.processes import SUPERVISED
from sagemaker_plans_local.sdk.default_backend import default_backend_root
from tests.runtime.test_orphans import alive, escaper_source, pids_file, read_pids, still_alive  # noqa: F401
from tests.sdk.test_fit import estimator  # noqa: F401  (shared builder)

SLEEPER = textwrap.dedent("""
    import os, pathlib, sys, time
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    print("sleeping", seconds, flush=True)
    time.sleep(seconds)
    pathlib.Path(os.environ["SM_MODEL_DIR"], "done").write_text("yes")
""")


@pytest.fixture
def sleeper(tmp_path, sagemaker_session):
    directory = tmp_path / "sleeper"
    directory.mkdir()
    (directory / "train.py").write_text(SLEEPER)
    sagemaker_session.boto_session.client("s3").create_bucket(Bucket="fit-bucket")
    return directory


def start(session, source, name, seconds, **extra):
    job = estimator(session, source, hyperparameters={"seconds": seconds}, **extra)
    job.fit(job_name=name, wait=False)
    return job


def model_files(session, name):
    body = (
        session.boto_session.client("s3")
        .get_object(Bucket="fit-bucket", Key=f"output/{name}/output/model.tar.gz")["Body"]
        .read()
    )
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        return archive.getnames()


def test_advance_waits_for_the_process_and_places_its_end(sagemaker_backend, sagemaker_session, sleeper):
    start(sagemaker_session, sleeper, "slow", 0.5)
    sagemaker_backend.clock.advance(3600)  # returns once the real process has ended
    described = sagemaker_session.describe_training_job("slow")
    assert described["TrainingJobStatus"] == "Completed"
    assert model_files(sagemaker_session, "slow") == ["done"]  # the script ran to its end
    # the run's end is where the process ended, within the hour advanced, not at its end
    assert described["TrainingStartTime"] + timedelta(seconds=0.5) <= described["TrainingEndTime"]
    assert described["TrainingEndTime"] < sagemaker_backend.clock.now() == FIXTURE_START + timedelta(hours=1)


def test_advance_shorter_than_the_run_leaves_it_running(sagemaker_backend, sagemaker_session, sleeper):
    start(sagemaker_session, sleeper, "long", 30)
    sagemaker_backend.clock.advance(180 + 1)  # provisioning, then one second of the run
    assert sagemaker_session.describe_training_job("long")["TrainingJobStatus"] == "InProgress"
    sagemaker_session.sagemaker_client.stop_training_job(TrainingJobName="long")
    job = sagemaker_backend.wait_for_training_job("long")
    assert (job.status, job.secondary_status) == ("Stopped", "Stopped")


def test_max_runtime_stops_a_running_script(sagemaker_backend, sagemaker_session, sleeper):
    start(sagemaker_session, sleeper, "capped", 60, max_run=1)
    job = sagemaker_backend.wait_for_training_job("capped")
    assert (job.status, job.secondary_status) == ("Stopped", "MaxRuntimeExceeded")
    assert model_files(sagemaker_session, "capped") == []  # the sleep was cut short: no "done"


FIT_PARENT = textwrap.dedent("""
    import sys
    from sagemaker_plans_local import Estimator, Session
    session = Session()  # local: the process-wide default backend, on the wall clock
    session.boto_session.client("s3").create_bucket(Bucket="fit-bucket")
    Estimator(image_uri="my-image", role="SageMakerRole", instance_count=1, instance_type="ml.m5.large",
              entry_point="escaper.py", source_dir=sys.argv[1], output_path="s3://fit-bucket/output",
              hyperparameters={"pids": sys.argv[2], "stay": 600}, sagemaker_session=session).fit(logs=False)
""")


@pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")
def test_a_fit_outlives_its_killed_parent_and_dies_with_the_runner(tmp_path, pids_file):  # noqa: F811 (fixture)
    source = escaper_source(tmp_path)
    parent = subprocess.Popen(
        [sys.executable, "-c", FIT_PARENT, str(source), str(pids_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        pids = read_pids(pids_file, 4, limit=120)  # sleepers, entry point, supervisor
        assert all(alive(pid) for pid in pids)
    finally:
        parent.send_signal(signal.SIGKILL)
        _, stderr = parent.communicate()
    assert parent.returncode == -signal.SIGKILL, stderr.decode()
    assert all(alive(pid) for pid in pids)  # the root's detached runner runs them, not the parent
    runner = detached.runner_pid(default_backend_root())
    assert runner is not None
    os.kill(runner, signal.SIGKILL)
    assert still_alive(pids) == []
    with LocalBackend(root=default_backend_root(), runner="detached") as backend:
        job = backend.client().list_training_jobs()["TrainingJobSummaries"][0]
        described = backend.client().describe_training_job(TrainingJobName=job["TrainingJobName"])
        assert (described["TrainingJobStatus"], described["FailureReason"]) == ("Failed", INSTANCE_FAILURE)
