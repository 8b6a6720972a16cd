"""Answer a botocore client of any emulated service in-process, at its ``before-call`` event.

The service object answers the request botocore serialized with
``(status, headers, body)`` as the service would send it on the wire; the
answer is parsed by botocore's own parser for the service's protocol, so
callers get exactly what AWS clients get: modeled exceptions, ``datetime``s,
a ``StreamingBody`` for S3's GetObject. Signing and HTTP are skipped (no
credentials needed) and nothing is retried.

The hook is registered after botocore's own ``before-call`` handlers (which
only adjust the request, e.g. escape S3's DeleteObjects XML), and after
anything registered first, such as a ``botocore.stub.Stubber``. With
``fast=True`` (SageMaker's hot path) it is registered first instead, and the
service answers under ``parsing_answers``: a success's
:class:`~sagemaker_plans_local.protocol.answers.JsonBody` carries the parsed
answer, converted straight from the handler's result (``converter_for``), or
is decoded from the unserialized document by a compiled equivalent of
botocore's JSON parser (``decoder_for``; the tests check both against the
parser). ``HTTPHeaders`` then carry no content length, since the body is
serialized only if someone reads it.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Protocol

from botocore.awsrequest import AWSResponse, HeadersDict
from botocore.model import OperationModel
from botocore.parsers import PROTOCOL_PARSERS, ResponseParser
from botocore.response import StreamingBody

from sagemaker_plans_local.protocol.answers import JsonBody, parsing_answers
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.transport.response_decoder import converter_for, decoder_for
from sagemaker_plans_local.transport.timestamps import parse_wire_timestamp

log = logging.getLogger(__name__)


class Service(Protocol):
    """What a hook answers from (``protocol.service.AwsService``)."""

    def handle(
        self, region: str, operation_model: OperationModel, request: dict
    ) -> tuple[int, dict, Any]: ...

    def failure(self, operation_name: str) -> tuple[int, dict, Any]: ...


class RawBody:
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


class _DecodedResponse(AWSResponse):
    """The HTTP side of an answer parsed in-process: its ``HeadersDict`` is made if someone asks."""

    def __init__(self, url: str, status_code: int, headers: dict, raw: Any) -> None:
        self.url = url
        self.status_code = status_code
        self._headers: Any = headers
        self.raw = raw
        self._content = None

    @property  # type: ignore[override]
    def headers(self) -> HeadersDict:
        if not isinstance(self._headers, HeadersDict):
            self._headers = HeadersDict(self._headers)
        return self._headers

    @headers.setter
    def headers(self, value: Any) -> None:
        self._headers = value


class ServiceHook:
    """A ``before-call`` handler answering one service's clients from a service object.

    ``service_name`` is botocore's name (``sagemaker``, ``s3``, ``sts``, ``iam``,
    ``logs``); ``enabled`` is asked on each call and the hook stays silent
    while it returns False (the request then goes to AWS as usual); ``fast``
    is described in the module's docstring.
    """

    def __init__(
        self,
        service_name: str,
        service: Service,
        enabled: Callable[[], bool] = lambda: True,
        fast: bool = False,
    ) -> None:
        self.service_name = service_name
        self._service = service
        self._enabled = enabled
        self._fast = fast

    @functools.cached_property
    def protocol(self) -> str:
        """The service's wire protocol as botocore's clients resolve it (``json`` where a model lists
        ``smithy-rpc-v2-cbor`` first): read on first use, not on construction."""
        return service_model(self.service_name).resolved_protocol

    @functools.cached_property
    def event_name(self) -> str:
        return f"before-call.{service_model(self.service_name).service_id.hyphenize()}"

    @functools.cached_property
    def _parser(self) -> ResponseParser:
        return PROTOCOL_PARSERS[self.protocol](timestamp_parser=parse_wire_timestamp)

    def attach(self, client: Any) -> None:
        """Make ``client`` (of this hook's service) answered by the hook."""
        name = client.meta.service_model.service_name
        if name != self.service_name:
            raise ValueError(f"this hook answers {self.service_name}, not {name}")
        event_name = f"before-call.{client.meta.service_model.service_id.hyphenize()}"
        register = client.meta.events.register_first if self._fast else client.meta.events.register
        register(event_name, self, unique_id=f"sagemaker-plans-local-{id(self)}")

    def attach_to_session(self, botocore_session: Any, service_id: str | None = None) -> None:
        """Answer every client ``botocore_session`` creates later for this hook's service.

        ``service_id`` (hyphenized) spares reading the model; by default it is the model's.
        """
        event_name = f"before-call.{service_id}" if service_id else self.event_name
        botocore_session.register(event_name, self, unique_id=f"sagemaker-plans-local-{id(self)}")

    def __call__(self, model: OperationModel, params: dict, context: dict, **_: Any) -> Any:
        if not self._enabled():
            return None
        region = context.get("client_region") or "us-east-1"
        try:
            if self._fast:
                with parsing_answers(self._convert):
                    status, headers, body = self._service.handle(region, model, params)
            else:
                status, headers, body = self._service.handle(region, model, params)
            return self._response(model, params, status, headers, body)
        except Exception:  # services answer their own errors; this is a last resort
            log.exception("internal error answering %s.%s", self.service_name, model.name)
            return self._response(model, params, *self._service.failure(model.name))

    @functools.cached_property
    def _uid(self) -> str:
        return service_model(self.service_name).metadata.get("uid", self.service_name)

    def _convert(self, shape: Any, result: dict) -> dict | None:
        """The parsed answer of a handler's ``result`` for ``shape`` (None: decode its document)."""
        convert = converter_for(shape, self._uid)
        return None if convert is None else convert(result)

    def _response(self, model: OperationModel, params: dict, status: int, headers: dict, body: Any) -> Any:
        if self._fast and status < 300 and isinstance(body, JsonBody):
            decoded = self._decoded(model, status, headers, body)
            if decoded is not None:
                return _DecodedResponse(params.get("url", ""), status, headers, body), decoded
        streaming = hasattr(body, "read")
        if streaming and (status >= 300 or not model.has_streaming_output):
            data = body.read()
            if hasattr(body, "close"):
                body.close()
            body, streaming = data, False
        raw = body if streaming or isinstance(body, JsonBody) else RawBody(body or b"")
        http = AWSResponse(params.get("url", ""), status, headers, raw)
        response = {"status_code": status, "headers": http.headers, "context": {"operation_name": model.name}}
        if streaming:
            response["body"] = StreamingBody(raw, http.headers.get("content-length"))
        else:
            response["body"] = http.content
        parsed = self._parser.parse(response, model.output_shape)
        if status >= 300:
            self._add_modeled_error_fields(response, parsed, model)
        parsed.setdefault("ResponseMetadata", {})["RetryAttempts"] = 0
        return http, parsed

    def _decoded(self, model: OperationModel, status: int, headers: dict, body: JsonBody) -> dict | None:
        """The converted or compiled decoder's answer, or None where botocore's parser must read it."""
        shape = model.output_shape
        if body.parsed is not None:
            parsed = body.parsed
        elif shape is None:
            parsed = {}
        else:
            decode = decoder_for(shape, model.service_model.metadata.get("uid", self.service_name))
            if decode is None:
                return None
            parsed = decode(body.document)
        parsed["ResponseMetadata"] = {
            "RequestId": headers["x-amzn-requestid"],
            "HTTPStatusCode": status,
            "HTTPHeaders": headers,
            "RetryAttempts": 0,  # as botocore's endpoint reports a first-try answer
        }
        return parsed

    def _add_modeled_error_fields(self, response: dict, parsed: dict, model: OperationModel) -> None:
        """As botocore's endpoint does: the modeled members of a known error code."""
        code = parsed.get("Error", {}).get("Code")
        if code is None:
            return
        shape = model.service_model.shape_for_error_code(code)
        if shape is None:
            return
        parsed.update(self._parser.parse(response, shape))
