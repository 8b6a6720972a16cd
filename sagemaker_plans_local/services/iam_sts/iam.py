"""IAM: GetRole and SimulatePrincipalPolicy; every role exists and may do anything (IAM is not modeled).

A role's ``CreateDate`` is the clock's time when the backend first answered
for it, so it is stable across calls; its trust policy lets SageMaker assume
it. The policy document is URL-encoded JSON on the wire, as IAM sends it
(botocore decodes it into a dict).

SimulatePrincipalPolicy (the SDKs' role checks) allows every action for any
user, group or role of the account: one ``allowed`` result per action (as
IAM now answers, whatever the number of resources), with one resource-specific
result per ``ResourceArns`` entry. A principal of another account is
``NoSuchEntity``; a PolicySourceArn that is no IAM principal ARN is
``InvalidInput``. ``MaxItems``/``Marker`` page the results.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable
from urllib.parse import quote

from sagemaker_plans_local.core.arns import arn
from sagemaker_plans_local.core.clock import Clock
from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.service import QueryService, operation
from sagemaker_plans_local.services.iam_sts.roles import Roles

#: An IAM principal's ARN: partition, account, kind (user, group, role), path and name.
_PRINCIPAL = re.compile(
    r"arn:(?P<partition>[\w-]+):iam::(?P<account>\d{12}):(?P<kind>user|group|role)"
    r"(?P<path>/(?:[^/]+/)*)(?P<name>[^/]+)"
)

TRUST_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ],
}


class IamApi(QueryService):
    """GetRole answers ``arn:<partition>:iam::<account>:role/<RoleName>`` for any valid name."""

    service_name = "iam"

    def __init__(self, account_id: str, clock: Clock, on_request: Callable[[], None] | None = None) -> None:
        super().__init__(on_request)
        self.account_id = account_id
        self.roles = Roles(account_id, clock)

    def role_arn(self, region: str, role_name: str, path: str = "/") -> str:
        """The role's ARN in ``region``'s partition (IAM ARNs name no region)."""
        return arn(region, "iam", self.account_id, f"role{path}{role_name}", regional=False)

    @operation("SimulatePrincipalPolicy")
    def simulate_principal_policy(self, region: str, params: dict) -> dict:
        self._check_principal(params["PolicySourceArn"])
        resources = params.get("ResourceArns") or []
        results = [_allowed(action, resources) for action in params["ActionNames"]]
        start = _marker(params.get("Marker"), len(results))
        end = start + params.get("MaxItems", 100)
        page: dict = {"EvaluationResults": results[start:end], "IsTruncated": end < len(results)}
        if page["IsTruncated"]:
            page["Marker"] = str(end)
        return page

    def _check_principal(self, source_arn: str) -> None:
        principal = _PRINCIPAL.fullmatch(source_arn)
        if principal is None:
            raise ApiError(
                "InvalidInput", f"Invalid ARN: {source_arn} is not the ARN of a user, group or role."
            )
        if principal["account"] != self.account_id:
            raise ApiError(
                "NoSuchEntity",
                f"The {principal['kind']} with name {principal['name']} cannot be found.",
                status=404,
            )

    @operation("GetRole")
    def get_role(self, region: str, params: dict) -> dict:
        role = self.roles.get(params["RoleName"])
        return {
            "Role": {
                "Path": "/",
                "RoleName": role.name,
                "RoleId": role.role_id,
                "Arn": self.role_arn(region, role.name),
                "CreateDate": role.created,
                "AssumeRolePolicyDocument": quote(json.dumps(TRUST_POLICY, separators=(",", ":"))),
                "MaxSessionDuration": 3600,
                "RoleLastUsed": {},
            }
        }


def _allowed(action: str, resources: list[str]) -> dict:
    """An ``allowed`` EvaluationResult for ``action`` on ``resources`` (``*`` when none)."""
    result: dict[str, Any] = {
        "EvalActionName": action,
        "EvalResourceName": resources[0] if resources else "*",
        "EvalDecision": "allowed",
        "MatchedStatements": [],
        "MissingContextValues": [],
    }
    if resources:
        result["ResourceSpecificResults"] = [
            {
                "EvalResourceName": resource,
                "EvalResourceDecision": "allowed",
                "MatchedStatements": [],
                "MissingContextValues": [],
            }
            for resource in resources
        ]
    return result


def _marker(marker: str | None, count: int) -> int:
    """Where a page starts: ``Marker`` is the index a previous page stopped at."""
    if marker is None:
        return 0
    if not marker.isdigit() or int(marker) > count:
        raise ApiError("InvalidInput", f"Invalid Marker: {marker}.")
    return int(marker)
