"""boto3 clients of a test server (fake keys; a 12-digit key id picks that account)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import boto3
from botocore.config import Config

CONTROL = "/_sagemaker_plans_local/"


def client(server, service: str = "sagemaker", key: str = "testing", **kwargs):
    """A boto3 client of ``service`` whose endpoint is the server."""
    kwargs.setdefault("config", Config(retries={"max_attempts": 1}))
    return boto3.client(
        service,
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key="secret",
        **kwargs,
    )


def raw(server, path: str, body: bytes | None = None, method: str | None = None, headers: dict | None = None):
    """(status, headers, body bytes) of one plain HTTP request to the server."""
    request = urllib.request.Request(server.url + path, body, headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def control(server, path: str, document: dict | None = None, method: str = "POST"):
    """(status, JSON document) of a control API request."""
    body = None if document is None else json.dumps(document).encode()
    status, _, answer = raw(server, CONTROL + path, body, method, {"Content-Type": "application/json"})
    return status, json.loads(answer)
