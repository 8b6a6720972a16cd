"""The three SageMaker implementations the benchmark compares, on one workload.

Each implementation is a real boto3 SageMaker client (same botocore, same
client pipeline: parameter validation, serialization, event hooks); they
differ only in what answers the request:

* ``ours``    -- sagemaker_plans_local's ``LocalBackend.client()`` (answered
  in-process from botocore's ``before-call`` event);
* ``moto``    -- moto's ``mock_aws`` (answered from ``before-send``, after
  signing, by moto's SageMaker backend);
* ``Stubber`` -- ``botocore.stub.Stubber`` replaying canned responses queued
  before the timer starts.  The canned responses are the very documents our
  backend returned (minus ``ResponseMetadata``), so payloads are the same size.

``prepare(op, n)`` does all set-up for ``n`` calls of ``op`` (building request
dicts, queueing Stubber responses) and returns a thunk that only makes the
calls, so the timed region holds nothing but client calls.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timezone
from typing import Callable

import boto3

ACCOUNT = "123456789012"
REGION = "us-east-1"
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
OPERATIONS = ("describe_training_job", "create_training_job", "list_training_jobs")
LIST_PAGE = 10


def role_arn(name: str) -> str:
    return f"arn:aws:iam::{ACCOUNT}:role/{name}"


def job_request(name: str, role: str = "bench", keep_alive: int = 1800) -> dict:
    """A CreateTrainingJob request; ``role`` (a role name) is part of the pool match key."""
    resources = {"InstanceType": "ml.g4dn.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 250}
    if keep_alive:
        resources["KeepAlivePeriodInSeconds"] = keep_alive
    return {
        "TrainingJobName": name,
        "RoleArn": role_arn(role),
        "AlgorithmSpecification": {"TrainingImage": "img", "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
        "ResourceConfig": resources,
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }


def seed_names(count: int) -> list[str]:
    return [f"seed-{i:04d}" for i in range(count)]


def without_metadata(response: dict) -> dict:
    return {key: value for key, value in response.items() if key != "ResponseMetadata"}


class Implementation:
    """One client plus the ~``seeds`` jobs the read operations look at."""

    name = "?"

    def __init__(self, client, seeds: int) -> None:
        self.client = client
        self.seeds = seed_names(seeds)
        self._created = itertools.count()

    def prepare(self, op: str, n: int) -> Callable[[], None]:
        client = self.client
        if op == "describe_training_job":
            describe = client.describe_training_job
            names = [self.seeds[i % len(self.seeds)] for i in range(n)]

            def run() -> None:
                for name in names:
                    describe(TrainingJobName=name)
        elif op == "list_training_jobs":
            list_jobs = client.list_training_jobs

            def run() -> None:
                for _ in range(n):
                    list_jobs(MaxResults=LIST_PAGE)
        elif op == "create_training_job":
            create = client.create_training_job
            # A role no seed job has: every create is a cold start, never a pool claim.
            requests = [
                job_request(f"bench-{self.name}-{next(self._created):06d}", role="bench-create")
                for _ in range(n)
            ]

            def run() -> None:
                for request in requests:
                    create(**request)
        else:
            raise ValueError(op)
        return run

    def close(self) -> None:
        pass


class Ours(Implementation):
    """sagemaker_plans_local on a manual clock; seed jobs are Completed with Available pools."""

    name = "ours"

    def __init__(self, seeds: int) -> None:
        from sagemaker_plans_local import LocalBackend

        self.backend = LocalBackend(start_time=START)
        self.backend.settings.instance_quota = None  # a load test holds more instances than any account quota
        super().__init__(self.backend.client(), seeds)
        for name in self.seeds:
            self.client.create_training_job(**job_request(name))
        self.backend.clock.advance(900)
        status = self.client.describe_training_job(TrainingJobName=self.seeds[0]).get("WarmPoolStatus")
        if not status or status.get("Status") != "Available":
            raise RuntimeError(f"seed job's warm pool is not Available: {status}")

    def close(self) -> None:
        self.backend.close()


class Moto(Implementation):
    """moto's SageMaker; the caller keeps ``mock_aws()`` active around its use."""

    name = "moto"

    def __init__(self, seeds: int) -> None:
        session = boto3.session.Session(**FAKE_CREDENTIALS)
        super().__init__(session.client("sagemaker", region_name=REGION), seeds)
        for name in self.seeds:
            self.client.create_training_job(**job_request(name))


class Stubbed(Implementation):
    """botocore's Stubber replaying ``ours``' responses, one queued per call."""

    name = "Stubber"

    def __init__(self, reference: Ours) -> None:
        from botocore.stub import Stubber

        session = boto3.session.Session(**FAKE_CREDENTIALS)
        super().__init__(session.client("sagemaker", region_name=REGION), len(reference.seeds))
        self.stubber = Stubber(self.client)
        self.stubber.activate()
        source = reference.client
        self._describe = {
            name: without_metadata(source.describe_training_job(TrainingJobName=name)) for name in self.seeds
        }
        self._list = without_metadata(source.list_training_jobs(MaxResults=LIST_PAGE))
        self._arn_prefix = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/"

    def prepare(self, op: str, n: int) -> Callable[[], None]:
        self.stubber.assert_no_pending_responses()
        run = super().prepare(op, n)
        add = self.stubber.add_response
        if op == "describe_training_job":
            for i in range(n):
                add(op, self._describe[self.seeds[i % len(self.seeds)]])
        elif op == "list_training_jobs":
            for _ in range(n):
                add(op, self._list)
        else:
            start = next(self._created)  # names are only for the ARN; exact ones do not matter
            for i in range(n):
                add(op, {"TrainingJobArn": f"{self._arn_prefix}bench-stub-{start}-{i}"})
        return run

    def close(self) -> None:
        self.stubber.deactivate()
