"""The model's patterns matched in bounded time, with the same answers as the Java translation
run by the backtracking ``regex`` engine (the reference), for every pattern of every service
the backend answers."""

from __future__ import annotations

import functools
import re
import threading

import botocore.session
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.patterns import matcher, translate, uses_re2
from sagemaker_plans_local.protocol.service_model import operation_model, service_model
from sagemaker_plans_local.protocol.validation import validate_request, violations
from tests.conftest import create_request

SERVICES = ("sagemaker", "logs", "sts", "iam", "s3")
_SESSION = botocore.session.get_session()
#: (pattern, max length) for every patterned string shape of the five models.
SHAPES = sorted(
    {
        (shape.metadata["pattern"], shape.metadata.get("max", 256))
        for model in (_SESSION.get_service_model(name) for name in SERVICES)
        for shape in map(model.shape_for, model.shape_names)
        if shape.type_name == "string" and "pattern" in shape.metadata
    }
)
PATTERNS = sorted({pattern for pattern, _ in SHAPES})
PROBES = [
    "",
    "a",
    "Z9",
    "a-b",
    "a--b",
    "-a",
    "a-",
    "a.b",
    "a..b",
    "/a/b",
    "//",
    "https://h/p/q",
    "s3://b/k",
    " ",
    "\t",
    "\x0b",
    "\n",
    "a\n",
    "a\r\n",
    "\r",
    "\x85",
    "\u2028",
    "é",
    "e\u0301",
    "😀",
    "ml.m5.large",
    "arn:aws:sagemaker:us-east-1:123456789012:training-job/x",
    "arn:aws-cn:iam::123456789012:role/R",
    "arn:aws:sagemaker:us-east-1:123456789012:algorithm/a-",
    "1.2.3",
    "v1.2",
    "0",
    "12345678901234",
    "fs-0123abcd",
    "ami-0123abcd",
    "sg-0123",
    "a b",
    "a_b",
    "$",
    "{}",
    "owner{1,128}",
    "١٢٣",
]


def reference(pattern: str) -> regex.Pattern:
    return regex.compile(translate(pattern), regex.V0)


def agrees(pattern: str, value: str) -> bool:
    return matcher(pattern)(value) == (reference(pattern).fullmatch(value) is not None)


def test_every_backtracked_pattern_has_a_max_length():
    lengths = {}
    for model in (_SESSION.get_service_model(name) for name in SERVICES):
        for shape in map(model.shape_for, model.shape_names):
            pattern = shape.metadata.get("pattern")
            if shape.type_name == "string" and pattern and not uses_re2(pattern):
                lengths[shape.name] = shape.metadata.get("max")
    assert lengths and None not in lengths.values()


def test_a_value_over_its_max_length_is_reported_for_its_length_alone():
    shape = service_model().shape_for("MetricsEndpointPath")
    (message,) = violations(shape, "/" + "a" * shape.metadata["max"], "p")
    assert "Member must have length less than or equal to" in message


def test_every_pattern_has_a_bounded_engine():
    assert len(PATTERNS) > 300
    engines = [uses_re2(pattern) for pattern in PATTERNS]  # raises for a pattern neither engine fits
    assert sum(engines) > 0.9 * len(engines)
    backtracked = [pattern for pattern, linear in zip(PATTERNS, engines) if not linear]
    assert r".*(?:[ \r\n\t].*)*" not in backtracked  # the pattern that needed a time budget


@pytest.mark.parametrize("pattern", PATTERNS)
def test_probes_agree_with_the_reference(pattern):
    assert [value for value in PROBES if not agrees(pattern, value)] == []


@functools.lru_cache(maxsize=None)
def _positive(pattern: str) -> st.SearchStrategy:
    """Short values the reference accepts, where Python's ``re`` reads the translation."""
    if re.search(r"\{\d*,?\d{3,}\}", pattern):  # counts in the hundreds: values too long to be useful
        return st.nothing()
    try:
        return st.from_regex(re.compile(translate(pattern)), fullmatch=True).filter(lambda v: len(v) < 40)
    except re.error:  # \p{..} classes: no generator
        return st.nothing()


@st.composite
def pattern_and_value(draw):
    pattern = draw(st.sampled_from(PATTERNS))
    alphabet = st.sampled_from(sorted(set(pattern) | set(" -.:/\n\r\u2028é😀")))
    value = draw(st.one_of(st.text(alphabet, max_size=12), _positive(pattern)))
    return pattern, value


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow]
)
@given(pattern_and_value())
def test_generated_values_agree_with_the_reference(case):
    pattern, value = case
    assert agrees(pattern, value)


def _worst_cases(pattern: str, length: int) -> list[str]:
    """Long near-misses: runs of the pattern's own characters, then one that fails."""
    own = [char for char in dict.fromkeys(pattern) if char.isalnum() or char in " -._:/"] or ["a"]
    runs = [
        "a" * length,
        " " * length,
        "a-" * (length // 2),
        "-" * length,
        own[0] * length,
        "".join(own) * (length // len(own)),
    ]
    return [run[: length - 1] + tail for run in runs for tail in ("!", "\u2028", "-")]


@pytest.mark.parametrize("pattern,length", SHAPES)
def test_worst_case_input_at_the_shape_max_length_is_answered(pattern, length):
    matches = matcher(pattern)  # no time budget: the call returns because the engine is bounded
    assert all(isinstance(matches(value), bool) for value in _worst_cases(pattern, min(length, 4096)))


def test_catastrophic_pattern_at_full_length_is_answered_exactly():
    pattern = r".*(?:[ \r\n\t].*)*"
    assert not matcher(pattern)(" " * 4095 + "\u2028")  # \u2028 is a line terminator: no match
    assert matcher(pattern)(" \n" * 2048)


def test_lone_surrogates_never_match():
    assert not matcher(".*")("a\ud800")
    assert matcher(".*")("a\U0001f600")


def test_valid_creates_are_never_refused_under_load():
    model = service_model()
    shape = model.shape_for("ClusterSchedulerPriorityClassName")
    name = "a-" * 30 + "b"  # valid, and a long road for a backtracking engine
    create = operation_model("CreateTrainingJob")
    refused: list[str] = []

    def work() -> None:
        for index in range(250):
            refused.extend(violations(shape, name, "n"))
            try:
                validate_request(create, create_request(f"job-{index}-" + "x" * 40))
            except Exception as error:  # noqa: BLE001 - collected for the assertion
                refused.append(repr(error))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert refused == []


@pytest.mark.parametrize("pattern", [r"(a|a)*x(?<!b)", r"(a*)*(?<!b)", r"((ab|a))+(?<!b)", r"(a?b){2,}(?!c)"])
def test_a_pattern_needing_backtracking_with_an_ambiguous_repeat_is_refused(pattern):
    with pytest.raises(ValueError, match="ambiguous"):
        matcher.__wrapped__(pattern)


@pytest.mark.parametrize(
    "pattern,linear",
    [
        (r"(a|a)*", True),
        (r"(a|b)*(?<!b)", False),
        (r"([a-z0-9]|-(?!-)){1,61}", False),
        (r"[a-z]{0,2000}", False),
        (r"([a-z]+/?){3,1016}", True),
    ],
)
def test_engine_choice(pattern, linear):
    assert uses_re2(pattern) is linear
    assert matcher(pattern)("a") == (reference(pattern).fullmatch("a") is not None)
