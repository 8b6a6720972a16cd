import boto3
import botocore.exceptions
import botocore.session
import pytest
from botocore.client import ClientCreator

from tests.conftest import create_request


def test_activate_answers_every_new_client_and_restores_on_exit(backend, monkeypatch):
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    original = ClientCreator.create_client
    with backend.activate():
        default = boto3.client("sagemaker")  # no region, no credentials
        explicit = boto3.session.Session(region_name="us-east-1").client("sagemaker")
        raw = botocore.session.get_session().create_client("sagemaker", region_name="us-east-1")
        default.create_training_job(**create_request("a"))
        assert explicit.describe_training_job(TrainingJobName="a")["TrainingJobName"] == "a"
        assert raw.list_training_jobs()["TrainingJobSummaries"][0]["TrainingJobName"] == "a"
    assert ClientCreator.create_client is original
    # After exit the hook falls silent: the call goes to AWS and fails without credentials.
    with pytest.raises(botocore.exceptions.NoCredentialsError):
        default.describe_training_job(TrainingJobName="a")


def test_nested_activation_uses_the_innermost_backend(backend, tmp_path):
    from sagemaker_plans_local import LocalBackend

    with LocalBackend(root=tmp_path / "other") as other:
        with backend.activate():
            with other.activate():
                boto3.client("sagemaker", region_name="us-east-1").create_training_job(
                    **create_request("inner")
                )
            outer = boto3.client("sagemaker", region_name="us-east-1")
            assert outer.list_training_jobs()["TrainingJobSummaries"] == []
        assert other.client().list_training_jobs()["TrainingJobSummaries"][0]["TrainingJobName"] == "inner"


def test_a_client_made_while_the_last_activation_closes_is_still_made(monkeypatch):
    """Another thread may close the last activation while a client is being created."""
    import contextlib

    from sagemaker_plans_local.transport.activation import Activation, activated

    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    stack = contextlib.ExitStack()

    class ClosingMidCreation(Activation):
        """Reading its region (inside the wrapped create_client) closes the activation."""

        @property
        def region(self):
            stack.close()
            return "eu-west-1"

        @region.setter
        def region(self, value):
            pass

    original = ClientCreator.create_client
    stack.enter_context(activated(ClosingMidCreation(lambda client, enabled: None, "eu-west-1")))
    client = boto3.client("sts", aws_access_key_id="testing", aws_secret_access_key="testing")
    assert client.meta.region_name == "eu-west-1"
    assert ClientCreator.create_client is original
