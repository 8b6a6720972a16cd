"""IAM's SimulatePrincipalPolicy: what the SDKs' role checks call."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from . import ACCOUNT, Services

ROLE = f"arn:aws:iam::{ACCOUNT}:role/service-role/SageMakerRole"


@pytest.fixture
def iam(tmp_path):
    return Services(tmp_path).client("iam")


def test_every_action_is_allowed_for_a_role_of_the_account(iam):
    answer = iam.simulate_principal_policy(PolicySourceArn=ROLE, ActionNames=["s3:PutObject", "sagemaker:*"])
    assert [
        (r["EvalActionName"], r["EvalResourceName"], r["EvalDecision"]) for r in answer["EvaluationResults"]
    ] == [("s3:PutObject", "*", "allowed"), ("sagemaker:*", "*", "allowed")]
    assert answer["IsTruncated"] is False and "Marker" not in answer
    assert "ResourceSpecificResults" not in answer["EvaluationResults"][0]


def test_one_result_per_action_with_one_decision_per_resource(iam):
    resources = ["arn:aws:s3:::bucket-a/*", "arn:aws:s3:::bucket-b/*"]
    (result,) = iam.simulate_principal_policy(
        PolicySourceArn=ROLE, ActionNames=["s3:GetObject"], ResourceArns=resources
    )["EvaluationResults"]
    assert result["EvalResourceName"] == resources[0]
    assert [
        (r["EvalResourceName"], r["EvalResourceDecision"]) for r in result["ResourceSpecificResults"]
    ] == [(resources[0], "allowed"), (resources[1], "allowed")]


def test_users_and_groups_of_the_account_are_principals_too(iam):
    for principal in (
        f"arn:aws:iam::{ACCOUNT}:user/sagemaker-plans-local",
        f"arn:aws:iam::{ACCOUNT}:group/ml",
    ):
        answer = iam.simulate_principal_policy(PolicySourceArn=principal, ActionNames=["iam:PassRole"])
        assert answer["EvaluationResults"][0]["EvalDecision"] == "allowed"


def test_the_sdk_paginator_walks_every_result(iam):
    actions = [f"s3:Action{index}" for index in range(5)]
    pages = list(
        iam.get_paginator("simulate_principal_policy").paginate(
            PolicySourceArn=ROLE, ActionNames=actions, PaginationConfig={"PageSize": 2}
        )
    )
    assert [len(page["EvaluationResults"]) for page in pages] == [2, 2, 1]
    assert [r["EvalActionName"] for page in pages for r in page["EvaluationResults"]] == actions


def test_a_principal_of_another_account_does_not_exist(iam):
    with pytest.raises(iam.exceptions.NoSuchEntityException) as caught:
        iam.simulate_principal_policy(
            PolicySourceArn="arn:aws:iam::999999999999:role/Other", ActionNames=["s3:GetObject"]
        )
    response = caught.value.response
    assert response["Error"]["Message"] == "The role with name Other cannot be found."
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 404


@pytest.mark.parametrize("source", ["arn:aws:s3:::not-a-principal", f"arn:aws:iam::{ACCOUNT}:policy/P"])
def test_a_source_that_is_no_principal_is_invalid_input(iam, source):
    with pytest.raises(ClientError) as caught:
        iam.simulate_principal_policy(PolicySourceArn=source, ActionNames=["s3:GetObject"])
    assert caught.value.response["Error"]["Code"] == "InvalidInput"


def test_a_marker_from_nowhere_is_invalid_input(iam):
    with pytest.raises(ClientError) as caught:
        iam.simulate_principal_policy(PolicySourceArn=ROLE, ActionNames=["s3:GetObject"], Marker="zz")
    assert caught.value.response["Error"]["Code"] == "InvalidInput"
