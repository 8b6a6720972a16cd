"""Who may call the server: Host names, cross-origin requests, the control API's content type and bounds."""

from __future__ import annotations

import http.client
import json
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.server.guard import Guard, host_name
from sagemaker_plans_local.server.runner import LocalServer
from tests.server.clients import CONTROL, client

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
SLOW = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=150)
SAGEMAKER_AUTH = (
    "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/sagemaker/aws4_request, "
    "SignedHeaders=host, Signature=00"
)
LIST_JOBS = {"X-Amz-Target": "SageMaker.ListTrainingJobs", "Content-Type": "application/x-amz-json-1.1"}


@pytest.fixture
def server(tmp_path):
    with LocalServer(start_time=START, root=tmp_path / "root") as running:
        yield running


def send(server, method: str, path: str, body: bytes = b"", headers: dict | None = None):
    """(status, headers, body) of one raw request; ``headers`` may set Host (else 127.0.0.1:PORT)."""
    port = int(server.url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = dict(headers or {})
        connection.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        if body or method == "POST":
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def jsonpost(server, path: str, document: dict, headers: dict | None = None):
    sent = {"Content-Type": "application/json", **(headers or {})}
    status, _, body = send(server, "POST", CONTROL + path, json.dumps(document).encode(), sent)
    return status, json.loads(body)


def clock_now(server) -> str:
    return server.accounts.now().isoformat()


def moved(server) -> str:
    """Advance the clock a minute (in process); what a refused reset must leave in place."""
    server.accounts.advance(60)
    return clock_now(server)


# -- Host ------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["attacker.example", "attacker.example:80", "127.0.0.1.nip.io:8080", "", "a b"]
)
def test_a_foreign_or_rebinding_host_is_refused_before_anything_is_done(server, host):
    now = moved(server)
    status, headers, body = send(
        server, "POST", CONTROL + "reset", b"{}", {"Host": host, "Content-Type": "application/json"}
    )
    assert (status, json.loads(body)["error"]) == (403, "Forbidden")
    assert clock_now(server) == now
    sm = {
        "Host": host,
        "Authorization": SAGEMAKER_AUTH,
        **LIST_JOBS,
    }
    status, headers, body = send(server, "POST", "/", b"{}", sm)
    assert (status, json.loads(body)["__type"]) == (403, "AccessDeniedException")
    status, headers, body = send(server, "GET", "/", headers={"Host": host})
    assert status == 403 and b"<Code>AccessDenied</Code>" in body
    assert "Access-Control-Allow-Origin" not in headers


LOOPBACK = st.sampled_from(
    [
        "localhost",
        "LOCALHOST",
        "127.0.0.1",
        "127.1.2.3",
        "[::1]",
        "bucket.localhost",
        "b.s3.localhost",
        "localhost.",
    ]
)


@SLOW
@given(name=LOOPBACK, port=st.one_of(st.none(), st.integers(1, 65535)))
def test_loopback_names_with_any_port_are_the_servers_own(name, port):
    host = name if port is None else f"{name}:{port}"
    parsed = host_name(host)
    assert parsed is not None and Guard("127.0.0.1").allows(parsed)


@SLOW
@given(label=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), port=st.integers(1, 65535))
def test_other_names_need_allowed_host(label, port):
    name = host_name(f"{label}.example.org:{port}")
    assert name is not None
    assert not Guard("127.0.0.1").allows(name)
    assert Guard("127.0.0.1", [f"{label}.example.org"]).allows(name)
    assert Guard("127.0.0.1", ["*.example.org"]).allows(name)
    assert Guard("127.0.0.1", ["*"]).allows(name)
    assert Guard(f"{label}.example.org").allows(name)


def test_allowed_hosts_and_the_bound_host_are_answered(tmp_path):
    with LocalServer(start_time=START, allowed_hosts=["sm.internal"]) as running:
        status, _, body = send(running, "GET", CONTROL + "health", headers={"Host": "sm.internal:9000"})
        assert status == 200
        assert send(running, "GET", CONTROL + "health", headers={"Host": "other.internal"})[0] == 403


def test_the_sdk_clients_host_is_answered(server):
    sm = client(server)
    assert sm.list_training_jobs()["TrainingJobSummaries"] == []
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="guard-bucket")
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["guard-bucket"]


# -- Origin ----------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},
        {"Origin": "http://localhost:3000"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_browsers_cross_origin_request_is_refused(server, headers):
    now = moved(server)
    assert jsonpost(server, "reset", {}, headers)[0] == 403
    assert clock_now(server) == now
    status, answer_headers, body = send(server, "PUT", "/bucket", b"", headers)
    assert status == 403 and b"AccessDenied" in body
    assert not any(name.lower().startswith("access-control-") for name in answer_headers)
    assert send(server, "GET", CONTROL + "health", headers=headers)[0] == 403


def test_the_servers_own_origin_is_answered(server):
    port = server.url.rsplit(":", 1)[1]
    assert (
        jsonpost(
            server, "reset", {}, {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}
        )[0]
        == 200
    )


# -- control API content type and bounds -------------------------------------


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
def test_a_control_post_that_is_not_json_is_refused(server, content_type):
    now = moved(server)
    headers = {} if content_type is None else {"Content-Type": content_type}
    status, headers, body = send(server, "POST", CONTROL + "reset", b"{}", headers)
    assert (status, json.loads(body)["error"]) == (415, "UnsupportedMediaType")
    assert headers["Content-Type"] == "application/json"
    assert clock_now(server) == now


def test_json_with_a_charset_is_json(server):
    assert jsonpost(server, "reset", {}, {"Content-Type": "application/json; charset=utf-8"})[0] == 200


def test_a_deeply_nested_control_body_is_a_400(server):
    for body in (b"[" * 10000, b'{"a":' * 10000, b"[" * 10000 + b"]" * 10000):
        status, _, answer = send(
            server, "POST", CONTROL + "clock", body, {"Content-Type": "application/json"}
        )
        assert (status, json.loads(answer)["error"]) == (400, "BadRequest")


def test_a_control_body_over_16_mib_is_a_413(server):
    now = moved(server)
    port = int(server.url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:  # only the headers: the server refuses by Content-Length without reading the body
        connection.putrequest("POST", CONTROL + "reset")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(17 * 1024 * 1024))
        connection.endheaders()
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())["error"]) == (413, "RequestEntityTooLarge")
    finally:
        connection.close()
    assert clock_now(server) == now


CONTROL_PATHS = st.sampled_from(
    [
        "clock",
        "reset",
        "capacity",
        "capacity/clear",
        "scripts/jobs",
        "scripts/plans",
        "settings",
        "health",
        "nope",
    ]
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


@SLOW
@given(
    method=st.sampled_from(["POST", "POST", "POST", "GET", "PUT", "DELETE", "HEAD", "PATCH"]),
    path=CONTROL_PATHS,
    body=st.one_of(
        JSONISH.map(lambda doc: json.dumps(doc).encode()),
        st.dictionaries(
            st.sampled_from(
                [
                    "advance_seconds",
                    "next_change",
                    "count",
                    "start",
                    "end",
                    "job_name",
                    "instance_type",
                    "availability_zone",
                    "runtime_seconds",
                    "outcome",
                    "training_plan_name",
                    "job_runtime_seconds",
                ]
            ),
            JSONISH,
            max_size=6,
        ).map(lambda doc: json.dumps(doc).encode()),
        st.binary(max_size=40),
        st.tuples(st.sampled_from(["[", '{"a":', '[{"b":']), st.integers(1, 30000)).map(
            lambda pair: (pair[0] * pair[1]).encode()
        ),
    ),
    query=st.sampled_from(["", "?account=111122223333", "?account=x", "?account=%ff", "?a=b&a=c"]),
)
def test_no_control_input_is_a_500(fuzzed, method, path, body, query):
    sent = body if method in ("POST", "PUT", "PATCH") else b""
    status, headers, answer = send(
        fuzzed, method, CONTROL + path + query, sent, {"Content-Type": "application/json"}
    )
    assert 200 <= status < 500, answer
    assert method == "HEAD" or isinstance(json.loads(answer), dict)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    """One server for the whole fuzz (its state changes, as a user's would)."""
    with LocalServer(start_time=START, root=tmp_path_factory.mktemp("fuzz")) as running:
        yield running
