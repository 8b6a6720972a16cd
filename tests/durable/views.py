"""What a person would compare across a restart: every job, plan, cluster, tag, the clock and the settings."""

from __future__ import annotations

import attrs

from sagemaker_plans_local.inspection.snapshot import Snapshot


def state_of(backend) -> dict:
    """The backend's visible state, through its own API (reads only)."""
    sm = backend.client()
    snapshot = Snapshot.collect(sm, backend.clock.now())
    clusters = sm.get_paginator("list_clusters").paginate().search("ClusterSummaries[].ClusterName")
    return {
        "now": snapshot.now,
        "settings": attrs.asdict(backend.settings),
        "jobs": {job["TrainingJobName"]: job for job in snapshot.jobs},
        "tags": {
            job["TrainingJobName"]: sm.list_tags(ResourceArn=job["TrainingJobArn"])["Tags"]
            for job in snapshot.jobs
        },
        "plans": {plan["TrainingPlanName"]: plan for plan in snapshot.plans},
        "clusters": {name: _clean(sm.describe_cluster(ClusterName=name)) for name in clusters},
    }


def _tags(sm, arn: str) -> list:
    return sm.list_tags(ResourceArn=arn)["Tags"]


def _clean(response: dict) -> dict:
    return {key: value for key, value in response.items() if key != "ResponseMetadata"}
