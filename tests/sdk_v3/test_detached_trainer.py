"""v3's ``ModelTrainer.train(wait=False)`` in a kernel that then exits: the job runs on (issue 18).

The SDK's default backend leaves a job's code to the root's detached runner
(docs/durability.md, "A detached runner"), so a fresh process finds it Completed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from sagemaker_plans_local.durable import detached
from sagemaker_plans_local.runtime.processes import SUPERVISED
from sagemaker_plans_local.sdk.default_backend import ENDPOINT_VARIABLE, default_backend_root
from tests.runtime.test_nothing_outlives import poll

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")

TRAIN = textwrap.dedent("""
    import json, pathlib, time
    print("training", flush=True)
    time.sleep(3)
    pathlib.Path("/opt/ml/model/model.json").write_text(json.dumps({"trained": True}))
""")
START_AND_EXIT = textwrap.dedent("""
    import sys
    from sagemaker.core.training.configs import Compute, SourceCode
    from sagemaker.train import ModelTrainer
    from sagemaker_plans_local import Session

    trainer = ModelTrainer(
        training_image="763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311",
        role="arn:aws:iam::123456789012:role/SageMakerRole",
        sagemaker_session=Session(),
        base_job_name="kernel",
        source_code=SourceCode(source_dir=sys.argv[1], entry_script="train.py"),
        compute=Compute(instance_type="ml.m5.large", instance_count=1),
    )
    trainer.train(wait=False)
    job = trainer._latest_training_job
    job.refresh()
    print(job.training_job_status, job.training_job_name)
""")  # the kernel exits here, its job still in progress
WAIT_ELSEWHERE = textwrap.dedent("""
    import io, json, sys, tarfile
    from sagemaker.core.resources import TrainingJob
    from sagemaker_plans_local import Session

    session = Session()
    job = TrainingJob.get(sys.argv[1], session=session.boto_session, region="us-east-1")
    job.wait(logs=False)
    bucket, key = job.model_artifacts.s3_model_artifacts[len("s3://"):].split("/", 1)
    body = session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        model = json.load(archive.extractfile("model.json"))
    print(json.dumps([job.training_job_status, model]))
""")


def run_python(code: str, *args: str) -> str:
    environment = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1"}
    environment.pop(ENDPOINT_VARIABLE, None)
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=environment
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.splitlines()[-1]


def test_a_job_trained_without_waiting_completes_after_its_kernel_exits(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "train.py").write_text(TRAIN)
    status, name = run_python(START_AND_EXIT, str(source)).split()
    assert status == "InProgress"
    assert json.loads(run_python(WAIT_ELSEWHERE, name)) == ["Completed", {"trained": True}]
    poll(lambda: detached.runner_pid(default_backend_root()) is None, "the runner exits", 120)
