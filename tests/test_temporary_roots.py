"""A temporary root never outlives its backend's process (shared roots: tests/durable)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.runtime.test_orphans import escaper_source, pids_file, read_pids, still_alive  # noqa: F401


def test_close_removes_a_temporary_root_once(tmp_path):
    backend = LocalBackend()
    root = backend.root
    assert root.is_dir()
    backend.close()
    assert not root.exists()
    backend.close()
    assert not root.exists()


def test_a_backend_dropped_without_close_lets_its_root_go(tmp_path):
    backend = LocalBackend(root=tmp_path)
    temporary = LocalBackend()
    temporary_root = temporary.root
    del backend, temporary
    gc.collect()
    assert not temporary_root.exists()


def test_a_live_client_keeps_its_backend_and_root(tmp_path):
    s3 = LocalBackend().client("s3")  # the backend itself is not kept by the caller
    gc.collect()
    s3.create_bucket(Bucket="kept")
    s3.put_object(Bucket="kept", Key="k", Body=b"v")
    assert s3.get_object(Bucket="kept", Key="k")["Body"].read() == b"v"


NEVER_CLOSED = textwrap.dedent("""
    import json, sys
    from sagemaker_plans_local import LocalBackend
    backend = LocalBackend()
    backend.client("s3").create_bucket(Bucket="never-closed")
    print(json.dumps(str(backend.root)), flush=True)
""")


def test_a_never_closed_backend_removes_its_temporary_root_at_exit():
    result = subprocess.run([sys.executable, "-c", NEVER_CLOSED], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    root = Path(json.loads(result.stdout))
    assert root.name.startswith("sagemaker-plans-local-") and not root.exists()


def test_the_process_wide_default_backend_keeps_its_per_user_root_at_exit():
    code = (
        "import json; from sagemaker_plans_local.sdk.default_backend import default_backend; "
        "print(json.dumps(str(default_backend().root)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    root = Path(json.loads(result.stdout))
    assert root == Path(os.environ["SAGEMAKER_PLANS_LOCAL_HOME"]) / "default" and root.is_dir()  # durable


RUNNING_AT_EXIT = textwrap.dedent("""
    import json, sys
    from sagemaker_plans_local import LocalBackend
    from tests.runtime.test_orphans import read_pids
    from pathlib import Path
    backend = LocalBackend()
    backend.settings.cold_start_seconds = 0
    backend.client().create_training_job(
        TrainingJobName="at-exit", RoleArn="arn:aws:iam::123456789012:role/R",
        AlgorithmSpecification={"TrainingImage": "i", "TrainingInputMode": "File"},
        OutputDataConfig={"S3OutputPath": "s3://bucket/out"}, StoppingCondition={"MaxRuntimeInSeconds": 3600},
        ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
        HyperParameters={"sagemaker_program": '"escaper.py"', "sagemaker_submit_directory": json.dumps(sys.argv[1]),
                         "pids": json.dumps(sys.argv[2]), "stay": "600"})
    backend.clock.advance(1)
    read_pids(Path(sys.argv[2]), 4)
    print(json.dumps(str(backend.root)), flush=True)
""")


@pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")
def test_a_run_still_going_at_exit_is_stopped_and_its_temporary_root_removed(tmp_path, pids_file):  # noqa: F811
    source = escaper_source(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", RUNNING_AT_EXIT, str(source), str(pids_file)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,
    )
    assert result.returncode == 0, result.stderr
    assert not Path(json.loads(result.stdout)).exists()
    assert still_alive(read_pids(pids_file, 4)) == []
