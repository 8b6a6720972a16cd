"""Requests botocore would not send (another SDK's, a hand-made one's) get AWS-shaped 400s and change
nothing: unknown members, explicit nulls, integers outside their type, bad timestamps, deep nesting,
lone surrogates, non-JSON numbers; and the default training-instance quota."""

from __future__ import annotations

import itertools
import json

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.core.settings import DEFAULT_INSTANCE_QUOTA
from sagemaker_plans_local.protocol.json_wire import MAX_DEPTH
from sagemaker_plans_local.services.sagemaker.api.service import HANDLERS
from tests.conftest import create_request
from tests.raw_requests import sagemaker_json

DEEP = 10_000
NAMES = itertools.count()


def raw(backend, operation, body):
    status, answer = sagemaker_json(backend, operation, body)
    return status, answer.get("__type"), answer.get("message", "")


def jobs(backend):
    return raw(backend, "ListTrainingJobs", {"MaxResults": 100})


def unchecked(backend):
    """A boto3 client without botocore's client-side validation (as other SDKs send)."""
    return backend.client(config=Config(parameter_validation=False))


@pytest.mark.parametrize(
    "body,where",
    [
        ({"Colour": "red"}, "'Colour' at 'the request'"),
        (
            {
                "ResourceConfig": {
                    "InstanceType": "ml.m5.large",
                    "InstanceCount": 1,
                    "VolumeSizeInGB": 5,
                    "Colour": "red",
                }
            },
            "'Colour' at 'resourceConfig'",
        ),
        ({"Tags": [{"Key": "k", "Value": "v", "Colour": "red"}]}, "'Colour' at 'tags.1.member'"),
    ],
)
def test_unknown_members_are_refused_and_never_stored(backend, body, where):
    before = jobs(backend)
    status, code, message = raw(backend, "CreateTrainingJob", {**create_request("job-1"), **body})
    assert (status, code) == (400, "SerializationException")
    assert f"Unrecognized field {where}" in message
    assert jobs(backend) == before
    assert raw(backend, "DescribeTrainingJob", {"TrainingJobName": "job-1"})[1] == "ValidationException"


def test_botocore_cannot_send_an_unknown_member(backend):  # so only raw bodies carry one
    with pytest.raises(KeyError):
        unchecked(backend).create_training_job(**create_request("job-1"), Colour="red")


def test_unknown_member_in_an_update_is_never_echoed(backend, sm):
    sm.create_training_job(**create_request("job-1"))
    described = sm.describe_training_job(TrainingJobName="job-1")
    status, code, _ = raw(
        backend, "UpdateTrainingJob", {"TrainingJobName": "job-1", "ProfilerConfig": {"Colour": "red"}}
    )
    assert (status, code) == (400, "SerializationException")
    again = sm.describe_training_job(TrainingJobName="job-1")
    assert "ProfilerConfig" not in again and again["LastModifiedTime"] == described["LastModifiedTime"]


@pytest.mark.parametrize(
    "changes,path",
    [
        ({"VpcConfig": None}, "vpcConfig"),
        ({"HyperParameters": {"epochs": None}}, "hyperParameters.epochs"),
        ({"Tags": [None]}, "tags.1.member"),
    ],
)
def test_explicit_nulls_are_validation_errors(backend, changes, path):
    status, code, message = raw(backend, "CreateTrainingJob", {**create_request("job-1"), **changes})
    assert (status, code) == (400, "ValidationException")
    assert f"Value null at '{path}' failed to satisfy constraint: Member must not be null" in message
    assert jobs(backend)[2] == "" and "job-1" not in json.dumps(jobs(backend))


def test_explicit_null_through_boto3(backend):
    with pytest.raises(ClientError) as error:
        unchecked(backend).list_training_jobs(NameContains=None)
    assert error.value.response["Error"]["Code"] == "ValidationException"
    assert "Value null at 'nameContains'" in error.value.response["Error"]["Message"]


@pytest.mark.parametrize(
    "operation,body,fits",
    [
        ("ListTrainingJobs", {"MaxResults": 2**31}, False),  # integer: 32-bit
        ("ListTrainingJobs", {"MaxResults": -(2**31) - 1}, False),
        ("ListTrainingJobs", {"MaxResults": 2**31 - 1}, True),  # fits, then fails its max
        ("SearchTrainingPlanOfferings", {"DurationHours": 2**63}, False),  # long: 64-bit
        ("SearchTrainingPlanOfferings", {"DurationHours": 2**63 - 1}, True),
        ("ListTrainingJobs", {"MaxResults": 10**300}, False),
    ],
)
def test_integers_outside_their_type(backend, operation, body, fits):
    status, code, message = raw(backend, operation, body)
    assert status == 400
    assert code == ("ValidationException" if fits else "SerializationException"), message


def test_huge_integer_through_boto3(backend):
    with pytest.raises(ClientError) as error:
        unchecked(backend).list_training_jobs(MaxResults=2**40)
    assert error.value.response["Error"]["Code"] == "SerializationException"
    assert "can not be converted to a 32-bit integer" in error.value.response["Error"]["Message"]


@pytest.mark.parametrize(
    "text",
    [
        b'{"MaxResults": NaN}',
        b'{"MaxResults": Infinity}',
        b'{"MaxResults": -Infinity}',
        b'{"CreationTimeAfter": 1e400}',
        b"[1]",
        b'"x"',
        b'{"a": ',
        b"\xff\xfe",
    ],
)
def test_what_is_not_a_json_object_is_a_serialization_error(backend, text):
    status, code, _ = raw(backend, "ListTrainingJobs", text)
    assert (status, code) == (400, "SerializationException")


@pytest.mark.parametrize("value", [1e20, -1, "yesterday", "10000-01-01T00:00:00Z", "2026-02-30T00:00:00Z"])
def test_bad_timestamps(backend, value):
    status, code, message = raw(backend, "ListTrainingJobs", {"CreationTimeAfter": value})
    assert (status, code) == (400, "SerializationException")
    assert message.startswith(f"Value '{value}' at 'creationTimeAfter' can not be converted to a timestamp")


def test_timestamp_before_1970_through_boto3(backend):
    from datetime import datetime, timezone

    with pytest.raises(ClientError) as error:
        backend.client().list_training_jobs(CreationTimeAfter=datetime(1960, 1, 1, tzinfo=timezone.utc))
    assert error.value.response["Error"]["Code"] == "SerializationException"


def test_latest_timestamp_is_answered(backend, sm):
    from datetime import datetime, timezone

    late = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
    assert sm.list_training_jobs(CreationTimeAfter=late)["TrainingJobSummaries"] == []
    with pytest.raises(ClientError) as error:  # a rule of the operation, not an overflow
        sm.search_training_plan_offerings(
            InstanceType="ml.p5.48xlarge",
            InstanceCount=1,
            DurationHours=24,
            TargetResources=["training-job"],
            StartTimeAfter=late,
        )
    assert error.value.response["Error"]["Code"] == "ValidationException"


@pytest.mark.parametrize("operation", sorted(HANDLERS))
def test_a_body_nested_10000_deep_is_refused_everywhere(backend, operation):
    top = b"[" * DEEP + b"]" * DEEP
    inner = b'{"TrainingJobName": "j", "HyperParameters": {"a": ' + top + b"}}"
    for body in (top, inner, b'{"Tags": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}"):
        status, code, message = raw(backend, operation, body)
        assert (status, code) == (400, "SerializationException"), message


def test_lone_surrogates_are_refused(backend):
    for body in (b'{"TrainingJobName": "\\ud800"}', b'{"HyperParameters": {"\\udfff": "v"}}'):
        status, code, message = raw(backend, "CreateTrainingJob", body)
        assert (status, code) == (400, "SerializationException")
        assert "lone UTF-16 surrogate" in message


def test_default_instance_quota_refuses_a_billion_instances(backend, sm):
    assert backend.settings.instance_quota == DEFAULT_INSTANCE_QUOTA == 1000
    request = create_request("huge")
    request["ResourceConfig"]["InstanceCount"] = 10**9
    with pytest.raises(ClientError) as error:
        sm.create_training_job(**request)
    assert error.value.response["Error"]["Code"] == "ResourceLimitExceeded"
    assert error.value.response["Error"]["Message"] == (
        "The account-level service limit 'ml.g4dn.xlarge for training job usage' is 1000 Instances, with current "
        "utilization of 0 Instances and a request delta of 1000000000 Instances. Please use AWS Service Quotas "
        "to request an increase for this quota."
    )
    assert sm.list_training_jobs()["TrainingJobSummaries"] == []
    status, code, _ = raw(backend, "CreateTrainingJob", request)
    assert (status, code) == (400, "ResourceLimitExceeded")


def test_default_quota_counts_every_job_of_a_type(backend, sm):
    sm.create_training_job(**create_request("big"))
    request = create_request("rest")
    request["ResourceConfig"]["InstanceCount"] = DEFAULT_INSTANCE_QUOTA - 1
    sm.create_training_job(**request)
    with pytest.raises(ClientError) as error:
        sm.create_training_job(**create_request("one-more"))
    assert error.value.response["Error"]["Code"] == "ResourceLimitExceeded"
    backend.settings.instance_quota = None  # overridable: unlimited
    sm.create_training_job(**create_request("one-more"))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    value=st.one_of(
        st.integers(),
        st.floats(),
        st.text(max_size=20),
        st.booleans(),
        st.none(),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    )
)
def test_any_value_for_any_create_member_is_answered_4xx_or_2xx(backend, value):
    for member in ("TrainingJobName", "ResourceConfig", "StoppingCondition", "Environment", "Tags"):
        request = {**create_request(f"fuzz-{next(NAMES)}"), member: value}
        status, code, _ = raw(backend, "CreateTrainingJob", request)
        assert status in (200, 400), code
        if status == 200:  # then it is describable
            assert (
                raw(backend, "DescribeTrainingJob", {"TrainingJobName": request["TrainingJobName"]})[0] == 200
            )
        elif isinstance(request["TrainingJobName"], str) and member != "TrainingJobName":
            assert (
                raw(backend, "DescribeTrainingJob", {"TrainingJobName": request["TrainingJobName"]})[0] == 400
            )
