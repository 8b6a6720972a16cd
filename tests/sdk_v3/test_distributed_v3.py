"""SDK v3 ModelTrainer(distributed=Torchrun(...)) runs its torchrun driver over a local cluster (gloo)."""

import io
import json
import shutil
import tarfile

from sagemaker.core.training.configs import Compute, SourceCode
from sagemaker.train import ModelTrainer
from sagemaker.train.distributed import Torchrun

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
