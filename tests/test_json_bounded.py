"""A large awsJson body is refused at the cost of its size, with the answer the whole body gets
(``protocol/json_bounded.py``; issue 29, item 12).

Memory is measured with tracemalloc (an upper bound, never a time).
"""

from __future__ import annotations

import json
import random
import tracemalloc
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.protocol import json_wire
from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.service_model import operation_model
from sagemaker_plans_local.protocol.validation import violations

ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-job/x"
ADD_TAGS = operation_model("AddTags").input_shape
CREATE = operation_model("CreateTrainingJob").input_shape
NESTED = "The request body is nested more than 32 levels deep."
NOT_JSON = "The request body is not valid JSON."


def add_tags(tags: list) -> bytes:
    return json.dumps({"ResourceArn": ARN, "Tags": tags}).encode()


def answer(backend: LocalBackend, body: bytes) -> tuple[int, bytes]:
    refused = backend.service("sagemaker").handle("us-east-1", "AddTags", {"body": body})
    return refused.status, bytes(refused.body)


def peak_bytes(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_400000_tags_are_refused_as_51_are_and_cost_about_their_size():
    tags = [{"Key": f"k{i:06d}", "Value": "v"} for i in range(400_000)]
    huge = add_tags(tags)
    with LocalBackend() as backend:
        small = answer(backend, add_tags(tags[:51]))
        assert small[0] == 400 and json.loads(small[1]) == {
            "__type": "ValidationException",
            "message": "1 validation error detected: Value '[{Key=k000000, Value=v}, {Key=k000001, Value=v}, "
            "{Key=k000002, Value=v}, {Key=k000003, Value=v}, ...' at 'tags' failed to satisfy constraint: "
            "Member must have length less than or equal to 50",
        }
        seen: list = []
        peak = peak_bytes(lambda: seen.append(answer(backend, huge)))
        assert seen == [small]
        assert peak < 3 * len(huge)  # the body read as text, and little more (it was 15x)


def test_a_body_of_empty_objects_costs_about_its_size():
    body = b'{"ResourceArn": "%s", "Tags": [' % ARN.encode() + b"{}, " * 300_000 + b"{}]}"
    with LocalBackend() as backend:
        seen: list = []
        peak = peak_bytes(lambda: seen.append(answer(backend, body)))
        assert seen[0][0] == 400 and b"Member must have length less than or equal to 50" in seen[0][1]
        assert peak < 3 * len(body)  # it was 50x: an object and a walk's entry for each


def test_an_over_long_list_is_refused_for_its_size_alone():
    tags = [{"Key": "", "Value": "v" * 300}] * 51
    assert violations(ADD_TAGS, {"ResourceArn": ARN, "Tags": tags}) == [
        f"Value '{('[{Key=, Value=' + 'v' * 300)[:97]}...' at 'tags' failed to satisfy constraint: "
        "Member must have length less than or equal to 50"
    ]
    assert len(violations(ADD_TAGS, {"ResourceArn": ARN, "Tags": tags[:50]})) == 100  # each member's


def test_a_member_past_the_kept_ones_still_counts_for_the_nesting_and_the_syntax():
    deep = "[" * 40 + "]" * 40
    body = '{"ResourceArn": "%s", "Tags": [%s, %s]}' % (ARN, ", ".join(["{}"] * 100), deep)
    for text in (body, body[:-1], body + "x", body.replace(deep, "[}")):
        assert outcome(text.encode(), 0) == outcome(text.encode(), None)
    assert outcome(body.encode(), 0) == ("refused", "SerializationException", NESTED)
    assert outcome(body[:-1].encode(), 0) == ("refused", "SerializationException", NOT_JSON)


def outcome(body: bytes, large: int | None, shape=ADD_TAGS) -> tuple:
    """What reading ``body`` gives, read whole (``large`` None) or bounded past ``large`` bytes."""
    with mock.patch.object(json_wire, "LARGE", len(body) + 1 if large is None else large):
        try:
            document = json_wire.read_request(shape, body)
        except ApiError as error:
            return ("refused", error.code, error.message)
    return ("read", violations(shape, document))


def _write(value, rng: random.Random) -> str:
    """``value`` as JSON text with random spacing (a ``("dup", k, first, last)`` member: a key given twice)."""
    space = lambda: rng.choice(["", "", " ", "\n  ", "\t"])  # noqa: E731
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if isinstance(item, tuple) and item[:1] == ("dup",):
                parts.append(f"{json.dumps(key)}{space()}:{space()}{_write(item[1], rng)}")
                item = item[2]
            parts.append(f"{json.dumps(key)}{space()}:{space()}{_write(item, rng)}")
        return "{" + space() + f",{space()}".join(parts) + space() + "}"
    if isinstance(value, list):
        return (
            "[" + space() + f"{space()},{space()}".join(_write(item, rng) for item in value) + space() + "]"
        )
    return json.dumps(value)


SCALARS = st.one_of(st.text(max_size=6), st.none(), st.integers(-3, 3), st.booleans())
NESTING = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=2), max_leaves=40)
TAG = st.fixed_dictionaries({}, optional={"Key": NESTING, "Value": NESTING})


@settings(max_examples=150, deadline=None)
@given(
    tags=st.one_of(st.lists(TAG, max_size=8), st.lists(TAG, min_size=45, max_size=120)),
    arn=SCALARS,
    twice=st.booleans(),
    cut=st.one_of(st.none(), st.integers(0, 2000)),
    seed=st.integers(0, 2**16),
)
def test_a_body_read_bounded_reads_as_the_whole_body(tags, arn, twice, cut, seed):
    document = {"ResourceArn": ("dup", [1], arn) if twice else arn, "Tags": tags}
    body = _write(document, random.Random(seed)).encode()
    if cut is not None:  # some bodies cut short: not JSON
        body = body[: cut % (len(body) + 1)]
    assert outcome(body, 0) == outcome(body, None)


LIMITED = st.dictionaries(st.text(max_size=3), st.text(max_size=3), min_size=95, max_size=105)


@settings(max_examples=40, deadline=None)
@given(
    hyper=st.one_of(st.none(), LIMITED),
    metrics=st.lists(
        st.fixed_dictionaries({"Name": st.text(max_size=3), "Regex": st.text(max_size=3)}), max_size=45
    ),
    seed=st.integers(0, 2**16),
)
def test_nested_bounded_lists_and_maps_read_as_the_whole_body(hyper, metrics, seed):
    request = {
        "TrainingJobName": "job-1",
        "AlgorithmSpecification": {"TrainingInputMode": "File", "MetricDefinitions": metrics},
        "HyperParameters": hyper,
    }
    body = _write(request, random.Random(seed)).encode()
    assert outcome(body, 0, CREATE) == outcome(body, None, CREATE)
