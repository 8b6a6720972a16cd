"""A server on a root keeps every account's state across a restart, on the time line it had reached."""

from __future__ import annotations

import json
from datetime import timedelta

import boto3
import pytest

from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import START
from tests.durable.worker import job_request


def client(server: LocalServer, access_key: str = "testing"):
    return boto3.client(
        "sagemaker",
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id=access_key,
        aws_secret_access_key="testing",
    )


def test_a_restarted_server_finds_its_accounts_and_clock(tmp_path):
    root = tmp_path / "served"
    with LocalServer(root=root, start_time=START) as server:
        client(server).create_training_job(**job_request("default-account", keep_alive=0))
        client(server, "111122223333").create_training_job(**job_request("other-account", keep_alive=0))
        server.accounts.advance(1200)
    with LocalServer(root=root) as again:
        assert again.accounts.now() == START + timedelta(seconds=1200)
        assert again.accounts.manual
        mine = client(again).describe_training_job(TrainingJobName="default-account")
        theirs = client(again, "111122223333").describe_training_job(TrainingJobName="other-account")
        assert mine["TrainingJobStatus"] == theirs["TrainingJobStatus"] == "Completed"
        assert [s["TrainingJobName"] for s in client(again).list_training_jobs()["TrainingJobSummaries"]] == [
            "default-account"
        ]
        again.accounts.advance(60)
        assert {b.clock.now() for b in again.accounts.backends()} == {START + timedelta(seconds=1260)}
    assert json.loads((root / "server.json").read_text()) == {"start_time": START.isoformat()}


def test_a_root_is_served_again_only_on_its_own_clock(tmp_path):
    root = tmp_path / "served"
    with LocalServer(root=root, start_time=START):
        pass
    with pytest.raises(ValueError, match="was served with --start-time 2026-01-01T00:00:00"):
        LocalServer(root=root, start_time=START + timedelta(days=1))
