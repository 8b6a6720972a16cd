"""Answer botocore clients in-process from their ``before-call`` event.

The request is serialized by botocore as for AWS; the answer is wire JSON
parsed by botocore's own parser, so callers see exactly the types AWS gives.
Signing and HTTP are skipped, so no credentials are needed.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable

from botocore.awsrequest import AWSResponse
from botocore.parsers import create_parser

EMULATED_SERVICES = ("sagemaker",)

Answer = Callable[[str, str, bytes], "tuple[int, dict]"]


class _Body:
    """The ``raw`` of an AWSResponse whose content is already known."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    def stream(self, **_: Any):
        yield self._content


class BotocoreHook:
    """A ``before-call`` handler answering one service from an API object."""

    def __init__(self, service_name: str, answer: Answer, enabled: Callable[[], bool] = lambda: True) -> None:
        self.service_name = service_name
        self._answer = answer
        self._enabled = enabled
        self._parser = create_parser("json")

    def attach(self, client) -> None:
        """Make ``client`` (of this hook's service) answered by the hook."""
        service_id = client.meta.service_model.service_id.hyphenize()
        client.meta.events.register_first(
            f"before-call.{service_id}", self, unique_id=f"sagemaker-plans-local-{id(self)}")

    def __call__(self, model, params, context, **_: Any):
        if not self._enabled():
            return None
        region = context.get("client_region") or "us-east-1"
        status, document = self._answer(region, model.name, params.get("body") or b"")
        body = json.dumps(document).encode()
        headers = {"x-amzn-requestid": str(uuid.uuid4()),
                   "content-type": "application/x-amz-json-1.1",
                   "content-length": str(len(body))}
        response_dict = {"status_code": status, "headers": headers, "body": body,
                         "context": {"operation_name": model.name}}
        parsed = self._parser.parse(response_dict, model.output_shape if status < 300 else None)
        if status >= 300:
            parsed.setdefault("ResponseMetadata", {})["HTTPStatusCode"] = status
        http = AWSResponse(params.get("url", ""), status, headers, _Body(body))
        return http, parsed
