"""Which SageMaker Python SDK major is installed, found without importing it."""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType


@functools.lru_cache(maxsize=None)
def installed_major() -> int | None:
    """2 or 3: the installed ``sagemaker`` distribution's major version; None without the SDK."""
    try:
        return int(version("sagemaker").split(".")[0])
    except PackageNotFoundError:
        return None


def sdk_major() -> int:
    """Like :func:`installed_major`, raising ImportError when the SDK is not installed."""
    major = installed_major()
    if major is None:
        raise ImportError("the SageMaker Python SDK is not installed: pip install sagemaker")
    return major


def layer(module: str) -> ModuleType:
    """Our ``sdk.v2.<module>`` or ``sdk.v3.<module>`` for the installed major (ImportError for another)."""
    major = sdk_major()
    if major not in (2, 3):
        raise ImportError(f"sagemaker-plans-local supports SageMaker Python SDK v2 and v3, not v{major}")
    return importlib.import_module(f"{__package__}.v{major}.{module}")


def session_module() -> ModuleType:
    """The module of the SDK's ``Session`` and its log helpers (``sagemaker.session`` in v2)."""
    name = "sagemaker.session" if sdk_major() == 2 else "sagemaker.core.helper.session_helper"
    return importlib.import_module(name)


def logs_module() -> ModuleType:
    """The SDK's CloudWatch Logs reader (``multi_stream_iter``, ``Position``)."""
    return importlib.import_module("sagemaker.logs" if sdk_major() == 2 else "sagemaker.core.logs")
