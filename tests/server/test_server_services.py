"""Every emulated service through the HTTP server, with boto3 clients on ``endpoint_url``."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.conftest import create_request
from tests.server.clients import client, control


def test_training_jobs_are_created_described_and_listed(sagemaker_server):
    sm = client(sagemaker_server)
    arn = sm.create_training_job(**create_request("over-http"))["TrainingJobArn"]
    assert arn == "arn:aws:sagemaker:us-east-1:123456789012:training-job/over-http"
    assert sm.describe_training_job(TrainingJobName="over-http")["TrainingJobStatus"] == "InProgress"
    names = [job["TrainingJobName"] for job in sm.list_training_jobs()["TrainingJobSummaries"]]
    assert names == ["over-http"]


def test_advancing_the_clock_over_the_control_api_moves_the_job_as_in_process(
    sagemaker_server, sagemaker_backend
):
    sm = client(sagemaker_server)
    sm.create_training_job(**create_request("moves"))
    sagemaker_backend.client().create_training_job(**create_request("moves"))
    seconds = (
        sagemaker_backend.settings.cold_start_seconds + sagemaker_backend.settings.job_runtime_seconds + 60
    )
    status, document = control(sagemaker_server, "clock", {"advance_seconds": seconds})
    sagemaker_backend.clock.advance(seconds)
    assert status == 200
    assert document["now"] == sagemaker_backend.clock.now().isoformat()
    over_http = sm.describe_training_job(TrainingJobName="moves")
    in_process = sagemaker_backend.client().describe_training_job(TrainingJobName="moves")
    assert over_http["TrainingJobStatus"] == in_process["TrainingJobStatus"] == "Completed"
    assert [t["Status"] for t in over_http["SecondaryStatusTransitions"]] == [
        t["Status"] for t in in_process["SecondaryStatusTransitions"]
    ]


def test_a_training_plan_is_searched_and_bought(sagemaker_server):
    sm = client(sagemaker_server)
    offerings = sm.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge", InstanceCount=2, DurationHours=48, TargetResources=["training-job"]
    )["TrainingPlanOfferings"]
    assert offerings
    arn = sm.create_training_plan(
        TrainingPlanName="plan-over-http", TrainingPlanOfferingId=offerings[0]["TrainingPlanOfferingId"]
    )["TrainingPlanArn"]
    assert sm.describe_training_plan(TrainingPlanName="plan-over-http")["TrainingPlanArn"] == arn


def test_the_endpoint_environment_variables_reach_the_server(sagemaker_server, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", sagemaker_server.url)
    boto3.client("sagemaker", region_name="us-east-1").create_training_job(**create_request("by-env"))
    monkeypatch.delenv("AWS_ENDPOINT_URL_SAGEMAKER")
    monkeypatch.setenv("AWS_ENDPOINT_URL", sagemaker_server.url)
    described = boto3.client("sagemaker", region_name="us-east-1").describe_training_job(
        TrainingJobName="by-env"
    )
    assert described["TrainingJobName"] == "by-env"


def test_a_12_digit_access_key_selects_its_account(sagemaker_server):
    assert (
        client(sagemaker_server, "sts", key="111122223333").get_caller_identity()["Account"] == "111122223333"
    )
    assert client(sagemaker_server, "sts", key="testing").get_caller_identity()["Account"] == "123456789012"
    client(sagemaker_server, key="111122223333").create_training_job(**create_request("theirs"))
    assert client(sagemaker_server).list_training_jobs()["TrainingJobSummaries"] == []
    assert sagemaker_server.backend("111122223333").training_job("theirs").name == "theirs"


def test_iam_and_logs_answer(sagemaker_server):
    role = client(sagemaker_server, "iam").get_role(RoleName="SageMakerRole")["Role"]
    assert role["Arn"] == "arn:aws:iam::123456789012:role/SageMakerRole"
    logs = client(sagemaker_server, "logs")
    logs.create_log_group(logGroupName="/test/group")
    logs.create_log_stream(logGroupName="/test/group", logStreamName="s")
    logs.put_log_events(
        logGroupName="/test/group", logStreamName="s", logEvents=[{"timestamp": 1, "message": "hi"}]
    )
    events = logs.get_log_events(logGroupName="/test/group", logStreamName="s", startFromHead=True)["events"]
    assert [event["message"] for event in events] == ["hi"]


def test_a_domain_error_arrives_as_the_service_error(sagemaker_server):
    with pytest.raises(ClientError) as raised:
        client(sagemaker_server).describe_training_job(TrainingJobName="missing")
    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


@pytest.mark.parametrize("key", ["AKIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE"])
@pytest.mark.parametrize(
    ("service", "code"), [("sagemaker", "UnrecognizedClientException"), ("sts", "InvalidClientTokenId")]
)
def test_real_looking_keys_are_refused(sagemaker_server, key, service, code):
    calls = {"sagemaker": lambda c: c.list_training_jobs(), "sts": lambda c: c.get_caller_identity()}
    with pytest.raises(ClientError) as raised:
        calls[service](client(sagemaker_server, service, key=key))
    assert raised.value.response["Error"]["Code"] == code
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_real_looking_keys_are_accepted_when_allowed(tmp_path):
    from sagemaker_plans_local.server.runner import LocalServer

    with LocalServer(allow_real_keys=True, root=tmp_path / "server") as server:
        assert (
            client(server, "sts", key="AKIAIOSFODNN7EXAMPLE").get_caller_identity()["Account"]
            == "123456789012"
        )


def test_s3_objects_stream_both_ways_and_head_keeps_their_length(sagemaker_server):
    s3 = client(sagemaker_server, "s3")
    s3.create_bucket(Bucket="server-bucket")
    data = bytes(range(256)) * 8192  # 2 MiB: more than one chunk each way
    s3.put_object(Bucket="server-bucket", Key="a/b c.bin", Body=data)
    assert s3.get_object(Bucket="server-bucket", Key="a/b c.bin")["Body"].read() == data
    assert s3.head_object(Bucket="server-bucket", Key="a/b c.bin")["ContentLength"] == len(data)
    with pytest.raises(ClientError) as raised:
        s3.head_object(Bucket="server-bucket", Key="missing")
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
