"""A job with code runs at most ``Settings.max_instance_processes`` local processes; larger ones fail."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.settings import DEFAULT_MAX_INSTANCE_PROCESSES, Settings
from sagemaker_plans_local.runtime.instances import SETUP_EXIT_CODE
from sagemaker_plans_local.runtime.launchers import processes_of
from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import create_request
from tests.runtime.world import SCRIPTS, World
from tests.server.clients import control


def over_cap(cap: int, count: int | str) -> str:
    return (
        f"ClientError: The local runtime runs at most {cap} local instance processes per job "
        f"(setting max_instance_processes); this job asks for {count}. Raise the setting "
        "(backend.settings.max_instance_processes, or POST /_sagemaker_plans_local/settings) "
        'or use fewer instances; see docs/local-runtime.md, "Instances".'
    )


def run_markers(world: World, name: str, count: int) -> tuple[object, list[str]]:
    """Run ``marker.py`` on ``count`` instances: (result, the instances whose process ran)."""
    marks = world.tmp / f"marks-{name}"
    marks.mkdir()
    job = world.job(name, "marker.py", count=count, environment={"MARKS": str(marks)})
    _, result = world.run(job, timeout=120)
    return result, sorted(p.name for p in marks.iterdir())


def test_the_default_cap():
    assert Settings().max_instance_processes == DEFAULT_MAX_INSTANCE_PROCESSES == 8


def test_a_job_above_the_cap_fails_before_any_process_or_thread(world):
    world.executor.settings.max_instance_processes = 2
    before = threading.active_count()
    result, marked = run_markers(world, "wide", 1000)
    assert (result.exit_code, result.failure_reason) == (SETUP_EXIT_CODE, over_cap(2, 1000))
    assert marked == []  # no instance process ran
    assert not (world.executor.root / "instances" / "jobs" / "wide").exists()  # nor was any prepared
    assert threading.active_count() <= before


@pytest.mark.parametrize(
    "hyperparameters",
    [
        {"sagemaker_mpi_enabled": True, "sagemaker_mpi_num_of_processes_per_host": 3},
        {"sagemaker_torch_distributed_enabled": True, "sagemaker_mpi_num_of_processes_per_host": 3},
        {"sagemaker_pytorch_ddp_enabled": True, "sagemaker_mpi_num_of_processes_per_host": 3},
    ],
)
def test_a_launchers_processes_per_host_count_against_the_cap(world, hyperparameters):
    world.executor.settings.max_instance_processes = 5
    job = world.job("per-host", "marker.py", count=2, hyperparameters=hyperparameters)
    _, result = world.run(job, timeout=120)
    asks = "6 (2 instances x 3 processes per host)"
    assert (result.exit_code, result.failure_reason) == (SETUP_EXIT_CODE, over_cap(5, asks))
    assert not (world.executor.root / "instances" / "jobs" / "per-host").exists()


def test_what_the_launchers_start_is_counted_as_the_toolkit_starts_it():
    def spec(**hps):
        hps = {"sagemaker_program": "t.py", "sagemaker_submit_directory": "s3://b/s", **hps}
        return {"HyperParameters": {k: json.dumps(v) for k, v in hps.items()}}

    per_host = {"sagemaker_mpi_num_of_processes_per_host": 4}
    assert processes_of(spec(**per_host), 3) == (3, 1)  # no launcher: the entry point per instance
    assert processes_of(spec(sagemaker_torch_distributed_enabled=True, **per_host), 3) == (12, 4)
    assert processes_of(spec(sagemaker_mpi_enabled=True), 3) == (3, 1)
    mpi = spec(sagemaker_mpi_enabled=True, sagemaker_mpi_num_processes=5, **per_host)
    assert processes_of(mpi, 3) == (5, 1)  # -np as given
    container = {"HyperParameters": {"sagemaker_mpi_enabled": "true"}}
    assert processes_of(container, 2) == (2, 1)  # a container's driver decides: its instances


def test_a_job_at_the_cap_runs_every_instance(world):
    world.executor.settings.max_instance_processes = 3
    result, marked = run_markers(world, "at-cap", 3)
    assert result.exit_code == 0, result.failure_reason
    assert marked == ["algo-1", "algo-2", "algo-3"]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cap=st.integers(0, 3), count=st.integers(1, 4))
def test_processes_run_up_to_the_cap_and_none_above_it(tmp_path_factory, cap, count):
    world = World(tmp_path_factory.mktemp("cap"))
    world.executor.settings.max_instance_processes = cap
    try:
        result, marked = run_markers(world, "job", count)
    finally:
        world.executor.close(10)
    if count <= cap:
        assert (result.exit_code, marked) == (0, [f"algo-{i}" for i in range(1, count + 1)])
    else:
        assert (result.exit_code, result.failure_reason, marked) == (
            SETUP_EXIT_CODE,
            over_cap(cap, count),
            [],
        )


def code_request(name: str, source, count: int, **extra) -> dict:
    request = create_request(name, keep_alive=None, **extra)
    request["ResourceConfig"].update(InstanceCount=count, InstanceType="ml.m5.large")
    request["HyperParameters"] = {
        "sagemaker_program": json.dumps("marker.py"),
        "sagemaker_submit_directory": json.dumps(f"file://{source}"),
    }
    return request


@pytest.fixture
def marker_source(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "marker.py").write_bytes((SCRIPTS / "marker.py").read_bytes())
    marks = tmp_path / "marks"
    marks.mkdir()
    return source, marks


@pytest.mark.parametrize("kind", ["script", "container"])
def test_a_backend_job_above_the_cap_is_accepted_and_fails_as_a_client_error(
    sagemaker_backend, marker_source, kind
):
    source, marks = marker_source
    sagemaker_backend.settings.max_instance_processes = 8  # the default, named
    sm = sagemaker_backend.client()
    request = code_request("wide", source, 1000, Environment={"MARKS": str(marks)})
    if kind == "container":
        del request["HyperParameters"]
        request["AlgorithmSpecification"]["ContainerEntrypoint"] = ["/bin/sh", "-c", 'touch "$MARKS/$$"']
    sm.create_training_job(**request)
    sagemaker_backend.wait_for_training_job("wide")
    described = sm.describe_training_job(TrainingJobName="wide")
    assert (described["TrainingJobStatus"], described["FailureReason"]) == ("Failed", over_cap(8, 1000))
    assert list(marks.iterdir()) == []


def test_a_simulated_job_of_1000_instances_is_not_capped(sagemaker_backend):
    sm = sagemaker_backend.client()
    request = create_request("simulated", keep_alive=None)
    request["ResourceConfig"].update(InstanceCount=1000, InstanceType="ml.m5.large")
    sm.create_training_job(**request)
    sagemaker_backend.wait_for_training_job("simulated")
    assert sm.describe_training_job(TrainingJobName="simulated")["TrainingJobStatus"] == "Completed"


def test_the_setting_is_changed_over_the_control_api_and_checked(sagemaker_server):
    status, answer = control(sagemaker_server, "settings", {"max_instance_processes": 2})
    assert (status, answer["max_instance_processes"]) == (200, 2)
    assert sagemaker_server.backend().settings.max_instance_processes == 2
    for bad in (-1, "3", True, 1.5, None):
        assert control(sagemaker_server, "settings", {"max_instance_processes": bad})[0] == 400
    assert control(sagemaker_server, "settings", method="GET")[1]["max_instance_processes"] == 2


def test_a_bad_value_is_refused_in_process_and_changes_nothing():
    backend = LocalBackend()
    try:
        for bad in (-1, "3", True, 2.0):
            with pytest.raises(ValueError, match="max_instance_processes"):
                backend.settings.max_instance_processes = bad
        assert backend.settings.max_instance_processes == 8
    finally:
        backend.close()


def test_the_setting_is_durable_across_reopen(tmp_path):
    with LocalBackend(root=tmp_path / "root") as backend:
        backend.settings.max_instance_processes = 3
    with LocalBackend(root=tmp_path / "root") as backend:
        assert backend.settings.max_instance_processes == 3
        backend.settings.max_instance_processes = 0
    with LocalBackend(root=tmp_path / "root") as backend:
        assert backend.settings.max_instance_processes == 0


def test_the_setting_sent_over_the_control_api_is_durable(tmp_path):
    with LocalServer(root=tmp_path / "server") as server:
        assert control(server, "settings", {"max_instance_processes": 5})[0] == 200
    with LocalServer(root=tmp_path / "server") as server:
        assert control(server, "settings", method="GET")[1]["max_instance_processes"] == 5
        assert server.backend().settings.max_instance_processes == 5
