"""The domain's status enums: values the SageMaker model defines, written on the wire as plain strings."""

from __future__ import annotations

import enum
import json

import pytest

from sagemaker_plans_local.protocol.json_wire import encode_output
from sagemaker_plans_local.protocol.service_model import operation_model, service_model
from sagemaker_plans_local.services.sagemaker import statuses
from sagemaker_plans_local.services.sagemaker.plans.offerings import PlanTarget
from tests.conftest import ROLE, create_request
from tests.plan_helpers import buy

#: Each domain enum and the SageMaker model enum shapes whose values it uses.
MODEL_SHAPES = [
    (statuses.JobStatus, "TrainingJobStatus"),
    (statuses.SecondaryStatus, "SecondaryStatus"),
    (statuses.WarmPoolStatus, "WarmPoolResourceStatus"),
    (statuses.PlanStatus, "TrainingPlanStatus"),
    (statuses.PlanStatus, "ReservedCapacityStatus"),
    (statuses.ClusterStatus, "ClusterStatus"),
    (statuses.InstanceGroupStatus, "InstanceGroupStatus"),
    (statuses.NodeStatus, "ClusterInstanceStatus"),
    (PlanTarget, "SageMakerResourceName"),
]


@pytest.mark.parametrize(
    ("domain_enum", "shape_name"), MODEL_SHAPES, ids=[f"{e.__name__}-{s}" for e, s in MODEL_SHAPES]
)
def test_domain_enum_values_are_in_the_model_enum(domain_enum: type[enum.Enum], shape_name: str) -> None:
    model_values = set(service_model().shape_for(shape_name).enum)
    assert {member.value for member in domain_enum} <= model_values


def test_every_domain_status_enum_is_checked_against_the_model() -> None:
    defined = {
        value
        for value in vars(statuses).values()
        if isinstance(value, type)
        and issubclass(value, enum.Enum)
        and value.__module__ == statuses.__name__
        and list(value)
    }
    assert defined == {domain_enum for domain_enum, _ in MODEL_SHAPES} - {PlanTarget}


def test_a_status_is_its_value_as_a_string() -> None:
    status = statuses.JobStatus.COMPLETED
    assert status == "Completed" and hash(status) == hash("Completed")
    assert str(status) == "Completed" and f"is {status}" == "is Completed"
    assert json.dumps({"TrainingJobStatus": status}) == '{"TrainingJobStatus": "Completed"}'
    assert "Completed" in statuses.FINISHED_JOB_STATUSES


def test_the_wire_encoder_writes_the_plain_value() -> None:
    shape = operation_model("DescribeTrainingJob").output_shape
    out = encode_output(shape, {"TrainingJobStatus": statuses.JobStatus.STOPPED})
    assert json.dumps(out) == '{"TrainingJobStatus": "Stopped"}'


def _enum_members(value: object) -> list[object]:
    """Every enum member anywhere in a response."""
    if isinstance(value, enum.Enum):
        return [value]
    if isinstance(value, dict):
        return [found for item in value.values() for found in _enum_members(item)]
    if isinstance(value, list):
        return [found for item in value for found in _enum_members(item)]
    return []


def test_clients_get_plain_strings_for_statuses(backend, sm) -> None:
    sm.create_training_job(**create_request("enum-job"))
    backend.clock.advance(900)
    job = sm.describe_training_job(TrainingJobName="enum-job")
    assert (job["TrainingJobStatus"], job["WarmPoolStatus"]["Status"]) == ("Completed", "Available")
    buy(sm, backend, "enum-plan")
    sm.create_cluster(
        ClusterName="enum-cluster",
        InstanceGroups=[
            {
                "InstanceGroupName": "g",
                "InstanceType": "ml.m5.xlarge",
                "InstanceCount": 1,
                "ExecutionRole": ROLE,
                "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"},
            }
        ],
    )
    responses = [
        job,
        sm.list_training_jobs(),
        sm.describe_training_plan(TrainingPlanName="enum-plan"),
        sm.list_training_plans(),
        sm.describe_cluster(ClusterName="enum-cluster"),
        sm.list_clusters(),
        sm.list_cluster_nodes(ClusterName="enum-cluster"),
    ]
    assert [_enum_members(response) for response in responses] == [[]] * len(responses)
