"""A wall-clock fit() (v2) or train() (v3) leaves the backend's clock at real time, not ahead."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from sagemaker_plans_local import LocalBackend, Session
from sagemaker_plans_local.sdk.major import sdk_major

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/training:latest"
SCRIPT = """\
import os
open(os.path.join(os.environ["SM_MODEL_DIR"], "model.txt"), "w").write("ok")
"""


def run_script(session: Session, source: str) -> str:
    """Train ``source``/train.py with a 1800 s keep-alive through the installed major; the job name."""
    if sdk_major() == 2:
        from sagemaker_plans_local import Estimator

        estimator = Estimator(
            image_uri=IMAGE,
            role=ROLE,
            instance_count=1,
            instance_type="ml.m5.large",
            entry_point="train.py",
            source_dir=source,
            keep_alive_period_in_seconds=1800,
            sagemaker_session=session,
        )
        estimator.fit(wait=True, logs=False)
        return estimator.latest_training_job.name
    from sagemaker.core.training.configs import Compute, SourceCode
    from sagemaker.train import ModelTrainer

    trainer = ModelTrainer(
        training_image=IMAGE,
        role=ROLE,
        sagemaker_session=session,
        source_code=SourceCode(source_dir=source, entry_script="train.py"),
        compute=Compute(instance_type="ml.m5.large", instance_count=1, keep_alive_period_in_seconds=1800),
    )
    trainer.train(logs=False)
    return trainer._latest_training_job.training_job_name


@pytest.fixture
def wall_session(tmp_path):
    with LocalBackend(root=tmp_path / "wall") as backend:
        yield Session(backend=backend, local=True)


def test_a_wall_clock_training_run_leaves_the_clock_at_real_time(wall_session, tmp_path):
    source = tmp_path / "code"
    source.mkdir()
    (source / "train.py").write_text(SCRIPT)
    job_name = run_script(wall_session, str(source))
    backend = wall_session.backend
    assert backend.clock.now() <= datetime.now(timezone.utc)
    client = wall_session.sagemaker_client
    described = client.describe_training_job(TrainingJobName=job_name)
    assert described["TrainingJobStatus"] == "Completed"
    assert described["WarmPoolStatus"]["Status"] == "Available"  # 1800 real seconds, not expired
    offerings = client.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge",
        InstanceCount=1,
        DurationHours=24,
        TargetResources=["training-job"],
        StartTimeAfter=datetime.now(timezone.utc),
    )
    assert offerings["TrainingPlanOfferings"]  # a datetime.now()-based search is not "in the past"
