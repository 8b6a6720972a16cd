"""ContainerEntrypoint jobs: their command runs where the instance's tree is /opt/ml (Linux)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest

from sagemaker_plans_local.runtime import namespace, views
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import WarmPool
from tests.runtime.world import EPOCH, REGION, ROLE, SCRIPTS, START, World, wait_for_line

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the /opt/ml view needs Linux")
PROBE = 'python /opt/ml/input/data/code/container_probe.py "$@"'


def container_job(
    world: World,
    name: str,
    command: list[str],
    args: list[str] = (),
    count: int = 1,
    pool: str | None = None,
    environment: dict | None = None,
    compression: str | None = None,
) -> TrainingJob:
    """A job as v3's ModelTrainer or @remote sends it: a command, a code channel, a data channel."""
    world.store.put_object(
        "bucket", f"{name}/code/container_probe.py", (SCRIPTS / "container_probe.py").read_bytes()
    )
    world.store.put_object("bucket", f"{name}/train/part.csv", b"1,2\n")
    channels = {"code": f"s3://bucket/{name}/code", "train": f"s3://bucket/{name}/train"}
    output = {"S3OutputPath": "s3://out-bucket/results"}
    if compression:
        output["CompressionType"] = compression
    spec = {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {
            "TrainingImage": "image",
            "TrainingInputMode": "File",
            "ContainerEntrypoint": command,
            "ContainerArguments": list(args),
        },
        "HyperParameters": {"epochs": "2", "dir": "/opt/ml/model"},
        "InputDataConfig": [
            {"ChannelName": channel, "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": uri}}}
            for channel, uri in channels.items()
        ],
        "OutputDataConfig": output,
        "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": count, "VolumeSizeInGB": 30},
        "Environment": environment or {},
    }
    job = TrainingJob(
        name, f"arn:aws:sagemaker:{REGION}:123456789012:training-job/{name}", spec, START, 0, START
    )
    if pool is not None:
        cache = world.tmp / "cache" / pool
        cache.mkdir(parents=True, exist_ok=True)
        job.pool = WarmPool(pool, None, "ml.m5.xlarge", count, cache, holder=job.name)
    return job


def seen(world: World, name: str) -> dict:
    return json.loads(world.archive(f"results/{name}/output/model.tar.gz")["seen.json"])


@pytest.fixture
def view():
    cause = views.unavailable()
    if cause is not None:
        pytest.skip(f"this machine gives no /opt/ml view: {cause}")


def test_container_entrypoint_jobs_run_and_arguments_alone_do_not(world):
    job = container_job(world, "c", ["/bin/true"])
    assert world.executor.runs(job)
    del job.spec["AlgorithmSpecification"]["ContainerEntrypoint"]
    assert not world.executor.runs(job)  # the image's own entry point: unknown here


def test_the_command_sees_its_instance_at_opt_ml(world, view):
    job = container_job(
        world,
        "c1",
        ["/bin/bash", "-c", PROBE, "bash"],
        ["--epochs", "2"],
        environment={"MY_VAR": "/opt/ml/model"},
    )
    run, result = world.run(job)
    assert result.exit_code == 0, result.failure_reason
    got = seen(world, "c1")
    assert got["argv"] == ["--epochs", "2"]
    assert got["cwd"] == "/opt/ml/code"
    assert got["uid"] == 0 and got["user"] == "root"  # a container runs as root
    assert got["train"] == ["part.csv"]
    assert got["resourceconfig"]["current_host"] == "algo-1"
    assert got["hyperparameters"] == {"epochs": "2", "dir": "/opt/ml/model"}  # as given: no mapping
    assert "ml" in got["opt"] and set(os.listdir("/opt")) <= set(got["opt"])
    env = got["env"]
    assert env["MY_VAR"] == "/opt/ml/model"
    assert env["TRAINING_JOB_NAME"] == "c1" and env["TRAINING_JOB_ARN"] == job.arn
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == REGION
    assert not [k for k in env if k.startswith("SM_")]
    assert "SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY" not in env
    assert "USER" not in env and "LOGNAME" not in env
    venv = world.tmp / "runtime" / "instances" / "jobs" / "c1" / "algo-1" / "venv"
    assert got["prefix"] == str(venv)  # the instance's own virtualenv over the backend's Python
    assert got["on_path"] == {name: str(venv / "bin" / name) for name in ("python", "python3", "pip", "pip3")}
    assert world.lines(run.streams[0]) == ["seen by c1 algo-1"]
    assert not Path("/opt/ml/model/seen.json").exists()  # the machine's /opt/ml is never written


def test_warm_pool_cache_is_seen_at_its_sagemaker_path(world, view):
    first = container_job(world, "w1", ["/bin/bash", "-c", PROBE], pool="wp-000001")
    assert world.run(first)[1].exit_code == 0
    second = container_job(world, "w2", ["/bin/bash", "-c", PROBE], pool="wp-000001")
    assert world.run(second, at=START + timedelta(minutes=5))[1].exit_code == 0
    got = seen(world, "w2")
    assert got["env"]["SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY"] == "/opt/ml/sagemaker/warmpoolcache"
    assert got["cache_before"] == "w1\n"
    assert (world.tmp / "cache" / "wp-000001" / "marker").read_text() == "w1\nw2\n"


def test_every_instance_runs_and_algo_1_uploads(world, view):
    job = container_job(world, "two", ["/bin/bash", "-c", PROBE], count=2)
    run, result = world.run(job)
    assert result.exit_code == 0, result.failure_reason
    assert [world.lines(s) for s in run.streams] == [["seen by two algo-1"], ["seen by two algo-2"]]
    assert seen(world, "two")["resourceconfig"]["hosts"] == ["algo-1", "algo-2"]


def test_each_instance_has_its_own_virtualenv_for_the_drivers_own_installs(world, view):
    job = container_job(world, "venvs", ["python", "-c", "import sys; print(sys.prefix)"], count=2)
    run, result = world.run(job)
    assert result.exit_code == 0, result.failure_reason
    job_dir = world.tmp / "runtime" / "instances" / "jobs" / "venvs"
    assert [world.lines(s) for s in run.streams] == [
        [str(job_dir / "algo-1" / "venv")],
        [str(job_dir / "algo-2" / "venv")],
    ]


def test_failure_file_written_at_opt_ml_is_the_reason(world, view):
    job = container_job(
        world, "bad", ["/bin/bash", "-c", PROBE], environment={"MY_FAILURE": "ValueError: no good"}
    )
    result = world.run(job)[1]
    assert (result.exit_code, result.failure_reason) == (3, "ValueError: no good")


def test_stop_reaches_the_command(world, view):
    job = container_job(world, "slow", ["/bin/bash", "-c", "echo started; exec sleep 60"])
    run = world.executor.start(job, START)
    wait_for_line(world, f"slow/algo-1-{EPOCH}", "started")
    run.stop()
    result = run.wait(120)
    assert result is not None and result.exit_code == 143


def test_without_a_view_the_job_fails_naming_the_cause(world, monkeypatch):
    monkeypatch.setattr(views, "_probed", ["unshare(CLONE_NEWUSER|CLONE_NEWNS): Operation not permitted"])
    job = container_job(world, "noview", ["/bin/bash", "-c", PROBE])
    run, result = world.run(job)
    assert result.exit_code == 1
    assert result.failure_reason == (
        "ClientError: The local runtime cannot show a ContainerEntrypoint job its instance at "
        "/opt/ml on this machine (unshare(CLONE_NEWUSER|CLONE_NEWNS): Operation not permitted). "
        "It needs Linux with unprivileged user namespaces, or root; see docs/local-runtime.md, "
        '"ContainerEntrypoint jobs and the /opt/ml view".'
    )
    assert not world.has("out-bucket", "results/noview/output/output.tar.gz")


# -- the namespace program itself, as another user ------------------------------------------
@pytest.fixture
def as_nobody():
    """``setpriv`` to uid 65534, and a directory that user can use (pytest's own is private)."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if os.geteuid() != 0 or not shutil.which("setpriv") or python is None:
        pytest.skip("needs root, setpriv and a system python3 to act as another user")
    tmp = Path(tempfile.mkdtemp(prefix="nobody-"))
    program = tmp / "namespace.py"
    shutil.copy(namespace.__file__, program)
    tmp.chmod(0o777)
    program.chmod(0o755)
    yield (
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-I", "-S", str(program)],
        tmp,
    )
    shutil.rmtree(tmp)


def test_a_user_without_privileges_gets_the_view_through_a_user_namespace(as_nobody):
    launcher, tmp = as_nobody
    tree, cache = tmp / "tree", tmp / "cache"
    for directory in (tree / "input", cache):
        directory.mkdir(parents=True)
        directory.chmod(0o777)
    tree.chmod(0o777)
    script = "id -u; pwd; echo made > /opt/ml/input/made; echo cached > /opt/ml/sagemaker/warmpoolcache/c"
    done = subprocess.run(
        [
            *launcher,
            "--opt-ml",
            str(tree),
            "--cache",
            str(cache),
            "--cwd",
            "/opt/ml",
            "--",
            "/bin/sh",
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout.split()) == (0, ["0", "/opt/ml"]), done.stderr
    assert (tree / "input" / "made").stat().st_uid == 65534  # the caller's own, outside
    assert (cache / "c").read_text() == "cached\n"


def test_where_user_namespaces_are_refused_the_cause_is_named(as_nobody):
    launcher, tmp = as_nobody
    if not shutil.which("unshare"):
        pytest.skip("needs unshare(1)")
    # inside a user namespace without a uid mapping, creating another one is refused (EPERM)
    setpriv, program = launcher[:4], launcher[4:]
    done = subprocess.run(
        [*setpriv, "unshare", "--user", "--", *program, "--probe", str(tmp)], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert done.stdout.startswith(
        "unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWUTS): Operation not permitted "
        "(unprivileged user namespaces are disabled or blocked here"
    )


def test_an_existing_opt_ml_is_covered_and_never_written(tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare(1) to give a private /opt/ml to the test itself")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "mine").write_text("instance\n")
    program = f"{sys.executable} -I -S {namespace.__file__}"
    script = (  # inside a private mount namespace: a machine whose /opt/ml holds "theirs"
        "mount -t tmpfs tmpfs /opt && mkdir /opt/ml && echo machine > /opt/ml/theirs && "
        f"{program} --opt-ml {tree} --cwd /opt/ml -- /bin/sh -c 'ls /opt/ml; echo job > /opt/ml/written' && "
        "ls /opt/ml"
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout.split()) == (0, ["mine", "theirs"]), done.stderr
    assert sorted(p.name for p in tree.iterdir()) == ["mine", "written"]
