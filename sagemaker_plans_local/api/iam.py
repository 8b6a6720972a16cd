"""IAM: only GetRole, and every role exists (IAM is not modeled).

A role's ``CreateDate`` is the clock's time when the backend first answered
for it, so it is stable across calls; its trust policy lets SageMaker assume
it. The policy document is URL-encoded JSON on the wire, as IAM sends it
(botocore decodes it into a dict).
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime, timezone
from typing import Callable
from urllib.parse import quote

from ..domain.arns import arn
from ..domain.clock import Clock
from .aws_services import QueryService, operation

TRUST_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"},
                   "Action": "sts:AssumeRole"}],
}


class IamApi(QueryService):
    """GetRole answers ``arn:<partition>:iam::<account>:role/<RoleName>`` for any valid name."""

    service_name = "iam"

    def __init__(self, account_id: str, clock: Clock, on_request: Callable[[], None] | None = None) -> None:
        super().__init__(on_request)
        self.account_id = account_id
        self._clock = clock
        self._created: dict[str, datetime] = {}
        self._lock = threading.Lock()

    def role_arn(self, region: str, role_name: str, path: str = "/") -> str:
        """The role's ARN in ``region``'s partition (IAM ARNs name no region)."""
        return arn(region, "iam", self.account_id, f"role{path}{role_name}", regional=False)

    @operation("GetRole")
    def get_role(self, region: str, params: dict) -> dict:
        name = params["RoleName"]
        with self._lock:
            created = self._created.setdefault(
                name, self._clock.now().astimezone(timezone.utc).replace(microsecond=0))
        role_id = "AROA" + hashlib.sha256(f"{self.account_id}/{name}".encode()).hexdigest()[:17].upper()
        return {"Role": {
            "Path": "/",
            "RoleName": name,
            "RoleId": role_id,
            "Arn": self.role_arn(region, name),
            "CreateDate": created,
            "AssumeRolePolicyDocument": quote(json.dumps(TRUST_POLICY, separators=(",", ":"))),
            "MaxSessionDuration": 3600,
            "RoleLastUsed": {},
        }}
