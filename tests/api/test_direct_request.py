"""A direct call's plain copy of its parameters is what the service reads off the serialized request.

``copier_for(shape)`` either refuses parameters (``NotPlain``: the call then validates them with botocore
and serializes them) or they are ones botocore's validator accepts and it gives exactly what
``read_request`` reads from the body botocore's serializer makes of them: the same values of the same
types, in the same order, in new dicts and lists. Parameters the reader refuses (SerializationException)
are never plain.
"""

import math
from datetime import datetime, timezone

import pytest
from botocore.serialize import create_serializer
from botocore.validate import validate_parameters
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.json_wire import read_request
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.api.service import HANDLERS
from sagemaker_plans_local.transport.direct_request import NotPlain, copier_for
from tests.conftest import create_request
from tests.model_strategies import HUGE_INTS, ODD_TEXT, _paths, _replace, for_shape

MODEL = service_model()
UID = MODEL.metadata["uid"]
SERIALIZER = create_serializer("json", include_validation=False)
OPERATIONS = sorted(op for op in HANDLERS if MODEL.operation_model(op).input_shape is not None)
#: Python values a caller may pass that the wire changes or refuses (tuples, odd text and numbers, ...).
ODD = st.one_of(
    st.sampled_from(ODD_TEXT + HUGE_INTS),
    st.sampled_from((True, False, 1.5, -0.0, 1e308, math.inf, math.nan, 3, "3", b"b", bytearray(b"x"))),
    st.just(datetime(2024, 5, 1, 12, 30, 15, 123456)),
    st.just(datetime(2024, 5, 1, tzinfo=timezone.utc)),
    st.sampled_from(("2024-05-01T12:00:00Z", 1714564800, "2024-05-01")),
    st.just(()),
    st.just(("a", "b")),
    st.just({"k": "v"}),
)


def _typed(value):
    """``value`` with each scalar's type beside it: ``1``, ``1.0`` and ``True`` differ, as do order and kinds."""
    if isinstance(value, dict):
        return ("dict", [(key, _typed(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _containers(value):
    if isinstance(value, (dict, list, tuple)):
        yield id(value)
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


def _without(value, path):
    """``value`` without the member or item at ``path``."""
    if len(path) > 1:
        return _replace(value, path[:-1], _without(_at(value, path[:-1]), path[-1:]))
    if isinstance(value, list):
        return value[: path[0]] + value[path[0] + 1 :]
    return {key: item for key, item in value.items() if key != path[0]}


def _at(value, path):
    for step in path:
        value = value[step]
    return value


@st.composite
def _params(draw, shape):
    """Parameters of ``shape`` with up to three spots replaced by an odd Python value (or a member the shape
    lacks), or taken out (a required member missing, a list or string under its minimum ...)."""
    value = draw(for_shape(shape))
    for _ in range(draw(st.integers(0, 3))):
        path, _ = draw(st.sampled_from(_paths(shape, value)))
        if not path:
            continue
        if path[-1] != "UnknownMember" and draw(st.booleans()):
            value = _without(value, path)
        else:
            value = _replace(value, path, draw(ODD))
    return value


def _read_back(operation, params):
    """What the service reads from the serializer's request for ``params``: the error if the serializer
    fails (a huge epoch number) or the reader refuses it."""
    model = MODEL.operation_model(operation)
    try:
        return read_request(model.input_shape, SERIALIZER.serialize_to_request(params, model)["body"])
    except (ApiError, RuntimeError) as error:
        return error


@pytest.mark.parametrize("operation", OPERATIONS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_plain_copy_is_what_the_wire_reads(operation, data):
    shape = MODEL.operation_model(operation).input_shape
    copy = copier_for(shape, UID)
    if copy is None:
        return
    params = data.draw(_params(shape))
    try:
        copied = copy(params)
    except NotPlain:
        return  # the call validates with botocore, then serializes
    validate_parameters(params, shape)  # raises nothing: botocore accepts what is plain
    read = _read_back(operation, params)
    assert not isinstance(read, Exception), read
    assert _typed(copied) == _typed(read)
    assert not set(_containers(copied)) & set(_containers(params))  # nothing of the caller's is held


def test_the_simulators_requests_are_plain_and_odd_values_are_not():
    shape = MODEL.operation_model("CreateTrainingJob").input_shape
    copy = copier_for(shape, UID)
    request = create_request("a", Tags=[{"Key": "k", "Value": "v"}])
    copied = copy(request)
    assert copied == request and copied["ResourceConfig"] is not request["ResourceConfig"]
    for odd in (
        {"RoleArn": "r\u00e9le"},  # non-ASCII text: the reader checks it
        {"ResourceConfig": {**request["ResourceConfig"], "InstanceCount": 2**31}},  # beyond 32 bits
        {"ResourceConfig": {**request["ResourceConfig"], "InstanceCount": True}},  # a bool for an integer
        {"HyperParameters": {"\udc80": "x"}},  # a lone surrogate as a map key
        {"RoleArn": None},  # botocore's "Invalid type"
        {"TrainingJobName": ""},  # under the model's min (botocore's "Invalid length")
        {"Unknown": 1},  # botocore's "Unknown parameter"
    ):
        with pytest.raises(NotPlain):
            copy({**request, **odd})
    with pytest.raises(NotPlain):  # botocore's "Missing required parameter"
        copy({key: item for key, item in request.items() if key != "RoleArn"})
    listing = copier_for(MODEL.operation_model("ListTrainingJobs").input_shape, UID)
    with pytest.raises(NotPlain):  # a timestamp: the wire converts it
        listing({"CreationTimeAfter": datetime(2024, 1, 1)})
    assert listing({"SortBy": "Name", "MaxResults": 5}) == {"SortBy": "Name", "MaxResults": 5}


def test_shapes_that_nest_themselves_have_no_copy():
    # Search's SearchExpression holds SubExpressions of itself: a body could nest deeper than the reader allows.
    assert copier_for(MODEL.operation_model("Search").input_shape, UID) is None
