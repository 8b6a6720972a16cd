"""Raw awsJson bodies generated from the model and then mutated (wrong types, nulls, huge ints,
deep nesting, unknown members, bad timestamps, odd unicode, empty and huge strings), sent
past botocore's client-side checks as another SDK or a hand-made request would.

Whatever arrives: never HTTP 500; a 4xx changes nothing (List answers before and after
agree); after a 2xx every resource listed is describable and every answer conforms to its
output shape. ``RAW_FUZZ_EXAMPLES`` raises the example count for a long local run.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from sagemaker_plans_local.api.dispatcher import HANDLERS
from sagemaker_plans_local.api.service_model import service_model
from tests.conformance import assert_conforms
from tests.conftest import ROLE, create_request
from tests.model_strategies import json_for_shape, mutated, raw_body

MODEL = service_model()
OPERATIONS = sorted(HANDLERS)
EXAMPLES = int(os.environ.get("RAW_FUZZ_EXAMPLES", "15"))
REGION = "us-east-1"
JOBS, PLANS, CLUSTERS = ["known-1", "known-2"], ["plan-1"], ["cluster-1"]
NAMES = {"TrainingJobName": JOBS, "TrainingPlanName": PLANS, "ClusterName": CLUSTERS}
LISTS = {"ListTrainingJobs": ("TrainingJobSummaries", "TrainingJobName", "DescribeTrainingJob"),
         "ListTrainingPlans": ("TrainingPlanSummaries", "TrainingPlanName", "DescribeTrainingPlan"),
         "ListClusters": ("ClusterSummaries", "ClusterName", "DescribeCluster")}


def _cluster_request(name: str) -> dict:
    group = {"InstanceGroupName": "g", "InstanceType": "ml.m5.xlarge", "InstanceCount": 1,
             "ExecutionRole": ROLE,
             "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"}}
    return {"ClusterName": name, "InstanceGroups": [group]}


def _plan_search() -> dict:
    return {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 1, "DurationHours": 24,
            "TargetResources": ["training-job"]}


def _well_formed(operation: str) -> st.SearchStrategy | None:
    """Requests that pass validation, for the operations whose random ones rarely do."""
    fresh = st.from_regex(r"fresh-[a-z0-9]{1,8}", fullmatch=True)
    if operation == "CreateTrainingJob":
        return fresh.map(lambda name: json.loads(json.dumps(create_request(name))))
    if operation == "CreateCluster":
        return fresh.map(_cluster_request)
    if operation == "SearchTrainingPlanOfferings":
        return st.just(_plan_search())
    return None


def bodies(operation: str) -> st.SearchStrategy:
    shape = MODEL.operation_model(operation).input_shape
    base = json_for_shape(shape)
    named = [name for name in NAMES if name in shape.members]
    if named:
        base = st.one_of(base, st.builds(lambda body, value: {**body, named[0]: value},
                                         base, st.sampled_from(NAMES[named[0]])))
    well_formed = _well_formed(operation)
    if well_formed is not None:
        base = st.one_of(base, well_formed, well_formed)
    return mutated(shape, base)


def call(backend, operation: str, body: bytes) -> tuple[int, dict]:
    return backend._sagemaker.handle(REGION, operation, body)


def listed(backend) -> dict:
    """Every List answer, as the wire carries it (conforming, checked by the describe step)."""
    return {operation: call(backend, operation, b'{"MaxResults": 100}') for operation in LISTS}


def assert_describable(sm) -> None:
    for operation, (key, name_key, describe) in LISTS.items():
        method = {"ListTrainingJobs": sm.list_training_jobs, "ListTrainingPlans": sm.list_training_plans,
                  "ListClusters": sm.list_clusters}[operation]
        answer = method(MaxResults=100)
        assert_conforms(operation, answer)
        describe_method = {"DescribeTrainingJob": sm.describe_training_job,
                           "DescribeTrainingPlan": sm.describe_training_plan,
                           "DescribeCluster": sm.describe_cluster}[describe]
        for item in answer[key]:
            assert_conforms(describe, describe_method(**{name_key: item[name_key]}))


def seed(backend, sm) -> None:
    names = {s["TrainingJobName"] for s in sm.list_training_jobs(MaxResults=100)["TrainingJobSummaries"]}
    for name in JOBS:
        if name not in names:
            sm.create_training_job(**create_request(name))
    if not sm.list_training_plans()["TrainingPlanSummaries"]:
        offering = sm.search_training_plan_offerings(**_plan_search())["TrainingPlanOfferings"][0]
        sm.create_training_plan(TrainingPlanName=PLANS[0], TrainingPlanOfferingId=offering["TrainingPlanOfferingId"])
    if not sm.list_clusters()["ClusterSummaries"]:
        sm.create_cluster(**_cluster_request(CLUSTERS[0]))


@pytest.mark.parametrize("operation", OPERATIONS)
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_raw_requests(backend, operation, data):
    sm = backend.client()
    seed(backend, sm)
    backend.clock.advance(data.draw(st.sampled_from([0, 60, 900])))
    body = raw_body(data.draw(bodies(operation)))
    before = listed(backend)
    status, answer = call(backend, operation, body)
    event(f"{status} {answer.get('__type', '')}")
    assert status != 500, answer
    assert status in (200, 400), answer
    if status == 400:
        assert set(answer) == {"__type", "message"}
        assert listed(backend) == before, f"{operation} answered {answer['__type']} but changed state"
        return
    json.dumps(answer)
    assert_describable(sm)
