"""In-process answers skip the wire: a handler's result goes straight to botocore's parsed form,
with exactly the values, types and member order botocore's parser gives for its wire JSON."""

import datetime
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.protocol.json_wire import encode_output
from sagemaker_plans_local.services.sagemaker.api.service import HANDLERS
from sagemaker_plans_local.transport.response_decoder import converter_for
from tests.api.test_response_decoder import MODEL, UID, botocore_parse, output_values

START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
OUTPUTS = sorted(
    op
    for op in HANDLERS
    if MODEL.operation_model(op).output_shape is not None
    and converter_for(MODEL.operation_model(op).output_shape, UID) is not None
)


def assert_same(ours, theirs, path="answer"):
    """Equal, of the same types all the way down, dicts in the same order, datetimes in the same zone."""
    assert type(ours) is type(theirs), path
    if isinstance(ours, dict):
        assert list(ours) == list(theirs), path
        for key in ours:
            assert_same(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(ours, list):
        assert len(ours) == len(theirs), path
        for index, (mine, other) in enumerate(zip(ours, theirs)):
            assert_same(mine, other, f"{path}[{index}]")
    elif isinstance(ours, datetime.datetime):
        assert (ours, type(ours.tzinfo), ours.utcoffset(), ours.fold) == (
            theirs,
            type(theirs.tzinfo),
            theirs.utcoffset(),
            theirs.fold,
        ), path
    else:
        assert ours == theirs, path


@pytest.mark.parametrize("operation", OUTPUTS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_same_as_botocore_parsing_the_wire_json(operation, data):
    shape = MODEL.operation_model(operation).output_shape
    value = data.draw(output_values(operation))
    theirs = botocore_parse(shape, encode_output(shape, value))
    assert_same(converter_for(shape, UID)(value), theirs)
    # members out of model order take the other path to the same answer
    assert_same(converter_for(shape, UID)(dict(reversed(value.items()))), theirs)


def test_the_job_operations_are_converted_and_document_shapes_are_left_to_the_wire():
    assert {"DescribeTrainingJob", "ListTrainingJobs", "CreateTrainingJob"} <= set(OUTPUTS)
    assert converter_for(MODEL.operation_model("DescribeCluster").output_shape, UID) is None


def test_a_member_the_shape_lacks_is_refused_as_encoding_refuses_it_and_a_null_one_dropped():
    shape = MODEL.shape_for("DescribeTrainingJobResponse")
    convert = converter_for(shape, UID)
    for value in ({"TrainingJobName": "j", "NotInModel": 1}, {"NotInModel": 1, "TrainingJobName": "j"}):
        with pytest.raises(ValueError, match="NotInModel"):
            encode_output(shape, value)
        with pytest.raises(ValueError, match="NotInModel"):
            convert(value)
    value = {"FailureReason": None, "TrainingJobName": "j", "NotInModel": None}
    assert_same(convert(value), botocore_parse(shape, encode_output(shape, value)))


def test_a_naive_datetime_is_utc_and_a_non_datetime_timestamp_fails_as_encoding_fails():
    shape = MODEL.shape_for("ListTrainingJobsResponse")
    naive = {
        "TrainingJobSummaries": [{"TrainingJobName": "j", "CreationTime": datetime.datetime(2026, 1, 1)}]
    }
    ours = converter_for(shape, UID)(naive)
    assert_same(ours, botocore_parse(shape, encode_output(shape, naive)))
    assert ours["TrainingJobSummaries"][0]["CreationTime"] == START
    wrong = {"TrainingJobSummaries": [{"TrainingJobName": "j", "CreationTime": "2026-01-01"}]}
    with pytest.raises(TypeError):
        encode_output(shape, wrong)
    with pytest.raises(TypeError):
        converter_for(shape, UID)(wrong)


def test_a_client_gets_what_the_parser_reads_from_the_answer_body_it_was_handed():
    with LocalBackend(start_time=START) as backend:
        sm = backend.client()
        bodies = []
        sm.meta.events.register(
            "after-call.sagemaker", lambda http_response, **_: bodies.append(http_response)
        )
        request = {
            "RoleArn": "arn:aws:iam::123456789012:role/r",
            "AlgorithmSpecification": {"TrainingImage": "img", "TrainingInputMode": "File"},
            "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
            "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 5},
            "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        }
        for name, keep_alive in (("a", 0), ("b", 600)):
            resources = {**request["ResourceConfig"], "KeepAlivePeriodInSeconds": keep_alive}
            sm.create_training_job(TrainingJobName=name, **{**request, "ResourceConfig": resources})
        backend.clock.advance(900)
        answers = {
            "DescribeTrainingJob": sm.describe_training_job(TrainingJobName="b"),
            "ListTrainingJobs": sm.list_training_jobs(MaxResults=100),
        }
    for (operation, ours), http in zip(answers.items(), bodies[-2:]):
        ours.pop("ResponseMetadata")
        shape = MODEL.operation_model(operation).output_shape
        assert_same(ours, botocore_parse(shape, json.loads(http.content)))
    listed = answers["ListTrainingJobs"]["TrainingJobSummaries"]
    assert [job["TrainingJobStatus"] for job in listed] == ["Completed", "Completed"]
    assert type(listed[0]["TrainingJobStatus"]) is str


@pytest.mark.parametrize("keep_alive", [None, 600])
def test_describe_training_job_writes_its_answer_in_model_order(keep_alive):
    # The converter then keeps the handler's order instead of sorting the members (issue 19).
    from sagemaker_plans_local.services.sagemaker.api.training_jobs import describe
    from tests.conftest import create_request

    order = list(MODEL.shape_for("DescribeTrainingJobResponse").members)
    with LocalBackend(start_time=START, run_job_code=False) as backend:
        request = create_request("ordered", keep_alive=keep_alive)
        del request["StoppingCondition"]  # reported with its default
        backend.call("sagemaker", "CreateTrainingJob", request)
        backend.clock.advance(datetime.timedelta(hours=3))
        answer = describe(backend._emulation.region("us-east-1").training_jobs.get("ordered"))
    assert list(answer) == sorted(answer, key=order.index)
    assert answer["StoppingCondition"] == {"MaxRuntimeInSeconds": 86400}
    assert answer["EnableManagedSpotTraining"] is False and answer["HyperParameters"] == {"epochs": "1"}
