"""sagemaker-core resources on the backend: a plan through TrainingPlan.create and
Compute(training_plan_arn=...), and cached clients created before an activation."""

from datetime import timedelta

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError
from sagemaker.core.resources import TrainingJob, TrainingPlan
from sagemaker.core.utils.exceptions import TimeoutExceededError
from sagemaker.core.utils.utils import SageMakerClient

from sagemaker_plans_local import LocalBackend, activated
from tests.conftest import START, create_request
from tests.sdk.test_public_names import UNREACHABLE
from tests.sdk_v3.test_model_trainer import train, trainer


def test_a_plan_through_training_plan_create_and_compute(sagemaker_backend, sagemaker_session, source, data):
    offering = sagemaker_session.search_training_plan_offerings("ml.p5.48xlarge", 1, 24)[0]
    plan = TrainingPlan.create(
        training_plan_name="core-plan",
        training_plan_offering_id=offering["TrainingPlanOfferingId"],
        session=sagemaker_session.boto_session,
        region="us-east-1",
    )
    assert plan.status == "Pending"
    plan.wait_for_status("Scheduled")  # the payment settles: the backend's clock moves, no sleep
    assert plan.status == "Scheduled" and sagemaker_backend.clock.now() > START
    job = train(
        trainer(
            sagemaker_session,
            source,
            "on-plan",
            keep_alive=0,
            instance_type="ml.p5.48xlarge",
            training_plan_arn=plan.training_plan_arn,
        ),
        data,
        logs=False,
    )
    assert job.training_job_status == "Completed"
    assert job.resource_config.training_plan_arn == plan.training_plan_arn
    assert job.training_start_time >= plan.start_time  # queued until the plan's capacity began


def test_waiting_for_a_status_nothing_will_bring_times_out(sagemaker_backend, sagemaker_session):
    sagemaker_backend.settings.plan_payment_seconds = 0
    offering = sagemaker_session.search_training_plan_offerings("ml.p5.48xlarge", 1, 24)[0]
    plan = TrainingPlan.create(
        training_plan_name="never-expires-soon",
        training_plan_offering_id=offering["TrainingPlanOfferingId"],
        session=sagemaker_session.boto_session,
        region="us-east-1",
    )
    with pytest.raises(TimeoutExceededError):
        plan.wait_for_status("Expired", timeout=60)
    assert plan.status in ("Pending", "Scheduled")


@pytest.fixture
def cached_client(monkeypatch):
    """A sagemaker-core client cached before any activation, whose AWS endpoint nobody listens on."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", UNREACHABLE)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    holder = SageMakerClient(session=session, region_name="us-east-1")
    yield session, holder.sagemaker_client
    SageMakerClient.reset()


@pytest.mark.parametrize("activation", ["sagemaker_plans_local.activated", "LocalBackend.activate"])
def test_a_client_cached_before_activation_stays_local_inside_it(tmp_path, cached_client, activation):
    session, client = cached_client
    with pytest.raises(EndpointConnectionError):
        client.list_training_jobs()
    with LocalBackend(start_time=START, root=tmp_path / "b") as backend:
        backend.client().create_training_job(**create_request("made-locally"))
        with activated(backend) if activation.startswith("sagemaker") else backend.activate():
            job = TrainingJob.get("made-locally", session=session, region="us-east-1")
            assert job.training_job_status == "InProgress"
            job.wait()  # on the backend: its clock moves to the end of the simulated job
            assert job.training_job_status == "Completed"
            assert client.list_training_jobs()["TrainingJobSummaries"][0]["TrainingJobName"] == "made-locally"
    with pytest.raises(EndpointConnectionError):  # after the block, the cached client is AWS's again
        client.list_training_jobs()


def test_a_hyperpod_cluster_waits_on_the_clock(sagemaker_backend, sagemaker_session):
    from sagemaker.core.resources import Cluster
    from sagemaker.core.shapes import ClusterInstanceGroupSpecification, ClusterLifeCycleConfig

    group = ClusterInstanceGroupSpecification(
        instance_group_name="workers",
        instance_type="ml.m5.xlarge",
        instance_count=2,
        execution_role="arn:aws:iam::123456789012:role/SageMakerRole",
        life_cycle_config=ClusterLifeCycleConfig(
            source_s3_uri="s3://bucket/lifecycle", on_create="on_create.sh"
        ),
    )
    cluster = Cluster.create(
        cluster_name="core-cluster",
        instance_groups=[group],
        session=sagemaker_session.boto_session,
        region="us-east-1",
    )
    assert cluster.cluster_status == "Creating"
    cluster.wait_for_status("InService")
    assert cluster.cluster_status == "InService"
    assert sagemaker_backend.clock.now() == START + timedelta(
        seconds=sagemaker_backend.settings.cold_start_seconds
    )


def test_the_clients_sagemaker_train_creates_at_import_are_routed_too(tmp_path):
    from sagemaker.ai_registry.air_hub import AIRHub  # imported with sagemaker.train, before any activation

    from sagemaker_plans_local.sdk.v3.cached_clients import cached_clients

    assert {id(AIRHub._sagemaker_client), id(AIRHub._s3_client)} <= {
        id(client) for client in cached_clients()
    }
    with LocalBackend(start_time=START, root=tmp_path / "b") as backend, activated(backend):
        backend.client("s3").create_bucket(Bucket="hub-bucket")
        assert [b["Name"] for b in AIRHub._s3_client.list_buckets()["Buckets"]] == ["hub-bucket"]
