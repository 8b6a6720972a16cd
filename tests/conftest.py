import itertools
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.sdk.default_backend import HOME_VARIABLE
from sagemaker_plans_local.sdk.major import sdk_major
from tests.sdk_split import mark_sdk_tests

# Hypothesis never judges the machine's speed: no deadline and no "too slow" health check
# anywhere, since CI runs on a developer's machine where anything else may be running. Under CI
# (CI=true) the examples are also derandomized (the same examples on every run, no example
# database), so a run's outcome depends on the code alone. HYPOTHESIS_PROFILE picks another.
SPEED_BLIND = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("dev", **SPEED_BLIND)
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **SPEED_BLIND)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

# Examples written for one SDK major are collected under that major only (`make test` runs both).
collect_ignore = ["test_examples_v3.py"] if sdk_major() == 2 else ["test_examples_v2.py"]

# The suite's own fixtures are the package's pytest plugin (entry point pytest11).
START = FIXTURE_START
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


_HOME = pytest.StashKey[tuple[Path, "str | None"]]()
_homes = itertools.count(1)


def pytest_configure(config):
    # The suite never writes into the real per-user directory: the session (each xdist worker
    # its own) gets a temporary one, in the environment so that subprocesses inherit it.
    home = Path(tempfile.mkdtemp(prefix="sagemaker-plans-local-home-"))
    config.stash[_HOME] = (home, os.environ.get(HOME_VARIABLE))
    os.environ[HOME_VARIABLE] = str(home)


def pytest_unconfigure(config):
    home, before = config.stash[_HOME]
    if before is None:
        os.environ.pop(HOME_VARIABLE, None)
    else:
        os.environ[HOME_VARIABLE] = before
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def fresh_default_home(pytestconfig, monkeypatch):
    """Each test's own per-user directory under the session's (made when used): what one test's
    processes keep on the default backend, another never sees."""
    home, _ = pytestconfig.stash[_HOME]
    monkeypatch.setenv(HOME_VARIABLE, str(home / f"test-{next(_homes)}"))


def pytest_collection_modifyitems(items):
    # `sdk`: the tests that can depend on the SDK major, the only ones `make test` runs twice.
    mark_sdk_tests(items)


@pytest.fixture
def backend(sagemaker_backend):
    return sagemaker_backend


@pytest.fixture
def sm(sagemaker_client):
    return sagemaker_client


def create_request(name, keep_alive=1800, **extra):
    resources = {"InstanceType": "ml.g4dn.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 250}
    if keep_alive is not None:
        resources["KeepAlivePeriodInSeconds"] = keep_alive
    request = {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/tf:2.2",
            "TrainingInputMode": "File",
        },
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/output"},
        "ResourceConfig": resources,
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "HyperParameters": {"epochs": "1"},
    }
    request.update(extra)
    return request


@pytest.fixture
def remote_source(tmp_path):
    """A ``src/`` whose train.py records the warm-pool chain (tests against a server)."""
    from tests.sdk.test_remote_session import TRAIN

    directory = tmp_path / "src"
    directory.mkdir()
    (directory / "train.py").write_text(TRAIN)
    return directory
