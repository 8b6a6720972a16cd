"""SDK v3 against a server: ``ModelTrainer(sagemaker_session=Session(endpoint_url=...)).train()``."""

from __future__ import annotations

import boto3
from sagemaker.core.helper.session_helper import Session as CoreSession
from sagemaker.core.training.configs import Compute, SourceCode
from sagemaker.train.model_trainer import ModelTrainer

from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.sdk.activation import activated
from sagemaker_plans_local.sdk.v3.session import Session
from tests.sdk.test_remote_session import IMAGE, ROLE, model_text


def trainer(session, source, name, keep_alive=0):
    return ModelTrainer(
        training_image=IMAGE,
        role=ROLE,
        sagemaker_session=session,
        base_job_name=name,
        source_code=SourceCode(source_dir=str(source), entry_script="train.py"),
        compute=Compute(
            instance_type="ml.m5.large", instance_count=1, keep_alive_period_in_seconds=keep_alive
        ),
    )


def train(model_trainer):
    model_trainer.train(logs=False)
    return model_trainer._latest_training_job


def test_train_runs_the_entry_point_in_the_server_and_ends_its_clock_at_the_jobs_end(
    sagemaker_server, remote_source
):
    job = train(trainer(Session(endpoint_url=sagemaker_server.url), remote_source, "remote"))
    assert job.training_job_status == "Completed"
    backend = sagemaker_server.backend()
    assert backend.training_job(job.training_job_name).status == "Completed"
    assert model_text(sagemaker_server, job.model_artifacts.s3_model_artifacts) == "seen: "
    described = backend.client("sagemaker").describe_training_job(TrainingJobName=job.training_job_name)
    assert FIXTURE_START < backend.clock.now() == described["TrainingEndTime"]


def test_a_second_train_reuses_the_first_jobs_warm_pool_in_the_server(sagemaker_server, remote_source):
    session = Session(endpoint_url=sagemaker_server.url)
    first = train(trainer(session, remote_source, "pool-a", keep_alive=600))
    second = train(
        trainer(session, remote_source, "pool-b", keep_alive=600)
    )  # the SDK names jobs by the second
    first.refresh()
    assert first.warm_pool_status.reused_by_job == second.training_job_name
    seen = model_text(sagemaker_server, second.model_artifacts.s3_model_artifacts)
    assert seen == f"seen: {first.training_job_name} "


def test_an_unmodified_trainer_trains_in_the_server_inside_an_activation(sagemaker_server, remote_source):
    with activated(endpoint_url=sagemaker_server.url):
        assert CoreSession().boto_session.client("sts").get_caller_identity()["Account"] == "123456789012"
        job = train(trainer(None, remote_source, "unmodified"))
        assert boto3.client("sagemaker").describe_training_job(TrainingJobName=job.training_job_name)[
            "TrainingJobStatus"
        ] == ("Completed")
    assert sagemaker_server.backend().training_job(job.training_job_name).status == "Completed"
