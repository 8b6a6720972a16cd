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
            _clean(sagemaker.describe_training_job(TrainingJobName=name))
            for name in _names(sagemaker, "list_training_jobs", "TrainingJobSummaries[].TrainingJobName")
        )
        plans = tuple(
            _clean(sagemaker.describe_training_plan(TrainingPlanName=name))
            for name in _names(sagemaker, "list_training_plans", "TrainingPlanSummaries[].TrainingPlanName")
        )
        return cls(now, tuple(sorted(jobs, key=lambda job: job["CreationTime"])), plans)

    def pool_chains(self) -> list[list[dict[str, Any]]]:
        """The warm-pool chains, oldest first: jobs with a WarmPoolStatus, each followed by the job that
        reused its pool (``ReusedByJob``; names compared regardless of case, as SageMaker's are)."""
        pooled = [job for job in self.jobs if "WarmPoolStatus" in job]
        by_name = {job["TrainingJobName"].casefold(): job for job in pooled}
        reusers = {str(job["WarmPoolStatus"].get("ReusedByJob", "")).casefold() for job in pooled}
        found = []
        for head in (job for job in pooled if job["TrainingJobName"].casefold() not in reusers):
            chain = [head]
            while (following := chain[-1]["WarmPoolStatus"].get("ReusedByJob")) and len(chain) <= len(pooled):
                if following.casefold() not in by_name:
                    break
                chain.append(by_name[following.casefold()])
            found.append(chain)
        return found

    def job(self, name: str) -> dict[str, Any]:
        """The job named ``name`` (KeyError if absent)."""
        for job in self.jobs:
            if job["TrainingJobName"] == name:
                return job
        raise KeyError(name)


def _names(sagemaker: Any, operation: str, expression: str) -> Iterator[str]:
    """Every name a List operation gives, across its pages (botocore's paginator)."""
    return sagemaker.get_paginator(operation).paginate().search(expression)


def _clean(response: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in response.items() if key != "ResponseMetadata"}
