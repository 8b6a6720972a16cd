"""SDK v2 distribution={...} runs the toolkit's launchers over a local cluster: torchrun with gloo, mpirun."""

import io
import json
import shutil
import tarfile

from sagemaker.pytorch import PyTorch

from tests.runtime.world import SCRIPTS, torch_master_port

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311"


def pytorch(session, tmp_path, script, distribution):
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    shutil.copy(SCRIPTS / script, source / script)
    session.boto_session.client("s3").create_bucket(Bucket="dist-bucket")
    return PyTorch(
        image_uri=IMAGE,
        framework_version="2.5",
        py_version="py311",
        role=ROLE,
        instance_count=2,
        instance_type="ml.m5.large",
        entry_point=script,
        source_dir=str(source),
        output_path="s3://dist-bucket/output",
        sagemaker_session=session,
        distribution=distribution,
    )


def model_file(session, uri, name):
    bucket, key = uri[len("s3://") :].split("/", 1)
    body = session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        return json.load(archive.extractfile(name))


def test_torch_distributed_all_reduces_over_two_instances(sagemaker_session, tmp_path):
    job = pytorch(sagemaker_session, tmp_path, "torch_allreduce.py", {"torch_distributed": {"enabled": True}})
    with torch_master_port():
        job.fit(job_name="v2-torchrun", logs=False)
    seen = model_file(sagemaker_session, job.model_data, "torch.json")
    assert (seen["size"], seen["sum"], seen["master"]) == (2, 3.0, "algo-1")
    assert seen["hosts"] == ["algo-1", "algo-2"]


def test_mpi_runs_processes_per_host_over_two_instances(sagemaker_session, tmp_path):
    distribution = {"mpi": {"enabled": True, "processes_per_host": 2}}
    job = pytorch(sagemaker_session, tmp_path, "mpi_allreduce.py", distribution)
    job.fit(job_name="v2-mpi", logs=False)
    seen = model_file(sagemaker_session, job.model_data, "mpi.json")
    assert [(r["rank"], r["sum"], r["host"]) for r in seen] == [
        (0, 10, "algo-1"),
        (1, 10, "algo-1"),
        (2, 10, "algo-2"),
        (3, 10, "algo-2"),
    ]


def test_pytorchddp_runs_the_smdataparallel_mpirun_over_two_instances(sagemaker_session, tmp_path):
    """``pytorchddp``: the SMDataParallel runner's mpirun (no smddprun) spans both instances (mpi4py ranks)."""
    job = pytorch(sagemaker_session, tmp_path, "mpi_allreduce.py", {"pytorchddp": {"enabled": True}})
    job.fit(job_name="v2-pytorchddp", logs=False)
    seen = model_file(sagemaker_session, job.model_data, "mpi.json")
    assert [(r["rank"], r["sum"], r["host"]) for r in seen] == [(0, 3, "algo-1"), (1, 3, "algo-2")]
