"""Names: training jobs and plans are unique regardless of case (their ARN, the resource id,
lower-cases the name) and found under any casing; cluster names are case-sensitive (chosen)."""

import json

import pytest
from botocore.exceptions import ClientError

from tests.api.test_clusters_api import group
from tests.conftest import create_request
from tests.plan_helpers import buy
from tests.raw_requests import sagemaker_json


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def listed_jobs(sm):
    return [s["TrainingJobName"] for s in sm.list_training_jobs()["TrainingJobSummaries"]]


def test_a_job_name_differing_only_in_case_is_in_use(sm):
    arn = sm.create_training_job(**create_request("Job-A"))["TrainingJobArn"]
    assert arn.endswith(":training-job/job-a")
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**create_request("job-a"))
    code, message = error_of(excinfo)
    assert code == "ResourceInUse" and arn in message
    assert listed_jobs(sm) == ["Job-A"]


def test_raw_json_duplicate_in_other_case_changes_nothing(sm, backend):
    sm.create_training_job(**create_request("Job-A"))
    body = json.dumps(create_request("JOB-A")).encode()
    status, document = sagemaker_json(backend, "CreateTrainingJob", body)
    assert (status, document["__type"]) == (400, "ResourceInUse")
    assert listed_jobs(sm) == ["Job-A"]


def test_a_job_is_found_under_any_casing_and_keeps_its_name(sm, backend):
    sm.create_training_job(**create_request("Job-A", keep_alive=None))
    described = sm.describe_training_job(TrainingJobName="JOB-a")
    assert described["TrainingJobName"] == "Job-A"
    sm.stop_training_job(TrainingJobName="job-A")
    backend.clock.advance(600)
    assert sm.describe_training_job(TrainingJobName="job-a")["TrainingJobStatus"] == "Stopped"
    sm.delete_training_job(TrainingJobName="JOB-A")
    with pytest.raises(ClientError) as excinfo:
        sm.describe_training_job(TrainingJobName="Job-A")
    assert error_of(excinfo)[0] == "ValidationException"
    sm.create_training_job(**create_request("job-a"))  # the name is free again
    assert listed_jobs(sm) == ["job-a"]


def test_a_plan_name_differing_only_in_case_is_in_use(sm, backend):
    arn, _ = buy(sm, backend, "Plan-A", count=1, hours=24)
    assert arn.endswith(":training-plan/plan-a")
    assert sm.describe_training_plan(TrainingPlanName="PLAN-A")["TrainingPlanName"] == "Plan-A"
    offering = sm.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge", InstanceCount=1, DurationHours=24, TargetResources=["training-job"]
    )["TrainingPlanOfferings"][0]
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_plan(
            TrainingPlanName="plan-a", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )
    assert error_of(excinfo)[0] == "ResourceInUse"
    plans = sm.list_training_plans()["TrainingPlanSummaries"]
    assert [p["TrainingPlanName"] for p in plans] == ["Plan-A"]


def test_cluster_names_are_case_sensitive(sm):
    first = sm.create_cluster(ClusterName="Cluster-A", InstanceGroups=[group("g", 1, "ml.m5.xlarge")])
    second = sm.create_cluster(ClusterName="cluster-a", InstanceGroups=[group("g", 1, "ml.m5.xlarge")])
    assert first["ClusterArn"] != second["ClusterArn"]
    with pytest.raises(ClientError) as excinfo:
        sm.describe_cluster(ClusterName="CLUSTER-A")
    assert error_of(excinfo)[0] == "ResourceNotFound"
    with pytest.raises(ClientError) as excinfo:
        sm.create_cluster(ClusterName="Cluster-A", InstanceGroups=[group("g", 1, "ml.m5.xlarge")])
    assert error_of(excinfo)[0] == "ResourceInUse"


def test_a_scripted_outcome_applies_to_the_job_under_any_casing(sm, backend):
    backend.script_job("nightly-RUN", outcome="AlgorithmError", runtime_seconds=60)
    sm.create_training_job(**create_request("Nightly-Run", keep_alive=None))
    backend.clock.advance(3600)
    job = sm.describe_training_job(TrainingJobName="Nightly-Run")
    assert job["TrainingJobStatus"] == "Failed"
    assert job["FailureReason"].startswith("AlgorithmError")
    assert job["TrainingTimeInSeconds"] == 60


def test_a_scripted_payment_applies_to_the_plan_under_any_casing(sm, backend):
    backend.script_plan("GPU-Plan")
    arn, _ = buy(sm, backend, "gpu-plan")
    assert sm.describe_training_plan(TrainingPlanName=arn.rsplit("/", 1)[1])["Status"] == "Failed"
