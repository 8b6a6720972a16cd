"""``Session`` for SDK v2: a ``sagemaker.session.Session`` answered in-process, or plain AWS by one flag."""

from __future__ import annotations

import threading
from typing import Any

import sagemaker.session

from sagemaker_plans_local.sdk import routing
from sagemaker_plans_local.sdk.default_backend import KnownDefaults, default_backend
from sagemaker_plans_local.sdk.flag import local_by_default
from sagemaker_plans_local.sdk.plan_methods import PlanMethods
from sagemaker_plans_local.sdk.remote import Backend
from sagemaker_plans_local.sdk.v2 import waits


class Session(KnownDefaults, PlanMethods, sagemaker.session.Session):
    """A SageMaker session, local by default (``SAGEMAKER_PLANS_LOCAL=0`` means AWS).

    Local: every call is answered by ``backend``, else by the server at
    ``endpoint_url``, else by the default backend (``SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL``'s
    server, or the process-wide wall-clock backend) — SageMaker, S3, STS, IAM and CloudWatch Logs — and
    ``fit()`` and ``@remote`` wait on the backend instead of polling (``waits``). ``local=False``: a
    plain SageMaker session on boto3; the extra methods then call AWS.
    """

    def __init__(
        self,
        backend: Backend | None = None,
        local: bool | None = None,
        endpoint_url: str | None = None,
        **kwargs: Any,
    ) -> None:
        own_boto_session = kwargs.get("boto_session") is None
        routing.local_session(self, backend, local, kwargs, waits.install, endpoint_url)
        self.knows_defaults(own_boto_session)
        super().__init__(**kwargs)


_lock = threading.Lock()
_shared: list[Session] = []


def default_session() -> Session:
    """The session an ``Estimator`` given none gets: while the flag says local, one per process
    on the default backend (a second ``Estimator()`` builds no session); otherwise a new one."""
    if not local_by_default():
        return Session()
    with _lock:
        if not _shared or _shared[0].backend is not default_backend():
            _shared[:] = [Session()]
        return _shared[0]
