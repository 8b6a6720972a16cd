"""SAGEMAKER_PLANS_LOCAL=0 sends every path to AWS with nothing of ours in it (both SDK majors).

An endpoint nobody listens on (``127.0.0.1:9``) proves it: a request that
reaches it fails to connect, while anything of ours would have answered.
"""

import os
import subprocess
import sys
import textwrap

import boto3
import pytest
from botocore.client import ClientCreator
from botocore.exceptions import EndpointConnectionError

from sagemaker_plans_local import LocalBackend, Session, activate, activated
from tests.sdk.test_public_names import NO_RETRIES, UNREACHABLE, clean_env, sdk_session_class


def unreachable_client(session=None):
    session = session or boto3.session.Session(
        aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1"
    )
    return session.client("sagemaker", endpoint_url=UNREACHABLE, config=NO_RETRIES)


@pytest.fixture
def aws_mode(monkeypatch):
    monkeypatch.setenv("SAGEMAKER_PLANS_LOCAL", "0")


def test_local_answers_even_an_unreachable_endpoint(tmp_path):
    with LocalBackend(root=tmp_path / "b") as backend, activated(backend):
        assert unreachable_client().list_training_jobs()["TrainingJobSummaries"] == []


def test_session_goes_to_aws(aws_mode):
    boto_session = boto3.session.Session(
        aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1"
    )
    session = Session(boto_session=boto_session, sagemaker_client=unreachable_client(boto_session))
    assert isinstance(session, sdk_session_class())
    assert session.local is False and session.backend is None
    with pytest.raises(EndpointConnectionError):
        session.describe_training_plan("any")


def test_activated_and_activate_change_nothing(aws_mode, tmp_path):
    original = ClientCreator.create_client
    with LocalBackend(root=tmp_path / "b") as backend:
        with activated(backend) as active:
            assert active is None
            assert ClientCreator.create_client is original
            with pytest.raises(EndpointConnectionError):
                unreachable_client().list_training_jobs()
        deactivate = activate(backend)
        try:
            assert ClientCreator.create_client is original
            with pytest.raises(EndpointConnectionError):
                unreachable_client().list_training_jobs()
        finally:
            deactivate()


SCRIPT = textwrap.dedent("""
    import boto3
    from botocore.config import Config
    sm = boto3.client("sagemaker", endpoint_url="http://127.0.0.1:9",
                      config=Config(retries={"max_attempts": 1}, connect_timeout=1))
    try:
        print("answered", sm.list_training_jobs()["TrainingJobSummaries"])
    except Exception as error:
        print("failed", type(error).__name__)
""")


@pytest.mark.parametrize("flag, printed", [("1", "answered []"), ("0", "failed EndpointConnectionError")])
def test_cli_honours_the_flag(tmp_path, flag, printed):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = clean_env(SAGEMAKER_PLANS_LOCAL=flag, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x")
    result = subprocess.run(
        [sys.executable, "-m", "sagemaker_plans_local", "run", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(printed)


FIXTURE_TEST = textwrap.dedent("""
    import boto3, pytest
    from botocore.config import Config
    from botocore.exceptions import EndpointConnectionError

    def test_session_fixture_is_an_aws_session(sagemaker_session):
        assert sagemaker_session.local is False and sagemaker_session.backend is None
        client = sagemaker_session.boto_session.client(
            "sagemaker", endpoint_url="http://127.0.0.1:9", config=Config(retries={"max_attempts": 1}))
        with pytest.raises(EndpointConnectionError):
            client.list_training_jobs()
""")


def test_the_session_fixture_honours_the_flag(tmp_path):
    (tmp_path / "test_fixture_flag.py").write_text(FIXTURE_TEST)
    env = clean_env(
        SAGEMAKER_PLANS_LOCAL="0", AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", PYTHONPATH=os.getcwd()
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_fixture_flag.py"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert "1 passed" in result.stdout, result.stdout + result.stderr
