"""SageMaker answered from a raw request body, below botocore's client-side checks."""

from __future__ import annotations

import json


def sagemaker_json(
    backend, operation: str, body: bytes | dict, region: str = "us-east-1"
) -> tuple[int, dict]:
    """SageMaker's answer to a raw JSON body (a dict is serialized first): (HTTP status, wire document)."""
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    status, _, answer = backend.service("sagemaker").handle(region, operation, {"body": body})
    return status, answer.document
