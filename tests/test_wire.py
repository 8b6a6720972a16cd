"""The awsJson1_1 codec: round trips through botocore's own parser."""

from __future__ import annotations

import datetime
import json

import pytest
from botocore.model import ShapeResolver
from botocore.parsers import create_parser

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.json_wire import decode_input, encode_output
from sagemaker_plans_local.protocol.service_model import operation_model
from tests.conformance import assert_conforms

UTC = datetime.timezone.utc
CREATED = datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
STARTED = datetime.datetime(2024, 5, 1, 12, 3, 7, 500000, tzinfo=UTC)
DESCRIBE_OUTPUT = operation_model("DescribeTrainingJob").output_shape
LIST_INPUT = operation_model("ListTrainingJobs").input_shape


def describe_result(**changes):
    result = {
        "TrainingJobName": "job-1",
        "TrainingJobArn": "arn:aws:sagemaker:us-east-1:123456789012:training-job/job-1",
        "ModelArtifacts": {"S3ModelArtifacts": "s3://bucket/model.tar.gz"},
        "TrainingJobStatus": "InProgress",
        "SecondaryStatus": "Downloading",
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "CreationTime": CREATED,
        "TrainingStartTime": STARTED,
        "LastModifiedTime": STARTED.replace(tzinfo=None),
        "FailureReason": None,
        "HyperParameters": {"epochs": "3"},
        "SecondaryStatusTransitions": [
            {"Status": "Starting", "StartTime": CREATED, "EndTime": STARTED, "StatusMessage": "Preparing"},
            {"Status": "Downloading", "StartTime": STARTED},
        ],
        "WarmPoolStatus": {"Status": "Available", "ResourceRetainedBillableTimeInSeconds": 60},
        "EnableManagedSpotTraining": False,
    }
    result.update(changes)
    return result


def parse(wire: dict, shape=DESCRIBE_OUTPUT) -> dict:
    """What boto3 would hand its caller for ``wire``."""
    response = {"status_code": 200, "headers": {}, "body": json.dumps(wire).encode()}
    parsed = create_parser("json").parse(response, shape)
    del parsed["ResponseMetadata"]
    return parsed


def test_describe_round_trip_keeps_datetimes():
    parsed = parse(encode_output(DESCRIBE_OUTPUT, describe_result()))
    assert parsed["CreationTime"] == CREATED
    assert parsed["TrainingStartTime"] == STARTED
    assert parsed["LastModifiedTime"] == STARTED  # naive datetimes are UTC
    assert [t["StartTime"] for t in parsed["SecondaryStatusTransitions"]] == [CREATED, STARTED]
    assert parsed["SecondaryStatusTransitions"][0]["EndTime"] == STARTED
    assert parsed["HyperParameters"] == {"epochs": "3"}
    assert parsed["EnableManagedSpotTraining"] is False
    assert_conforms("DescribeTrainingJob", parsed)


def test_encode_writes_epoch_seconds_and_drops_none():
    wire = encode_output(DESCRIBE_OUTPUT, describe_result())
    assert wire["CreationTime"] == CREATED.timestamp()
    assert isinstance(wire["CreationTime"], float)
    assert "FailureReason" not in wire
    json.dumps(wire)


def test_encode_rejects_unknown_members_at_any_depth():
    with pytest.raises(ValueError, match="Surprise"):
        encode_output(DESCRIBE_OUTPUT, describe_result(Surprise=1))
    with pytest.raises(ValueError, match="Colour"):
        encode_output(
            DESCRIBE_OUTPUT, describe_result(WarmPoolStatus={"Status": "Available", "Colour": "red"})
        )


def test_encode_rejects_a_non_datetime_timestamp():
    with pytest.raises(TypeError):
        encode_output(DESCRIBE_OUTPUT, describe_result(CreationTime="2024-05-01"))


def blob_shapes():
    resolver = ShapeResolver(
        {
            "Payload": {
                "type": "structure",
                "members": {"Data": {"shape": "Bytes"}, "Parts": {"shape": "Chunks"}},
            },
            "Chunks": {"type": "list", "member": {"shape": "Bytes"}},
            "Bytes": {"type": "blob"},
        }
    )
    return resolver.get_shape_by_name("Payload")


def test_blobs_round_trip_as_base64():
    shape = blob_shapes()
    wire = encode_output(shape, {"Data": b"\x00\xffhi", "Parts": [b"a", b"bc"]})
    assert wire == {"Data": "AP9oaQ==", "Parts": ["YQ==", "YmM="]}
    assert parse(wire, shape) == {"Data": b"\x00\xffhi", "Parts": [b"a", b"bc"]}
    assert decode_input(shape, wire) == {"Data": b"\x00\xffhi", "Parts": [b"a", b"bc"]}


def test_bad_base64_is_a_serialization_error():
    with pytest.raises(ApiError) as error:
        decode_input(blob_shapes(), {"Parts": ["YQ==", "not base64!"]})
    assert error.value.code == "SerializationException"
    assert "'parts.2.member'" in error.value.message


@pytest.mark.parametrize(
    "wire_value",
    [
        1714564800,
        1714564800.0,
        "2024-05-01T12:00:00Z",
        "2024-05-01T12:00:00+00:00",
        "2024-05-01T14:00:00+02:00",
        "2024-05-01T12:00:00",
    ],
)
def test_decode_timestamps(wire_value):
    decoded = decode_input(LIST_INPUT, {"CreationTimeAfter": wire_value, "MaxResults": 10})
    assert decoded == {"CreationTimeAfter": datetime.datetime(2024, 5, 1, 12, tzinfo=UTC), "MaxResults": 10}
    assert decoded["CreationTimeAfter"].tzinfo is UTC


def test_decode_keeps_fractional_epoch_seconds():
    decoded = decode_input(LIST_INPUT, {"CreationTimeBefore": 1714564800.25})
    assert decoded["CreationTimeBefore"] == datetime.datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)


def test_decode_leaves_shapes_without_timestamps_alone():
    request = {"TrainingJobName": "job-1"}
    assert decode_input(operation_model("DescribeTrainingJob").input_shape, request) == request


def test_decode_timestamps_nested_in_lists():
    wire = {
        "SecondaryStatusTransitions": [{"Status": "Starting", "StartTime": 1714564800}, {"StartTime": "x"}]
    }
    with pytest.raises(ApiError) as error:
        decode_input(DESCRIBE_OUTPUT, wire)
    assert "at 'secondaryStatusTransitions.2.member.startTime'" in error.value.message
    del wire["SecondaryStatusTransitions"][1]
    decoded = decode_input(DESCRIBE_OUTPUT, wire)
    assert decoded["SecondaryStatusTransitions"][0]["StartTime"] == datetime.datetime(
        2024, 5, 1, 12, tzinfo=UTC
    )


@pytest.mark.parametrize(
    "wire_value",
    [
        "yesterday",
        "2024-13-01T00:00:00Z",
        "",
        1e20,
        -1e20,
        -1,
        253402300800,
        "0001-01-01T00:00:00+01:00",
        "1969-12-31T23:59:59Z",
    ],
)
def test_bad_timestamp_is_a_serialization_error(wire_value):
    with pytest.raises(ApiError) as error:
        decode_input(LIST_INPUT, {"CreationTimeAfter": wire_value})
    assert error.value.code == "SerializationException"
    assert error.value.message.startswith(
        f"Value '{wire_value}' at 'creationTimeAfter' can not be converted to a timestamp"
    )


@pytest.mark.parametrize("wire_value", ["1970-01-01T00:00:00Z", 0, "9999-12-31T23:59:59Z", 253402300799])
def test_timestamp_range_ends(wire_value):
    assert decode_input(LIST_INPUT, {"CreationTimeAfter": wire_value})["CreationTimeAfter"].tzinfo is UTC


@pytest.mark.parametrize("wire_value", [True, [1], {"a": 1}])
def test_a_timestamp_of_the_wrong_json_type_is_left_to_validation(wire_value):
    assert decode_input(LIST_INPUT, {"CreationTimeAfter": wire_value}) == {"CreationTimeAfter": wire_value}


def _depth(shape, seen=frozenset()):
    """The deepest JSON nesting a request of ``shape`` can have (recursive shapes counted once)."""
    if shape.name in seen or shape.type_name not in ("structure", "list", "map"):
        return 0
    seen = seen | {shape.name}
    children = (
        shape.members.values()
        if shape.type_name == "structure"
        else [shape.member]
        if shape.type_name == "list"
        else [shape.value]
    )
    return 1 + max([_depth(child, seen) for child in children] + [0])


def test_max_depth_leaves_room_for_every_request_the_model_allows():
    from sagemaker_plans_local.protocol.json_wire import MAX_DEPTH, read_request
    from sagemaker_plans_local.services.sagemaker.api.service import HANDLERS

    deepest = max(_depth(operation_model(name).input_shape) for name in HANDLERS)
    assert 5 < deepest < MAX_DEPTH
    assert read_request(None, b'{"a": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}")
    with pytest.raises(ApiError) as error:
        read_request(None, b'{"a": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}")
    assert (error.value.code, error.value.message) == (
        "SerializationException",
        f"The request body is nested more than {MAX_DEPTH} levels deep.",
    )


def test_unknown_member_message_names_the_path_and_shape():
    with pytest.raises(ApiError) as error:
        decode_input(
            operation_model("CreateTrainingJob").input_shape,
            {"ResourceConfig": {"InstanceType": "ml.m5.large", "Colour": "red"}},
        )
    assert (error.value.code, error.value.message) == (
        "SerializationException",
        "Unrecognized field 'Colour' at 'resourceConfig': ResourceConfig has no such member.",
    )
