"""``Session`` for SDK v2: a ``sagemaker.session.Session`` answered in-process, or plain AWS by one flag."""

from __future__ import annotations

from typing import Any

import sagemaker.session

from ...backend import LocalBackend
from .. import routing
from ..default_backend import default_backend
from ..flag import local_by_default
from ..plan_methods import PlanMethods
from . import waits


class Session(PlanMethods, sagemaker.session.Session):
    """A SageMaker session, local by default (``SAGEMAKER_PLANS_LOCAL=0`` means AWS).

    Local: every call is answered by ``backend`` (default: the process-wide
    wall-clock backend) — SageMaker, S3, STS, IAM and CloudWatch Logs — and
    ``fit()`` and ``@remote`` wait on the backend instead of polling (``waits``). ``local=False``: a
    plain SageMaker session on boto3; the extra methods then call AWS.
    """

    def __init__(self, backend: LocalBackend | None = None, local: bool | None = None, **kwargs: Any) -> None:
        self.local = local_by_default() if local is None else local
        self.backend = (backend or default_backend()) if self.local else None
        if self.backend is not None:
            kwargs.setdefault("boto_session", self.backend.boto_session())
            routing.register_boto_session(kwargs["boto_session"], self.backend)
            waits.install()  # local waits for @remote; telemetry silent for this session
        super().__init__(**kwargs)
