"""``LocalBackend.call`` answers exactly what the backend's boto3 client answers (docs/backend.md, "Direct calls").

The same script runs on two backends that start alike: one through ``client()``, one through ``call``.
Every answer, error class, error response and message must be the same, request ids aside (they count
per process).
"""

import re
from datetime import timedelta

import pytest
from botocore import xform_name
from botocore.exceptions import ClientError, ParamValidationError

from sagemaker_plans_local import LocalBackend
from tests.conftest import START, create_request
from tests.plan_helpers import own_inventory

P5 = "ml.p5.48xlarge"
REQUEST_ID = re.compile(r"00000000-[0-9a-f]{4}-4000-8000-[0-9a-f]{12}")


def _script(call, backend):
    """Plans, jobs on and off a plan, lists, deletes and errors; what each call gave."""
    own_inventory(backend, (P5, 4, "us-east-1a", 2, 10))
    seen = []

    def step(operation, params, advance=0):
        try:
            seen.append(("answer", call(operation, params)))
        except (ClientError, ParamValidationError) as error:
            seen.append(("error", type(error), str(error), getattr(error, "response", None)))
        backend.clock.advance(timedelta(seconds=advance))
        return seen[-1]

    search = {
        "InstanceType": P5,
        "InstanceCount": 2,
        "DurationHours": 48,
        "TargetResources": ["training-job"],
    }
    offerings = step("SearchTrainingPlanOfferings", search)[1]["TrainingPlanOfferings"]
    step("SearchTrainingPlanOfferings", {**search, "InstanceCount": 3})  # the service says no
    offering = offerings[0]["TrainingPlanOfferingId"]
    arn = step("CreateTrainingPlan", {"TrainingPlanName": "p", "TrainingPlanOfferingId": offering}, 600)[1]
    step("CreateTrainingPlan", {"TrainingPlanName": "p", "TrainingPlanOfferingId": offering})  # taken
    step("DescribeTrainingPlan", {"TrainingPlanName": "p"})
    on_plan = create_request("on-plan", keep_alive=None)
    on_plan["ResourceConfig"].update(InstanceType=P5, TrainingPlanArn=arn["TrainingPlanArn"])
    step("CreateTrainingJob", on_plan)
    step("CreateTrainingJob", create_request("a", keep_alive=600), 30)
    step("CreateTrainingJob", create_request("a"))  # ResourceInUse
    step("CreateTrainingJob", {**create_request("b"), "RoleArn": 7})  # botocore's ParamValidationError
    step("CreateTrainingJob", {**create_request("b"), "Unknown": 1})
    # values the wire converts or refuses: the direct call serializes them as a client does
    step("CreateTrainingJob", {**create_request("c"), "HyperParameters": {"\u00e9": "\u00fc"}, "Tags": ()})
    step("CreateTrainingJob", {**create_request("d"), "Tags": ({"Key": "k", "Value": "\ud800"},)})
    big = create_request("e")
    big["ResourceConfig"]["InstanceCount"] = 2**31
    step("CreateTrainingJob", big)
    big["ResourceConfig"]["InstanceCount"] = True
    step("CreateTrainingJob", big)
    step("ListTrainingJobs", {"CreationTimeAfter": "2024-01-01T00:00:00Z", "MaxResults": 2})
    step("ListTrainingJobs", {"CreationTimeBefore": 4102444800, "SortOrder": "Ascending"})
    step("DescribeTrainingJob", {"TrainingJobName": "a"}, 4000)
    step("DescribeTrainingJob", {"TrainingJobName": "a"})
    step("DescribeTrainingJob", {"TrainingJobName": "on-plan"})
    step("DescribeTrainingJob", {"TrainingJobName": "missing"})
    step("ListTrainingJobs", {"SortBy": "Name", "MaxResults": 1})
    step("ListTrainingJobs", {"StatusEquals": "Completed", "CreationTimeAfter": START})
    step("DeleteTrainingJob", {"TrainingJobName": "a"}, 7200)
    step("DeleteTrainingJob", {"TrainingJobName": "a"})
    step("ListTrainingJobs", {})
    return seen


def _without_request_ids(outcome):
    return REQUEST_ID.sub("<id>", repr(outcome))


def _through_client(backend):
    client = backend.client()
    return lambda operation, params: getattr(client, xform_name(operation))(**params)


def test_call_answers_what_the_client_answers():
    with (
        LocalBackend(start_time=START, run_job_code=False) as by_client,
        LocalBackend(start_time=START, run_job_code=False) as direct,
    ):
        expected = _script(_through_client(by_client), by_client)
        got = _script(lambda operation, params: direct.call("sagemaker", operation, params), direct)
    assert [_without_request_ids(outcome) for outcome in got] == [
        _without_request_ids(outcome) for outcome in expected
    ]
    kinds = [outcome[1].__name__ for outcome in got if outcome[0] == "error"]
    assert (
        kinds
        == ["ClientError", "ResourceInUse", "ResourceInUse"]
        + ["ParamValidationError"] * 2
        + ["ClientError"] * 5
    )
    codes = [outcome[3]["Error"]["Code"] for outcome in got[11:14]]
    assert codes == ["SerializationException", "SerializationException", "ValidationException"]
    assert got[14][1]["TrainingJobSummaries"] and got[15][1]["TrainingJobSummaries"]
    on_plan = got[18][1]  # its describe
    assert on_plan["TrainingJobName"] == "on-plan" and on_plan["ResourceConfig"]["TrainingPlanArn"]


def test_a_modeled_error_is_the_clients_own_class():
    with LocalBackend(start_time=START, run_job_code=False) as backend:
        backend.call("sagemaker", "CreateTrainingJob", create_request("a"))
        with pytest.raises(backend.client().exceptions.ResourceInUse):
            backend.call("sagemaker", "CreateTrainingJob", create_request("a"))


def test_call_answers_the_json_services_only():
    with LocalBackend(start_time=START, run_job_code=False) as backend:
        with pytest.raises(backend.client("logs").exceptions.ResourceNotFoundException):
            backend.call("logs", "DescribeLogStreams", {"logGroupName": "/aws/sagemaker/TrainingJobs"})
        backend.call("logs", "CreateLogGroup", {"logGroupName": "/aws/sagemaker/TrainingJobs"})
        streams = backend.call("logs", "DescribeLogStreams", {"logGroupName": "/aws/sagemaker/TrainingJobs"})
        assert streams["logStreams"] == []
        with pytest.raises(ValueError, match="use client"):
            backend.call("s3", "ListBuckets")
        with pytest.raises(ValueError, match="emulates"):
            backend.call("ec2", "DescribeInstances")


def test_a_durable_backend_journals_direct_calls(tmp_path):
    # Its journal keeps each call's serialized body: the call serializes even plain parameters.
    with LocalBackend(root=tmp_path, start_time=START, run_job_code=False) as backend:
        backend.call("sagemaker", "CreateTrainingJob", create_request("kept"))
    with LocalBackend(root=tmp_path, run_job_code=False) as reopened:
        assert reopened.call("sagemaker", "DescribeTrainingJob", {"TrainingJobName": "kept"})["RoleArn"]
