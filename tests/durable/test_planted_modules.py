"""No process the package starts imports a module from a directory it did not choose (issue 29, item 3).

A directory anyone may write (``/tmp``, a shared project directory) holds modules named as those
the package's processes import; each writes a marker file when imported. Training started from
there — by a notebook whose root's detached runner starts in that directory, or by a backend whose
helpers (``python -m venv``, the site query) run there — must never import one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.runtime.environments import VirtualEnvironments
from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.durable.processes import REPO
from tests.durable.worker import SLEEPER, job_request

#: What the runner, the runtime's helpers and the jobs' supervisor import (and a few more).
PLANTED = (
    "fcntl",
    "json",
    "venv",
    "site_query",
    "logging",
    "subprocess",
    "shutil",
    "sqlite3",
    "socket",
    "tempfile",
    "attrs",
    "botocore",
    "sagemaker_plans_local",
    "multiprocessing",
    "pickle",
)
#: Generous: how long a job with a virtualenv may take on a loaded machine.
LIMIT = 180.0

NOTEBOOK = """
import json, sys
from sagemaker_plans_local import LocalBackend
from tests.durable.worker import job_request

plan = json.loads(sys.argv[1])
with LocalBackend(root=plan["root"], runner="detached") as backend:
    backend.client().create_training_job(**job_request(plan["job"], 0, plan["source"], 0))
print("created", flush=True)
"""


def plant(directory: Path, markers: Path) -> None:
    """Modules in ``directory`` that leave a marker in ``markers`` when imported, then fail."""
    directory.mkdir()
    markers.mkdir()
    for name in PLANTED:
        (directory / f"{name}.py").write_text(
            f"open({str(markers / name)!r}, 'w').close()\nraise ImportError('planted {name}')\n"
        )


def source_with_requirements(tmp_path: Path) -> Path:
    """sleeper.py and a requirements.txt already satisfied (a virtualenv made, pip run offline)."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "sleeper.py").write_text(SLEEPER)
    (source / "requirements.txt").write_text("pip\n")
    return source


def test_the_venv_helpers_import_nothing_from_the_working_directory(tmp_path, monkeypatch):
    planted, markers = tmp_path / "shared", tmp_path / "markers"
    plant(planted, markers)
    monkeypatch.chdir(planted)
    environments = VirtualEnvironments(sys.executable)
    python = environments.ensure(tmp_path / "venv")
    assert python.exists()
    assert environments.site_dirs()  # the executor Python's own, asked from the planted directory
    assert sorted(path.name for path in markers.iterdir()) == []


@pytest.mark.skipif(not SUPERVISED, reason="the detached runner's tests need Linux")
def test_a_runner_started_in_a_shared_directory_imports_nothing_from_it(tmp_path):
    planted, markers = tmp_path / "shared", tmp_path / "markers"
    plant(planted, markers)
    root, notebook = tmp_path / "root", tmp_path / "notebook.py"
    with LocalBackend(root=root):  # a wall-clock root, as the default backend's
        pass
    notebook.write_text(NOTEBOOK)
    plan = {"root": str(root), "job": "planted", "source": str(source_with_requirements(tmp_path))}
    created = subprocess.run(
        [sys.executable, str(notebook), json.dumps(plan)],  # the script's directory first, not the cwd
        cwd=planted,  # where the notebook works: the runner starts here
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    assert created.stdout == "created\n", created.stderr
    with LocalBackend(root=root, runs_code=False) as observer:
        status = wait_for_end(observer, "planted", markers)
    assert sorted(path.name for path in markers.iterdir()) == []
    assert status == "Completed", (root / "runner.log").read_text()


def wait_for_end(backend: LocalBackend, job: str, markers: Path) -> str:
    """The job's status once it ended (or once a planted module was imported, or at the limit)."""
    deadline = time.monotonic() + LIMIT
    while True:
        status = backend.client().describe_training_job(TrainingJobName=job)["TrainingJobStatus"]
        if status in ("Completed", "Failed", "Stopped") or any(markers.iterdir()):
            return status
        if time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def test_a_job_of_a_backend_working_in_a_shared_directory_imports_nothing_from_it(tmp_path, monkeypatch):
    planted, markers = tmp_path / "shared", tmp_path / "markers"
    plant(planted, markers)
    source = source_with_requirements(tmp_path)
    monkeypatch.chdir(planted)
    with LocalBackend(root=tmp_path / "root") as backend:
        backend.client().create_training_job(**job_request("in-shared", 0, str(source), 0))
        job = backend.wait_for_training_job("in-shared")
    assert sorted(path.name for path in markers.iterdir()) == []
    assert (job.status, job.failure_reason) == ("Completed", None)


SIMULATION = """
from tests.simulation.test_runs import ONE_DAY, WORKLOAD
from sagemaker_plans_local.simulation.simulator import simulate

if __name__ == "__main__":  # the workers run this file as their main module too
    simulation = simulate(WORKLOAD, ["on-demand", "keep-alive=600"], capacity=ONE_DAY, workers=2)
    print(len(simulation.results), flush=True)
"""


def test_the_simulators_workers_import_nothing_from_the_working_directory(tmp_path):
    planted, markers = tmp_path / "shared", tmp_path / "markers"
    plant(planted, markers)
    script = tmp_path / "simulation.py"
    script.write_text(SIMULATION)
    done = subprocess.run(
        [sys.executable, str(script)],  # a fresh process: no fork server yet
        cwd=planted,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    assert sorted(path.name for path in markers.iterdir()) == []
    assert (done.returncode, done.stdout) == (0, "2\n"), done.stderr
