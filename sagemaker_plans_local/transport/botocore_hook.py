"""Answer botocore clients in-process from their ``before-call`` event.

The request is serialized (and validated) by botocore as for AWS; the answer
is the wire JSON document AWS would send. Errors go through botocore's own
JSON parser; successful answers through a per-shape compiled equivalent of it
(``response_decoder``), which the tests check against the parser on responses
generated from the model. Callers see exactly the types AWS gives.
Signing and HTTP are skipped, so no credentials are needed; ``HTTPHeaders``
carry the request id and content type but no content length, since the body
is serialized only if someone reads it.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any, Callable

from botocore.awsrequest import AWSResponse
from botocore.parsers import JSONParser

from sagemaker_plans_local.transport.response_decoder import decoder_for
from sagemaker_plans_local.transport.timestamps import parse_wire_timestamp

Answer = Callable[[str, str, bytes], "tuple[int, dict]"]


_REQUEST_IDS = itertools.count(1)
_PROCESS_PART = f"{os.getpid() & 0xFFFF:04x}"


def request_id() -> str:
    """A request id in AWS's UUID layout: unique within the process, cheap, sortable."""
    return f"00000000-{_PROCESS_PART}-4000-8000-{next(_REQUEST_IDS):012x}"


class _Body:
    """The ``raw`` of an AWSResponse: the wire JSON, serialized only if someone reads it."""

    def __init__(self, document: dict) -> None:
        self._document = document

    def stream(self, **_: Any):
        yield json.dumps(self._document).encode()


class BotocoreHook:
    """A ``before-call`` handler answering one service from an API object."""

    def __init__(self, service_name: str, answer: Answer, enabled: Callable[[], bool] = lambda: True) -> None:
        self.service_name = service_name
        self._answer = answer
        self._enabled = enabled
        self._parser = JSONParser(timestamp_parser=parse_wire_timestamp)

    def attach(self, client) -> None:
        """Make ``client`` (of this hook's service) answered by the hook."""
        service_id = client.meta.service_model.service_id.hyphenize()
        client.meta.events.register_first(
            f"before-call.{service_id}", self, unique_id=f"sagemaker-plans-local-{id(self)}"
        )

    def attach_to_session(self, botocore_session, service_id: str) -> None:
        """Answer every client ``botocore_session`` creates later for ``service_id``."""
        botocore_session.register(
            f"before-call.{service_id}", self, unique_id=f"sagemaker-plans-local-{id(self)}"
        )

    def __call__(self, model, params, context, **_: Any):
        if not self._enabled():
            return None
        region = context.get("client_region") or "us-east-1"
        status, document = self._answer(region, model.name, params.get("body") or b"")
        rid = request_id()
        headers = {"x-amzn-requestid": rid, "content-type": "application/x-amz-json-1.1"}
        http = AWSResponse(params.get("url", ""), status, headers, _Body(document))
        uid = model.service_model.metadata.get("uid", self.service_name)
        decode = decoder_for(model.output_shape, uid) if model.output_shape is not None else None
        if status < 300 and (decode is not None or model.output_shape is None):
            parsed = decode(document) if decode is not None else {}
            parsed["ResponseMetadata"] = {"RequestId": rid}
        else:
            parsed = self._parser.parse(
                {
                    "status_code": status,
                    "headers": headers,
                    "body": http.content,
                    "context": {"operation_name": model.name},
                },
                model.output_shape,
            )
        metadata = parsed["ResponseMetadata"]
        metadata["HTTPStatusCode"] = status
        metadata["HTTPHeaders"] = headers
        metadata["RetryAttempts"] = 0  # as botocore's endpoint reports a first-try answer
        return http, parsed
