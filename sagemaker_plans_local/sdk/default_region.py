"""A local session works with nothing configured: no region anywhere means the backend's default.

Some SDK modules create boto3 clients when they are imported (v3's
``sagemaker.ai_registry.air_hub``, which ``sagemaker.core.remote_function``
brings in), so with no region configured the import itself fails with
``NoRegionError``. Importing this package (and so loading its pytest plugin)
sets ``AWS_DEFAULT_REGION`` to :data:`DEFAULT_REGION` when the flag is local
and no region is configured: neither ``AWS_DEFAULT_REGION`` nor ``AWS_REGION``
nor a ``region`` in the profile's section of the AWS config file. Plain
Python: no boto3 is imported to find out.
"""

from __future__ import annotations

import configparser
import os
from pathlib import Path

from sagemaker_plans_local.sdk.flag import local_by_default

DEFAULT_REGION = "us-east-1"


def configured_region() -> str | None:
    """The region boto3 would find in the environment or the profile's config section, if any."""
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if os.environ.get(variable, "").strip():
            return os.environ[variable].strip()
    profile = os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE") or "default"
    config = configparser.RawConfigParser()
    try:
        config.read(Path(os.environ.get("AWS_CONFIG_FILE", "~/.aws/config")).expanduser())
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None  # boto3 would refuse this file anyway
    for section in (profile, f"profile {profile}"):
        if config.has_option(section, "region"):
            return config.get(section, "region").strip() or None
    return None


def default_region_for_local_sessions() -> None:
    """Set ``AWS_DEFAULT_REGION`` to :data:`DEFAULT_REGION` if local and no region is configured."""
    if local_by_default() and configured_region() is None:
        os.environ["AWS_DEFAULT_REGION"] = DEFAULT_REGION
