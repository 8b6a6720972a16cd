"""A process that owns one running job until it is killed: ``owner.py <mode> <directory>``.

Modes: ``escaper`` (a script-mode job whose sleepers leave its session), ``container`` (a
``ContainerEntrypoint`` shell with a background child), ``pip`` (a ``requirements.txt``
whose pip install blocks on a FIFO), ``venv`` (the job's virtualenv being made by a Python
whose ``-m venv`` hangs). Every process it starts inherits the caller's marker variable.
"""

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

mode, directory = sys.argv[1], Path(sys.argv[2])
source = directory / "source"


def backend_job(**extra) -> None:
    from sagemaker_plans_local import LocalBackend

    backend = LocalBackend(start_time=datetime(2026, 1, 1, tzinfo=timezone.utc))
    request = {
        "TrainingJobName": "owned",
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
        "AlgorithmSpecification": {"TrainingImage": "my-image", "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 2, "VolumeSizeInGB": 10},
    }
    request.update(extra)
    backend.client().create_training_job(**request)
    backend.wait_for_training_job("owned")


def script_mode(program: str, **hyperparameters: str) -> dict:
    return {
        "sagemaker_program": json.dumps(program),
        "sagemaker_submit_directory": json.dumps(f"file://{source}"),
        **hyperparameters,
    }


if mode == "escaper":
    pids = json.dumps(str(directory / "pids.txt"))
    backend_job(HyperParameters=script_mode("escaper.py", pids=pids, stay="600", **{"ignore-term": "true"}))
elif mode == "container":
    spec = {"TrainingImage": "my-image", "TrainingInputMode": "File"}
    spec["ContainerEntrypoint"] = ["/bin/sh", "-c", "sleep 600 & sleep 600"]
    backend_job(AlgorithmSpecification=spec)
elif mode == "pip":
    backend_job(HyperParameters=script_mode("escaper.py"))
elif mode == "venv":  # the runtime's own executor, with a Python whose venv creation hangs
    sys.path.insert(0, str(Path(__file__).parents[3]))
    from sagemaker_plans_local.runtime import LocalExecutor
    from tests.runtime.world import START, World

    world = World(directory / "world")
    world.executor = LocalExecutor(
        directory / "runtime", world.store, world.logs, world.clock, python=str(directory / "python")
    )
    files = {"requirements.txt": b"attrs\n"}
    world.executor.start(world.job("owned", "escaper.py", files=files, count=2), START).wait(None)
