"""Raw awsJson bodies generated from the model and then mutated (wrong types, nulls, huge ints,
deep nesting, unknown members, bad timestamps, odd unicode, empty and huge strings), sent
past botocore's client-side checks as another SDK or a hand-made request would.

Whatever arrives: never HTTP 500; a 4xx changes nothing (List answers before and after
agree); after a 2xx every resource listed is describable and every answer conforms to its
output shape. ``RAW_FUZZ_EXAMPLES`` raises the example count for a long local run.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any, NamedTuple

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.api.service import HANDLERS
from tests.conformance import assert_conforms
from tests.conftest import ROLE, create_request
from tests.model_strategies import json_for_shape, mutated, raw_body
from tests.raw_requests import sagemaker_json

MODEL = service_model()
OPERATIONS = sorted(HANDLERS)
EXAMPLES = int(os.environ.get("RAW_FUZZ_EXAMPLES", "15"))
REGION = "us-east-1"
JOBS, PLANS, CLUSTERS = ["known-1", "known-2"], ["plan-1"], ["cluster-1"]
NAMES = {"TrainingJobName": JOBS, "TrainingPlanName": PLANS, "ClusterName": CLUSTERS}
CREATES = {
    "CreateTrainingJob": ("DescribeTrainingJob", "TrainingJobName"),
    "CreateTrainingPlan": ("DescribeTrainingPlan", "TrainingPlanName"),
    "CreateCluster": ("DescribeCluster", "ClusterName"),
}
#: Members whose live values (names, ids, ARNs of what exists) requests sometimes carry.
LIVE = (
    "TrainingJobName",
    "TrainingPlanName",
    "ClusterName",
    "TrainingPlanOfferingId",
    "TrainingPlanExtensionOfferingId",
    "ReservedCapacityArn",
    "TrainingPlanArn",
    "ResourceArn",
    "NodeId",
)
LISTS = {
    "ListTrainingJobs": ("TrainingJobSummaries", "TrainingJobName", "DescribeTrainingJob"),
    "ListTrainingPlans": ("TrainingPlanSummaries", "TrainingPlanName", "DescribeTrainingPlan"),
    "ListClusters": ("ClusterSummaries", "ClusterName", "DescribeCluster"),
}


def _cluster_request(name: str) -> dict:
    group = {
        "InstanceGroupName": "g",
        "InstanceType": "ml.m5.xlarge",
        "InstanceCount": 1,
        "ExecutionRole": ROLE,
        "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"},
    }
    return {"ClusterName": name, "InstanceGroups": [group]}


def _plan_search() -> dict:
    return {
        "InstanceType": "ml.p5.48xlarge",
        "InstanceCount": 1,
        "DurationHours": 24,
        "TargetResources": ["training-job"],
    }


class Live(NamedTuple):
    """Stands for the ``index``-th live value of member ``name`` (resolved after drawing, so the
    strategies do not depend on the backend's state)."""

    name: str
    index: int


def live(name: str) -> st.SearchStrategy:
    return st.integers(0, 7).map(lambda index: Live(name, index))


def resolve(value: Any, known: dict) -> Any:
    if isinstance(value, Live):
        values = known.get(value.name) or [f"no-such-{value.name}"]
        return values[value.index % len(values)]
    if isinstance(value, dict):
        return {key: resolve(item, known) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, known) for item in value]
    return value


def _well_formed(operation: str) -> st.SearchStrategy | None:
    """Requests that pass validation, for the operations whose random ones rarely do."""
    fresh = st.from_regex(r"fresh-[a-z0-9]{1,8}", fullmatch=True)
    group = _cluster_request("c")["InstanceGroups"][0]
    builders = {
        "CreateTrainingJob": lambda: fresh.map(lambda name: json.loads(json.dumps(create_request(name)))),
        "CreateCluster": lambda: fresh.map(_cluster_request),
        "SearchTrainingPlanOfferings": lambda: st.just(_plan_search()),
        "CreateTrainingPlan": lambda: st.fixed_dictionaries(
            {"TrainingPlanName": fresh, "TrainingPlanOfferingId": live("TrainingPlanOfferingId")}
        ),
        "UpdateCluster": lambda: st.builds(
            lambda name, count: {"ClusterName": name, "InstanceGroups": [{**group, "InstanceCount": count}]},
            live("ClusterName"),
            st.integers(0, 3),
        ),
        "UpdateTrainingJob": lambda: st.builds(
            lambda name, keep: {
                "TrainingJobName": name,
                "ResourceConfig": {"KeepAlivePeriodInSeconds": keep},
            },
            live("TrainingJobName"),
            st.integers(0, 3600),
        ),
        "AddTags": lambda: st.builds(
            lambda arn, key: {"ResourceArn": arn, "Tags": [{"Key": key, "Value": "v"}]},
            live("ResourceArn"),
            st.sampled_from(["team", "cost", "x" * 128]),
        ),
    }
    builder = builders.get(operation)
    return builder() if builder is not None else None


@functools.lru_cache(maxsize=None)  # one strategy per operation, not one per example
def bodies(operation: str) -> st.SearchStrategy:
    """Model-generated bodies, their identifying members sometimes live values, then mutated."""
    shape = MODEL.operation_model(operation).input_shape
    base = json_for_shape(shape)
    named = {name: live(name) for name in shape.members if name in LIVE}
    if named:
        base = st.builds(
            lambda body, chosen: {**body, **chosen}, base, st.fixed_dictionaries({}, optional=named)
        )
    well_formed = _well_formed(operation)
    if well_formed is not None:
        base = st.one_of(base, well_formed, well_formed)
    return mutated(shape, base)


def call(backend, operation: str, body: bytes) -> tuple[int, dict]:
    return sagemaker_json(backend, operation, body, REGION)


def listed(backend, known: dict) -> dict:
    """Every List answer and the tags of every known resource, as the wire carries them."""
    answers = {operation: call(backend, operation, b'{"MaxResults": 100}') for operation in LISTS}
    for arn in known["ResourceArn"]:
        answers[arn] = call(backend, "ListTags", json.dumps({"ResourceArn": arn}).encode())
    answers["nodes"] = call(backend, "ListClusterNodes", json.dumps({"ClusterName": CLUSTERS[0]}).encode())
    return answers


def assert_describable(sm) -> None:
    for operation, (key, name_key, describe) in LISTS.items():
        method = {
            "ListTrainingJobs": sm.list_training_jobs,
            "ListTrainingPlans": sm.list_training_plans,
            "ListClusters": sm.list_clusters,
        }[operation]
        answer = method(MaxResults=100)
        assert_conforms(operation, answer)
        describe_method = {
            "DescribeTrainingJob": sm.describe_training_job,
            "DescribeTrainingPlan": sm.describe_training_plan,
            "DescribeCluster": sm.describe_cluster,
        }[describe]
        for item in answer[key]:
            assert_conforms(describe, describe_method(**{name_key: item[name_key]}))


def seed(backend, sm) -> dict:
    """Make sure a job, a plan and a cluster exist; the live ids and names requests may name."""
    names = {s["TrainingJobName"] for s in sm.list_training_jobs(MaxResults=100)["TrainingJobSummaries"]}
    for name in JOBS:
        if name not in names:
            sm.create_training_job(**create_request(name))
    offerings = sm.search_training_plan_offerings(**_plan_search())["TrainingPlanOfferings"]
    if not sm.list_training_plans()["TrainingPlanSummaries"] and offerings:
        sm.create_training_plan(
            TrainingPlanName=PLANS[0], TrainingPlanOfferingId=offerings[0]["TrainingPlanOfferingId"]
        )
        backend.clock.advance(backend.settings.plan_payment_seconds)
    if not sm.list_clusters()["ClusterSummaries"]:
        sm.create_cluster(**_cluster_request(CLUSTERS[0]))
    plan = sm.describe_training_plan(TrainingPlanName=PLANS[0])
    cluster = sm.describe_cluster(ClusterName=CLUSTERS[0])
    job = sm.describe_training_job(TrainingJobName=JOBS[0])
    try:
        extensions = sm.search_training_plan_offerings(
            TrainingPlanArn=plan["TrainingPlanArn"], DurationHours=24
        )
    except ClientError:  # the plan cannot be extended any more
        extensions = {}
    nodes = sm.list_cluster_nodes(ClusterName=CLUSTERS[0])["ClusterNodeSummaries"]
    return {
        **NAMES,
        "ClusterName": CLUSTERS + [cluster["ClusterArn"]],
        "TrainingPlanOfferingId": [o["TrainingPlanOfferingId"] for o in offerings],
        "TrainingPlanExtensionOfferingId": [
            o["TrainingPlanExtensionOfferingId"] for o in extensions.get("TrainingPlanExtensionOfferings", [])
        ],
        "ReservedCapacityArn": [
            rc["ReservedCapacityArn"] for rc in plan.get("ReservedCapacitySummaries", [])
        ],
        "TrainingPlanArn": [plan["TrainingPlanArn"]],
        "ResourceArn": [job["TrainingJobArn"], plan["TrainingPlanArn"], cluster["ClusterArn"]],
        "NodeId": [node["InstanceId"] for node in nodes],
    }


@pytest.mark.parametrize("operation", OPERATIONS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(data=st.data())
def test_raw_requests(backend, sm, operation, data):
    known = seed(backend, sm)
    backend.clock.advance(data.draw(st.sampled_from([0, 60, 900])))
    body = raw_body(resolve(data.draw(bodies(operation)), known))
    before = listed(backend, known)
    status, answer = call(backend, operation, body)
    event(f"{status} {answer.get('__type', '')}")
    assert status != 500, answer
    assert status in (200, 400), answer
    if status == 400:
        assert set(answer) == {"__type", "message"}
        assert listed(backend, known) == before, f"{operation} answered {answer['__type']} but changed state"
        return
    json.dumps(answer)
    assert_describable(sm)
    if operation in CREATES:  # the new resource itself, by the name the request gave
        describe, key = CREATES[operation]
        status, described = call(backend, describe, json.dumps({key: json.loads(body)[key]}).encode())
        assert status == 200, described
