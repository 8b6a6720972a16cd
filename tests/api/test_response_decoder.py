"""The compiled response decoder gives exactly what botocore's JSON parser gives."""

import functools
import json

import pytest
from botocore.parsers import JSONParser
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.json_wire import encode_output
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.api.service import HANDLERS
from sagemaker_plans_local.transport.response_decoder import decoder_for
from tests.model_strategies import for_shape

MODEL = service_model()
UID = MODEL.metadata["uid"]
OUTPUTS = sorted(
    op
    for op in HANDLERS
    if MODEL.operation_model(op).output_shape is not None
    and decoder_for(MODEL.operation_model(op).output_shape, UID) is not None
)


def botocore_parse(shape, wire):
    response = {"status_code": 200, "headers": {}, "body": json.dumps(wire).encode()}
    parsed = JSONParser().parse(response, shape)
    parsed.pop("ResponseMetadata")
    return parsed


@functools.lru_cache(maxsize=None)  # one strategy per operation, not one per example
def output_values(operation: str) -> st.SearchStrategy:
    return for_shape(MODEL.operation_model(operation).output_shape)


@pytest.mark.parametrize("operation", OUTPUTS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_same_as_botocore(operation, data):
    shape = MODEL.operation_model(operation).output_shape
    wire = encode_output(shape, data.draw(output_values(operation)))
    ours = decoder_for(shape, UID)(wire)
    theirs = botocore_parse(shape, wire)
    assert ours == theirs
    assert list(ours) == list(theirs)  # members in the same (model) order


def test_shapes_with_documents_or_unions_are_left_to_botocore():
    # DescribeCluster's output holds a document/union shape: the hook parses it with botocore.
    assert decoder_for(MODEL.operation_model("DescribeCluster").output_shape, UID) is None
    assert "DescribeTrainingJob" in OUTPUTS


def test_nulls_sparse_lists_blobs_and_unknown_members():
    shape = MODEL.shape_for("DescribeTrainingJobResponse")
    wire = {
        "TrainingJobName": "j",
        "FailureReason": None,
        "NotInModel": 1,
        "SecondaryStatusTransitions": [None, {"Status": "Starting", "StartTime": 1.5}],
    }
    assert decoder_for(shape, UID)(wire) == botocore_parse(shape, wire)
