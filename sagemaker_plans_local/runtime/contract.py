"""The SageMaker training contract for one instance: its ``/opt/ml`` tree, config files and environment.

What a script finds on a SageMaker training instance, reproduced on this
machine: a local directory stands for ``/opt/ml``; the config files are
written as SageMaker writes them; the ``SM_*`` variables and the command line
are those the sagemaker-training-toolkit gives a script (same names, same
value encoding, same argument order).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

import attrs

OPT_ML = "/opt/ml"
WARM_POOL_CACHE = "/opt/ml/sagemaker/warmpoolcache"
LOG_GROUP = "/aws/sagemaker/TrainingJobs"
PROGRAM = "sagemaker_program"
SUBMIT_DIRECTORY = "sagemaker_submit_directory"
LOG_LEVEL = "sagemaker_container_log_level"
JOB_NAME_PARAM = "sagemaker_job_name"
REGION_PARAM = "sagemaker_region"
SAGEMAKER_PREFIX = "sagemaker_"
#: The toolkit's own hyperparameters (params.SAGEMAKER_HYPERPARAMETERS): not framework params.
TOOLKIT_HYPERPARAMETERS = (
    PROGRAM, SUBMIT_DIRECTORY, "sagemaker_enable_cloudwatch_metrics", REGION_PARAM, LOG_LEVEL,
    JOB_NAME_PARAM, "default_user_module_name", "_tuning_objective_metric", "sagemaker_s3_output",
)
#: Framework flags that put the current instance group under distribution (toolkit rule).
DISTRIBUTION_FLAGS = (
    "sagemaker_mpi_enabled", "sagemaker_parameter_server_enabled",
    "sagemaker_distributed_dataparallel_enabled", "sagemaker_pytorch_ddp_enabled",
    "sagemaker_pytorch_xla_multi_worker_enabled", "sagemaker_multi_worker_mirrored_strategy_enabled",
)
HOMOGENEOUS = "homogeneousCluster"
INFO = 20  # logging.INFO, the toolkit's default log level


# -- hyperparameters -------------------------------------------------------------
def decode(value: Any) -> Any:
    """A hyperparameter's value as the toolkit reads it: JSON if it parses, else the raw string."""
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


def script_mode(spec: Mapping) -> tuple[str, str] | None:
    """``(entry point, submit directory)`` of a script-mode job, decoded; None otherwise."""
    hps = spec.get("HyperParameters") or {}
    if PROGRAM not in hps or SUBMIT_DIRECTORY not in hps:
        return None
    return str(decode(hps[PROGRAM])), str(decode(hps[SUBMIT_DIRECTORY]))


def split_hyperparameters(decoded: Mapping[str, Any]) -> tuple[dict, dict]:
    """``(user hyperparameters, sagemaker_* ones)`` as the toolkit splits them."""
    sagemaker = {k: v for k, v in decoded.items()
                 if k in TOOLKIT_HYPERPARAMETERS or k.startswith(SAGEMAKER_PREFIX)}
    user = {k: v for k, v in decoded.items() if k not in sagemaker}
    return user, sagemaker


def _text(value: Any) -> str:
    """The toolkit's ``mapping._decode``: bytes as latin-1, None as "", anything else ``str``."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("latin1")
    return str(value)


def to_cmd_args(hyperparameters: Mapping[str, Any]) -> list[str]:
    """The toolkit's ``mapping.to_cmd_args``: sorted keys, ``--name value`` (``-n`` for one letter)."""
    args: list[str] = []
    for key in sorted(hyperparameters):
        name = _text(key)
        args.append(("--%s" % name if len(name) > 1 else "-%s" % name) if name else "")
        value = hyperparameters[key]
        if hasattr(value, "items"):
            args.append(",".join("%s=%s" % (k, v) for k, v in sorted(value.items())))
        else:
            args.append(_text(value))
    return args


def env_value(value: Any) -> str:
    """The toolkit's ``mapping.to_env_vars`` value encoding."""
    if isinstance(value, bytes):
        return value.decode("latin1")
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


# -- /opt/ml paths -----------------------------------------------------------------
_OPT_ML = re.compile(r"(?<![\w./~-])/opt/ml(/sagemaker/warmpoolcache)?(?=/|$|[^\w.~-])")


@attrs.frozen
class PathMapper:
    """Rewrites ``/opt/ml`` paths onto an instance's local tree.

    ``/opt/ml/sagemaker/warmpoolcache`` goes to the warm-pool chain's cache
    directory. A path is rewritten where it starts a string or follows a
    character that cannot be part of a path (``:``, ``=``, a space, a quote...),
    so ``PATH``-style lists and JSON-encoded strings are mapped too, and
    ``s3://bucket/opt/ml`` is not.
    """

    opt_ml: Path
    warm_pool_cache: Path

    def text(self, value: str) -> str:
        def replace(match: re.Match) -> str:
            return str(self.warm_pool_cache) if match.group(1) else str(self.opt_ml)
        return _OPT_ML.sub(replace, value)

    def value(self, value: Any) -> Any:
        """Map every string inside a decoded (JSON) value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value

    def path(self, value: str) -> Path:
        return Path(self.text(value))


# -- the instance tree --------------------------------------------------------------
@attrs.frozen
class InstanceTree:
    """One instance's directory: ``opt/ml`` (the contract's tree), ``venv`` and scratch space."""

    root: Path

    @property
    def opt_ml(self) -> Path:
        return self.root / "opt" / "ml"

    @property
    def input(self) -> Path:
        return self.opt_ml / "input"

    @property
    def input_config(self) -> Path:
        return self.input / "config"

    @property
    def input_data(self) -> Path:
        return self.input / "data"

    @property
    def model(self) -> Path:
        return self.opt_ml / "model"

    @property
    def output(self) -> Path:
        return self.opt_ml / "output"

    @property
    def output_data(self) -> Path:
        return self.output / "data"

    @property
    def output_intermediate(self) -> Path:
        return self.output / "intermediate"

    @property
    def failure_file(self) -> Path:
        return self.output / "failure"

    @property
    def code(self) -> Path:
        return self.opt_ml / "code"

    @property
    def checkpoints(self) -> Path:
        return self.opt_ml / "checkpoints"

    @property
    def own_warm_pool_cache(self) -> Path:
        """Where ``/opt/ml/sagemaker/warmpoolcache`` points when the job has no warm pool."""
        return self.opt_ml / "sagemaker" / "warmpoolcache"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def scratch(self) -> Path:
        return self.root / "scratch"

    def channel(self, name: str) -> Path:
        return self.input_data / name

    def reset(self) -> None:
        """A fresh ``/opt/ml`` (a reused warm-pool instance keeps only its ``venv``)."""
        for stale in (self.opt_ml, self.scratch):
            if stale.exists():
                shutil.rmtree(stale)
        for directory in (self.input_config, self.input_data, self.model, self.output_data,
                          self.code, self.scratch):
            directory.mkdir(parents=True, exist_ok=True)


# -- hosts -----------------------------------------------------------------------------
@attrs.frozen
class Host:
    name: str  # algo-<i>
    instance_type: str
    group: str


def hosts_of(resource_config: Mapping) -> list[Host]:
    """The job's instances, ``algo-1..algo-N`` in order (instance groups one after the other)."""
    groups = resource_config.get("InstanceGroups")
    layout = ([(g["InstanceGroupName"], g["InstanceType"], g["InstanceCount"]) for g in groups]
              if groups else
              [(HOMOGENEOUS, resource_config.get("InstanceType", "local"),
                resource_config.get("InstanceCount", 1))])
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
    """The config files, environment and command line of one instance of a script-mode job."""

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
        self.raw_hyperparameters = {k: self.mapper.text(str(v))
                                    for k, v in (spec.get("HyperParameters") or {}).items()}
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
            group = groups.setdefault(host.group, {"instance_group_name": host.group,
                                                   "instance_type": host.instance_type,
                                                   "hosts": []})
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
        default_mode = (self.job.spec.get("AlgorithmSpecification") or {}).get(
            "TrainingInputMode", "File")
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
        distribution_groups = sm.get("sagemaker_distribution_instance_groups")
        if distribution_groups is None:
            distribution_groups = ([self.host.group] if any(framework_params.get(f)
                                                            for f in DISTRIBUTION_FLAGS) else [])
        distribution_hosts = [h for g in groups if g["instance_group_name"] in distribution_groups
                              for h in g["hosts"]]
        hosts = resource_config["hosts"]
        master = distribution_hosts[0] if distribution_hosts else hosts[0]
        program = self.entry_point
        return {
            "additional_framework_parameters": framework_params,
            "channel_input_dirs": {c: str(tree.channel(c)) for c in self.channels},
            "current_host": self.host.name,
            "current_instance_group": self.host.group,
            "current_instance_group_hosts": next(g["hosts"] for g in groups
                                                 if g["instance_group_name"] == self.host.group),
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

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The script's whole environment: ``base`` (this machine's), the platform's and the user's."""
        job = self.job
        env = {k: v for k, v in base.items()
               if not k.startswith(("SM_", "SAGEMAKER_"))
               and k not in ("TRAINING_JOB_NAME", "TRAINING_JOB_ARN", "CURRENT_HOST")}
        env["PYTHONUNBUFFERED"] = "1"  # lines reach the log as they are printed
        for name, value in (job.spec.get("Environment") or {}).items():
            env[name] = self.mapper.text(str(value))
        env.update({
            "TRAINING_JOB_NAME": job.name,
            "TRAINING_JOB_ARN": job.arn,
            "CURRENT_HOST": self.host.name,
            "SAGEMAKER_JOB_NAME": env_value(self.sagemaker_hyperparameters.get(JOB_NAME_PARAM, "")),
            "SAGEMAKER_REGION": env_value(self.sagemaker_hyperparameters.get(REGION_PARAM)
                                          or job.region),
            "AWS_REGION": job.region,
        })
        if self.warm_pool_cache is not None:
            env["SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY"] = str(self.warm_pool_cache)
        if job.capacity_block_expiration is not None:
            env["SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP"] = str(
                int(job.capacity_block_expiration.timestamp()))
        env.update(self.sm_variables())
        inherited = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join([str(self.tree.code)] + ([inherited] if inherited else []))
        return env

    def argv(self, python: str) -> list[str]:
        return [python, self.entry_point, *self.user_args()]


def log_stream(job_name: str, host: str, at: datetime) -> str:
    """The CloudWatch stream of one instance: ``<job>/algo-<i>-<epoch seconds of the start>``."""
    return f"{job_name}/{host}-{int(at.timestamp())}"
