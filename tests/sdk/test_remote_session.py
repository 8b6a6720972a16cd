"""The SDK layer against a server: ``Session(endpoint_url=...)``, ``activated(endpoint_url=...)``, the variable."""

from __future__ import annotations

import importlib
import io
import tarfile
import textwrap
from datetime import datetime, timezone

import boto3
import pytest
from botocore.exceptions import ClientError

from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.sdk.activation import activated
from sagemaker_plans_local.sdk.default_backend import ENDPOINT_VARIABLE
from sagemaker_plans_local.sdk.flag import FLAG
from sagemaker_plans_local.sdk.remote import RemoteBackend
from sagemaker_plans_local.sdk.session import session_class
from sagemaker_plans_local.server.runner import LocalServer
from tests.sdk.test_remote_function import MODULE, SETTINGS
from tests.sdk.test_wall_clock_sdk import SCRIPT, run_script

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311"
TRAIN = textwrap.dedent("""
    import os, pathlib
    cache = pathlib.Path(os.environ.get("SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY", "/nonexistent"))
    seen = (cache / "seen").read_text() if (cache / "seen").exists() else ""
    if cache.is_dir():
        (cache / "seen").write_text(seen + os.environ["TRAINING_JOB_NAME"] + " ")
    pathlib.Path(os.environ["SM_MODEL_DIR"], "model.txt").write_text("seen: " + seen)
    print("trained in the server", flush=True)
""")


def model_text(server, uri: str) -> str:
    """The ``model.txt`` of the model archive at ``uri``, read from the server's own S3."""
    bucket, key = uri[len("s3://") :].split("/", 1)
    body = server.backend().client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        member = archive.extractfile("model.txt")
        assert member is not None
        return member.read().decode()


def test_a_remote_session_reaches_the_server_in_its_account(sagemaker_server):
    session = session_class()(endpoint_url=sagemaker_server.url)
    assert isinstance(session.backend, RemoteBackend)
    assert session.account_id() == "123456789012"
    bucket = session.default_bucket()
    assert bucket == "sagemaker-us-east-1-123456789012"
    sagemaker_server.backend().client("s3").head_bucket(Bucket=bucket)  # made in the server's S3
    identity = session.boto_session.client("sts", endpoint_url="https://sts.us-east-1.amazonaws.com")
    assert identity.get_caller_identity()["Account"] == "123456789012"  # another endpoint named: the server


def test_other_services_refuse_as_in_process(sagemaker_server):
    ec2 = RemoteBackend(sagemaker_server.url).boto_session().client("ec2")
    with pytest.raises(ClientError) as raised:
        ec2.describe_instances()
    assert raised.value.response["Error"]["Code"] == "NotImplemented"


def test_an_activation_sends_plain_clients_to_the_server(sagemaker_server):
    with activated(endpoint_url=sagemaker_server.url) as backend:
        assert isinstance(backend, RemoteBackend)
        plain = boto3.client("sagemaker", region_name="us-east-1")
        plain.create_training_job(
            TrainingJobName="activated",
            RoleArn=ROLE,
            AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            OutputDataConfig={"S3OutputPath": "s3://out/results"},
            ResourceConfig={"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
            StoppingCondition={"MaxRuntimeInSeconds": 3600},
        )
        sts = boto3.client("sts", endpoint_url="https://sts.us-east-1.amazonaws.com")
        assert sts.get_caller_identity()["Account"] == "123456789012"
        assert backend.wait_for_training_job("activated").status == "Completed"
    assert sagemaker_server.backend().training_job("activated").status == "Completed"


def test_the_variable_makes_the_default_backend_the_server(sagemaker_server, sagemaker_backend, monkeypatch):
    monkeypatch.setenv(ENDPOINT_VARIABLE, sagemaker_server.url)
    default = session_class()()
    assert isinstance(default.backend, RemoteBackend)
    assert default.backend.endpoint_url == sagemaker_server.url
    default.default_bucket()
    sagemaker_server.backend().client("s3").head_bucket(Bucket="sagemaker-us-east-1-123456789012")
    # an explicit argument comes first: a backend, or another server's URL (never reached here)
    assert session_class()(backend=sagemaker_backend).backend is sagemaker_backend
    other = session_class()(endpoint_url="http://127.0.0.1:9")
    assert other.backend.endpoint_url == "http://127.0.0.1:9"


def test_a_backend_and_an_endpoint_url_together_are_refused(sagemaker_server, sagemaker_backend):
    with pytest.raises(ValueError, match="not both"):
        session_class()(backend=sagemaker_backend, endpoint_url=sagemaker_server.url)


def test_a_wall_clock_servers_job_is_polled_to_its_end_at_real_time(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(SCRIPT)
    with LocalServer(root=tmp_path / "server") as server:
        name = run_script(session_class()(endpoint_url=server.url), str(tmp_path / "src"))
        backend = server.backend()
        assert backend.training_job(name).status == "Completed"
        assert backend.clock.now() <= datetime.now(timezone.utc)  # polled, never moved ahead


def test_remote_functions_run_in_the_server_and_reuse_its_warm_pool(sagemaker_server, monkeypatch):
    cause = views.unavailable()
    if cause is not None:
        pytest.skip(f"this machine gives no /opt/ml view: {cause}")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # v3's module makes a client on import
    remote_function = importlib.import_module(MODULE)

    @remote_function.remote(sagemaker_session=session_class()(endpoint_url=sagemaker_server.url), **SETTINGS)
    def add(a, b):
        return a + b

    assert (add(2, 3), add(4, 5)) == (5, 9)
    sagemaker = sagemaker_server.backend().client("sagemaker")
    first, second = (
        summary["TrainingJobName"]
        for summary in sagemaker.list_training_jobs(SortBy="CreationTime", SortOrder="Ascending")[
            "TrainingJobSummaries"
        ]
    )
    assert sagemaker.describe_training_job(TrainingJobName=first)["WarmPoolStatus"]["ReusedByJob"] == second


def test_the_flag_still_means_aws_before_any_server(sagemaker_server, monkeypatch):
    monkeypatch.setenv(ENDPOINT_VARIABLE, sagemaker_server.url)
    monkeypatch.setenv(FLAG, "0")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    assert session_class()(endpoint_url=sagemaker_server.url).backend is None
    with activated(endpoint_url=sagemaker_server.url) as backend:
        assert backend is None
