"""Answer a botocore client of any emulated service in-process, at its ``before-call`` event.

The service object answers the request botocore serialized with
``(status, headers, body)`` as the service would send it; the answer is
parsed by botocore's own parser for the service's protocol
(``botocore.parsers.create_parser``), so callers get exactly what AWS
clients get: modeled exceptions, ``datetime``s, a ``StreamingBody`` for S3's
GetObject. Signing and HTTP are skipped (no credentials needed) and nothing
is retried.

The hook is registered after botocore's own ``before-call`` handlers (which
only adjust the request, e.g. escape S3's DeleteObjects XML), and after
anything registered first, such as a ``botocore.stub.Stubber``.
"""

from __future__ import annotations

import functools
import json
import logging
from typing import Any, Callable, Protocol

from botocore.awsrequest import AWSResponse
from botocore.model import OperationModel
from botocore.parsers import create_parser
from botocore.response import StreamingBody

from sagemaker_plans_local.protocol.service_model import service_model

log = logging.getLogger(__name__)


class Service(Protocol):
    def handle(
        self, region: str, operation_model: OperationModel, request_dict: dict
    ) -> tuple[int, dict, Any]: ...


class _Raw:
    """The ``raw`` of an AWSResponse holding a body already in memory."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any):
        yield self._body

    def read(self, amt: int | None = None) -> bytes:
        if amt is None or amt < 0:
            data, self._body = self._body, b""
        else:
            data, self._body = self._body[:amt], self._body[amt:]
        return data

    def close(self) -> None:
        pass


class ServiceHook:
    """A ``before-call`` handler answering one service's clients from a service object.

    ``service_name`` is botocore's name (``s3``, ``sts``, ``iam``, ``logs``);
    ``service`` has ``handle(region, operation_model, request_dict)``;
    ``enabled`` is asked on each call and the hook stays silent while it
    returns False (the request then goes to AWS as usual).
    """

    def __init__(
        self, service_name: str, service: Service, enabled: Callable[[], bool] = lambda: True
    ) -> None:
        self.service_name = service_name
        self._service = service
        self._enabled = enabled

    @functools.cached_property
    def protocol(self) -> str:
        """The service's wire protocol (the model is read on first use, not on construction)."""
        return service_model(self.service_name).metadata["protocol"]

    @functools.cached_property
    def event_name(self) -> str:
        return f"before-call.{service_model(self.service_name).service_id.hyphenize()}"

    def attach(self, client) -> None:
        """Make ``client`` (of this hook's service) answered by the hook."""
        name = client.meta.service_model.service_name
        if name != self.service_name:
            raise ValueError(f"this hook answers {self.service_name}, not {name}")
        event_name = f"before-call.{client.meta.service_model.service_id.hyphenize()}"
        client.meta.events.register(event_name, self, unique_id=f"sagemaker-plans-local-{id(self)}")

    def attach_to_session(self, botocore_session, service_id: str | None = None) -> None:
        """Answer every client ``botocore_session`` creates later for this hook's service.

        ``service_id`` (hyphenized) spares reading the model; by default it is the model's.
        """
        event_name = f"before-call.{service_id}" if service_id else self.event_name
        botocore_session.register(event_name, self, unique_id=f"sagemaker-plans-local-{id(self)}")

    def __call__(self, model: OperationModel, params: dict, context: dict, **_: Any):
        if not self._enabled():
            return None
        region = context.get("client_region") or "us-east-1"
        try:
            status, headers, body = self._service.handle(region, model, params)
            return self._response(model, params, status, headers, body)
        except Exception:  # services answer their own errors; this is a last resort
            log.exception("internal error answering %s.%s", self.service_name, model.name)
            return self._response(model, params, *self._internal_failure(model))

    def _internal_failure(self, model: OperationModel) -> tuple[int, dict, bytes]:
        from sagemaker_plans_local.protocol import (
            xml_wire,  # the wire codecs load with the first service, not with this hook
        )
        from sagemaker_plans_local.protocol.service import internal_failure, new_request_id

        error = internal_failure(model.name)
        request_id = new_request_id()
        if self.protocol in ("json", "rest-json"):
            body = json.dumps({"__type": error.code, "message": error.message}).encode()
            return 500, {"x-amzn-RequestId": request_id}, body
        if self.protocol == "rest-xml":
            return (
                500,
                {"x-amz-request-id": request_id},
                xml_wire.s3_error(error.code, error.message, request_id, ""),
            )
        return (
            500,
            {"x-amzn-RequestId": request_id},
            xml_wire.query_error(error.code, error.message, request_id, "", sender=False),
        )

    def _response(self, model: OperationModel, params: dict, status: int, headers: dict, body: Any):
        streaming = hasattr(body, "read")
        if streaming and (status >= 300 or not model.has_streaming_output):
            data = body.read()
            if hasattr(body, "close"):
                body.close()
            body, streaming = data, False
        raw = body if streaming else _Raw(body or b"")
        http = AWSResponse(params.get("url", ""), status, headers, raw)
        response = {"status_code": status, "headers": http.headers, "context": {"operation_name": model.name}}
        if streaming:
            response["body"] = StreamingBody(raw, http.headers.get("content-length"))
        else:
            response["body"] = body or b""
        parser = create_parser(self.protocol)
        parsed = parser.parse(response, model.output_shape)
        if status >= 300:
            self._add_modeled_error_fields(response, parsed, model, parser)
        parsed.setdefault("ResponseMetadata", {})["RetryAttempts"] = 0
        return http, parsed

    @staticmethod
    def _add_modeled_error_fields(response: dict, parsed: dict, model: OperationModel, parser) -> None:
        """As botocore's endpoint does: the modeled members of a known error code."""
        code = parsed.get("Error", {}).get("Code")
        if code is None:
            return
        shape = model.service_model.shape_for_error_code(code)
        if shape is None:
            return
        parsed.update(parser.parse(response, shape))
