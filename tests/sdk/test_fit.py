"""fit() through the SageMaker SDK runs the entry point on this machine."""

import io
import json
import subprocess
import sys
import tarfile
import textwrap

import pytest
import sagemaker
from sagemaker.exceptions import UnexpectedStatusException

from sagemaker_plans_local import Estimator
from tests.sdk.test_public_names import clean_env

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311"

TRAIN = textwrap.dedent("""
    import argparse, json, os, pathlib, sys
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--fail", type=int, default=0)
    args = parser.parse_args()
    print("hello from the entry point, epochs", args.epochs, flush=True)
    cache = os.environ.get("SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY")
    seen = []
    if cache:
        marker = pathlib.Path(cache, "seen.txt")
        seen = marker.read_text().split() if marker.exists() else []
        marker.write_text(" ".join(seen + [os.environ["TRAINING_JOB_NAME"]]))
    rows = sorted(pathlib.Path(os.environ["SM_CHANNEL_TRAIN"]).iterdir())
    pathlib.Path(os.environ["SM_MODEL_DIR"], "model.json").write_text(json.dumps({
        "epochs": args.epochs, "rows": [r.name for r in rows], "seen": seen,
        "hosts": json.loads(os.environ["SM_HOSTS"])}))
    if args.fail:
        print("something broke", file=sys.stderr)
        sys.exit(args.fail)
""")


@pytest.fixture
def source(tmp_path):
    directory = tmp_path / "src"
    directory.mkdir()
    (directory / "train.py").write_text(TRAIN)
    return directory


@pytest.fixture
def data(sagemaker_session, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.csv").write_text("1,2\n")
    sagemaker_session.boto_session.client("s3").create_bucket(Bucket="fit-bucket")
    return sagemaker_session.upload_data(str(folder), bucket="fit-bucket", key_prefix="train")


def estimator(session, source, **extra):
    options = dict(
        image_uri=IMAGE,
        role=ROLE,
        instance_count=1,
        instance_type="ml.m5.large",
        entry_point="train.py",
        source_dir=str(source),
        hyperparameters={"epochs": 2},
        output_path="s3://fit-bucket/output",
        sagemaker_session=session,
    )
    return Estimator(**{**options, **extra})


def read_model(session, uri):
    bucket, key = uri[len("s3://") :].split("/", 1)
    body = session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        return json.load(archive.extractfile("model.json"))


def test_fit_runs_the_entry_point_and_stores_the_model(sagemaker_session, source, data, capsys):
    job = estimator(sagemaker_session, source)
    job.fit({"train": data}, job_name="fit-1", logs="All")
    printed = capsys.readouterr().out
    assert "hello from the entry point, epochs 2" in printed
    assert "Completed - Training job completed" in printed
    assert job.model_data == "s3://fit-bucket/output/fit-1/output/model.tar.gz"
    model = read_model(sagemaker_session, job.model_data)
    assert model["epochs"] == 2 and model["rows"] == ["a.csv"] and model["hosts"] == ["algo-1"]
    described = sagemaker_session.describe_training_job("fit-1")
    assert described["TrainingJobStatus"] == "Completed"
    assert described["HyperParameters"]["sagemaker_program"] == '"train.py"'


def test_a_failing_script_fails_the_job_with_its_stderr(sagemaker_session, source, data):
    job = estimator(sagemaker_session, source, hyperparameters={"epochs": 1, "fail": 3})
    with pytest.raises(UnexpectedStatusException) as excinfo:
        job.fit({"train": data}, job_name="fit-fails", logs=False)
    assert "AlgorithmError: something broke" in str(excinfo.value)
    described = sagemaker_session.describe_training_job("fit-fails")
    assert described["FailureReason"].startswith("AlgorithmError: something broke")


def test_missing_input_data_is_a_client_error(sagemaker_session, source):
    sagemaker_session.boto_session.client("s3").create_bucket(Bucket="fit-bucket")
    job = estimator(sagemaker_session, source)
    with pytest.raises(UnexpectedStatusException) as excinfo:
        job.fit({"train": "s3://fit-bucket/nothing-here"}, job_name="fit-no-data", logs=False)
    assert "ClientError: No S3 objects found" in str(excinfo.value)


def test_warm_pool_chain_shares_its_persistent_cache(sagemaker_session, source, data):
    first = estimator(sagemaker_session, source, keep_alive_period_in_seconds=600)
    first.fit({"train": data}, job_name="pool-1", logs=False)
    second = estimator(sagemaker_session, source, keep_alive_period_in_seconds=600)
    second.fit({"train": data}, job_name="pool-2", logs=False)
    assert sagemaker_session.describe_training_job("pool-1")["WarmPoolStatus"]["ReusedByJob"] == "pool-2"
    assert read_model(sagemaker_session, second.model_data)["seen"] == ["pool-1"]
    sagemaker_session.terminate_warm_pool("pool-2")
    assert sagemaker_session.describe_training_job("pool-2")["WarmPoolStatus"]["Status"] == "Terminated"


def test_framework_estimators_work_too(sagemaker_session, source, data):
    from sagemaker.pytorch import PyTorch

    job = PyTorch(
        entry_point="train.py",
        source_dir=str(source),
        role=ROLE,
        framework_version="2.5",
        py_version="py311",
        instance_count=2,
        instance_type="ml.c5.xlarge",
        hyperparameters={"epochs": 4},
        output_path="s3://fit-bucket/output",
        sagemaker_session=sagemaker_session,
    )
    job.fit({"train": data}, job_name="torch-1", logs=False)
    assert read_model(sagemaker_session, job.model_data)["hosts"] == ["algo-1", "algo-2"]


def test_activated_makes_a_plain_sdk_session_local(tmp_path, source, data):
    from sagemaker_plans_local import LocalBackend, activated

    with LocalBackend(root=tmp_path / "backend") as backend, activated(backend):
        session = sagemaker.Session()
        assert session.boto_region_name == "us-east-1"
        session.boto_session.client("s3").create_bucket(Bucket="plain")
        plain = sagemaker.estimator.Estimator(
            image_uri=IMAGE,
            role=ROLE,
            instance_count=1,
            instance_type="ml.m5.large",
            entry_point="train.py",
            source_dir=str(source),
            hyperparameters={"epochs": 1},
            sagemaker_session=session,
        )
        session.boto_session.client("s3").put_object(Bucket="plain", Key="train/a.csv", Body=b"1,2\n")
        plain.fit({"train": "s3://plain/train"}, job_name="plain-1", logs=False)
        assert backend.training_job("plain-1").status == "Completed"


def test_cli_runs_an_unmodified_script(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent("""
        import sys, boto3
        sm = boto3.client("sagemaker", region_name="us-east-1")
        print("jobs:", sm.list_training_jobs()["TrainingJobSummaries"], "args:", sys.argv[1:])
    """)
    )
    env = {key: value for key, value in clean_env().items() if key != "AWS_DEFAULT_REGION"}
    result = subprocess.run(
        [sys.executable, "-m", "sagemaker_plans_local", "run", str(script), "--x", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "jobs: [] args: ['--x', '1']" in result.stdout


AWS_FROM_THE_SCRIPT = textwrap.dedent("""
    import os, boto3
    s3 = boto3.client("s3")
    rows = s3.get_object(Bucket="fit-bucket", Key="train/a.csv")["Body"].read()
    s3.put_object(Bucket="fit-bucket", Key="from-the-script/rows.txt", Body=rows)
    print("caller", boto3.client("sts").get_caller_identity()["Account"])
    try:
        boto3.client("sagemaker").list_training_jobs()
    except Exception as error:
        print("sagemaker from the job:", error.response["Error"]["Code"])
""")


def test_the_scripts_own_boto3_calls_stay_local(sagemaker_session, tmp_path, data, capsys):
    source = tmp_path / "aws-src"
    source.mkdir()
    (source / "train.py").write_text(AWS_FROM_THE_SCRIPT)
    estimator(sagemaker_session, source, hyperparameters={}).fit(job_name="aws-inside", logs="All")
    printed = capsys.readouterr().out
    assert "caller 123456789012" in printed
    assert "sagemaker from the job: NotImplemented" in printed
    s3 = sagemaker_session.boto_session.client("s3")
    body = s3.get_object(Bucket="fit-bucket", Key="from-the-script/rows.txt")["Body"].read()
    assert body == b"1,2\n"
