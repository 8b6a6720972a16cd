"""Real processes on a manual clock: advance waits for them; stop and MaxRuntime end them."""

import textwrap

import pytest

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


def test_advance_waits_for_the_process_and_places_its_end(sagemaker_backend, sagemaker_session, sleeper):
    start(sagemaker_session, sleeper, "slow", 0.5)
    sagemaker_backend.clock.advance(3600)  # returns once the real process has ended
    described = sagemaker_session.describe_training_job("slow")
    assert described["TrainingJobStatus"] == "Completed"
    ran = (described["TrainingEndTime"] - described["TrainingStartTime"]).total_seconds()
    assert 0.4 <= ran < 10  # virtual run time = real run time, not the hour advanced


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
    assert job.training_seconds < 60  # the 60 s sleep was cut short
