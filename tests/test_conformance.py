"""The conformance helper catches every kind of departure from an output shape."""

from __future__ import annotations

import datetime

import pytest

from sagemaker_plans_local.protocol.service_model import operation_model
from tests.conformance import assert_conforms, conformance_problems

NOW = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)
ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-job/job-1"


def describe_response(**changes):
    response = {
        "TrainingJobName": "job-1",
        "TrainingJobArn": ARN,
        "ModelArtifacts": {"S3ModelArtifacts": "s3://bucket/model.tar.gz"},
        "TrainingJobStatus": "InProgress",
        "SecondaryStatus": "Starting",
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "CreationTime": NOW,
        "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "HyperParameters": {"epochs": "3"},
        "SecondaryStatusTransitions": [{"Status": "Starting", "StartTime": NOW}],
        "EnableManagedSpotTraining": False,
        "ResponseMetadata": {"HTTPStatusCode": 200},
    }
    response.update(changes)
    return response


def problems(response):
    return conformance_problems(operation_model("DescribeTrainingJob").output_shape, response)


def test_a_conforming_response_has_no_problems():
    assert problems(describe_response()) == []
    assert_conforms("DescribeTrainingJob", describe_response())


def test_missing_required_member():
    response = describe_response()
    del response["CreationTime"]
    assert problems(response) == ["<response>: required member CreationTime is missing"]


def test_nested_missing_required_member():
    assert problems(describe_response(ModelArtifacts={})) == [
        "ModelArtifacts: required member S3ModelArtifacts is missing"
    ]


def test_unknown_member_top_level_and_nested():
    response = describe_response(Surprise=1, ResourceConfig={"InstanceType": "ml.m5.xlarge", "Color": "red"})
    assert sorted(problems(response)) == [
        "ResourceConfig.Color: not a member of ResourceConfig",
        "Surprise: not a member of DescribeTrainingJobResponse",
    ]


def test_response_metadata_is_only_allowed_at_the_top():
    response = describe_response(ModelArtifacts={"S3ModelArtifacts": "s3://b/m", "ResponseMetadata": {}})
    assert problems(response) == ["ModelArtifacts.ResponseMetadata: not a member of ModelArtifacts"]


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("TrainingJobName", 5),
        ("CreationTime", "2024-05-01T12:00:00Z"),
        ("CreationTime", 1714564800.0),
        ("EnableManagedSpotTraining", "false"),
        ("TrainingTimeInSeconds", 1.5),
        ("TrainingTimeInSeconds", True),
        ("HyperParameters", [("epochs", "3")]),
        ("ModelArtifacts", "s3://bucket/model.tar.gz"),
        ("SecondaryStatusTransitions", {"Status": "Starting"}),
    ],
)
def test_wrong_python_type(member, value):
    (problem,) = problems(describe_response(**{member: value}))
    assert problem.startswith(f"{member}: {type(value).__name__} ")
    assert problem.endswith(
        f"is not a {operation_model('DescribeTrainingJob').output_shape.members[member].type_name}"
    )


def test_float_members_accept_ints():
    metrics = [{"MetricName": "loss", "Value": 1, "Timestamp": NOW}]
    assert problems(describe_response(FinalMetricDataList=metrics)) == []


def test_out_of_enum_value():
    assert problems(describe_response(TrainingJobStatus="Running")) == [
        "TrainingJobStatus: 'Running' is not in the enum TrainingJobStatus"
    ]


def test_enum_inside_a_list():
    transitions = [{"Status": "Starting", "StartTime": NOW}, {"Status": "Warming", "StartTime": NOW}]
    assert problems(describe_response(SecondaryStatusTransitions=transitions)) == [
        "SecondaryStatusTransitions[1].Status: 'Warming' is not in the enum SecondaryStatus"
    ]


def test_string_length_violations():
    assert problems(describe_response(TrainingJobName="")) == ["TrainingJobName: length 0 below min 1"]
    assert problems(describe_response(TrainingJobName="a" * 64)) == [
        "TrainingJobName: length 64 above max 63"
    ]


def test_list_and_map_size_violations():
    assert problems(describe_response(InputDataConfig=[])) == ["InputDataConfig: length 0 below min 1"]
    hyper = {f"k{i}": "v" for i in range(101)}
    assert problems(describe_response(HyperParameters=hyper)) == ["HyperParameters: length 101 above max 100"]


def test_numeric_range_violations():
    assert problems(describe_response(TrainingTimeInSeconds=0)) == [
        "TrainingTimeInSeconds: value 0 below min 1"
    ]
    config = {"InstanceType": "ml.m5.xlarge", "KeepAlivePeriodInSeconds": 21601}
    assert problems(describe_response(ResourceConfig=config)) == [
        "ResourceConfig.KeepAlivePeriodInSeconds: value 21601 above max 21600"
    ]


def test_map_key_and_value_problems():
    assert problems(describe_response(HyperParameters={"k" * 257: "v", "ok": 3})) == [
        f"HyperParameters key {'k' * 257!r}: length 257 above max 256",
        "HyperParameters['ok']: int 3 is not a string",
    ]


def test_assert_conforms_lists_every_problem():
    response = describe_response(TrainingJobStatus="Running", Surprise=1)
    with pytest.raises(AssertionError) as failure:
        assert_conforms("DescribeTrainingJob", response)
    message = str(failure.value)
    assert "DescribeTrainingJob response does not conform" in message
    assert "TrainingJobStatus: 'Running' is not in the enum" in message
    assert "Surprise: not a member of DescribeTrainingJobResponse" in message


def test_assert_conforms_for_an_operation_without_output():
    assert operation_model("DeleteAlgorithm").output_shape is None
    assert_conforms("DeleteAlgorithm", {"ResponseMetadata": {}})
    with pytest.raises(AssertionError):
        assert_conforms("DeleteAlgorithm", {"Anything": 1})
