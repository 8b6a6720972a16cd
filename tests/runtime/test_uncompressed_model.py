"""OutputDataConfig.CompressionType NONE: the model directory's files, uncompressed, and their prefix."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from sagemaker_plans_local.runtime import views

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
WRITE_MODEL = (
    "echo w > /opt/ml/model/weights.bin; mkdir /opt/ml/model/sub; "
    "echo c > /opt/ml/model/sub/config.json; echo m > /opt/ml/output/data/metrics.txt"
)


def request(name: str, compression: str | None) -> dict:
    output = {"S3OutputPath": "s3://models/out"}
    if compression is not None:
        output["CompressionType"] = compression
    return {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {
            "TrainingImage": "image",
            "TrainingInputMode": "File",
            "ContainerEntrypoint": ["/bin/bash", "-c", WRITE_MODEL],
        },
        "OutputDataConfig": output,
        "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }


@pytest.fixture
def view():
    if not sys.platform.startswith("linux") or views.unavailable() is not None:
        pytest.skip("this machine gives no /opt/ml view")


@pytest.mark.parametrize(
    "compression, artifacts, keys",
    [
        (
            "NONE",
            "s3://models/out/plain/output/model/",
            [
                "out/plain/output/model/sub/config.json",
                "out/plain/output/model/weights.bin",
                "out/plain/output/output.tar.gz",
            ],
        ),
        (
            "GZIP",
            "s3://models/out/plain/output/model.tar.gz",
            ["out/plain/output/model.tar.gz", "out/plain/output/output.tar.gz"],
        ),
        (
            None,
            "s3://models/out/plain/output/model.tar.gz",
            ["out/plain/output/model.tar.gz", "out/plain/output/output.tar.gz"],
        ),
    ],
)
def test_compression_type_decides_the_model_artifacts(sagemaker_backend, view, compression, artifacts, keys):
    sm = sagemaker_backend.client("sagemaker")
    s3 = sagemaker_backend.client("s3")
    s3.create_bucket(Bucket="models")
    sm.create_training_job(**request("plain", compression))
    sagemaker_backend.wait_for_training_job("plain")
    described = sm.describe_training_job(TrainingJobName="plain")
    assert described["TrainingJobStatus"] == "Completed", described.get("FailureReason")
    assert described["ModelArtifacts"]["S3ModelArtifacts"] == artifacts
    listed = s3.list_objects_v2(Bucket="models", Prefix="out/plain/")["Contents"]
    assert sorted(o["Key"] for o in listed) == keys
    if compression == "NONE":
        body = s3.get_object(Bucket="models", Key="out/plain/output/model/sub/config.json")["Body"]
        assert body.read() == b"c\n"


# -- through the SDK (the major installed decides which) -----------------------------------------
TRAIN = "import os; open(os.path.join(os.environ['SM_MODEL_DIR'], 'weights.bin'), 'w').write('w')\n"
V2 = importlib.util.find_spec("sagemaker.estimator") is not None

if V2:

    def test_v2_estimator_without_output_compression(sagemaker_session, tmp_path):
        from sagemaker_plans_local import Estimator

        (tmp_path / "train.py").write_text(TRAIN)
        sagemaker_session.boto_session.client("s3").create_bucket(Bucket="models")
        estimator = Estimator(
            image_uri="image",
            role=ROLE,
            instance_count=1,
            instance_type="ml.m5.large",
            entry_point="train.py",
            source_dir=str(tmp_path),
            output_path="s3://models/out",
            disable_output_compression=True,
            sagemaker_session=sagemaker_session,
        )
        estimator.fit(job_name="sdk-plain", logs="None")
        assert estimator.model_data == {
            "S3DataSource": {
                "S3Uri": "s3://models/out/sdk-plain/output/model/",
                "S3DataType": "S3Prefix",
                "CompressionType": "None",
            }
        }
        s3 = sagemaker_session.boto_session.client("s3")
        body = s3.get_object(Bucket="models", Key="out/sdk-plain/output/model/weights.bin")["Body"]
        assert body.read() == b"w"
