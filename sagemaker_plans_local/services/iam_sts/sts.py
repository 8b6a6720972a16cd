"""STS: who the caller is: the backend's account, as a session of its default SageMaker execution role.

On SageMaker (Studio, a notebook instance, a training job) code runs as an
assumed role, so ``sagemaker.get_execution_role()`` and SDK v3's
``ModelTrainer`` without ``role=`` find the role from GetCallerIdentity. The
local caller is the same: a session named :data:`SESSION_NAME` of the role
:data:`ROLE_NAME` (every role exists in the local IAM), documented in docs/backend.md.
"""

from __future__ import annotations

from typing import Callable

from sagemaker_plans_local.core.arns import arn
from sagemaker_plans_local.protocol.service import QueryService, operation
from sagemaker_plans_local.services.iam_sts.roles import role_id

#: The execution role every local caller has assumed.
ROLE_NAME = "SageMakerRole"
#: The role session's name (Studio's own).
SESSION_NAME = "SageMaker"


class StsApi(QueryService):
    """GetCallerIdentity answers ``arn:<partition>:sts::<account>:assumed-role/SageMakerRole/SageMaker``."""

    service_name = "sts"

    def __init__(self, account_id: str, on_request: Callable[[], None] | None = None) -> None:
        super().__init__(on_request)
        self.account_id = account_id

    def caller_arn(self, region: str) -> str:
        """The caller's ARN in ``region``'s partition (STS ARNs name no region)."""
        return arn(region, "sts", self.account_id, f"assumed-role/{ROLE_NAME}/{SESSION_NAME}", regional=False)

    @operation("GetCallerIdentity")
    def get_caller_identity(self, region: str, params: dict) -> dict:
        user_id = f"{role_id(self.account_id, ROLE_NAME)}:{SESSION_NAME}"
        return {"UserId": user_id, "Account": self.account_id, "Arn": self.caller_arn(region)}
