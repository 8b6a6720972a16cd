"""A root given as a relative path is made absolute where it enters (issue 29, item 11)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.runtime import views
from tests.conftest import ROLE

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def container_request(name: str) -> dict:
    return {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {
            "TrainingImage": "image",
            "TrainingInputMode": "File",
            "ContainerEntrypoint": ["/bin/sh", "-c", "test -d /opt/ml/model && echo in-view"],
        },
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/output"},
        "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }


def test_a_relative_root_is_made_absolute_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with LocalBackend(root="relative", start_time=START) as backend:
        assert backend.root == tmp_path / "relative"
        assert backend.root.is_absolute()


def test_a_container_job_runs_on_a_relative_root(tmp_path, monkeypatch):
    cause = views.unavailable()
    if cause is not None:
        pytest.skip(f"this machine gives no /opt/ml view: {cause}")
    monkeypatch.chdir(tmp_path)
    with LocalBackend(root="relative", start_time=START) as backend:
        backend.client().create_training_job(**container_request("relative-root"))
        job = backend.wait_for_training_job("relative-root")
        assert (job.status, job.failure_reason) == ("Completed", None)
