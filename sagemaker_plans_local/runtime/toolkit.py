"""The sagemaker-training-toolkit's reading of a script-mode job: hyperparameters, arguments, values.

Same names, same value encoding and argument order as the toolkit
(``mapping.to_cmd_args``, ``mapping.to_env_vars``, ``params``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

PROGRAM = "sagemaker_program"
SUBMIT_DIRECTORY = "sagemaker_submit_directory"
LOG_LEVEL = "sagemaker_container_log_level"
JOB_NAME_PARAM = "sagemaker_job_name"
REGION_PARAM = "sagemaker_region"
SAGEMAKER_PREFIX = "sagemaker_"
#: The toolkit's own hyperparameters (params.SAGEMAKER_HYPERPARAMETERS): not framework params.
TOOLKIT_HYPERPARAMETERS = (
    PROGRAM,
    SUBMIT_DIRECTORY,
    "sagemaker_enable_cloudwatch_metrics",
    REGION_PARAM,
    LOG_LEVEL,
    JOB_NAME_PARAM,
    "default_user_module_name",
    "_tuning_objective_metric",
    "sagemaker_s3_output",
)
#: Framework flags that put the current instance group under distribution (toolkit rule).
DISTRIBUTION_FLAGS = (
    "sagemaker_mpi_enabled",
    "sagemaker_parameter_server_enabled",
    "sagemaker_distributed_dataparallel_enabled",
    "sagemaker_pytorch_ddp_enabled",
    "sagemaker_pytorch_xla_multi_worker_enabled",
    "sagemaker_multi_worker_mirrored_strategy_enabled",
    "sagemaker_torch_distributed_enabled",
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
    sagemaker = {
        k: v for k, v in decoded.items() if k in TOOLKIT_HYPERPARAMETERS or k.startswith(SAGEMAKER_PREFIX)
    }
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
