"""The toolkit's launchers for a script-mode job: what each instance starts, by the job's distribution.

As the PyTorch training toolkit chooses its runner (``training.py``, then the
training toolkit's ``runner.py``), for an instance whose group is under
distribution (``distribution_instance_groups``):

- ``sagemaker_mpi_enabled`` — MPI: the leader (``master_hostname``) runs
  ``mpirun`` over the distribution hosts (``host:processes_per_host``), each
  rank ``python -m mpi4py <entry point> <args>`` with the SageMaker variables
  forwarded (``-x``); the other instances start nothing and wait for the
  leader's end (the toolkit's ``WorkerRunner``);
- ``sagemaker_pytorch_ddp_enabled`` (or ``sagemaker_distributed_dataparallel_enabled``)
  — SMDataParallel: the same, with that runner's ``mpirun`` options;
- ``sagemaker_torch_distributed_enabled`` — ``torchrun --nnodes N
  --nproc_per_node P [--master_addr <leader> --master_port 7777 --node_rank i]``
  on every instance;
- otherwise the entry point itself, on every instance.

Local differences (see docs/local-runtime.md, "Multi-instance jobs"):
``mpirun`` reaches the other instances through a local agent (no ``sshd``)
and names the loopback interface where the toolkit names ``eth0``;
``torchrun`` is ``python -m torch.distributed.run`` of the job's Python.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Mapping

import attrs

from sagemaker_plans_local.runtime.network import LOOPBACK_INTERFACE
from sagemaker_plans_local.runtime.toolkit import decode, script_mode

PROCESS, TORCH_DISTRIBUTED, MPI, SMDATAPARALLEL = "Process", "TorchDistributed", "MPI", "SMDataParallel"
#: The toolkit's runner flags, in the order it tests them.
RUNNER_FLAGS = (
    ("sagemaker_mpi_enabled", MPI),
    ("sagemaker_pytorch_ddp_enabled", SMDATAPARALLEL),
    ("sagemaker_torch_distributed_enabled", TORCH_DISTRIBUTED),
    ("sagemaker_distributed_dataparallel_enabled", SMDATAPARALLEL),
)
PROCESSES_PER_HOST = "sagemaker_mpi_num_of_processes_per_host"
NUM_PROCESSES = "sagemaker_mpi_num_processes"
CUSTOM_MPI_OPTIONS = "sagemaker_mpi_custom_mpi_options"
SMDATAPARALLEL_OPTIONS = "sagemaker_distributed_dataparallel_custom_mpi_options"
#: Both toolkits' master port (torch_distributed.MASTER_PORT, the PyTorch toolkit's MASTER_PORT).
MASTER_PORT = "7777"
SMDATAPARALLEL_SERVER_PORT = 7592


@attrs.frozen
class Launch:
    """What one instance starts: ``argv`` (None: start nothing, wait for the leader) and more env."""

    runner: str
    argv: list[str] | None
    env: dict[str, str] = attrs.field(factory=dict)


def runner_of(training_env: Mapping) -> str:
    """The runner the toolkit picks for this instance."""
    params = training_env["additional_framework_parameters"]
    if training_env["current_instance_group"] not in training_env["distribution_instance_groups"]:
        return PROCESS
    return next((runner for flag, runner in RUNNER_FLAGS if params.get(flag)), PROCESS)


def pytorch_image(spec: Mapping) -> bool:
    """Whether the job's image is a PyTorch one (its toolkit sets the master's address and port)."""
    image = str((spec.get("AlgorithmSpecification") or {}).get("TrainingImage") or "")
    return "pytorch" in image.rsplit("/", 1)[-1].lower()


def pytorch_environment(training_env: Mapping) -> dict[str, str]:
    """What the PyTorch toolkit sets before any runner: master address and port, NCCL's knobs."""
    return {
        "MASTER_ADDR": str(training_env["master_hostname"]),
        "MASTER_PORT": MASTER_PORT,
        "NCCL_SOCKET_IFNAME": str(training_env["network_interface_name"]),
        "NCCL_IB_DISABLE": "1",
        "NCCL_DEBUG": "WARN",
    }


def launch(
    training_env: Mapping, python: str, script: list[str], env: Mapping[str, str], agent: Path
) -> Launch:
    """The instance's launch; ``script`` is ``[entry point, *args]``, ``env`` the toolkit's variables."""
    runner = runner_of(training_env)
    if runner == PROCESS:
        return Launch(PROCESS, [python, *script])
    if runner == TORCH_DISTRIBUTED:
        return Launch(runner, torchrun(training_env, python, script), _nccl(training_env))
    if training_env["current_host"] != training_env["master_hostname"]:
        return Launch(runner, None)
    return Launch(runner, mpirun(training_env, runner, python, script, env, agent))


def _nccl(training_env: Mapping) -> dict[str, str]:
    return {"NCCL_SOCKET_IFNAME": str(training_env["network_interface_name"]), "NCCL_PROTO": "simple"}


def processes_per_host(training_env: Mapping) -> int:
    """``sagemaker_mpi_num_of_processes_per_host``, else one per GPU (none here): 1."""
    return int(training_env["additional_framework_parameters"].get(PROCESSES_PER_HOST) or 1)


def processes_of(spec: Mapping, host_count: int) -> tuple[int, int]:
    """``(processes, per host)`` a script-mode job's launchers start: ``per host × hosts`` with a
    distributed launcher (MPI: ``sagemaker_mpi_num_processes`` when given), else one per host."""
    hps = {name: decode(value) for name, value in (spec.get("HyperParameters") or {}).items()}
    runner = next((runner for flag, runner in RUNNER_FLAGS if hps.get(flag)), PROCESS)
    if runner == PROCESS or script_mode(spec) is None:
        return host_count, 1
    per_host = int(hps.get(PROCESSES_PER_HOST) or 1)
    if runner == MPI and hps.get(NUM_PROCESSES):
        return int(hps[NUM_PROCESSES]), 1
    return per_host * host_count, per_host


def torchrun(training_env: Mapping, python: str, script: list[str]) -> list[str]:
    """The toolkit's ``TorchDistributedRunner`` command (``torchrun`` as this Python's module)."""
    hosts = list(training_env["distribution_hosts"])
    argv = [python, "-m", "torch.distributed.run", "--nnodes", str(len(hosts))]
    argv += ["--nproc_per_node", str(processes_per_host(training_env))]
    if len(hosts) > 1:
        argv += ["--master_addr", str(training_env["master_hostname"]), "--master_port", MASTER_PORT]
        argv += ["--node_rank", str(hosts.index(training_env["current_host"]))]
    return [*argv, *script]


def mpirun(
    training_env: Mapping, runner: str, python: str, script: list[str], env: Mapping[str, str], agent: Path
) -> list[str]:
    """The leader's ``mpirun``: the toolkit's ``MasterRunner`` (or ``SMDataParallelRunner``) options."""
    params = training_env["additional_framework_parameters"]
    hosts = list(training_env["distribution_hosts"])
    per_host = processes_per_host(training_env)
    smddp = runner == SMDATAPARALLEL
    spread = len(hosts) > 1 if smddp else per_host > 1
    host_list = [f"{h}:{per_host}" for h in hosts] if spread else hosts
    count = per_host * len(hosts) if smddp else int(params.get(NUM_PROCESSES) or per_host * len(hosts))
    debug, extra = _custom_options(
        str(params.get(SMDATAPARALLEL_OPTIONS if smddp else CUSTOM_MPI_OPTIONS) or "")
    )
    interface = LOOPBACK_INTERFACE
    argv = ["mpirun", "--host", ",".join(host_list), "-np", str(count), "--allow-run-as-root"]
    argv += ["--tag-output", "--oversubscribe"] if smddp else ["--display-map", "--tag-output"]
    argv += ["-mca", "btl_tcp_if_include", interface, "-mca", "oob_tcp_if_include", interface]
    argv += ["-mca", "plm_rsh_no_tree_spawn", "1", "-mca", "plm_rsh_agent", str(agent)]
    argv += [] if smddp else ["-bind-to", "none", "-map-by", "slot"]
    argv += ["-mca", "pml", "ob1", "-mca", "btl", "^openib", "-mca", "orte_abort_on_non_zero_status", "1"]
    argv += ["-mca", "btl_vader_single_copy_mechanism", "none"]
    argv += ["-mca", "plm_rsh_num_concurrent", str(len(hosts))] if smddp else ["-x", "NCCL_MIN_NRINGS=4"]
    argv += ["-x", f"NCCL_SOCKET_IFNAME={interface}", "-x", f"NCCL_DEBUG={debug}"]
    argv += [word for name in ("LD_LIBRARY_PATH", "PATH") if name in env for word in ("-x", name)]
    if smddp:
        argv += _smdataparallel(training_env, len(hosts))
    argv += extra
    forwarded = [] if smddp else [name for name in env if name.startswith("SM_")]
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", *forwarded):
        if name in env:
            argv += ["-x", name]
    return [*argv, python, "-m", "mpi4py", *script]


def _smdataparallel(training_env: Mapping, host_count: int) -> list[str]:
    mode = "SMDATAPARALLEL_USE_HOMOGENEOUS=1" if host_count > 1 else "SMDATAPARALLEL_USE_SINGLENODE=1"
    argv = ["-x", mode, "-x", "FI_PROVIDER=efa", "-x", "RDMAV_FORK_SAFE=1"]
    if host_count > 1:
        argv += ["-x", f"SMDATAPARALLEL_SERVER_ADDR={training_env['master_hostname']}"]
        argv += ["-x", f"SMDATAPARALLEL_SERVER_PORT={SMDATAPARALLEL_SERVER_PORT}"]
        argv += ["-x", f"SAGEMAKER_INSTANCE_TYPE={training_env['current_instance_type']}"]
    return argv


def _custom_options(text: str) -> tuple[str, list[str]]:
    """The toolkit's ``_parse_custom_mpi_options``: ``--NCCL_DEBUG X`` (default INFO), the rest as is."""
    words, debug, rest = shlex.split(text), "INFO", []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--NCCL_DEBUG" and i + 1 < len(words):
            debug, i = words[i + 1], i + 2
            continue
        if word.startswith("--NCCL_DEBUG="):
            debug = word.split("=", 1)[1]
        else:
            rest.append(word)
        i += 1
    return debug, rest


def agent_script(namespace_program: list[str] | None) -> str:
    """The ``plm_rsh_agent`` mpirun starts ``orted`` with: ``agent <host> <command...>``, run on
    this machine as that host (its hostname, in the run's view), in place of ``ssh``."""
    prefix = " ".join(shlex.quote(p) for p in namespace_program) if namespace_program else ""
    run = f'{prefix} --hostname "$host" -- /bin/sh -c "$*"' if prefix else '/bin/sh -c "$*"'
    return (
        "#!/bin/sh\n"
        "# sagemaker-plans-local: mpirun's remote shell; every instance is on this machine\n"
        'while [ "${1#-}" != "$1" ]; do shift; done\n'
        'host="$1"; shift\n'
        f"exec {run}\n"
    )
