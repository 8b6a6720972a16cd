"""SDK v3 ModelTrainer(distributed=Torchrun(...)) runs its torchrun driver over a local cluster (gloo)."""

import contextlib
import io
import json
import shutil
import tarfile

from sagemaker.core.training.configs import Compute, SourceCode
from sagemaker.core.utils.exceptions import FailedStatusError
from sagemaker.train import ModelTrainer
from sagemaker.train.distributed import MPI, Torchrun

from tests.runtime.world import SCRIPTS, torch_master_port

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311"


def test_torchrun_all_reduces_over_two_instances(sagemaker_session, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(SCRIPTS / "torch_allreduce.py", source / "train.py")
    trainer = ModelTrainer(
        training_image=IMAGE,
        role=ROLE,
        sagemaker_session=sagemaker_session,
        base_job_name="v3-torchrun",
        source_code=SourceCode(source_dir=str(source), entry_script="train.py"),
        compute=Compute(instance_type="ml.m5.large", instance_count=2),
        distributed=Torchrun(process_count_per_node=2),
    )
    with torch_master_port():
        trainer.train(wait=True, logs=False)
    job = trainer._latest_training_job
    assert job.training_job_status == "Completed", job.failure_reason
    uri = job.model_artifacts.s3_model_artifacts
    bucket, key = uri[len("s3://") :].split("/", 1)
    body = sagemaker_session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        seen = json.load(archive.extractfile("torch.json"))
    assert (seen["size"], seen["sum"], seen["master"]) == (4, 10.0, "algo-1")
    assert seen["hosts"] == ["algo-1", "algo-1", "algo-2", "algo-2"]


def job_logs(session, name: str) -> str:
    logs = session.boto_session.client("logs")
    group = "/aws/sagemaker/TrainingJobs"
    streams = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=name)["logStreams"]
    return "\n".join(
        event["message"]
        for stream in streams
        for event in logs.get_log_events(
            logGroupName=group, logStreamName=stream["logStreamName"], startFromHead=True
        )["events"]
    )


def test_mpi_driver_runs_mpirun_over_the_instances_through_their_ssh(sagemaker_session, tmp_path):
    """v3's MPI driver: its sshd, the workers' port-22 check, ready/done files over ssh, mpirun.

    The driver gives ``mpirun -np <process_count_per_node>`` (not times the nodes): ``--map-by
    node`` puts those ranks on both instances, so the all-reduce crosses them."""
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(SCRIPTS / "mpi_allreduce.py", source / "train.py")
    trainer = ModelTrainer(
        training_image=IMAGE,
        role=ROLE,
        sagemaker_session=sagemaker_session,
        base_job_name="v3-mpi",
        source_code=SourceCode(source_dir=str(source), entry_script="train.py"),
        compute=Compute(instance_type="ml.m5.large", instance_count=2),
        distributed=MPI(process_count_per_node=2, mpi_additional_options=["--map-by", "node"]),
    )
    trainer.train(wait=False)
    job = trainer._latest_training_job
    with contextlib.suppress(FailedStatusError):  # the logs say why
        job.wait(poll=1, timeout=600)
    job.refresh()
    logs = job_logs(sagemaker_session, job.training_job_name)
    assert job.training_job_status == "Completed", (job.failure_reason, logs)
    assert "Master can connect to all worker nodes." in logs
    assert "Found status file /tmp/done.algo-1" in logs
    uri = job.model_artifacts.s3_model_artifacts
    bucket, key = uri[len("s3://") :].split("/", 1)
    body = sagemaker_session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        seen = json.load(archive.extractfile("mpi.json"))
    assert [(r["rank"], r["sum"], r["host"]) for r in seen] == [(0, 3, "algo-1"), (1, 3, "algo-2")]
