"""Who may call the server: the control API's signatures under --access-key, and running job code."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sagemaker_plans_local.cli import main as cli
from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.server import runner
from sagemaker_plans_local.server.guard import CONTROL_SIGNING_NAME
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT
from sagemaker_plans_local.server.runner import LocalServer
from tests.server.clients import CONTROL, client
from tests.server.test_guard import START, clock_now, jsonpost, moved, send

KEY, SECRET = "AKIDGUARDTEST", "guard-secret"


@pytest.fixture
def keyed(tmp_path):
    with LocalServer(start_time=START, root=tmp_path / "root", credentials={KEY: SECRET}) as running:
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
