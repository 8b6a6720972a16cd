"""STS: who the caller is (the backend's account, as an IAM user)."""

from __future__ import annotations

from typing import Callable

from sagemaker_plans_local.core.arns import arn
from sagemaker_plans_local.protocol.service import QueryService, operation

#: The IAM user every caller is (documented in docs/backend.md).
USER_NAME = "sagemaker-plans-local"
#: IAM user ids start with AIDA; this one is fixed.
USER_ID = "AIDASAGEMAKERPLANSLOCAL"


class StsApi(QueryService):
    """GetCallerIdentity answers ``arn:<partition>:iam::<account>:user/sagemaker-plans-local``."""

    service_name = "sts"

    def __init__(self, account_id: str, on_request: Callable[[], None] | None = None) -> None:
        super().__init__(on_request)
        self.account_id = account_id

    def caller_arn(self, region: str) -> str:
        """The caller's ARN in ``region``'s partition (IAM ARNs name no region)."""
        return arn(region, "iam", self.account_id, f"user/{USER_NAME}", regional=False)

    @operation("GetCallerIdentity")
    def get_caller_identity(self, region: str, params: dict) -> dict:
        return {"UserId": USER_ID, "Account": self.account_id, "Arn": self.caller_arn(region)}
