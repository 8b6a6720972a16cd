"""sagemaker-plans-local: SageMaker training jobs, warm pools and training plans, in-process.

``Session``, ``Estimator`` (SDK v2 only), ``activate`` and ``activated`` are
loaded for the installed SageMaker Python SDK major (v2 or v3) on first use;
importing this package imports neither boto3 nor the SDK.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from sagemaker_plans_local.sdk.default_region import default_region_for_local_sessions
from sagemaker_plans_local.transport import layers

if TYPE_CHECKING:
    from sagemaker_plans_local.backend import LocalBackend
    from sagemaker_plans_local.sdk.activation import activate, activated
    from sagemaker_plans_local.sdk.v2.estimator import Estimator
    from sagemaker_plans_local.sdk.v2.session import Session

__all__ = ["LocalBackend", "Session", "Estimator", "activate", "activated"]

_LAZY = {
    "LocalBackend": ("backend", "LocalBackend"),
    "Session": ("sdk.session", "Session"),
    "Estimator": ("sdk.estimator", "Estimator"),
    "activate": ("sdk.activation", "activate"),
    "activated": ("sdk.activation", "activated"),
}
__version__ = "0.1.0"


def _sdk_layer(backend: LocalBackend) -> contextlib.AbstractContextManager:
    """The SDK layer of an activation, loaded only where a SageMaker Python SDK is installed."""
    from sagemaker_plans_local.sdk.major import installed_major

    if installed_major() is None:
        return contextlib.nullcontext()
    from sagemaker_plans_local.sdk.activation import sdk_layer

    return sdk_layer(backend)


# LocalBackend.activate() routes the SDK's waits and cached clients too (docs/sdk.md).
layers.register(_sdk_layer)
# Nothing configured: local sessions (and SDK modules that make clients on import) get a region.
default_region_for_local_sessions()


def __getattr__(name: str):
    # Lazy, so that importing the plain-Python domain never loads boto3 or the SDK.
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
