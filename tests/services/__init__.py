"""Tests of the in-process STS, IAM, S3 and CloudWatch Logs; shared helpers."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import boto3

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.services.iam_sts.iam import IamApi
from sagemaker_plans_local.services.iam_sts.sts import StsApi
from sagemaker_plans_local.services.logs.api import LogsApi
from sagemaker_plans_local.services.logs.streams import LogStore
from sagemaker_plans_local.services.s3.api import S3Api
from sagemaker_plans_local.services.s3.objects import ObjectStore
from sagemaker_plans_local.transport.service_hook import ServiceHook

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
ACCOUNT = "123456789012"


class Services:
    """The four services over one clock, and real boto3 clients answered by them."""

    def __init__(self, root: Path, start: datetime | None = START) -> None:
        self.clock = VirtualClock(start)
        self.objects = ObjectStore(root / "s3", self.clock)
        self.logs = LogStore(self.clock)
        self.apis = {
            "s3": S3Api(self.objects, ACCOUNT),
            "sts": StsApi(ACCOUNT),
            "iam": IamApi(ACCOUNT, self.clock),
            "logs": LogsApi(self.logs, ACCOUNT),
        }
        self.hooks = {name: ServiceHook(name, api) for name, api in self.apis.items()}

    def session(self, region: str = "us-east-1") -> boto3.session.Session:
        """A boto3 session whose every client of the four services is answered in-process."""
        session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name=region)
        for hook in self.hooks.values():
            session.events.register(hook.event_name, hook)
        return session

    def client(self, service_name: str, region: str = "us-east-1", **kwargs):
        session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name=region)
        client = session.client(service_name, **kwargs)
        self.hooks[service_name].attach(client)
        return client
