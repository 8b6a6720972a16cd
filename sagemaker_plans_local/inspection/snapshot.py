"""Everything a backend (in process, on a durable root, or a server) holds, read through its SageMaker API.

A :class:`Snapshot` is the describe answers of every training job and
training plan, with the time it was taken: what the cost report and the
timeline are computed from. Reading through the API (a boto3 SageMaker
client) makes them agree with what the API itself returns, and work the same
against a ``LocalBackend`` or a server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterator

import attrs


@attrs.frozen
class Snapshot:
    """The describe answers (``ResponseMetadata`` removed) of every job and plan, at ``now``."""

    now: datetime
    jobs: tuple[dict[str, Any], ...]
    plans: tuple[dict[str, Any], ...]

    @classmethod
    def collect(cls, sagemaker: Any, now: datetime) -> "Snapshot":
        """Read every job and plan through ``sagemaker`` (a boto3 SageMaker client); ``now``: the backend's time."""
        jobs = tuple(
            _clean(sagemaker.describe_training_job(TrainingJobName=summary["TrainingJobName"]))
            for summary in _pages(
                sagemaker, "list_training_jobs", "TrainingJobSummaries", SortBy="CreationTime"
            )
        )
        plans = tuple(
            _clean(sagemaker.describe_training_plan(TrainingPlanName=summary["TrainingPlanName"]))
            for summary in _pages(sagemaker, "list_training_plans", "TrainingPlanSummaries")
        )
        return cls(now, tuple(sorted(jobs, key=lambda job: job["CreationTime"])), plans)

    def job(self, name: str) -> dict[str, Any]:
        """The job named ``name`` (KeyError if absent)."""
        for job in self.jobs:
            if job["TrainingJobName"] == name:
                return job
        raise KeyError(name)


def _pages(sagemaker: Any, operation: str, key: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    token = None
    while True:
        page = getattr(sagemaker, operation)(**kwargs, **({"NextToken": token} if token else {}))
        yield from page[key]
        token = page.get("NextToken")
        if not token:
            return


def _clean(response: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in response.items() if key != "ResponseMetadata"}
