"""A local session never reaches AWS: not one connection leaves the process, on any path.

The flows run in fresh processes with real-looking credentials in the environment, every proxy
pointed at a dead port, and a ``sitecustomize`` that records (and refuses) every name lookup
and every non-Unix socket connection of the process and of every process it starts (the jobs'
code too). A service the backend does not emulate answers ``NotImplemented``; one named in a
pass-through goes to AWS, which the recorder sees: the check can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.sdk.major import installed_major

ROOT = Path(__file__).resolve().parents[2]
LOG_VARIABLE = "SAGEMAKER_PLANS_LOCAL_TEST_NETLOG"
RECORDER = """
import json, os, socket

def _record(kind, target):
    with open(os.environ["%(log)s"], "a") as log:
        log.write(json.dumps({"pid": os.getpid(), "kind": kind, "target": repr(target)}) + "\\n")

def _getaddrinfo(host, *args, **kwargs):
    _record("dns", host)
    raise socket.gaierror(socket.EAI_NONAME, "offline test: no name lookups")

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex

def _refused(self, address):
    if self.family == socket.AF_UNIX:
        return False
    _record("connect", address)
    return True

def connect(self, address):
    if _refused(self, address):
        raise ConnectionRefusedError(111, "offline test: no connections")
    return _connect(self, address)

def connect_ex(self, address):
    return 111 if _refused(self, address) else _connect_ex(self, address)

socket.getaddrinfo = _getaddrinfo
socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
""" % {"log": LOG_VARIABLE}
FLOWS = """
import boto3
from botocore.exceptions import ClientError
from sagemaker_plans_local import LocalBackend, Session

def refused(client, operation):
    try:
        getattr(client, operation)()
    except ClientError as error:
        assert error.response["Error"]["Code"] == "NotImplemented", error.response
        return
    raise AssertionError(f"{operation} was answered")

backend = LocalBackend()
with backend.activate():
    refused(boto3.client("ec2"), "describe_instances")
    refused(boto3.client("ecr"), "describe_repositories")
    refused(boto3.Session().client("cloudformation"), "list_stacks")
    assert boto3.client("sagemaker").list_training_jobs()["TrainingJobSummaries"] == []
    assert boto3.client("sts").get_caller_identity()["Account"] == "123456789012"
    boto3.client("s3").list_buckets()
refused(backend.boto_session().client("ec2"), "describe_instances")
session = Session(backend=backend)
refused(session.boto_session.client("ecr"), "describe_repositories")
session.sagemaker_client.list_training_jobs()
print("bucket", session.default_bucket())
"""
FIXTURES = """
import boto3
import pytest
from botocore.exceptions import ClientError

def test_the_fixtures_stay_local(sagemaker_backend, sagemaker_client, sagemaker_session):
    assert sagemaker_client.list_training_jobs()["TrainingJobSummaries"] == []
    sagemaker_session.sagemaker_client.list_training_jobs()
    with sagemaker_backend.activate():
        with pytest.raises(ClientError, match="NotImplemented"):
            boto3.client("ec2").describe_instances()
"""
DEAD_PROXY = "http://127.0.0.1:9"
REAL_LOOKING = {
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture
def offline(tmp_path):
    """Run ``python ARGS`` offline: (the completed process, the attempts it and its children made)."""
    recorder = tmp_path / "recorder"
    recorder.mkdir()
    (recorder / "sitecustomize.py").write_text(RECORDER)
    log = tmp_path / "network.jsonl"
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SAGEMAKER_PLANS_LOCAL_ENDPOINT"))
    }
    env.update(REAL_LOOKING)
    env.update({name: DEAD_PROXY for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")})
    env.update({name.lower(): DEAD_PROXY for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")})
    env.update({"NO_PROXY": "", "no_proxy": "", LOG_VARIABLE: str(log), "SAGEMAKER_SUPPRESS_V2_WARNING": "1"})
    # A remote function's job installs the SDK it was pickled with (v2): from what is installed here,
    # never the package index (which is not AWS, but is a connection all the same).
    env["PIP_NO_INDEX"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(recorder), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )

    def run(*args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
        done = subprocess.run(
            [sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
        attempts = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        log.unlink(missing_ok=True)
        return done, attempts

    return run


def test_activate_boto_session_and_session_refuse_other_services_offline(offline, tmp_path):
    script = tmp_path / "flows.py"
    script.write_text(FLOWS)
    done, attempts = offline(str(script))
    assert done.returncode == 0, done.stderr
    assert "bucket sagemaker-us-east-1-123456789012" in done.stdout
    assert attempts == []


def test_the_pytest_fixtures_stay_offline(offline, tmp_path):
    (tmp_path / "test_fixtures_offline.py").write_text(FIXTURES)
    done, attempts = offline("-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fixtures_offline.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert attempts == []


def test_the_sdk_runs_a_job_with_waits_telemetry_and_its_code_offline(offline, tmp_path):
    example = "seed_warm_pool_estimator.py" if installed_major() == 2 else "v3_model_trainer.py"
    done, attempts = offline(str(ROOT / "examples" / example))
    assert done.returncode == 0, done.stdout + done.stderr
    assert attempts == []


def test_remote_functions_run_offline(offline):
    test = "tests/sdk/test_remote_function.py::test_remote_returns_the_value_and_the_second_call_reuses_the_warm_pool"
    done, attempts = offline(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), str(ROOT / test)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert attempts == []


def test_a_passthrough_service_goes_to_aws_and_only_it(monkeypatch):
    attempts = []

    def refuse(host, *args, **kwargs):
        attempts.append(host)
        raise OSError("offline test: no name lookups")

    monkeypatch.setattr("socket.getaddrinfo", refuse)
    for name, value in REAL_LOOKING.items():
        monkeypatch.setenv(name, value)
    with LocalBackend() as backend, backend.activate(passthrough={"ec2"}):
        with pytest.raises(EndpointConnectionError):
            boto3.client("ec2", config=_no_retries()).describe_instances()
        with pytest.raises(ClientError, match="NotImplemented"):
            boto3.client("ecr").describe_repositories()
        assert boto3.client("sagemaker").list_training_jobs()["TrainingJobSummaries"] == []
    assert attempts and set(attempts) == {"ec2.us-east-1.amazonaws.com"}


def _no_retries():
    from botocore.config import Config

    return Config(retries={"max_attempts": 1})
