"""The AWS CLI (v1, from PyPI, in ``.venv-awscli``: ``make test-v3`` makes it) against the server.

The CLI runs with fake keys and no configuration file, so it can reach nothing
but the server. Without the CLI the tests fail under CI (``CI=true``) and are
skipped elsewhere, saying how to install it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import boto3
import pytest

from tests.conftest import ROLE

REPO = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/tf:2.2"


def aws_cli() -> str:
    """The ``aws`` executable: the project's ``.venv-awscli`` first, then ``PATH``."""
    local = REPO / ".venv-awscli" / "bin" / "aws"
    found = str(local) if local.is_file() else shutil.which("aws")
    if found is None:
        why = "the AWS CLI is not installed: `make .venv-awscli/.installed` (or `make test-v3`) installs it"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(why)
        pytest.skip(why)
    return found


@pytest.fixture
def aws(sagemaker_server, tmp_path):
    """Run ``aws --endpoint-url URL <args>``; the parsed JSON output (or the text, with ``text=True``)."""
    executable = aws_cli()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))}
    env.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_CONFIG_FILE=str(tmp_path / "no-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_PAGER="",
    )

    def run(*args: str, text: bool = False):
        command = [executable, "--endpoint-url", sagemaker_server.url, "--output", "json", *args]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stderr}"
        if text or not done.stdout.strip():
            return done.stdout
        return json.loads(done.stdout)

    return run


def test_training_jobs_are_created_described_and_listed(aws):
    created = aws(
        "sagemaker",
        "create-training-job",
        "--training-job-name",
        "from-the-cli",
        "--role-arn",
        ROLE,
        "--algorithm-specification",
        json.dumps({"TrainingImage": IMAGE, "TrainingInputMode": "File"}),
        "--output-data-config",
        json.dumps({"S3OutputPath": "s3://bucket/output"}),
        "--resource-config",
        json.dumps({"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10}),
        "--stopping-condition",
        json.dumps({"MaxRuntimeInSeconds": 3600}),
    )
    assert created["TrainingJobArn"].endswith(":training-job/from-the-cli")
    described = aws("sagemaker", "describe-training-job", "--training-job-name", "from-the-cli")
    assert described["TrainingJobArn"] == created["TrainingJobArn"]
    assert described["ResourceConfig"]["InstanceType"] == "ml.m5.large"
    listed = aws("sagemaker", "list-training-jobs")
    assert [job["TrainingJobName"] for job in listed["TrainingJobSummaries"]] == ["from-the-cli"]


def test_a_training_plan_is_searched_bought_and_described(aws):
    offerings = aws(
        "sagemaker",
        "search-training-plan-offerings",
        "--instance-type",
        "ml.p5.48xlarge",
        "--instance-count",
        "2",
        "--duration-hours",
        "48",
        "--target-resources",
        "training-job",
    )["TrainingPlanOfferings"]
    assert offerings
    offering = offerings[0]["TrainingPlanOfferingId"]
    bought = aws(
        "sagemaker",
        "create-training-plan",
        "--training-plan-name",
        "cli-plan",
        "--training-plan-offering-id",
        offering,
    )
    described = aws("sagemaker", "describe-training-plan", "--training-plan-name", "cli-plan")
    assert described["TrainingPlanArn"] == bought["TrainingPlanArn"]
    assert described["TotalInstanceCount"] == 2


def test_s3_cp_goes_multipart_up_and_down_and_ls_lists(aws, sagemaker_server, tmp_path):
    data = os.urandom(9 * MB + 123)  # over the CLI's 8 MiB multipart threshold
    (tmp_path / "up.bin").write_bytes(data)
    aws("s3", "mb", "s3://cli-bucket", text=True)
    aws("s3", "cp", str(tmp_path / "up.bin"), "s3://cli-bucket/dir/big file.bin", text=True)
    s3 = boto3.client(
        "s3",
        region_name="us-east-1",
        endpoint_url=sagemaker_server.url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    assert s3.get_object(Bucket="cli-bucket", Key="dir/big file.bin", Range="bytes=0-0")["ETag"].endswith(
        '-2"'
    )
    listing = aws("s3", "ls", "s3://cli-bucket/dir/", text=True)
    assert " ".join(listing.split()).endswith(f"{len(data)} big file.bin")
    assert "PRE dir/" in aws("s3", "ls", "s3://cli-bucket", text=True)
    aws("s3", "cp", "s3://cli-bucket/dir/big file.bin", str(tmp_path / "down.bin"), text=True)
    assert (tmp_path / "down.bin").read_bytes() == data
