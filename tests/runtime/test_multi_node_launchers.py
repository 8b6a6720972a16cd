"""The toolkit's launchers, really run: mpirun over the instances (mpi4py), torchrun with gloo."""

from __future__ import annotations

import json

import pytest

from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.runtime.launchers import mpirun, runner_of, torchrun
from tests.runtime.world import torch_master_port

pytestmark = pytest.mark.skipif(views.unavailable() is not None, reason="no views on this machine")
MPI = {"sagemaker_mpi_enabled": True, "sagemaker_mpi_num_of_processes_per_host": 2}


def tagged(world, stream: str, word: str) -> list[dict]:
    """The JSON each rank printed after ``word`` (mpirun tags its lines ``[1,r]<stdout>:``)."""
    lines = world.lines(stream)
    return [
        json.loads(line.split(word + " ", 1)[1])
        for line in lines
        if f"{word} [" in line or f"{word} {{" in line
    ]


def test_an_mpi_job_runs_mpirun_on_the_leader_over_every_instance(world):
    job = world.job("mpi", "mpi_allreduce.py", count=2, hyperparameters=MPI)
    run, result = world.run(job, timeout=300)
    assert result.exit_code == 0, result.failure_reason
    leader, worker = run.streams
    lines = world.lines(leader)  # every rank's output reaches the leader's mpirun, tagged
    assert all(any(f"rank-{r}-of-4" in line for line in lines) for r in range(4)), lines
    found = tagged(world, leader, "mpi")
    assert len(found) == 1, "\n".join(lines)
    (ranks,) = found
    assert [(r["rank"], r["sum"], r["host"]) for r in ranks] == [
        (0, 10, "algo-1"), (1, 10, "algo-1"), (2, 10, "algo-2"), (3, 10, "algo-2")
    ]  # fmt: skip
    assert world.lines(worker) == ["Starting MPI run as worker node.", "MPI process finished."]
    model = world.archive("results/mpi/output/model.tar.gz")
    assert len(json.loads(model["mpi.json"])) == 4


def test_a_failing_rank_fails_the_mpi_job_with_its_reason(world):
    files = {
        "boom.py": "import sys\nfrom mpi4py import MPI\nif MPI.COMM_WORLD.Get_rank() == 3:\n"
        "    sys.exit('rank 3 gives up')\nMPI.COMM_WORLD.Barrier()\n"
    }
    job = world.job("mpifail", "boom.py", files=files, count=2, hyperparameters=MPI)
    run, result = world.run(job, timeout=300)
    assert result.exit_code != 0
    assert "rank 3 gives up" in world.lines(run.streams[0])[-40:].__str__()
    assert result.failure_reason


def test_a_torch_distributed_job_all_reduces_over_gloo_across_instances(world):
    hps = {"sagemaker_torch_distributed_enabled": True, "sagemaker_mpi_num_of_processes_per_host": 2}
    job = world.job("torchrun", "torch_allreduce.py", count=2, hyperparameters=hps)
    with torch_master_port():
        run, result = world.run(job, timeout=600)
    assert result.exit_code == 0, result.failure_reason
    ranks = [r for stream in run.streams for r in tagged(world, stream, "torch")]

    assert sorted(r["rank"] for r in ranks) == [0, 1, 2, 3]
    assert all(r["sum"] == 10.0 and r["master"] == "algo-1" for r in ranks)
    assert ranks[0]["hosts"] == ["algo-1", "algo-1", "algo-2", "algo-2"]


def test_a_four_instance_torchrun_job_all_reduces_across_all_of_them(world):
    job = world.job(
        "torchrun4",
        "torch_allreduce.py",
        count=4,
        hyperparameters={"sagemaker_torch_distributed_enabled": True},
    )
    with torch_master_port():
        run, result = world.run(job, timeout=600)
    assert result.exit_code == 0, result.failure_reason
    ranks = sorted(
        (r for stream in run.streams for r in tagged(world, stream, "torch")), key=lambda r: r["rank"]
    )
    assert [(r["rank"], r["size"], r["sum"]) for r in ranks] == [(i, 4, 10.0) for i in range(4)]
    assert ranks[0]["hosts"] == ["algo-1", "algo-2", "algo-3", "algo-4"]


# -- the commands, as the toolkit builds them ----------------------------------------------------
def training_env(host="algo-2", params=None, hosts=("algo-1", "algo-2")) -> dict:
    return {
        "additional_framework_parameters": params or {},
        "current_host": host,
        "current_instance_group": "homogeneousCluster",
        "current_instance_type": "ml.p5.48xlarge",
        "distribution_instance_groups": ["homogeneousCluster"],
        "distribution_hosts": list(hosts),
        "master_hostname": hosts[0],
        "network_interface_name": "eth0",
    }


def test_torchrun_gets_nodes_processes_rank_and_the_master_as_the_toolkit_gives_them():
    env = training_env(params={"sagemaker_torch_distributed_enabled": True})
    assert runner_of(env) == "TorchDistributed"
    assert torchrun(env, "py", ["train.py", "--lr", "0.1"]) == [
        "py", "-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "1",
        "--master_addr", "algo-1", "--master_port", "7777", "--node_rank", "1", "train.py", "--lr", "0.1",
    ]  # fmt: skip
    single = training_env("algo-1", hosts=("algo-1",))
    assert "--master_addr" not in torchrun(single, "py", ["train.py"])


def test_mpirun_spans_the_hosts_forwards_the_sagemaker_variables_and_custom_options(tmp_path):
    params = {**MPI, "sagemaker_mpi_custom_mpi_options": "--NCCL_DEBUG WARN -x FOO=1"}
    env = {"SM_HOSTS": "[]", "PATH": "/bin", "OTHER": "x"}
    argv = mpirun(training_env("algo-1", params), "MPI", "py", ["train.py"], env, tmp_path / "agent")
    assert argv[:6] == ["mpirun", "--host", "algo-1:2,algo-2:2", "-np", "4", "--allow-run-as-root"]
    assert ["-x", "NCCL_DEBUG=WARN"] == argv[
        argv.index("NCCL_DEBUG=WARN") - 1 : argv.index("NCCL_DEBUG=WARN") + 1
    ]
    assert ["-x", "FOO=1"] == argv[argv.index("FOO=1") - 1 : argv.index("FOO=1") + 1]
    assert ["-x", "SM_HOSTS"] == argv[argv.index("SM_HOSTS") - 1 : argv.index("SM_HOSTS") + 1]
    assert "OTHER" not in argv and "LD_LIBRARY_PATH" not in argv
    assert argv[-4:] == ["py", "-m", "mpi4py", "train.py"]


def test_an_instance_group_outside_distribution_runs_the_plain_entry_point():
    env = training_env(params=MPI)
    env["current_instance_group"] = "data-loaders"
    assert runner_of(env) == "Process"
