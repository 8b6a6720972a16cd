"""Bad HTTP gets an AWS-shaped 4xx from the server, never a traceback or a 500."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.server import app
from tests.server.clients import raw

SCOPE = "Credential=testing/20260101/us-east-1/{}/aws4_request, SignedHeaders=host, Signature=0"


def signed(service: str, **headers: str) -> dict:
    return {"Authorization": "AWS4-HMAC-SHA256 " + SCOPE.format(service), **headers}


def sagemaker_headers(target: str = "SageMaker.ListTrainingJobs") -> dict:
    return signed("sagemaker", **{"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.1"})


def json_code(body: bytes) -> str:
    return json.loads(body)["__type"]


def query_code(body: bytes) -> str:
    return ElementTree.fromstring(body).findtext(".//{*}Code") or ""


def test_no_credential_is_a_403_in_the_requests_shape(sagemaker_server):
    status, _, body = raw(
        sagemaker_server, "/", b"{}", "POST", {"X-Amz-Target": "SageMaker.ListTrainingJobs"}
    )
    assert (status, json_code(body)) == (403, "MissingAuthenticationTokenException")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _, body = raw(sagemaker_server, "/", b"Action=GetCallerIdentity", "POST", form)
    assert (status, query_code(body)) == (403, "MissingAuthenticationToken")
    status, _, body = raw(sagemaker_server, "/bucket/key")
    assert (status, ElementTree.fromstring(body).findtext("Code")) == (403, "AccessDenied")


def test_a_service_not_emulated_is_not_implemented(sagemaker_server):
    status, _, body = raw(sagemaker_server, "/", b"{}", "POST", signed("ec2", **{"X-Amz-Target": "Ec2.Run"}))
    assert (status, json_code(body)) == (501, "NotImplemented")


@pytest.mark.parametrize(
    "target", ["SageMaker.NoSuchOperation", "Logs_20140328.ListTrainingJobs", "", "SageMaker"]
)
def test_an_unknown_target_is_refused(sagemaker_server, target):
    status, _, body = raw(sagemaker_server, "/", b"{}", "POST", sagemaker_headers(target))
    assert (status, json_code(body)) == (400, "UnknownOperationException")


def test_a_wrong_method_is_refused(sagemaker_server):
    status, _, body = raw(sagemaker_server, "/", None, "GET", sagemaker_headers())
    assert (status, json_code(body)) == (400, "UnknownOperationException")
    status, _, body = raw(sagemaker_server, "/", None, "DELETE", signed("sts"))
    assert (status, query_code(body)) == (400, "InvalidAction")


def test_query_actions_missing_or_unknown(sagemaker_server):
    form = signed("sts", **{"Content-Type": "application/x-www-form-urlencoded"})
    status, _, body = raw(sagemaker_server, "/", b"Version=2011-06-15", "POST", form)
    assert (status, query_code(body)) == (400, "MissingAction")
    status, _, body = raw(sagemaker_server, "/", b"Action=RunInstances", "POST", form)
    assert (status, query_code(body)) == (400, "InvalidAction")
    status, _, body = raw(
        sagemaker_server, "/?Action=GetCallerIdentity&Version=2011-06-15", None, "GET", signed("sts")
    )
    assert status == 200 and b"<Account>123456789012</Account>" in body


def test_an_oversized_body_is_a_413(sagemaker_server, monkeypatch):
    monkeypatch.setattr(app, "MAX_BODY", 1024)
    status, _, body = raw(sagemaker_server, "/", b"{" + b" " * 2048 + b"}", "POST", sagemaker_headers())
    assert (status, json_code(body)) == (413, "RequestEntityTooLargeException")


def test_a_presigned_credential_names_the_service(sagemaker_server):
    credential = "testing/20260101/us-east-1/sts/aws4_request"
    path = f"/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Credential={credential}"
    status, _, body = raw(sagemaker_server, path)
    assert status == 200 and b"GetCallerIdentityResult" in body


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=st.binary(max_size=300))
def test_garbage_json_bodies_get_a_4xx(sagemaker_server, body):
    status, _, answer = raw(
        sagemaker_server, "/", body, "POST", sagemaker_headers("SageMaker.CreateTrainingJob")
    )
    assert 400 <= status < 500
    assert json_code(answer)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=st.binary(max_size=300))
def test_garbage_query_bodies_get_a_4xx_or_an_answer(sagemaker_server, body):
    headers = signed("iam", **{"Content-Type": "application/x-www-form-urlencoded"})
    status, _, answer = raw(sagemaker_server, "/", b"Action=GetRole&" + body, "POST", headers)
    assert status == 200 or (400 <= status < 500 and query_code(answer))  # any RoleName=... is a role


_HEADER_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=80)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    scope=st.one_of(
        _HEADER_TEXT,
        st.builds("{}/20260101/{}/{}/aws4_request".format, _HEADER_TEXT, _HEADER_TEXT, _HEADER_TEXT),
    ),
    target=_HEADER_TEXT,
    path=st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="#?"), max_size=30),
)
def test_garbage_credentials_targets_and_paths_never_break_the_server(sagemaker_server, scope, target, path):
    headers = {"Authorization": f"AWS4-HMAC-SHA256 Credential={scope}, Signature=0", "X-Amz-Target": target}
    status, _, answer = raw(sagemaker_server, "/" + path, b"{}", "POST", headers)
    assert status != 500, answer
    assert status == 200 or 400 <= status <= 501
