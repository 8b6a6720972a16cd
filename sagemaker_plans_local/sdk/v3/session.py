"""``Session`` for SDK v3: sagemaker-core's ``Session`` answered in-process, or plain AWS by one flag."""

from __future__ import annotations

from typing import Any

from sagemaker.core.helper.session_helper import Session as CoreSession

from sagemaker_plans_local.sdk import routing
from sagemaker_plans_local.sdk.default_backend import KnownDefaults
from sagemaker_plans_local.sdk.plan_methods import PlanMethods
from sagemaker_plans_local.sdk.remote import Backend
from sagemaker_plans_local.sdk.v3 import waits


class Session(KnownDefaults, PlanMethods, CoreSession):
    """A v3 SageMaker session (``sagemaker.core.helper.session_helper.Session``), local by default.

    Local: every call is answered by ``backend``, else by the server at
    ``endpoint_url``, else by the default backend (``SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL``'s
    server, or the process-wide wall-clock backend) — SageMaker, S3, STS, IAM and CloudWatch Logs — so a
    ``ModelTrainer(sagemaker_session=Session(...))`` trains here, and the
    waits of sagemaker-core resources created through it (``TrainingJob``,
    ``TrainingPlan``) and of ``@remote`` jobs step the backend instead of
    sleeping. ``local=False`` (or ``SAGEMAKER_PLANS_LOCAL=0``): the SDK's
    own session on boto3, nothing of ours in its path.
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
