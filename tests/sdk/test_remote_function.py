"""``@remote`` and ``RemoteExecutor`` with keep-alive run the function here, in SDK v2 and v3.

Each call is a ContainerEntrypoint job (``job_driver.sh``) run where the
instance's tree is ``/opt/ml``; the function, its arguments and its result
travel through the local object store. The functions are defined inside the
tests so that they are pickled by value (the job cannot import this module).
"""

from __future__ import annotations

import importlib
import importlib.util

import pytest

from sagemaker_plans_local import Session
from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.sdk.major import installed_major
from tests.runtime.world import tiny_wheel

#: v3 moved the remote function to sagemaker-core.
MODULE = "sagemaker.remote_function" if installed_major() == 2 else "sagemaker.core.remote_function"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SETTINGS = {
    "instance_type": "ml.m5.large",
    "keep_alive_period_in_seconds": 600,
    "image_uri": "any-image-with-the-sdk",
    "role": ROLE,
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


def jobs_in_order(session) -> list[dict]:
    client = session.sagemaker_client
    names = [
        s["TrainingJobName"]
        for s in client.list_training_jobs(SortBy="CreationTime", SortOrder="Ascending")[
            "TrainingJobSummaries"
        ]
    ]
    return [client.describe_training_job(TrainingJobName=name) for name in names]


def test_remote_returns_the_value_and_the_second_call_reuses_the_warm_pool(session, remote_function):
    @remote_function.remote(sagemaker_session=session, **SETTINGS)
    def add(a, b):
        return a + b

    assert add(1, 2) == 3
    assert add(3, 4) == 7
    first, second = jobs_in_order(session)
    assert first["AlgorithmSpecification"]["ContainerEntrypoint"][0] == "/bin/bash"
    assert first["WarmPoolStatus"]["Status"] == "Reused"
    assert first["WarmPoolStatus"]["ReusedByJob"] == second["TrainingJobName"]
    assert second["WarmPoolStatus"]["Status"] == "Available"
    assert second["ResourceConfig"]["KeepAlivePeriodInSeconds"] == 600


def test_remote_raises_the_function_exception(session, remote_function):
    @remote_function.remote(sagemaker_session=session, **SETTINGS)
    def divide(a, b):
        return a / b

    with pytest.raises(ZeroDivisionError, match="division by zero"):
        divide(1, 0)
    (job,) = jobs_in_order(session)
    assert job["TrainingJobStatus"] == "Failed"


def test_remote_executor_returns_each_result(session, remote_function):
    def square(x):
        return x * x

    with remote_function.RemoteExecutor(
        max_parallel_jobs=1, sagemaker_session=session, **SETTINGS
    ) as executor:
        futures = [executor.submit(square, x) for x in (2, 3)]
        assert [future.result() for future in futures] == [4, 9]
    first, second = jobs_in_order(session)
    assert first["WarmPoolStatus"]["ReusedByJob"] == second["TrainingJobName"]


def test_dependencies_go_into_the_instance_s_virtualenv_not_the_caller_s(
    session, remote_function, sagemaker_backend, tmp_path
):
    wheels = tiny_wheel(tmp_path / "wheels").parent
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"--no-index\n--find-links {wheels}\ntinypkg==0.1\n")

    @remote_function.remote(sagemaker_session=session, dependencies=str(requirements), **SETTINGS)
    def where():
        import tinypkg

        return tinypkg.VALUE, tinypkg.__file__

    value, location = where()
    assert value == 42
    pools = sagemaker_backend.root / "runtime" / "us-east-1" / "instances" / "pools"
    (venv,) = pools.glob("*/algo-1/venv")
    assert location.startswith(str(venv))
    assert importlib.util.find_spec("tinypkg") is None  # the calling environment is untouched
