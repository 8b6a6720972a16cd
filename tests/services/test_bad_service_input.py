"""Raw requests to STS, IAM (query protocol) and CloudWatch Logs (JSON): whatever the body, an
AWS-shaped 4xx or a 2xx, never a 500."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.service_model import service_model
from tests.model_strategies import json_for_shape, mutated, raw_body
from tests.services import Services

LOGS_MODEL = service_model("logs")


@pytest.fixture
def services(tmp_path):
    return Services(tmp_path)


def logs_bodies(operation: str) -> st.SearchStrategy:
    shape = LOGS_MODEL.operation_model(operation).input_shape
    return mutated(shape, json_for_shape(shape)).map(raw_body)


@pytest.mark.parametrize(
    "operation", ["CreateLogGroup", "CreateLogStream", "PutLogEvents", "DescribeLogStreams", "GetLogEvents"]
)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_logs_answers_any_body(services, operation, data):
    body = data.draw(logs_bodies(operation))
    status, _, answer = services.apis["logs"].handle("us-east-1", operation, {"body": body})
    assert status in (200, 400), answer
    if status == 400:
        assert json.loads(bytes(answer))["__type"] in (
            "SerializationException",
            "InvalidParameterException",
            "ResourceNotFoundException",
            "ResourceAlreadyExistsException",
        )


@pytest.mark.parametrize(
    "body,code",
    [
        (b"[" * 10_000 + b"]" * 10_000, "SerializationException"),
        (b'{"logGroupName": "g", "colour": "red"}', "SerializationException"),
        (b'{"logGroupName": null}', "InvalidParameterException"),
        (b'{"logGroupName": "g", "limit": 4294967296}', "SerializationException"),
    ],
)
def test_logs_bad_bodies(services, body, code):
    status, _, answer = services.apis["logs"].handle("us-east-1", "DescribeLogStreams", {"body": body})
    assert (status, json.loads(bytes(answer))["__type"]) == (400, code)


QUERY_TEXT = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=40).map(lambda text: text.encode("utf-8")),
    st.sampled_from(
        [
            b"RoleName=%ff%fe",
            b"RoleName=%ED%A0%80",
            b"RoleName=" + b"a" * 70_000,
            b"RoleName=a&RoleName=b",
            b"RoleName",
            b"=&=&",
            b"\xff\xfe",
            b"RoleName=R&Bogus.1.member=x",
        ]
    ),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=QUERY_TEXT)
def test_query_services_answer_any_body(services, body):
    for service, operation in (
        ("sts", "GetCallerIdentity"),
        ("iam", "GetRole"),
        ("iam", "SimulatePrincipalPolicy"),
    ):
        status, _, answer = services.apis[service].handle("us-east-1", operation, {"body": body})
        assert status in (200, 400), answer


ROLE_ARN = b"PolicySourceArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2FR"


@pytest.mark.parametrize(
    "body,code",
    [
        (b"ActionNames.member.1=s3%3AGetObject", "ValidationError"),  # no PolicySourceArn
        (ROLE_ARN, "ValidationError"),  # no ActionNames
        (ROLE_ARN + b"&ActionNames.member.1=s3%3AGetObject&MaxItems=0", "ValidationError"),
        (ROLE_ARN + b"&ActionNames.member.1=s3%3AGetObject&MaxItems=x", "MalformedQueryString"),
    ],
)
def test_simulate_principal_policy_bad_bodies(services, body, code):
    status, _, answer = services.apis["iam"].handle("us-east-1", "SimulatePrincipalPolicy", {"body": body})
    assert status == 400 and f"<Code>{code}</Code>".encode() in answer, answer
