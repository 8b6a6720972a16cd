"""0 HTTP 500 in a raw HTTP fuzz of 20,000 requests: S3's REST routes, the control API, bad HTTP.

``tests/server/http_fuzz.py`` makes the requests from a fixed seed (the same ones on every run).
Most go through the WSGI app in process (no socket, fast); a few hundred malformed ones go over
a real socket to a ``LocalServer``. Afterwards the server still answers ordinary requests.
The bench runs the same fuzzer with many more (``benchmarks/bench_s3_bodies.py``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config

from sagemaker_plans_local.server.accounts import Accounts
from sagemaker_plans_local.server.app import ServerApp
from tests.server import http_fuzz

SEED = 17
WSGI_REQUESTS = 19_700
RAW_REQUESTS = 300
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
S3_AUTH = {"Authorization": http_fuzz.SCOPE.format(key="testing", region="us-east-1", service="s3")}


@pytest.fixture
def app():
    accounts = Accounts(START, None)
    found = ServerApp(accounts)
    for bucket in ("fuzz-bucket", "fuzz-other"):
        assert (
            http_fuzz.send_wsgi(found, http_fuzz.FuzzRequest("s3", "PUT", f"/{bucket}", headers=S3_AUTH))
            == 200
        )
    yield found
    accounts.close()


@pytest.fixture
def quiet_logs():
    """The app logs each 500 with its traceback: a fuzz that finds some should not flood the output."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _failures(app, requests) -> list[tuple]:
    failures = []
    for request in requests:
        status = http_fuzz.send_wsgi(app, request)
        if http_fuzz.failed(status):
            failures.append((status, request.kind, request.method, request.path[:80], request.query[:80]))
    return failures


def test_the_wsgi_app_answers_every_fuzzed_request_without_a_500(app, quiet_logs):
    failures = _failures(app, [*http_fuzz.requests(SEED, WSGI_REQUESTS), *http_fuzz.fixed_requests()])
    assert failures == [], f"{len(failures)} answers were 5xx, e.g. {failures[:5]}"
    put = http_fuzz.FuzzRequest("s3", "PUT", "/fuzz-bucket/after", headers=S3_AUTH, body=b"still here")
    assert http_fuzz.send_wsgi(app, put) == 200
    assert (
        http_fuzz.send_wsgi(app, http_fuzz.FuzzRequest("s3", "GET", "/fuzz-bucket/after", headers=S3_AUTH))
        == 200
    )
    health = http_fuzz.FuzzRequest("control", "GET", "/_sagemaker_plans_local/health")
    assert http_fuzz.send_wsgi(app, health) == 200


def test_malformed_http_over_a_socket_gets_no_500(sagemaker_server, quiet_logs):
    address = urlsplit(sagemaker_server.url)
    failures = []
    for kind, data in http_fuzz.raw_requests(SEED, RAW_REQUESTS):
        status = http_fuzz.send_raw(address.hostname, address.port, data)
        if http_fuzz.failed(status):
            failures.append((status, kind, data[:120]))
    assert failures == [], f"{len(failures)} answers were 5xx, e.g. {failures[:5]}"
    s3 = boto3.client(
        "s3",
        endpoint_url=sagemaker_server.url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"max_attempts": 1}),
    )
    s3.create_bucket(Bucket="after-the-fuzz")
    s3.put_object(Bucket="after-the-fuzz", Key="k", Body=b"fine")
    assert s3.get_object(Bucket="after-the-fuzz", Key="k")["Body"].read() == b"fine"


def test_a_body_shorter_than_its_content_length_is_a_400_for_every_family(app):
    sagemaker = {
        "Authorization": http_fuzz.SCOPE.format(key="testing", region="us-east-1", service="sagemaker"),
        "X-Amz-Target": "SageMaker.ListTrainingJobs",
        "Content-Type": "application/x-amz-json-1.1",
    }
    for body in (b"", b"{}"):
        short = http_fuzz.FuzzRequest("service-short", "POST", "/", headers=sagemaker, body=body, length=100)
        assert http_fuzz.send_wsgi(app, short) == 400
    control = http_fuzz.FuzzRequest(
        "control-short",
        "POST",
        "/_sagemaker_plans_local/clock",
        headers={"Content-Type": "application/json"},
        body=b"{}",
        length=100,
    )
    assert http_fuzz.send_wsgi(app, control) == 400
    put = http_fuzz.FuzzRequest("s3", "PUT", "/fuzz-bucket/short", headers=S3_AUTH, body=b"x", length=100)
    assert http_fuzz.send_wsgi(app, put) == 400
