"""Raw requests to the Resource Groups Tagging API: whatever the body, a 2xx or an AWS-shaped 4xx
(never a 500), and a durable root journals nothing for a refused one."""

from __future__ import annotations

import json

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.protocol.service_model import service_model
from tests.conftest import START
from tests.model_strategies import json_for_shape, mutated, raw_body

MODEL = service_model("resourcegroupstaggingapi")
OPERATIONS = ["GetResources", "TagResources", "UntagResources", "GetTagKeys", "GetTagValues"]


@pytest.fixture(scope="module")
def tagging():
    with LocalBackend(start_time=START) as backend:
        backend.client("s3").create_bucket(Bucket="fuzzed")
        yield backend.service("resourcegroupstaggingapi")


@pytest.mark.parametrize("operation", OPERATIONS)
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_the_tagging_api_answers_any_body(tagging, operation, data):
    shape = MODEL.operation_model(operation).input_shape
    body = data.draw(mutated(shape, json_for_shape(shape)).map(raw_body))
    status, _, answer = tagging.handle("us-east-1", operation, {"body": body})
    assert status in (200, 400), bytes(answer)
    if status == 400:
        assert json.loads(bytes(answer))["__type"] in ("SerializationException", "InvalidParameterException")


def test_inside_activate_a_plain_boto3_client_is_answered_by_the_backend():
    with LocalBackend(start_time=START) as backend, backend.activate():
        rt = boto3.client("resourcegroupstaggingapi", region_name="us-east-1")
        assert rt.get_resources()["ResourceTagMappingList"] == []
        failed = rt.tag_resources(ResourceARNList=["arn:aws:s3:::absent-bucket"], Tags={"k": "v"})
        assert failed["FailedResourcesMap"]["arn:aws:s3:::absent-bucket"]["StatusCode"] == 400
