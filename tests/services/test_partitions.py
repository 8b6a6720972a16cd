"""Every ARN the backend produces is in the partition of the region it answers for."""

from __future__ import annotations

import re

import botocore.session
import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.arns import partition
from tests.conftest import ROLE, START, create_request

REGIONS = {"cn-north-1": "aws-cn", "us-gov-west-1": "aws-us-gov", "us-east-1": "aws"}
ACCOUNT = "123456789012"


def test_partition_matches_botocore_for_every_known_region():
    endpoints = botocore.session.get_session().get_data("endpoints")
    checked = 0
    for known in endpoints["partitions"]:
        pattern = re.compile(known["regionRegex"])
        for region in known["regions"]:
            if pattern.match(region):
                assert partition(region) == known["partition"], region
                checked += 1
    assert checked > 30
    assert [partition(f"{name}-global") for name in ("aws", "aws-cn", "aws-us-gov")] == [
        "aws",
        "aws-cn",
        "aws-us-gov",
    ]


@pytest.fixture(params=sorted(REGIONS))
def regional(request, tmp_path):
    with LocalBackend(region=request.param, start_time=START, root=tmp_path / "backend") as backend:
        yield backend, request.param, REGIONS[request.param]


def test_sagemaker_arns(regional):
    backend, region, part = regional
    sm = backend.client()
    prefix = f"arn:{part}:sagemaker:{region}:{ACCOUNT}:"
    job = sm.create_training_job(**create_request("job-1"))["TrainingJobArn"]
    assert job == prefix + "training-job/job-1"
    assert sm.describe_training_job(TrainingJobName="job-1")["TrainingJobArn"] == job
    backend.capacity.add("ml.p5.48xlarge", 2, f"{region}a", START.replace(day=2), START.replace(day=5))
    offering = sm.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge", InstanceCount=2, DurationHours=24, TargetResources=["training-job"]
    )["TrainingPlanOfferings"][0]
    plan = sm.create_training_plan(
        TrainingPlanName="plan-1", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
    )["TrainingPlanArn"]
    assert plan == prefix + "training-plan/plan-1"
    capacity = sm.describe_training_plan(TrainingPlanName="plan-1")["ReservedCapacitySummaries"][0]
    assert capacity["ReservedCapacityArn"].startswith(prefix + "reserved-capacity/")
    group = {
        "InstanceGroupName": "g",
        "InstanceType": "ml.m5.xlarge",
        "InstanceCount": 1,
        "ExecutionRole": ROLE,
        "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"},
    }
    cluster = sm.create_cluster(ClusterName="c", InstanceGroups=[group])["ClusterArn"]
    assert cluster.startswith(prefix + "cluster/")


def test_sts_iam_and_logs_arns(regional):
    backend, region, part = regional
    identity = backend.client("sts").get_caller_identity()
    assert identity["Arn"] == f"arn:{part}:sts::{ACCOUNT}:assumed-role/SageMakerRole/SageMaker"
    role = backend.client("iam").get_role(RoleName="SageMakerRole")["Role"]
    assert role["Arn"] == f"arn:{part}:iam::{ACCOUNT}:role/SageMakerRole"
    logs = backend.client("logs")
    logs.create_log_group(logGroupName="/aws/sagemaker/TrainingJobs")
    logs.create_log_stream(logGroupName="/aws/sagemaker/TrainingJobs", logStreamName="job-1/algo-1")
    (stream,) = logs.describe_log_streams(logGroupName="/aws/sagemaker/TrainingJobs")["logStreams"]
    assert stream["arn"] == (
        f"arn:{part}:logs:{region}:{ACCOUNT}:log-group:/aws/sagemaker/TrainingJobs:log-stream:job-1/algo-1"
    )
