"""A job run by the server reaches the server with its own SageMaker calls."""

from __future__ import annotations

import pytest

from sagemaker_plans_local.runtime import views
from tests.server.clients import client

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
#: The job's script, in pieces of at most 256 characters (a ContainerArguments member's limit).
SCRIPT = [
    "import os,boto3;s=boto3.client('sagemaker');"
    "m=s.describe_training_job(TrainingJobName=os.environ['TRAINING_JOB_NAME']);",
    "n=sorted(j['TrainingJobName']for j in s.list_training_jobs()['TrainingJobSummaries']);"
    "print('seen',m['TrainingJobStatus'],m['TrainingJobArn'][28:40],n)",
]


@pytest.fixture(autouse=True)
def view():
    cause = views.unavailable()
    if cause is not None:
        pytest.skip(f"this machine gives no /opt/ml view: {cause}")


def job_request(name: str) -> dict:
    return {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {
            "TrainingImage": "image",
            "TrainingInputMode": "File",
            "ContainerEntrypoint": ["python", "-c", "import sys; exec(''.join(sys.argv[1:]))"],
            "ContainerArguments": SCRIPT,
        },
        "OutputDataConfig": {"S3OutputPath": "s3://out/results"},
        "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }


def printed(server, name: str, key: str) -> list[str]:
    logs = client(server, "logs", key=key)
    streams = logs.describe_log_streams(logGroupName="/aws/sagemaker/TrainingJobs", logStreamNamePrefix=name)
    lines = []
    for stream in streams["logStreams"]:
        events = logs.get_log_events(
            logGroupName="/aws/sagemaker/TrainingJobs", logStreamName=stream["logStreamName"]
        )["events"]
        lines += [event["message"] for event in events]
    return lines


@pytest.mark.parametrize("account", ["123456789012", "210987654321"])
def test_a_jobs_own_sagemaker_calls_reach_the_server_in_its_account(sagemaker_server, account):
    sm = client(sagemaker_server, key=account)
    sm.create_training_job(**job_request("other"))
    sm.create_training_job(**job_request("caller"))
    backend = sagemaker_server.backend(account)
    for name in ("other", "caller"):
        assert backend.wait_for_training_job(name).status == "Completed", name
    lines = [line for line in printed(sagemaker_server, "caller", account) if line.startswith("seen")]
    assert lines == [f"seen InProgress {account} ['caller', 'other']"]
