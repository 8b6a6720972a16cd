"""The local executor with real subprocesses running tiny scripts (tests/runtime/scripts)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import threading
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.runtime.world import EPOCH, REGION, ROLE, SCRIPTS, START, tiny_wheel, wait_for_line


# -- which jobs run -----------------------------------------------------------------------
def test_runs_only_script_mode_jobs(world):
    job = world.job("probe", "contract_probe.py")
    assert world.executor.runs(job)
    del job.spec["HyperParameters"]["sagemaker_submit_directory"]
    assert not world.executor.runs(job)
    job.spec["HyperParameters"] = None
    assert not world.executor.runs(job)


# -- the contract, end to end ------------------------------------------------------------------
def test_script_gets_the_training_contract(world):
    world.store.create_bucket("data", REGION)
    world.store.put_object("data", "train/part-1.csv", b"1,2\n")
    world.store.put_object("data", "train/sub/part-2.csv", b"3,4\n")
    world.store.put_object("data", "test/x.csv", b"5\n")
    job = world.job(
        "probe",
        "contract_probe.py",
        hyperparameters={"learning-rate": 0.1, "epochs": 3, "name": "resnet", "b": True},
        channels={"train": "s3://data/train", "test": "s3://data/test/"},
        environment={
            "MY_VAR": "x",
            "MY_PATH": "/opt/ml/model/sub:/usr/bin",
            "PIP_CACHE_DIR": "/opt/ml/sagemaker/warmpoolcache/pip",
        },
    )
    run, result = world.run(job)
    assert result.exit_code == 0 and result.failure_reason is None
    assert result.duration > 0 and run.elapsed() == result.duration

    model = world.archive("results/probe/output/model.tar.gz")
    probe = json.loads(model["probe.json"])
    assert world.archive("results/probe/output/output.tar.gz") == {"metrics.txt": b"loss=0.1\n"}
    env = probe["env"]
    opt_ml = Path(env["SM_MODEL_DIR"]).parent
    assert opt_ml == world.tmp / "runtime" / "instances" / "jobs" / "probe" / "algo-1" / "opt" / "ml"
    # the command line: sorted keys, --name value, the toolkit's str() of each decoded value
    assert probe["argv"] == ["-b", "True", "--epochs", "3", "--learning-rate", "0.1", "--name", "resnet"]
    assert probe["cwd"] == str(opt_ml / "code")
    # the backend's interpreter, in its environment (however either path is spelled)
    assert os.path.samefile(probe["executable"], sys.executable) and probe["prefix"] == sys.prefix
    assert env["SM_CHANNELS"] == '["test","train"]'
    assert env["SM_CHANNEL_TRAIN"] == str(opt_ml / "input" / "data" / "train")
    assert probe["channels"] == {"test": ["x.csv"], "train": ["part-1.csv", "sub"]}
    assert json.loads(env["SM_HPS"]) == {"learning-rate": 0.1, "epochs": 3, "name": "resnet", "b": True}
    assert env["SM_HP_LEARNING-RATE"] == "0.1" and env["SM_HP_NAME"] == "resnet"
    assert env["SM_HP_B"] == "true" and env["SM_HP_EPOCHS"] == "3"
    assert env["SM_HOSTS"] == '["algo-1"]' and env["SM_CURRENT_HOST"] == "algo-1"
    assert env["SM_NUM_CPUS"] == str(os.cpu_count()) and env["SM_NUM_GPUS"] == "0"
    assert env["SM_OUTPUT_DATA_DIR"] == str(opt_ml / "output" / "data")
    assert env["SM_OUTPUT_DIR"] == str(opt_ml / "output")
    assert env["SM_INPUT_DIR"] == str(opt_ml / "input")
    assert env["SM_INPUT_CONFIG_DIR"] == str(opt_ml / "input" / "config")
    assert env["SM_MODULE_DIR"] == "s3://bucket/probe/source/sourcedir.tar.gz"
    assert env["SM_MODULE_NAME"] == "contract_probe"
    assert json.loads(env["SM_USER_ARGS"]) == probe["argv"]
    training_env = json.loads(env["SM_TRAINING_ENV"])
    assert training_env["hyperparameters"]["epochs"] == 3
    assert training_env["job_name"] == "probe" and training_env["is_master"] is True
    assert training_env["additional_framework_parameters"] == {}
    assert env["TRAINING_JOB_NAME"] == "probe" and env["AWS_REGION"] == REGION
    assert "SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY" not in env
    assert "SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP" not in env
    assert env["MY_VAR"] == "x"
    assert env["MY_PATH"] == f"{opt_ml / 'model' / 'sub'}:/usr/bin"
    assert env["PIP_CACHE_DIR"] == str(opt_ml / "sagemaker" / "warmpoolcache" / "pip")
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(opt_ml / "code")
    # the config files, as SageMaker writes them
    config = probe["config"]
    assert config["hyperparameters.json"] == job.spec["HyperParameters"]
    assert config["resourceconfig.json"] == {
        "current_host": "algo-1",
        "current_instance_type": "ml.m5.xlarge",
        "current_group_name": "homogeneousCluster",
        "hosts": ["algo-1"],
        "instance_groups": [
            {
                "instance_group_name": "homogeneousCluster",
                "instance_type": "ml.m5.xlarge",
                "hosts": ["algo-1"],
            }
        ],
        "network_interface_name": "eth0",
    }
    assert config["inputdataconfig.json"]["train"] == {
        "TrainingInputMode": "File",
        "S3DistributionType": "FullyReplicated",
        "RecordWrapperType": "None",
    }
    # a job without a warm pool leaves nothing behind
    assert not (world.tmp / "runtime" / "instances" / "jobs" / "probe").exists()


def test_log_lines_carry_virtual_timestamps(world):
    job = world.job("logs", "contract_probe.py")
    at = START + timedelta(hours=5)
    run, result = world.run(job, at=at)
    stream = f"logs/algo-1-{int(at.timestamp())}"
    assert run.streams == [stream]
    assert world.streams("logs/") == [stream]
    events = world.events(stream)
    assert sorted(e.message for e in events) == ["line one", "line three", "line two"]
    assert [e.message for e in events if e.message != "line two"] == ["line one", "line three"]
    low = int(at.timestamp() * 1000)
    high = low + int(result.duration * 1000) + 1
    assert all(low <= e.timestamp <= high for e in events)
    assert world.clock.now() == START  # the manual clock stood still all along


def test_warm_pool_and_capacity_block_variables(world):
    expires = START + timedelta(hours=12)
    job = world.job(
        "pooled",
        "contract_probe.py",
        pool="wp-000001",
        block_end=expires,
        environment={"PIP_CACHE_DIR": "/opt/ml/sagemaker/warmpoolcache/pip"},
    )
    run, result = world.run(job)
    assert result.exit_code == 0
    env = json.loads(world.archive("results/pooled/output/model.tar.gz")["probe.json"])["env"]
    cache = world.tmp / "cache" / "wp-000001"
    assert env["SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY"] == str(cache)
    assert env["PIP_CACHE_DIR"] == str(cache / "pip")
    assert env["SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP"] == str(int(expires.timestamp()))
    # a pool's instances stay for its next job, until the pool is released
    instance = world.tmp / "runtime" / "instances" / "pools" / "wp-000001" / "algo-1"
    assert instance.is_dir() and world.executor.instances_dir(job) == instance.parent
    world.executor.release("wp-000001")
    assert not instance.parent.exists()


def test_release_during_a_run_waits_for_its_end(world):
    job = world.job("released", "sleeper.py", pool="wp-000002")
    run = world.executor.start(job, START)
    wait_for_line(world, f"released/algo-1-{EPOCH}", "ready")
    world.executor.release("wp-000002")
    instances = world.executor.instances_dir(job)
    assert (instances / "algo-1" / "opt" / "ml" / "code" / "sleeper.py").is_file()
    run.stop()
    assert run.join(120) and not instances.exists()


def test_close_waits_for_a_run_still_cleaning_up(world, monkeypatch):
    from sagemaker_plans_local.runtime import executor as executor_module

    cleaning, may_finish, order = threading.Event(), threading.Event(), []
    real_rmtree = shutil.rmtree

    def slow_rmtree(path, **kwargs):  # the run has left the executor's table, its tree is still there
        cleaning.set()
        may_finish.wait()
        real_rmtree(path, **kwargs)
        order.append("cleaned")

    monkeypatch.setattr(executor_module, "shutil", SimpleNamespace(rmtree=slow_rmtree))
    job = world.job("cleaning", "contract_probe.py")
    run = world.executor.start(job, START)
    assert run.wait(120) is not None and cleaning.wait(120)
    closer = threading.Thread(target=lambda: (world.executor.close(120), order.append("closed")))
    closer.start()
    closer.join(0.2)  # a close that did not wait would have returned by now
    may_finish.set()
    closer.join(120)
    assert order == ["cleaned", "closed"] and not world.executor.instances_dir(job).exists()


def test_a_restarted_job_waits_for_its_previous_run(world):
    job = world.job("again", "contract_probe.py")
    first = world.executor.start(job, START)
    second = world.executor.start(job, START + timedelta(minutes=30))
    assert first.wait(120).exit_code == 0 and second.wait(120).exit_code == 0
    assert first.join(120) and second.join(120)
    assert second.streams == [f"again/algo-1-{EPOCH + 1800}"]
    assert sorted(world.lines(second.streams[0])) == ["line one", "line three", "line two"]
    assert not world.executor.instances_dir(job).exists()


def test_long_lines_are_split_at_the_log_event_limit(world):
    script = "print('y' * 300000)\nprint('end')\n"
    job = world.job("long", "long.py", files={"long.py": script})
    run, result = world.run(job)
    sizes = [len(line) for line in world.lines(run.streams[0])]
    assert sizes == [256 * 1024 - 26, 300000 - (256 * 1024 - 26), 3]


# -- failures -------------------------------------------------------------------------------------
def test_non_zero_exit_fails_with_the_stderr_tail(world):
    job = world.job("fails", "fail.py")
    run, result = world.run(job)
    assert result.exit_code == 3
    reason = result.failure_reason
    assert reason.endswith("ValueError: the real cause") and len(reason) <= 1024
    assert reason.startswith("noise")  # whole lines only
    # on failure only output.tar.gz is uploaded
    assert world.archive("results/fails/output/output.tar.gz") == {"debug.txt": b"debug"}
    assert not world.has("out-bucket", "results/fails/output/model.tar.gz")


def test_failure_file_is_the_reason(world):
    job = world.job("failfile", "fail.py", hyperparameters={"failure-file": True})
    run, result = world.run(job)
    assert (result.exit_code, result.failure_reason) == (3, "CUDA out of memory")


@pytest.mark.parametrize("uri", ["s3://bucket/no/such/prefix", "s3://missing-bucket/train"])
def test_missing_channel_data_is_a_client_error(world, uri):
    job = world.job("nodata", "contract_probe.py", channels={"train": uri})
    bucket = uri[5:].split("/")[0]
    run, result = world.run(job)
    assert result.exit_code == 1
    assert result.failure_reason == (
        f'ClientError: No S3 objects found under S3 URL "{uri}" given in input data source. '
        f"Please ensure that the bucket exists in the selected region ({REGION}), that objects "
        f'exist under that S3 prefix, and that the role "{ROLE}" has "s3:ListBucket" '
        f'permissions on bucket "{bucket}".'
    )
    assert world.streams("nodata/") == []  # the script never started
    assert not world.store.bucket_exists("out-bucket")  # and nothing was uploaded


def test_source_archive_cannot_escape_the_code_dir(world):
    job = world.job("slip", "contract_probe.py", files={"../../../../evil.py": "print('x')"})
    run, result = world.run(job)
    assert result.exit_code == 1
    assert "evil.py" in result.failure_reason and "outside the code directory" in result.failure_reason
    assert not any(world.tmp.rglob("evil.py"))


def test_missing_source_archive_fails_the_run(world):
    job = world.job("nosource", "contract_probe.py", source="s3://bucket/nowhere/sourcedir.tar.gz")
    run, result = world.run(job)
    assert result.exit_code == 1
    assert result.failure_reason.startswith(
        "Failed to download the source code from s3://bucket/nowhere/sourcedir.tar.gz: NoSuchKey"
    )


def test_local_source_directory(world, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "contract_probe.py").write_bytes((SCRIPTS / "contract_probe.py").read_bytes())
    job = world.job("localsrc", "contract_probe.py", source=f"file://{source}")
    run, result = world.run(job)
    assert result.exit_code == 0


# -- stopping --------------------------------------------------------------------------------
def test_stop_terminates_the_process_group(world):
    job = world.job("stopme", "sleeper.py")
    run = world.executor.start(job, START)
    wait_for_line(world, f"stopme/algo-1-{EPOCH}", "ready")
    assert run.wait(0.05) is None and run.elapsed() > 0
    run.stop()
    result = run.wait(120)
    assert result is not None and result.exit_code == 143  # 128 + SIGTERM: it ended on the signal
    assert run.join(120)
    # a stopped job keeps what the script saved: model and output are uploaded
    assert world.has("out-bucket", "results/stopme/output/model.tar.gz")


def test_stop_kills_after_the_grace_period(world):
    job = world.job("stubborn", "sleeper.py", hyperparameters={"ignore-term": True})
    run = world.executor.start(job, START)
    wait_for_line(world, f"stubborn/algo-1-{EPOCH}", "ready")
    run.stop()
    result = run.wait(120)
    # 128 + SIGKILL: the script ignored SIGTERM, so the kill after the grace period ended it
    assert result.exit_code == 137


# -- several instances --------------------------------------------------------------------------
def test_instances_run_concurrently_and_one_failure_fails_the_job(world):
    job = world.job("multi", "hosts.py", count=2, hyperparameters={"fail-second": True})
    run, result = world.run(job)
    assert (result.exit_code, result.failure_reason) == (5, "algo-2 gives up")
    assert run.wait(0) is not None  # algo-1 (which sleeps a minute) was stopped, not waited for
    assert run.streams == [f"multi/algo-1-{EPOCH}", f"multi/algo-2-{EPOCH}"]
    # stdout and stderr are read apart, so only each stream's own order is kept
    assert {'host algo-2 ["algo-1","algo-2"]', "algo-2 gives up"} <= set(world.lines(run.streams[1]))


def test_artifacts_come_from_algo_1(world):
    job = world.job("multiok", "hosts.py", count=3)
    run, result = world.run(job)
    assert result.exit_code == 0
    assert world.archive("results/multiok/output/model.tar.gz") == {"host.txt": b"algo-1"}
    assert len(world.streams("multiok/")) == 3


# -- checkpoints ------------------------------------------------------------------------------------
@pytest.mark.parametrize("exit_code", [0, 4])
def test_checkpoints_are_restored_and_saved(world, exit_code):
    world.store.put_object("bucket", "ckpt/run/step-1.ckpt", b"one")
    job = world.job(
        "ckpt",
        "checkpointer.py",
        hyperparameters={"checkpoint-dir": "/opt/ml/checkpoints", "exit": exit_code},
        checkpoint={"S3Uri": "s3://bucket/ckpt/run"},
    )
    run, result = world.run(job)
    assert result.exit_code == exit_code
    assert "found step-1.ckpt" in world.lines(run.streams[0])
    keys = [o.key for o in world.store.list_objects("bucket", "ckpt/run/").objects]
    assert keys == ["ckpt/run/step-1.ckpt", "ckpt/run/step-2.ckpt"]
    with world.store.get_object("bucket", "ckpt/run/step-2.ckpt").open() as handle:
        assert handle.read() == b"two"


# -- requirements.txt ---------------------------------------------------------------------------
def test_requirements_install_once_per_warm_pool_chain(world, tmp_path):
    wheels = tiny_wheel(tmp_path / "wheels").parent
    requirements = f"--no-index\n--find-links {wheels}\ntinypkg==0.1\n"
    files = {"requirements.txt": requirements}
    environment = {"PIP_CACHE_DIR": "/opt/ml/sagemaker/warmpoolcache/pip"}
    first = world.job("pip-1", "uses_package.py", files=files, pool="wp-000007", environment=environment)
    run, result = world.run(first, timeout=60)
    assert result.exit_code == 0, result.failure_reason
    lines = world.lines(run.streams[0])
    assert any("Successfully installed tinypkg-0.1" in line for line in lines)
    assert lines[-1] == "tinypkg 42"
    info = json.loads(world.archive("results/pip-1/output/model.tar.gz")["package.json"])
    venv = world.tmp / "runtime" / "instances" / "pools" / "wp-000007" / "venv"
    assert info["prefix"] == str(venv)
    assert info["file"].startswith(str(venv))
    assert info["pip_cache"] == str(world.tmp / "cache" / "wp-000007" / "pip")
    assert info["attrs_importable"]  # the calling environment's packages stay visible

    # a warm start on the same pool: same venv, pip skipped entirely
    second = world.job("pip-2", "uses_package.py", files=files, pool="wp-000007", environment=environment)
    run, result = world.run(second, at=START + timedelta(hours=1))
    assert result.exit_code == 0, result.failure_reason
    assert world.lines(run.streams[0]) == ["tinypkg 42"]
    assert json.loads(world.archive("results/pip-2/output/model.tar.gz")["package.json"])["prefix"] == str(
        venv
    )


def test_requirements_install_once_per_job_for_all_its_instances(world, tmp_path):
    wheels = tiny_wheel(tmp_path / "wheels").parent
    files = {"requirements.txt": f"--no-index\n--find-links {wheels}\ntinypkg==0.1\n"}
    job = world.job("pip-two", "uses_package.py", files=files, count=2)
    run, result = world.run(job, timeout=60)
    assert result.exit_code == 0, result.failure_reason
    streams = [world.lines(stream) for stream in run.streams]
    installs = [any("Successfully installed tinypkg-0.1" in line for line in lines) for lines in streams]
    assert sorted(installs) == [False, True]  # one instance installed, the other found it done
    assert all(lines[-1] == "tinypkg 42" for lines in streams)
    info = json.loads(world.archive("results/pip-two/output/model.tar.gz")["package.json"])
    assert info["prefix"] == str(world.tmp / "runtime" / "instances" / "jobs" / "pip-two" / "venv")


def test_stop_during_pip_install(world):
    with socket.socket() as silent:  # an index that accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        index = "http://127.0.0.1:%d/simple" % silent.getsockname()[1]
        files = {"requirements.txt": f"--index-url {index}\nsomething-remote==1.0\n"}
        job = world.job("pipstop", "uses_package.py", files=files)
        run = world.executor.start(job, START)
        wait_for_line(world, f"pipstop/algo-1-{EPOCH}", f"Looking in indexes: {index}")
        run.stop()
        result = run.wait(120)
    assert result.exit_code == 143
    assert result.failure_reason.startswith("InstallRequirementsError:")
    assert world.has("out-bucket", "results/pipstop/output/model.tar.gz")  # stopped: saved as is
    assert not any("tinypkg" in line for line in world.lines(run.streams[0]))


def test_failing_pip_install_fails_the_run(world, tmp_path):
    files = {"requirements.txt": "--no-index\nno-such-package-anywhere==9.9\n"}
    job = world.job("badpip", "uses_package.py", files=files)
    run, result = world.run(job, timeout=60)
    assert result.exit_code != 0
    reason = result.failure_reason
    assert reason.startswith("InstallRequirementsError: pip install -r requirements.txt exited with code")
    assert "no-such-package-anywhere" in reason and len(reason) <= 1024
    assert not any("tinypkg" in line for line in world.lines(run.streams[0]))
