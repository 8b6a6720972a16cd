"""SDK v2's Estimator against a server (collected under v2 only: tests/sdk/conftest.py)."""

from __future__ import annotations

from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.sdk.session import session_class
from tests.sdk.test_remote_session import IMAGE, ROLE, model_text


def estimator(session, source, **extra):
    from sagemaker.estimator import Estimator

    return Estimator(
        image_uri=IMAGE,
        role=ROLE,
        instance_count=1,
        instance_type="ml.m5.large",
        entry_point="train.py",
        source_dir=str(source),
        sagemaker_session=session,
        **extra,
    )


def test_fit_runs_the_entry_point_in_the_server_and_ends_its_clock_at_the_jobs_end(
    sagemaker_server, remote_source, capsys
):
    session = session_class()(endpoint_url=sagemaker_server.url)
    job = estimator(session, remote_source)
    job.fit(job_name="remote-1", logs="All")
    assert "trained in the server" in capsys.readouterr().out
    backend = sagemaker_server.backend()
    assert backend.training_job("remote-1").status == "Completed"
    described = backend.client("sagemaker").describe_training_job(TrainingJobName="remote-1")
    assert job.model_data == described["ModelArtifacts"]["S3ModelArtifacts"]
    assert job.model_data.startswith("s3://sagemaker-us-east-1-123456789012/")  # the SDK's default bucket
    assert model_text(sagemaker_server, job.model_data) == "seen: "
    # only the waits' next-change steps moved the manual clock: it stops at the job's last change
    assert FIXTURE_START < backend.clock.now() == described["TrainingEndTime"]


def test_a_second_fit_reuses_the_first_jobs_warm_pool_in_the_server(sagemaker_server, remote_source):
    session = session_class()(endpoint_url=sagemaker_server.url)
    first = estimator(session, remote_source, keep_alive_period_in_seconds=600)
    first.fit(job_name="pool-1", logs=False)
    second = estimator(session, remote_source, keep_alive_period_in_seconds=600)
    second.fit(job_name="pool-2", logs=False)
    sagemaker = sagemaker_server.backend().client("sagemaker")
    assert (
        sagemaker.describe_training_job(TrainingJobName="pool-1")["WarmPoolStatus"]["ReusedByJob"] == "pool-2"
    )
    assert model_text(sagemaker_server, second.model_data) == "seen: pool-1 "  # the pool's cache kept
