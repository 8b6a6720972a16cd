"""The SageMaker training contract for one instance: config files, environment, command line.

What a process finds on a SageMaker training instance, reproduced on this
machine. Every job gets the config files as SageMaker writes them and the
platform's variables. A script-mode job gets what the
sagemaker-training-toolkit gives a script (``SM_*`` variables and command
line; a local directory stands for ``/opt/ml`` and paths are mapped onto
it); a ``ContainerEntrypoint`` job gets its command as given, run where the
instance's tree *is* ``/opt/ml`` (:mod:`.namespace`), and no ``SM_*``.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Mapping

import attrs

from sagemaker_plans_local.runtime.paths import OPT_ML, WARM_POOL_CACHE, InstanceTree, PathMapper
from sagemaker_plans_local.runtime.toolkit import (
    DISTRIBUTION_FLAGS,
    HOMOGENEOUS,
    INFO,
    JOB_NAME_PARAM,
    LOG_LEVEL,
    REGION_PARAM,
    TOOLKIT_HYPERPARAMETERS,
    decode,
    env_value,
    script_mode,
    split_hyperparameters,
    to_cmd_args,
)

LOG_GROUP = "/aws/sagemaker/TrainingJobs"
#: Variables of this machine's environment no job inherits: the platform sets its own.
PLATFORM_PREFIXES = ("SM_", "SAGEMAKER_")
PLATFORM_NAMES = ("TRAINING_JOB_NAME", "TRAINING_JOB_ARN", "CURRENT_HOST")
#: Not inherited by a container: it runs as root, and ``getpass.getuser()`` must say so.
LOGIN_NAMES = ("USER", "LOGNAME", "LNAME", "USERNAME")
#: A container's working directory (*chosen*: the instance's own, never this machine's ``/``).
CONTAINER_CWD = f"{OPT_ML}/code"


def container_command(spec: Mapping) -> list[str] | None:
    """``ContainerEntrypoint`` + ``ContainerArguments`` of a job that has an entry point; else None."""
    algorithm = spec.get("AlgorithmSpecification") or {}
    entrypoint = algorithm.get("ContainerEntrypoint")
    if not entrypoint:
        return None
    return [*entrypoint, *(algorithm.get("ContainerArguments") or [])]


def runnable(spec: Mapping) -> bool:
    """Whether the job's code runs here: a container entry point, or script mode."""
    return container_command(spec) is not None or script_mode(spec) is not None


def inherited(base: Mapping[str, str], also: tuple[str, ...] = ()) -> dict[str, str]:
    """``base`` without the platform's variables (and without ``also``)."""
    return {
        k: v
        for k, v in base.items()
        if not k.startswith(PLATFORM_PREFIXES) and k not in PLATFORM_NAMES and k not in also
    }


# -- hosts -----------------------------------------------------------------------------
@attrs.frozen
class Host:
    name: str  # algo-<i>
    instance_type: str
    group: str


def hosts_of(resource_config: Mapping) -> list[Host]:
    """The job's instances, ``algo-1..algo-N`` in order (instance groups one after the other)."""
    groups = resource_config.get("InstanceGroups")
    layout = (
        [(g["InstanceGroupName"], g["InstanceType"], g["InstanceCount"]) for g in groups]
        if groups
        else [
            (
                HOMOGENEOUS,
                resource_config.get("InstanceType", "local"),
                resource_config.get("InstanceCount", 1),
            )
        ]
    )
    hosts: list[Host] = []
    for group, instance_type, count in layout:
        for _ in range(count):
            hosts.append(Host(f"algo-{len(hosts) + 1}", instance_type, group))
    return hosts


# -- the contract of one instance ----------------------------------------------------------
@attrs.frozen
class JobFacts:
    """What the contract needs to know about the job, independent of the instance."""

    name: str
    arn: str
    spec: Mapping
    cache_dir: Path | None
    capacity_block_expiration: datetime | None

    @property
    def region(self) -> str:
        parts = self.arn.split(":")
        return parts[3] if len(parts) > 3 else ""


class InstanceContract:
    """The config files, environment and command line of one instance of a job.

    ``mapper`` maps ``/opt/ml`` paths onto the instance's tree for this
    machine's side (checkpoints); what the process reads is mapped too for a
    script-mode job, and left as given for a container, which sees the tree at
    ``/opt/ml``.
    """

    @staticmethod
    def _warm_pool_cache(job: JobFacts, host: Host, hosts: list[Host]) -> Path | None:
        """The chain's cache; each instance of a multi-instance pool has its own part of it,
        as each SageMaker instance has its own cache volume."""
        if job.cache_dir is None:
            return None
        if len(hosts) == 1:
            return Path(job.cache_dir)
        own = Path(job.cache_dir) / host.name
        own.mkdir(parents=True, exist_ok=True)
        return own

    def __init__(self, job: JobFacts, host: Host, hosts: list[Host], tree: InstanceTree) -> None:
        self.job = job
        self.host = host
        self.hosts = hosts
        self.tree = tree
        self.warm_pool_cache = self._warm_pool_cache(job, host, hosts)
        cache = self.warm_pool_cache if self.warm_pool_cache is not None else tree.own_warm_pool_cache
        self.mapper = PathMapper(tree.opt_ml, Path(cache))
        spec = job.spec
        self.command = container_command(spec)
        seen = self.mapper.text if self.command is None else str
        self.raw_hyperparameters = {k: seen(str(v)) for k, v in (spec.get("HyperParameters") or {}).items()}
        decoded = {k: decode(v) for k, v in self.raw_hyperparameters.items()}
        self.hyperparameters, self.sagemaker_hyperparameters = split_hyperparameters(decoded)
        program, submit = script_mode(spec) or ("", "")
        self.entry_point = program
        self.submit_directory = submit
        self.channels = {c["ChannelName"]: c for c in spec.get("InputDataConfig") or []}

    # -- files -----------------------------------------------------------------------
    def resource_config(self) -> dict:
        groups: dict[str, dict] = {}
        for host in self.hosts:
            group = groups.setdefault(
                host.group,
                {"instance_group_name": host.group, "instance_type": host.instance_type, "hosts": []},
            )
            group["hosts"].append(host.name)
        return {
            "current_host": self.host.name,
            "current_instance_type": self.host.instance_type,
            "current_group_name": self.host.group,
            "hosts": [h.name for h in self.hosts],
            "instance_groups": list(groups.values()),
            "network_interface_name": "eth0",
        }

    def input_data_config(self) -> dict:
        default_mode = (self.job.spec.get("AlgorithmSpecification") or {}).get("TrainingInputMode", "File")
        config = {}
        for name, channel in self.channels.items():
            s3 = (channel.get("DataSource") or {}).get("S3DataSource") or {}
            entry = {
                "TrainingInputMode": channel.get("InputMode") or default_mode,
                "S3DistributionType": s3.get("S3DataDistributionType", "FullyReplicated"),
                "RecordWrapperType": channel.get("RecordWrapperType", "None"),
            }
            for key in ("ContentType", "CompressionType"):
                if channel.get(key):
                    entry[key] = channel[key]
            config[name] = entry
        return config

    def write_config_files(self) -> None:
        files = {
            "hyperparameters.json": self.raw_hyperparameters,
            "resourceconfig.json": self.resource_config(),
            "inputdataconfig.json": self.input_data_config(),
        }
        for name, content in files.items():
            (self.tree.input_config / name).write_text(json.dumps(content))

    # -- local paths ---------------------------------------------------------------------
    def checkpoint_dir(self) -> Path | None:
        config = self.job.spec.get("CheckpointConfig")
        if not config:
            return None
        return self.mapper.path(config.get("LocalPath") or f"{OPT_ML}/checkpoints")

    # -- environment -----------------------------------------------------------------------
    def training_env(self) -> dict:
        """The toolkit's ``Environment`` as a dict (what ``SM_TRAINING_ENV`` holds)."""
        tree = self.tree
        sm = self.sagemaker_hyperparameters
        resource_config = self.resource_config()
        framework_params = {k: v for k, v in sm.items() if k not in TOOLKIT_HYPERPARAMETERS}
        groups = resource_config["instance_groups"]
        group_names = [g["instance_group_name"] for g in groups]
        distribution_groups, distribution_hosts = self._distribution(groups, framework_params)
        hosts = resource_config["hosts"]
        master = distribution_hosts[0] if distribution_hosts else hosts[0]
        program = self.entry_point
        return {
            "additional_framework_parameters": framework_params,
            "channel_input_dirs": {c: str(tree.channel(c)) for c in self.channels},
            "current_host": self.host.name,
            "current_instance_group": self.host.group,
            "current_instance_group_hosts": next(
                g["hosts"] for g in groups if g["instance_group_name"] == self.host.group
            ),
            "current_instance_type": self.host.instance_type,
            "distribution_hosts": distribution_hosts,
            "distribution_instance_groups": distribution_groups,
            "framework_module": None,
            "hosts": hosts,
            "hyperparameters": self.hyperparameters,
            "input_config_dir": str(tree.input_config),
            "input_data_config": self.input_data_config(),
            "input_dir": str(tree.input),
            "instance_groups": group_names,
            "instance_groups_dict": {g["instance_group_name"]: g for g in groups},
            "is_hetero": len(groups) > 1,
            "is_master": self.host.name == master,
            "is_modelparallel_enabled": None,
            "job_name": self.job.name,
            "log_level": sm.get(LOG_LEVEL, INFO),
            "master_hostname": master,
            "model_dir": str(tree.model),
            "module_dir": self.submit_directory,
            "module_name": program[:-3] if program.endswith(".py") else program,
            "network_interface_name": resource_config["network_interface_name"],
            "num_cpus": os.cpu_count() or 1,
            "num_gpus": 0,
            "output_data_dir": str(tree.output_data),
            "output_dir": str(tree.output),
            "output_intermediate_dir": str(tree.output_intermediate),
            "resource_config": resource_config,
            "user_entry_point": program,
        }

    def _distribution(self, groups: list[dict], framework_params: dict) -> tuple[list[str], list[str]]:
        """The instance groups a distributed run spans, and their hosts."""
        distribution_groups = self.sagemaker_hyperparameters.get("sagemaker_distribution_instance_groups")
        if distribution_groups is None:
            distribution_groups = (
                [self.host.group] if any(framework_params.get(f) for f in DISTRIBUTION_FLAGS) else []
            )
        distribution_hosts = [
            h for g in groups if g["instance_group_name"] in distribution_groups for h in g["hosts"]
        ]
        return distribution_groups, distribution_hosts

    def sm_variables(self) -> dict[str, str]:
        """The toolkit's ``Environment.to_env_vars()``: every ``SM_*`` variable."""
        env = self.training_env()
        values = {
            "hosts": env["hosts"],
            "network_interface_name": env["network_interface_name"],
            "hps": env["hyperparameters"],
            "user_entry_point": env["user_entry_point"],
            "framework_params": env["additional_framework_parameters"],
            "resource_config": env["resource_config"],
            "input_data_config": env["input_data_config"],
            "output_data_dir": env["output_data_dir"],
            "channels": sorted(env["channel_input_dirs"]),
            "current_host": env["current_host"],
            "current_instance_type": env["current_instance_type"],
            "current_instance_group": env["current_instance_group"],
            "current_instance_group_hosts": env["current_instance_group_hosts"],
            "instance_groups": env["instance_groups"],
            "instance_groups_dict": env["instance_groups_dict"],
            "distribution_instance_groups": env["distribution_instance_groups"],
            "is_hetero": env["is_hetero"],
            "module_name": env["module_name"],
            "log_level": env["log_level"],
            "framework_module": env["framework_module"],
            "input_dir": env["input_dir"],
            "input_config_dir": env["input_config_dir"],
            "output_dir": env["output_dir"],
            "num_cpus": env["num_cpus"],
            "num_gpus": env["num_gpus"],
            "model_dir": env["model_dir"],
            "module_dir": env["module_dir"],
            "training_env": env,
            "user_args": self.user_args(),
            "output_intermediate_dir": env["output_intermediate_dir"],
        }
        for channel, path in env["channel_input_dirs"].items():
            values["channel_%s" % channel] = path
        for key, value in env["hyperparameters"].items():
            values["hp_%s" % key] = value
        return {"SM_%s" % str(k).upper(): env_value(v) for k, v in values.items()}

    def user_args(self) -> list[str]:
        return to_cmd_args(self.hyperparameters)

    def platform_variables(self, warm_pool_cache: str) -> dict[str, str]:
        """What SageMaker sets in every container: the job, its region, the cache, the block's end."""
        job = self.job
        env = {
            "TRAINING_JOB_NAME": job.name,
            "TRAINING_JOB_ARN": job.arn,
            "AWS_REGION": job.region,
            "AWS_DEFAULT_REGION": job.region,
        }
        if self.warm_pool_cache is not None:
            env["SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY"] = warm_pool_cache
        if job.capacity_block_expiration is not None:
            env["SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP"] = str(
                int(job.capacity_block_expiration.timestamp())
            )
        return env

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The script's whole environment: ``base`` (this machine's), the platform's and the user's."""
        job = self.job
        env = inherited(base)
        env["PYTHONUNBUFFERED"] = "1"  # lines reach the log as they are printed
        for name, value in (job.spec.get("Environment") or {}).items():
            env[name] = self.mapper.text(str(value))
        env.update(self.platform_variables(str(self.warm_pool_cache)))
        env.update(
            {
                "CURRENT_HOST": self.host.name,
                "SAGEMAKER_JOB_NAME": env_value(self.sagemaker_hyperparameters.get(JOB_NAME_PARAM, "")),
                "SAGEMAKER_REGION": env_value(self.sagemaker_hyperparameters.get(REGION_PARAM) or job.region),
            }
        )
        env.update(self.sm_variables())
        inherited_path = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join(
            [str(self.tree.code)] + ([inherited_path] if inherited_path else [])
        )
        return env

    def container_environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """A ``ContainerEntrypoint`` job's environment: the image's (``base``), the user's, the platform's."""
        env = inherited(base, LOGIN_NAMES)
        env["PYTHONUNBUFFERED"] = "1"
        env.update({name: str(value) for name, value in (self.job.spec.get("Environment") or {}).items()})
        env.update(self.platform_variables(WARM_POOL_CACHE))
        return env

    def argv(self, python: str) -> list[str]:
        return [python, self.entry_point, *self.user_args()]


def log_stream(job_name: str, host: str, at: datetime) -> str:
    """The CloudWatch stream of one instance: ``<job>/algo-<i>-<epoch seconds of the start>``."""
    return f"{job_name}/{host}-{int(at.timestamp())}"
