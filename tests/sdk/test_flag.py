"""The same workflow in both modes: AWS mode (botocore's Stubber on the session's
client) sends exactly the requests the backend receives in local mode."""

import boto3
import pytest
from botocore.stub import Stubber

from sagemaker_plans_local import Estimator, LocalBackend, Session
from tests.conftest import ROLE, START

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-gpu-py311"


def workflow(session):
    """What a user's script does: buy a plan, train on it with a warm pool, adjust the pool."""
    offerings = session.search_training_plan_offerings("ml.p5.48xlarge", 1, 24)
    plan_arn = session.create_training_plan("flag-plan", offerings[0]["TrainingPlanOfferingId"])
    estimator = Estimator(
        image_uri=IMAGE,
        role=ROLE,
        instance_count=1,
        instance_type="ml.p5.48xlarge",
        keep_alive_period_in_seconds=600,
        training_plan=plan_arn,
        output_path="s3://flag-bucket/output",
        sagemaker_session=session,
    )
    estimator.fit(job_name="flag-job", wait=False)
    estimator.latest_training_job.wait(logs=False)
    session.update_warm_pool("flag-job", 900)
    return plan_arn


def recorder(client):
    calls = []
    client.meta.events.register(
        "before-parameter-build.sagemaker",
        lambda params, model, **_: calls.append((model.name, dict(params))),
    )
    return calls


def test_aws_mode_sends_exactly_what_the_backend_receives_locally(tmp_path, monkeypatch):
    with LocalBackend(start_time=START, root=tmp_path) as backend:
        backend.settings.plan_payment_seconds = 0
        local = Session(backend=backend, local=True)
        local_calls = recorder(local.sagemaker_client)
        answers = []
        local.sagemaker_client.meta.events.register(
            "after-call.sagemaker", lambda parsed, model, **_: answers.append((model.name, parsed))
        )
        plan_arn = workflow(local)
        assert backend.training_job("flag-job").status == "Completed"
        assert backend.training_job("flag-job").warm_pool.status == "Available"

    monkeypatch.setenv("SAGEMAKER_PLANS_LOCAL", "0")
    aws_boto = boto3.session.Session(
        aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1"
    )
    aws = Session(boto_session=aws_boto)
    assert aws.local is False and aws.backend is None
    stubber = Stubber(aws.sagemaker_client)
    for (operation, params), (_, parsed) in zip(local_calls, answers):
        response = {k: v for k, v in parsed.items() if k != "ResponseMetadata"}
        stubber.add_response(_method(operation), response, params)
    aws_calls = recorder(aws.sagemaker_client)
    with stubber:
        assert workflow(aws) == plan_arn
        stubber.assert_no_pending_responses()
    assert aws_calls == local_calls
    assert [op for op, _ in local_calls] == [
        "SearchTrainingPlanOfferings",
        "CreateTrainingPlan",
        "CreateTrainingJob",
        "DescribeTrainingJob",
        "UpdateTrainingJob",
    ]
    create = dict(local_calls)["CreateTrainingJob"]
    assert create["ResourceConfig"]["KeepAlivePeriodInSeconds"] == 600
    assert create["ResourceConfig"]["TrainingPlanArn"] == plan_arn


def _method(operation):
    from botocore import xform_name

    return xform_name(operation)


def test_flag_defaults_to_local(monkeypatch, tmp_path):
    monkeypatch.delenv("SAGEMAKER_PLANS_LOCAL", raising=False)
    with LocalBackend(root=tmp_path) as backend:
        session = Session(backend=backend)
        assert session.local and session.backend is backend
        assert session.boto_region_name == "us-east-1"
        monkeypatch.setenv("SAGEMAKER_PLANS_LOCAL", "yes")
        assert Session(backend=backend).local


def test_local_session_never_reaches_aws_for_other_services(sagemaker_session):
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as excinfo:
        sagemaker_session.boto_session.client("ec2").describe_instances()
    assert excinfo.value.response["Error"]["Code"] == "NotImplemented"


def test_pytest_plugin_fixtures(sagemaker_backend, sagemaker_client, sagemaker_session):
    assert sagemaker_backend.clock.now() == START
    sagemaker_client.create_training_job(**_job("fixture-job"))
    assert sagemaker_session.describe_training_job("fixture-job")["TrainingJobStatus"] == "InProgress"


def _job(name):
    from tests.conftest import create_request

    return create_request(name)
