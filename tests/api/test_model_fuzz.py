"""Requests generated from the model: the only outcomes are a conforming
response, a ClientError from the backend (never a bug) or botocore's
ParamValidationError; a rejected request changes nothing and an accepted create
is describable.  (Raw bodies, past botocore's checks: test_raw_json_fuzz.py.)"""

import copy
import functools

import pytest
from botocore import xform_name
from botocore.exceptions import ClientError, ParamValidationError
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.api.service import HANDLERS
from tests.conformance import assert_conforms
from tests.conftest import create_request
from tests.model_strategies import for_shape

MODEL = service_model()
OPERATIONS = sorted(HANDLERS)
EXISTING = ["known-1", "known-2"]


def valid_create_requests():
    """Well-formed CreateTrainingJob requests with fuzzed optional parts."""
    shape = MODEL.shape_for("CreateTrainingJobRequest")
    return st.builds(
        lambda name, keep_alive, extra: {**create_request(name, keep_alive=keep_alive), **extra},
        st.one_of(st.sampled_from(EXISTING), st.from_regex(r"fresh-[a-z0-9]{1,12}", fullmatch=True)),
        st.sampled_from([None, 0, 60, 3600, 3601]),
        st.just({})
        | st.fixed_dictionaries(
            {},
            optional={
                name: for_shape(shape.members[name], depth=1)
                for name in (
                    "VpcConfig",
                    "EnableNetworkIsolation",
                    "EnableManagedSpotTraining",
                    "Environment",
                    "Tags",
                )
            },
        ),
    )


@functools.lru_cache(maxsize=None)  # built once per operation: drawing from it is what each example does
def requests(operation):
    shape = MODEL.operation_model(operation).input_shape
    generated = for_shape(shape)
    if "TrainingJobName" in shape.members:
        named = st.builds(lambda r, n: {**r, "TrainingJobName": n}, generated, st.sampled_from(EXISTING))
        generated = st.one_of(generated, named)
    if operation == "CreateTrainingJob":
        valid = valid_create_requests()
        generated = st.integers(0, 3).flatmap(lambda pick, raw=generated: raw if pick == 0 else valid)
    return generated


def snapshot(sm):
    listed = sm.list_training_jobs(MaxResults=100)["TrainingJobSummaries"]
    return {
        s["TrainingJobName"]: (s["TrainingJobStatus"], s.get("WarmPoolStatus"), s["LastModifiedTime"])
        for s in listed
    }


@pytest.mark.parametrize("operation", OPERATIONS)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_generated_requests(backend, sm, operation, data):
    # backend, sm: one backend and client per operation, shared by its examples (state checked by snapshot)
    for name in EXISTING:
        if name not in snapshot(sm):
            sm.create_training_job(**create_request(name))
    backend.clock.advance(data.draw(st.sampled_from([0, 60, 900])))
    request = data.draw(requests(operation))
    before = snapshot(sm)
    method = getattr(sm, xform_name(operation))
    try:
        response = method(**copy.deepcopy(request))
    except ParamValidationError:
        event("ParamValidationError")
        assert snapshot(sm) == before
        return
    except ClientError as error:
        code = error.response["Error"]["Code"]
        event(code)
        assert code not in ("InternalFailure", "NotImplemented"), error
        assert snapshot(sm) == before, f"{operation} rejected with {code} but changed state"
        return
    event("answered")
    assert_conforms(operation, response)
    if operation == "CreateTrainingJob":  # accepted means describable, conforming
        assert_conforms(
            "DescribeTrainingJob", sm.describe_training_job(TrainingJobName=request["TrainingJobName"])
        )
