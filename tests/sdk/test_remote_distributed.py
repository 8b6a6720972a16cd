"""``@remote(instance_count=2, ...)`` runs the SDK's multi-node job driver over a local cluster (v2 and v3).

The SDK uploads ``job_driver.sh`` (its torchrun or mpirun variant) and passes
``--distribution torchrun|mpirun`` (and ``--user_nproc_per_node``) to its
bootstrap, which writes ``SM_MASTER_ADDR=algo-1``, ``SM_HOST_COUNT``,
``SM_CURRENT_HOST_RANK``, ``SM_HOSTS_LIST``, ... into ``sm_training.env``.
Every instance runs that driver as given: torchrun on every node, or the
leader's mpirun over the instances' ``ssh`` while the workers wait for its
done file. Every rank runs the function and uploads its result (or its
exception) to the same key, so the functions return rank-independent values.
"""

from __future__ import annotations

import importlib

import pytest

from sagemaker_plans_local import Session
from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.sdk.major import installed_major
from tests.runtime.world import torch_master_port

MODULE = "sagemaker.remote_function" if installed_major() == 2 else "sagemaker.core.remote_function"
SETTINGS = {
    "instance_type": "ml.m5.large",
    "instance_count": 2,
    "image_uri": "any-image-with-the-sdk",
    "role": "arn:aws:iam::123456789012:role/SageMakerRole",
}


@pytest.fixture
def session(sagemaker_backend):
    cause = views.unavailable()
    if cause is not None:
        pytest.skip(f"this machine gives no /opt/ml view: {cause}")
    return Session(backend=sagemaker_backend)


@pytest.fixture
def remote_function(monkeypatch):
    """The SDK's remote-function module (v3's import makes a boto3 client: it needs a region)."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return importlib.import_module(MODULE)


def only_job(session) -> dict:
    client = session.sagemaker_client
    (summary,) = client.list_training_jobs()["TrainingJobSummaries"]
    return client.describe_training_job(TrainingJobName=summary["TrainingJobName"])


def test_torchrun_all_reduces_over_two_instances(session, remote_function):
    @remote_function.remote(sagemaker_session=session, use_torchrun=True, nproc_per_node=1, **SETTINGS)
    def all_reduce(scale):
        import os

        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        value = torch.tensor([float(dist.get_rank() + 1) * scale])
        dist.all_reduce(value)
        hosts = [None] * dist.get_world_size()
        dist.all_gather_object(hosts, os.uname().nodename)
        dist.destroy_process_group()
        return value.item(), hosts, os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]

    with torch_master_port():
        assert all_reduce(10) == (30.0, ["algo-1", "algo-2"], "algo-1", "7777")
    job = only_job(session)
    assert job["AlgorithmSpecification"]["ContainerArguments"][-4:] == [
        "--distribution",
        "torchrun",
        "--user_nproc_per_node",
        "1",
    ]


def test_mpirun_spans_the_instances_through_their_ssh(session, remote_function):
    """The leader's ``mpirun --host algo-1:2,algo-2:2 -np 2``; mapping by node puts a rank on each."""
    environment = {"OMPI_MCA_rmaps_base_mapping_policy": "node"}

    @remote_function.remote(
        sagemaker_session=session,
        use_mpirun=True,
        nproc_per_node=2,
        environment_variables=environment,
        **SETTINGS,
    )
    def all_reduce():
        import os

        from mpi4py import MPI

        world = MPI.COMM_WORLD
        return world.allreduce(world.Get_rank() + 1), world.allgather(os.uname().nodename)

    assert all_reduce() == (3, ["algo-1", "algo-2"])
    assert only_job(session)["TrainingJobStatus"] == "Completed"


def test_a_failure_on_one_node_raises_the_function_s_exception(session, remote_function):
    """algo-2's rank raises; its instance fails the job and algo-1 (still running) is stopped."""

    @remote_function.remote(sagemaker_session=session, use_torchrun=True, nproc_per_node=1, **SETTINGS)
    def fails_on_the_second_node():
        import os
        import time

        if os.uname().nodename == "algo-2":
            raise ArithmeticError("node algo-2 gave up")
        time.sleep(600)  # stopped when algo-2 fails

    with torch_master_port(), pytest.raises(ArithmeticError, match="node algo-2 gave up"):
        fails_on_the_second_node()
    job = only_job(session)
    assert job["TrainingJobStatus"] == "Failed"
    assert job["FailureReason"].startswith("AlgorithmError: ArithmeticError('node algo-2 gave up')")


def test_plain_instance_count_above_one_is_refused_by_the_sdk(session, remote_function):
    """Without ``use_torchrun``, ``use_mpirun`` or a Spark config the SDK refuses it: no job."""

    @remote_function.remote(sagemaker_session=session, **SETTINGS)
    def anything():
        return 1

    with pytest.raises(ValueError, match="do not support training on multi instances"):
        anything()
    assert session.sagemaker_client.list_training_jobs()["TrainingJobSummaries"] == []
