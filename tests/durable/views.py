"""What a person would compare across a restart: every job, plan, cluster, tag, the clock and the settings."""

from __future__ import annotations

import attrs


def _clean(response: dict) -> dict:
    response = dict(response)
    response.pop("ResponseMetadata", None)
    return response


def state_of(backend) -> dict:
    """The backend's visible state, through its own API (reads only)."""
    sm = backend.client()
    jobs = [s["TrainingJobName"] for s in _all(sm, "list_training_jobs", "TrainingJobSummaries")]
    plans = [s["TrainingPlanName"] for s in _all(sm, "list_training_plans", "TrainingPlanSummaries")]
    clusters = [s["ClusterName"] for s in _all(sm, "list_clusters", "ClusterSummaries")]
    described = {name: _clean(sm.describe_training_job(TrainingJobName=name)) for name in jobs}
    return {
        "now": backend.clock.now(),
        "settings": attrs.asdict(backend.settings),
        "jobs": described,
        "tags": {
            name: sm.list_tags(ResourceArn=d["TrainingJobArn"])["Tags"] for name, d in described.items()
        },
        "plans": {name: _clean(sm.describe_training_plan(TrainingPlanName=name)) for name in plans},
        "clusters": {name: _clean(sm.describe_cluster(ClusterName=name)) for name in clusters},
    }


def _all(sm, operation: str, key: str) -> list:
    items, token = [], None
    while True:
        response = getattr(sm, operation)(**({"NextToken": token} if token else {}))
        items += response[key]
        token = response.get("NextToken")
        if not token:
            return items
