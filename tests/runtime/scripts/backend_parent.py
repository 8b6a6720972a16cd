"""A process running a LocalBackend job (escaper.py) until it is killed: ``<source dir> <pids file>``."""

import json
import sys
from datetime import datetime, timezone

from sagemaker_plans_local import LocalBackend

source, pids = sys.argv[1], sys.argv[2]
backend = LocalBackend(start_time=datetime(2026, 1, 1, tzinfo=timezone.utc))
backend.client().create_training_job(
    TrainingJobName="parent-job",
    RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
    AlgorithmSpecification={"TrainingImage": "my-image", "TrainingInputMode": "File"},
    OutputDataConfig={"S3OutputPath": "s3://bucket/out"},
    StoppingCondition={"MaxRuntimeInSeconds": 3600},
    ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
    HyperParameters={
        "sagemaker_program": json.dumps("escaper.py"),
        "sagemaker_submit_directory": json.dumps(f"file://{source}"),
        "pids": json.dumps(pids),
        "stay": "600",
        "ignore-term": "true",
    },
)
backend.wait_for_training_job("parent-job")
