"""Who may call the server: Host names, browsers' cross-origin requests, control API auth and bounds."""

from __future__ import annotations

import http.client
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.server import cli, runner
from sagemaker_plans_local.server.guard import CONTROL_SIGNING_NAME, Guard, host_name
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT
from sagemaker_plans_local.server.runner import LocalServer
from tests.server.clients import CONTROL, client

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
KEY, SECRET = "AKIDGUARDTEST", "guard-secret"
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


@pytest.fixture
def keyed(tmp_path):
    with LocalServer(start_time=START, root=tmp_path / "root", credentials={KEY: SECRET}) as running:
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
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
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


# -- control API auth under --access-key --------------------------------------


def signed(server, path: str, body: bytes, secret: str = SECRET, stamp: str | None = None):
    """A control POST signed with SigV4 for the control API (at ``stamp``, default now)."""
    stamp = stamp or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    request = AWSRequest(
        method="POST",
        url=server.url + CONTROL + path,
        data=body,
        headers={"Content-Type": "application/json"},
    )
    request.context["timestamp"] = stamp
    request.headers["X-Amz-Date"] = stamp
    auth = SigV4Auth(Credentials(KEY, secret), CONTROL_SIGNING_NAME, "us-east-1")
    signature = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    names = auth.signed_headers(auth.headers_to_sign(request))
    scope = f"{KEY}/{stamp[:8]}/us-east-1/{CONTROL_SIGNING_NAME}/aws4_request"
    request.headers["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders={names}, Signature={signature}"
    )
    return send(server, "POST", CONTROL + path, body, dict(request.headers.items()))


def test_under_access_key_an_unsigned_control_request_is_refused(keyed):
    now = moved(keyed)
    assert jsonpost(keyed, "reset", {}) == (403, jsonpost(keyed, "reset", {})[1])
    assert jsonpost(keyed, "reset", {})[1]["error"] == "AccessDenied"
    assert send(keyed, "GET", CONTROL + "clock")[0] == 403
    assert clock_now(keyed) == now


@pytest.mark.parametrize(
    ("secret", "stamp"), [("wrong", None), (SECRET, "20200101T000000Z")], ids=["wrong-secret", "stale"]
)
def test_under_access_key_a_badly_signed_control_request_is_refused(keyed, secret, stamp):
    now = moved(keyed)
    status, _, body = signed(keyed, "reset", b"{}", secret, stamp)
    assert (status, json.loads(body)["error"]) == (403, "AccessDenied")
    assert clock_now(keyed) == now


def test_under_access_key_a_signed_control_request_is_answered(keyed):
    moved(keyed)
    status, _, body = signed(keyed, "reset", b"{}")
    assert (status, json.loads(body)["now"]) == (200, START.isoformat())
    status, _, body = signed(keyed, "clock?account=111122223333", b'{"advance_seconds": 5}')
    assert status == 200


def test_the_cli_signs_its_control_calls_from_the_environment(keyed, monkeypatch, capsys):
    moved(keyed)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    assert cli.main(["reset", "--endpoint-url", keyed.url, "--yes"]) == 1
    assert "control API needs a SigV4 signature" in capsys.readouterr().err
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    assert cli.main(["reset", "--endpoint-url", keyed.url, "--yes"]) == 0
    assert clock_now(keyed) == START.isoformat()
    assert cli.main(["clock", "advance", "90s", "--endpoint-url", keyed.url]) == 0
    assert keyed.accounts.now() == START.replace(minute=1, second=30)


# -- running code ------------------------------------------------------------


def code_job(name: str, marker: Path) -> dict:
    return {
        "TrainingJobName": name,
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
        "AlgorithmSpecification": {
            "TrainingImage": "image",
            "TrainingInputMode": "File",
            "ContainerEntrypoint": ["/bin/sh", "-c", f"touch {marker}"],
        },
        "OutputDataConfig": {"S3OutputPath": "s3://out/results"},
        "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }


def test_under_no_run_code_a_job_with_code_completes_on_the_clock_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    with LocalServer(start_time=START, root=tmp_path / "root", run_code=False) as running:
        sm = client(running)
        sm.create_training_job(**code_job("simulated", marker))
        running.backend(DEFAULT_ACCOUNT).run_until_idle()
        assert sm.describe_training_job(TrainingJobName="simulated")["TrainingJobStatus"] == "Completed"
    assert not marker.exists()


@pytest.mark.parametrize("first", [True, False])
def test_a_root_keeps_whether_job_code_runs(tmp_path, first):
    """Its journal replays each job as it was run or simulated: the other choice is refused."""
    root = tmp_path / "root"
    with LocalServer(start_time=START, root=root, run_code=first) as running:
        client(running).create_training_job(**code_job("kept", tmp_path / "ran"))
    with pytest.raises(ValueError, match="served"):
        LocalServer(start_time=START, root=root, run_code=not first)
    with LocalServer(start_time=START, root=root, run_code=first) as running:
        assert client(running).describe_training_job(TrainingJobName="kept")["TrainingJobName"] == "kept"


def test_a_root_holding_no_account_takes_either_choice(tmp_path):
    LocalServer(start_time=START, root=tmp_path / "root").stop()
    LocalServer(start_time=START, root=tmp_path / "other", run_code=False).stop()
    for root in ("root", "other"):
        for account in (tmp_path / root / "accounts").iterdir():
            shutil.rmtree(account)
    LocalServer(start_time=START, root=tmp_path / "root", run_code=False).stop()
    LocalServer(start_time=START, root=tmp_path / "other").stop()


def test_by_default_the_same_job_runs_its_code(tmp_path):
    """The contrast: without --no-run-code the entrypoint above does run (and makes the file)."""
    cause = views.unavailable()
    if cause is not None:
        pytest.skip(f"this machine gives no /opt/ml view: {cause}")
    marker = tmp_path / "ran"
    with LocalServer(start_time=START, root=tmp_path / "root") as running:
        sm = client(running)
        sm.create_training_job(**code_job("run", marker))
        running.backend(DEFAULT_ACCOUNT).wait_for_training_job("run")
        assert sm.describe_training_job(TrainingJobName="run")["TrainingJobStatus"] == "Completed"
    assert marker.exists()


def test_serve_refuses_a_network_host_without_access_key(capsys, monkeypatch):
    def never(*args, **kwargs):  # the refusal comes first: nothing is ever bound to 0.0.0.0
        raise AssertionError("serve bound a network address")

    monkeypatch.setattr(runner, "LocalServer", never)
    assert cli.main(["serve", "--host", "0.0.0.0"]) == 1
    assert "--access-key" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--access-key", "k:s"], ["--unauthenticated"]])
def test_serve_takes_a_network_host_when_told(monkeypatch, capsys, extra):
    made = {}

    def fake(*args, **kwargs):  # records what serve would start, and stops there
        made.update(args=args, **kwargs)
        raise OSError("not started in a test")

    monkeypatch.setattr(runner, "LocalServer", fake)
    argv = ["serve", "--host", "0.0.0.0", "--allowed-host", "sm.internal", "--no-run-code", *extra]
    assert cli.main(argv) == 1
    assert made["args"][0] == "0.0.0.0"
    assert (made["allowed_hosts"], made["run_code"]) == (["sm.internal"], False)


def test_the_sdk_layers_remote_backend_signs_its_control_calls(monkeypatch):
    from sagemaker_plans_local.sdk.remote import SECRET_KEY, RemoteBackend

    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    with LocalServer(start_time=START, credentials={DEFAULT_ACCOUNT: SECRET_KEY}) as running:
        remote = RemoteBackend(running.url)
        answer = remote.control("POST", CONTROL + "clock", {"advance_seconds": 60})
        assert answer["now"] == START.replace(minute=1).isoformat()
        assert remote.clock.now() == START.replace(minute=1)
