"""``Session``: the installed SDK major's local session class (imported on first use).

SDK v2: :class:`sagemaker_plans_local.sdk.v2.session.Session`, a
``sagemaker.session.Session``. SDK v3:
:class:`sagemaker_plans_local.sdk.v3.session.Session`, a
``sagemaker.core.helper.session_helper.Session``.
"""

from __future__ import annotations

from sagemaker_plans_local.sdk.flag import FLAG, local_by_default  # noqa: F401  (part of this module's surface)
from sagemaker_plans_local.sdk.major import layer


def session_class() -> type:
    """Our ``Session`` class for the installed SDK major."""
    return layer("session").Session


def __getattr__(name: str):
    if name == "Session":
        return session_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
