"""The control API under --access-key: every body hashed, and each key reaching its own account only.

Raw HTTP requests, SigV4-signed here (``signed_request``) as a client or a replaying attacker
would send them; docs/server.md, "Security" and "The control API".
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.cli import main as cli
from sagemaker_plans_local.server import runner
from sagemaker_plans_local.server.guard import CONTROL_SIGNING_NAME
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT
from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import create_request
from tests.server.clients import CONTROL
from tests.server.clients import client as unsigned_client
from tests.server.test_guard import START, clock_now, send

ONE, TWO = ("111111111111", "S1"), ("222222222222", "S2")
ADMIN = ("AKIDOPERATOR", "admin-secret")
TENANTS = dict([ONE, TWO])
SEVERAL = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=25,
)


@pytest.fixture
def shared(tmp_path):
    """A server of two tenants and an operator key (``admin_credentials``)."""
    with LocalServer(
        start_time=START, root=tmp_path / "root", credentials=TENANTS, admin_credentials=dict([ADMIN])
    ) as running:
        yield running


@pytest.fixture
def tenants_only(tmp_path):
    """A server of two tenants and no operator key."""
    with LocalServer(start_time=START, root=tmp_path / "root", credentials=TENANTS) as running:
        yield running


def signed_request(
    server, method: str, path: str, body: bytes, key: tuple[str, str], extra: dict | None = None
) -> dict:
    """The headers of a control request signed now by ``key`` over every header sent, ``extra`` too."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = {"Content-Type": "application/json", "X-Amz-Date": stamp, **(extra or {})}
    request = AWSRequest(method=method, url=server.url + CONTROL + path, data=body, headers=headers)
    request.context["timestamp"] = stamp
    SigV4Auth(Credentials(*key), CONTROL_SIGNING_NAME, "us-east-1").add_auth(request)
    return dict(request.headers.items())


def call(server, key, path: str, document: dict | None = None, method: str = "POST"):
    """(status, JSON answer) of a control request signed by ``key``."""
    body = b"" if method == "GET" else json.dumps(document or {}).encode()
    headers = signed_request(server, method, path, body, key)
    status, _, answer = send(server, method, CONTROL + path, body, headers)
    return status, json.loads(answer)


def sagemaker(server, key):
    """A boto3 SageMaker client signed by ``key``."""
    return boto3.client(
        "sagemaker",
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id=key[0],
        aws_secret_access_key=key[1],
        config=Config(retries={"max_attempts": 1}),
    )


def job_names(server, key) -> list[str]:
    summaries = sagemaker(server, key).list_training_jobs()["TrainingJobSummaries"]
    return sorted(summary["TrainingJobName"] for summary in summaries)


# -- item 1: the body is hashed ------------------------------------------------------


@pytest.fixture
def single():
    """A server of one tenant: its key may move the clock (what the replays below try)."""
    with LocalServer(start_time=START, credentials=dict([ONE])) as running:
        yield running


@pytest.mark.parametrize("claimed", ["body", "UNSIGNED-PAYLOAD"])
def test_a_signed_control_request_replayed_with_another_body_is_refused(single, claimed):
    """A signature over ``X-Amz-Content-SHA256`` covers the body only if the body is hashed too."""
    signed_for = b'{"advance_seconds": 60}'
    digest = hashlib.sha256(signed_for).hexdigest() if claimed == "body" else claimed
    headers = signed_request(single, "POST", "clock", signed_for, ONE, {"X-Amz-Content-SHA256": digest})
    replayed = b'{"advance_seconds": 2592000}'
    status, _, answer = send(single, "POST", CONTROL + "clock", replayed, headers)
    assert (status, json.loads(answer)["error"]) == (403, "AccessDenied")
    assert clock_now(single) == START.isoformat()


def test_a_content_sha256_that_is_the_bodys_is_answered(single):
    body = b'{"advance_seconds": 60}'
    digest = hashlib.sha256(body).hexdigest()
    headers = signed_request(single, "POST", "clock", body, ONE, {"X-Amz-Content-SHA256": digest})
    status, _, answer = send(single, "POST", CONTROL + "clock", body, headers)
    assert (status, json.loads(answer)["now"]) == (200, START.replace(minute=1).isoformat())


@SEVERAL
@given(signed_for=st.binary(max_size=64), sent=st.binary(max_size=64))
def test_any_body_but_the_one_hashed_is_refused(single, signed_for, sent):
    """Refused before the body is read as JSON: a 403 whatever the bytes, a 400 or 200 only for the
    bytes signed (the settings' JSON checks come after)."""
    digest = hashlib.sha256(signed_for).hexdigest()
    headers = signed_request(single, "POST", "settings", signed_for, ONE, {"X-Amz-Content-SHA256": digest})
    status, _, _ = send(single, "POST", CONTROL + "settings", sent, headers)
    assert (status == 403) == (sent != signed_for)


# -- item 2: a key reaches its own account --------------------------------------------


@pytest.mark.parametrize(
    ("path", "document", "method"),
    [
        ("settings", {"instance_quota": 0}, "POST"),
        ("settings", None, "GET"),
        ("scripts/jobs", {"job_name": "theirs", "outcome": "AlgorithmError"}, "POST"),
        ("scripts/plans", {"training_plan_name": "theirs"}, "POST"),
        ("capacity/clear", {}, "POST"),
        (
            "capacity",
            {
                "instance_type": "ml.p5.48xlarge",
                "count": 1,
                "availability_zone": "us-east-1a",
                "start": "2026-01-02T00:00:00Z",
                "end": "2026-01-03T00:00:00Z",
            },
            "POST",
        ),
        ("reset", {}, "POST"),
    ],
)
def test_a_tenant_cannot_name_another_account(tenants_only, path, document, method):
    sagemaker(tenants_only, TWO).create_training_job(**create_request("theirs"))
    before = tenants_only.backend(TWO[0]).settings
    status, answer = call(tenants_only, ONE, f"{path}?account={TWO[0]}", document, method)
    assert (status, answer["error"]) == (403, "AccessDenied")
    assert TWO[0] in answer["message"] or ONE[0] in answer["message"]
    assert tenants_only.backend(TWO[0]).settings == before
    assert job_names(tenants_only, TWO) == ["theirs"]


def test_a_tenants_per_account_request_reaches_its_own_account_by_default(tenants_only):
    status, answer = call(tenants_only, ONE, "settings", {"instance_quota": 0})
    assert (status, answer["instance_quota"]) == (200, 0)
    assert tenants_only.backend(ONE[0]).settings.instance_quota == 0
    assert tenants_only.backend(TWO[0]).settings.instance_quota != 0
    assert tenants_only.backend(DEFAULT_ACCOUNT).settings.instance_quota != 0
    assert call(tenants_only, ONE, f"settings?account={ONE[0]}", method="GET")[1]["instance_quota"] == 0
    with pytest.raises(ClientError) as raised:
        sagemaker(tenants_only, ONE).create_training_job(**create_request("over"))
    assert raised.value.response["Error"]["Code"] == "ResourceLimitExceeded"
    sagemaker(tenants_only, TWO).create_training_job(**create_request("fine"))


def test_a_tenants_reset_empties_its_own_account_only(tenants_only):
    for key in (ONE, TWO):
        sagemaker(tenants_only, key).create_training_job(**create_request("kept"))
    assert call(tenants_only, ONE, "settings", {"job_runtime_seconds": 42})[0] == 200
    tenants_only.accounts.advance(60)
    status, answer = call(tenants_only, ONE, "reset")
    assert (status, answer) == (200, {"status": "reset", "now": START.replace(minute=1).isoformat()})
    assert job_names(tenants_only, ONE) == []
    assert job_names(tenants_only, TWO) == ["kept"]
    assert clock_now(tenants_only) == START.replace(minute=1).isoformat()
    assert tenants_only.backend(ONE[0]).settings.job_runtime_seconds == 42  # a reset keeps the settings
    assert tenants_only.backend(ONE[0]).clock.now() == START.replace(minute=1)
    sagemaker(tenants_only, ONE).create_training_job(**create_request("again"))
    assert job_names(tenants_only, ONE) == ["again"]


@pytest.mark.parametrize("document", [{"advance_seconds": 60}, {"next_change": True}])
def test_a_tenant_cannot_move_the_shared_clock(tenants_only, document):
    sagemaker(tenants_only, TWO).create_training_job(**create_request("theirs"))
    status, answer = call(tenants_only, ONE, "clock", document)
    assert (status, answer["error"]) == (403, "AccessDenied")
    assert "--admin-key" in answer["message"]
    assert clock_now(tenants_only) == START.isoformat()
    assert call(tenants_only, ONE, "clock", method="GET") == (200, {"now": START.isoformat(), "manual": True})
    assert call(tenants_only, ONE, "health", method="GET")[0] == 200


def test_the_admin_key_moves_the_clock_resets_everything_and_names_any_account(shared):
    for key in (ONE, TWO):
        sagemaker(shared, key).create_training_job(**create_request("kept"))
    assert call(shared, ADMIN, "clock", {"advance_seconds": 60})[0] == 200
    assert call(shared, ADMIN, "clock", {"next_change": True})[1]["changed"] is True
    status, answer = call(shared, ADMIN, f"settings?account={TWO[0]}", {"instance_quota": 0})
    assert (status, shared.backend(TWO[0]).settings.instance_quota) == (200, 0)
    assert call(shared, ADMIN, f"settings?account={ONE[0]}", method="GET")[1]["instance_quota"] != 0
    assert call(shared, ADMIN, f"reset?account={TWO[0]}")[0] == 200  # one account
    assert (job_names(shared, ONE), job_names(shared, TWO)) == (["kept"], [])
    status, answer = call(shared, ADMIN, "reset")  # every account, the clock back to its start
    assert (status, answer["now"]) == (200, START.isoformat())
    assert (job_names(shared, ONE), job_names(shared, TWO)) == ([], [])
    assert shared.backend(TWO[0]).settings.instance_quota == 0  # settings kept
    admin_jobs = sagemaker(shared, ADMIN).list_training_jobs()  # an admin key is a key of the services too
    assert admin_jobs["TrainingJobSummaries"] == []


def test_a_tenant_is_no_admin_beside_an_admin_key(shared):
    assert call(shared, ONE, "clock", {"advance_seconds": 60})[0] == 403
    assert call(shared, ONE, f"settings?account={TWO[0]}", method="GET")[0] == 403


def test_the_keys_of_a_server_with_one_tenant_act_server_wide(tmp_path):
    """One account's keys and no admin key: nobody else is on the server (the set-up before tenants)."""
    keys = {ONE[0]: ONE[1], "AKIDSAMEACCOUNT": "s"}  # the second key selects the default account
    with LocalServer(start_time=START, credentials={ONE[0]: ONE[1]}) as server:
        assert call(server, ONE, "clock", {"advance_seconds": 60})[0] == 200
        assert call(server, ONE, "settings?account=333333333333", {"instance_quota": 3})[0] == 200
        assert call(server, ONE, "reset")[1]["now"] == START.isoformat()
    with LocalServer(start_time=START, credentials=keys) as server:  # two accounts: tenants
        assert call(server, ONE, "clock", {"advance_seconds": 60})[0] == 403


def test_without_access_key_any_caller_acts_server_wide_as_before(tmp_path):
    with LocalServer(start_time=START, root=tmp_path / "root") as server:
        unsigned_client(server, key=ONE[0]).create_training_job(**create_request("kept"))
        status, _, _ = send(
            server,
            "POST",
            CONTROL + f"settings?account={TWO[0]}",
            b'{"instance_quota": 0}',
            {"Content-Type": "application/json"},
        )
        assert (status, server.backend(TWO[0]).settings.instance_quota) == (200, 0)
        assert server.backend(DEFAULT_ACCOUNT).settings.instance_quota != 0
        assert send(server, "POST", CONTROL + "reset", b"{}", {"Content-Type": "application/json"})[0] == 200
        assert unsigned_client(server, key=ONE[0]).list_training_jobs()["TrainingJobSummaries"] == []


def test_serve_takes_admin_keys(monkeypatch):
    made = {}

    def fake(*args, **kwargs):  # records what serve would start, and stops there
        made.update(args=args, **kwargs)
        raise OSError("not started in a test")

    monkeypatch.setattr(runner, "LocalServer", fake)
    argv = ["serve", "--access-key", "111111111111:S1", "--admin-key", "AKIDOPERATOR:admin-secret"]
    assert cli.main(argv) == 1
    assert made["admin_credentials"] == {"AKIDOPERATOR": "admin-secret"}
    assert made["args"][5] == {"111111111111": "S1"}
    assert cli.main(["serve", "--admin-key", "no-secret"]) == 1
    made.clear()
    assert cli.main(["serve", "--host", "0.0.0.0", "--admin-key", "AKIDOPERATOR:admin-secret"]) == 1
    assert made["args"][0] == "0.0.0.0"  # an admin key alone checks signatures: a network host is allowed
