"""Jobs the SDK starts with a ContainerEntrypoint run their command here (v2 Estimator, v3 ModelTrainer).

v2: ``Estimator(container_entry_point=..., container_arguments=...)``.
v3: ``ModelTrainer(source_code=SourceCode(...))``, whose driver script
(``sm_drivers/sm_train.sh``) reads and writes ``/opt/ml`` by its own paths.
"""

from __future__ import annotations

import io
import json
import tarfile
import textwrap

import pytest

from sagemaker_plans_local import Session
from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.sdk.major import installed_major

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311"
TRAIN = textwrap.dedent("""
    import argparse, json, os
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int)
    args = parser.parse_args()
    print("training for", args.epochs, "epochs", flush=True)
    with open("/opt/ml/model/model.json", "w") as out:
        json.dump({"epochs": args.epochs, "job": os.environ["TRAINING_JOB_NAME"],
                   "cache": os.environ.get("SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY")}, out)
""")


@pytest.fixture
def session(sagemaker_backend, monkeypatch):
    cause = views.unavailable()
    if cause is not None:
        pytest.skip(f"this machine gives no /opt/ml view: {cause}")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # v3 makes boto3 clients at import
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")
    session = Session(backend=sagemaker_backend)
    session.boto_session.client("s3").create_bucket(Bucket="models")
    return session


@pytest.fixture
def source(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def read(session, uri: str) -> dict:
    bucket, key = uri[len("s3://") :].split("/", 1)
    body = session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    if key.endswith(".tar.gz"):
        with tarfile.open(fileobj=io.BytesIO(body)) as archive:
            return json.load(archive.extractfile("model.json"))
    return json.loads(body)


if installed_major() == 2:

    def train(session, source, job_name: str, compressed: bool = True) -> str:
        """v2: the entry point given as the container's command; the model's S3 location."""
        from sagemaker_plans_local import Estimator

        estimator = Estimator(
            image_uri=IMAGE,
            role=ROLE,
            instance_count=1,
            instance_type="ml.m5.large",
            keep_alive_period_in_seconds=600,
            output_path="s3://models/out",
            container_entry_point=["python3", "/opt/ml/input/data/code/train.py"],
            container_arguments=["--epochs", "3"],
            disable_output_compression=not compressed,
            sagemaker_session=session,
        )
        code = session.upload_data(str(source / "train.py"), bucket="models", key_prefix="code")
        estimator.fit({"code": code.rsplit("/", 1)[0]}, job_name=job_name, logs="None")
        model = estimator.model_data
        return model if compressed else model["S3DataSource"]["S3Uri"]
else:

    def train(session, source, job_name: str, compressed: bool = True) -> str:
        """v3: ModelTrainer with SourceCode (its own driver runs the script); the model's location."""
        from sagemaker.core.shapes import OutputDataConfig
        from sagemaker.train import ModelTrainer
        from sagemaker.train.configs import Compute, SourceCode

        trainer = ModelTrainer(
            training_image=IMAGE,
            role=ROLE,
            sagemaker_session=session,
            base_job_name=job_name,
            source_code=SourceCode(source_dir=str(source), entry_script="train.py"),
            compute=Compute(instance_type="ml.m5.large", instance_count=1, keep_alive_period_in_seconds=600),
            hyperparameters={"epochs": 3},
            output_data_config=OutputDataConfig(
                s3_output_path="s3://models/out", compression_type="GZIP" if compressed else "NONE"
            ),
        )
        trainer.train(wait=True, logs=False)
        return trainer._latest_training_job.model_artifacts.s3_model_artifacts


def test_the_sdk_s_container_job_runs_its_script_here(session, source):
    uri = train(session, source, "entry")
    assert uri.endswith("/output/model.tar.gz")
    model = read(session, uri)
    assert model["epochs"] == 3 and model["job"].startswith("entry")
    assert model["cache"] == "/opt/ml/sagemaker/warmpoolcache"  # it keeps a warm pool


def test_an_uncompressed_model_is_left_as_files(session, source):
    uri = train(session, source, "plain", compressed=False)
    assert uri.endswith("/output/model/")
    assert read(session, uri + "model.json")["epochs"] == 3
