"""sagemaker-plans-local: SageMaker training jobs, warm pools and training plans, in-process."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .backend import LocalBackend

__all__ = ["LocalBackend"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # Lazy, so that importing the plain-Python domain never loads boto3.
    if name == "LocalBackend":
        from .backend import LocalBackend

        return LocalBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
