from datetime import datetime, timezone

import pytest

from sagemaker_plans_local.emulation import Emulation

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


@pytest.fixture
def emulation(tmp_path):
    return Emulation("123456789012", tmp_path, START)


@pytest.fixture
def jobs(emulation):
    return emulation.region("us-east-1").training_jobs


def job_spec(name, keep_alive=1800, instance_type="ml.g4dn.xlarge", count=1, **extra):
    resources = {"InstanceType": instance_type, "InstanceCount": count, "VolumeSizeInGB": 250}
    if keep_alive is not None:
        resources["KeepAlivePeriodInSeconds"] = keep_alive
    spec = {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {"TrainingImage": "123.dkr.ecr/img:1", "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "ResourceConfig": resources,
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    }
    spec.update(extra)
    return spec
