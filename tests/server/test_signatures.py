"""SigV4 checking (``--access-key KEY:SECRET``): signed requests pass, anything else is a 403."""

from __future__ import annotations

import urllib.error
import urllib.request

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import create_request

KEY, SECRET = "111122223333", "the-secret"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with LocalServer(root=tmp_path_factory.mktemp("signed"), credentials={KEY: SECRET}) as running:
        yield running


def client(server, service, key=KEY, secret=SECRET, **config):
    return boto3.client(
        service,
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1}, **config),
    )


def error_code(call, *args, **kwargs):
    with pytest.raises(ClientError) as caught:
        call(*args, **kwargs)
    return caught.value.response["Error"]["Code"], caught.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_signed_requests_of_every_service_are_answered(server):
    sm = client(server, "sagemaker")
    sm.create_training_job(**create_request("signed"))
    assert sm.describe_training_job(TrainingJobName="signed")["TrainingJobName"] == "signed"
    assert client(server, "sts").get_caller_identity()["Account"] == KEY
    assert client(server, "iam").get_role(RoleName="SageMakerRole")["Role"]["RoleName"] == "SageMakerRole"
    logs = client(server, "logs")
    logs.create_log_group(logGroupName="/signed")
    logs.create_log_stream(logGroupName="/signed", logStreamName="stream")
    streams = logs.describe_log_streams(logGroupName="/signed")["logStreams"]
    assert [stream["logStreamName"] for stream in streams] == ["stream"]


@pytest.mark.parametrize(
    ("service", "call", "expected"),
    [
        ("sagemaker", lambda c: c.list_training_jobs(), "InvalidSignatureException"),
        ("sts", lambda c: c.get_caller_identity(), "SignatureDoesNotMatch"),
        ("logs", lambda c: c.create_log_group(logGroupName="/x"), "InvalidSignatureException"),
        ("s3", lambda c: c.list_buckets(), "SignatureDoesNotMatch"),
    ],
)
def test_a_wrong_secret_is_refused_in_the_services_own_shape(server, service, call, expected):
    assert error_code(call, client(server, service, secret="wrong")) == (expected, 403)


def test_an_unknown_key_is_refused(server):
    assert error_code(client(server, "sagemaker", key="testing").list_training_jobs) == (
        "UnrecognizedClientException",
        403,
    )
    assert error_code(client(server, "s3", key="testing").list_buckets) == ("InvalidAccessKeyId", 403)


def test_a_body_changed_after_signing_is_refused(server):
    sm = client(server, "sagemaker")

    def tamper(request, **_):
        request.body = request.body.replace(b"tampered", b"tamperex")

    sm.meta.events.register("before-send.sagemaker.CreateTrainingJob", tamper)
    assert error_code(sm.create_training_job, **create_request("tampered")) == (
        "InvalidSignatureException",
        403,
    )


def test_presigned_urls_verify_with_sigv4_and_sigv2_is_refused(server):
    s3 = client(server, "s3", signature_version="s3v4")
    s3.create_bucket(Bucket="signed")
    s3.put_object(Bucket="signed", Key="a b+c/ü.txt", Body=b"presigned")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "signed", "Key": "a b+c/ü.txt"})
    with urllib.request.urlopen(url) as answer:
        assert answer.read() == b"presigned"
    sigv2 = client(server, "s3").generate_presigned_url("get_object", Params={"Bucket": "signed", "Key": "k"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(sigv2)
    assert caught.value.code == 403


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(key=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40))
def test_s3_keys_with_any_characters_verify(server, key):
    s3 = client(server, "s3", signature_version="s3v4")
    s3.create_bucket(Bucket="keys")
    s3.put_object(Bucket="keys", Key=key, Body=b"x", Metadata={"note": "signed"})
    listed = s3.list_objects_v2(Bucket="keys", Prefix=key[:3], MaxKeys=5)
    assert listed["KeyCount"] >= 1
    assert s3.get_object(Bucket="keys", Key=key)["Body"].read() == b"x"


def test_starting_a_started_server_changes_nothing_and_it_stops(tmp_path):
    server = LocalServer(root=tmp_path / "twice")
    assert server.start() is server.start()
    server.stop()
    server.stop()
