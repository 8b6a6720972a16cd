"""The base of every emulated service: one request path from a serialized request to an HTTP answer.

A service answers ``handle(region, operation, request)`` with an :class:`Answer`
``(status, headers, body)``, as the service would send it over HTTP. ``request``
is what botocore serialized (the ``request_dict`` a ``before-call`` handler
receives: ``body``, ``url_path``, ``query_string``, ``headers`` ...). The base
does what every service shares: the handler registry (``@operation``), request
ids, reading and validating the request against the model, the domain-error
table, ``NotImplemented`` (HTTP 501) for an operation not answered and
``InternalFailure`` (HTTP 500) for a bug; nothing raises.

The protocol subclasses read requests and write answers: :class:`JsonService`
(awsJson: SageMaker, CloudWatch Logs) keeps its answer a :class:`JsonBody`, the
wire document serialized only when someone reads it (under ``parsing_answers``, an
in-process caller's, the handler's result goes straight to botocore's parsed form); :class:`QueryService`
(STS, IAM) writes XML; S3's rest-xml lives in ``services/s3/protocol.py``.
:class:`~sagemaker_plans_local.transport.service_hook.ServiceHook` hands the
answer to botocore.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import logging
from typing import Any, Callable, ClassVar, Iterator, TypeVar

from botocore.model import OperationModel

from sagemaker_plans_local.core.errors import DomainError
from sagemaker_plans_local.protocol.answers import Answer, JsonBody, answer_parser
from sagemaker_plans_local.protocol.errors import ApiError, constraint_violations
from sagemaker_plans_local.protocol.json_wire import encode_output, read_request
from sagemaker_plans_local.protocol.request_ids import new_request_id
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.protocol.validation import violations

log = logging.getLogger(__name__)

#: An operation's handler: ``handler(region, params) -> result`` (a dict of output members).
Handler = Callable[[str, dict], Any]
_Function = TypeVar("_Function", bound=Callable[..., Any])
_OPERATION = "aws_operation"
#: The request key of parameters already read (a direct call's, ``transport/direct_request.py``): a
#: JSON service takes them as read from the body, then validates them as any request's.
DECODED_PARAMS = "decoded_params"
#: Whether requests answered in this context were validated before (a journal's replay).
_TRUSTED = contextvars.ContextVar("trusted_requests", default=False)


def operation(name: str) -> Callable[[_Function], _Function]:
    """Mark a method as the handler of the operation ``name``: ``handler(region, params) -> result``."""

    def mark(function: _Function) -> _Function:
        setattr(function, _OPERATION, name)
        return function

    return mark


@contextlib.contextmanager
def trusted() -> Iterator[None]:
    """Answer requests in the block without validating them against the model (this thread only).

    For a durable root's replay: a journaled request was valid when it was journaled.
    """
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def internal_failure(operation_name: str) -> ApiError:
    return ApiError(
        "InternalFailure",
        f"The backend failed to answer {operation_name}; this is a bug in sagemaker-plans-local.",
        status=500,
        sender=False,
    )


#: What a write answers when the disk holding the backend's files takes no more.
NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def no_room(error: OSError) -> ApiError:
    """A write the machine could not take: its fault, not the request's (docs/behaviours.md)."""
    return ApiError(
        "ServiceUnavailable",
        f"The backend could not write its files ({error.strerror}); make room, then retry.",
        status=503,
        sender=False,
    )


class AwsService:
    """The shared part of every emulated service; subclasses set the protocol hooks.

    ``on_request`` (optional) runs before each implemented operation, e.g.
    to let the backend's clock apply the state changes that are due.
    """

    service_name: ClassVar[str]
    #: domain error class -> (code, HTTP status); the first matching class wins.
    ERRORS: ClassVar[tuple[tuple[type[DomainError], str, int], ...]] = ()
    #: the code of a request that violates the model's constraints.
    VALIDATION_CODE: ClassVar[str] = "ValidationException"
    #: whether ``NotImplemented`` names the service (SageMaker's, the backend's own, does not).
    NAMED_IN_ERRORS: ClassVar[bool] = True

    def __init__(self, on_request: Callable[[], None] | None = None) -> None:
        self.model = service_model(self.service_name)
        self.protocol: str = self.model.resolved_protocol  # what botocore speaks (its first supported)
        self._on_request = on_request
        self._handlers: dict[str, Handler] = self.handlers()

    def handlers(self) -> dict[str, Handler]:
        """The operations answered, by name: by default the methods marked ``@operation``."""
        found: dict[str, Handler] = {}
        for attribute in dir(type(self)):
            name = getattr(getattr(type(self), attribute), _OPERATION, None)
            if name is not None:
                found[name] = getattr(self, attribute)
        return found

    @property
    def operations(self) -> list[str]:
        """The operations answered (every other one is ``NotImplemented``)."""
        return sorted(self._handlers)

    def handle(self, region: str, operation_model: OperationModel | str, request: dict | None) -> Answer:
        """Answer one serialized request: (HTTP status, headers, body)."""
        name = operation_model if isinstance(operation_model, str) else operation_model.name
        request_id = new_request_id()
        try:
            handler = self._handlers.get(name)
            if handler is None:
                raise self.not_implemented(name)
            if self._on_request is not None:
                self._on_request()
            model = self.model.operation_model(name)
            return self._answer(handler, region, model, request or {}, request_id)
        except ApiError as error:
            return self._error(error, name, request_id)
        except Exception as error:  # a bug of ours (or a full disk) must still reach the caller AWS-shaped
            if isinstance(error, OSError) and error.errno in NO_ROOM:
                return self._error(no_room(error), name, request_id)
            log.exception("internal error answering %s.%s", self.service_name, name)
            return self._error(internal_failure(name), name, request_id)

    def failure(self, operation_name: str) -> Answer:
        """The ``InternalFailure`` answer, for a caller that could not use :meth:`handle`'s."""
        return self._error(internal_failure(operation_name), operation_name, new_request_id())

    def error_answer(self, error: ApiError, operation_name: str) -> Answer:
        """The answer to ``error``, for a caller that answers a request without :meth:`handle`."""
        return self._error(error, operation_name, new_request_id())

    def not_implemented(self, operation_name: str) -> ApiError:
        """The answer to an operation the service does not implement (HTTP 501)."""
        owner = f" of {self.service_name}" if self.NAMED_IN_ERRORS else ""
        return ApiError(
            "NotImplemented",
            f"The operation {operation_name}{owner} is not implemented by the sagemaker-plans-local "
            "backend; see docs/backend.md for the operations it emulates.",
            status=501,
            sender=False,
        )

    def service_error(self, error: DomainError) -> ApiError:
        """The service's answer to a domain error (``TypeError`` if unmapped: a bug)."""
        for kind, code, status in self.ERRORS:
            if isinstance(error, kind):
                return ApiError(code, error.message, status)
        raise TypeError(f"unmapped domain error {type(error).__name__}")

    def _validate(self, model: OperationModel, params: dict) -> None:
        if model.input_shape is not None and not _TRUSTED.get():
            problems = violations(model.input_shape, params)
            if problems:
                raise ApiError(self.VALIDATION_CODE, constraint_violations(problems).message)

    def _call(self, handler: Handler, region: str, params: dict) -> Any:
        """Run the handler (the request guard: subclasses wrap it, e.g. in a lock)."""
        try:
            return handler(region, params)
        except DomainError as error:
            raise self.service_error(error) from None

    # -- protocol hooks -------------------------------------------------------------------
    def _answer(
        self, handler: Handler, region: str, model: OperationModel, request: dict, request_id: str
    ) -> Answer:
        raise NotImplementedError

    def _error(self, error: ApiError, operation_name: str, request_id: str) -> Answer:
        raise NotImplementedError


class QueryService(AwsService):
    """An AWS query-protocol service (STS, IAM): form fields in, XML out."""

    VALIDATION_CODE = "ValidationError"

    @property
    def namespace(self) -> str:
        return (
            self.model.metadata.get("xmlNamespace")
            or f"https://{self.service_name}.amazonaws.com/doc/{self.model.api_version}/"
        )

    def _answer(
        self, handler: Handler, region: str, model: OperationModel, request: dict, request_id: str
    ) -> Answer:
        from sagemaker_plans_local.protocol import xml_wire  # loaded with the first query service

        try:
            params = xml_wire.read_query_request(model.input_shape, request.get("body"))
        except xml_wire.MalformedRequest as error:
            raise ApiError("MalformedQueryString", error.message) from None
        self._validate(model, params)
        result = self._call(handler, region, params) or {}
        body = xml_wire.query_response(model, result, request_id, self.namespace)
        return Answer(200, {"x-amzn-RequestId": request_id, "Content-Type": "text/xml"}, body)

    def _error(self, error: ApiError, operation_name: str, request_id: str) -> Answer:
        from sagemaker_plans_local.protocol import xml_wire

        body = xml_wire.query_error(error.code, error.message, request_id, self.namespace, error.sender)
        return Answer(error.status, {"x-amzn-RequestId": request_id, "Content-Type": "text/xml"}, body)


class JsonService(AwsService):
    """An AWS JSON-protocol service (SageMaker, CloudWatch Logs): its answers' bodies are JsonBody."""

    def __init__(self, on_request: Callable[[], None] | None = None) -> None:
        super().__init__(on_request)
        self.content_type = f"application/x-amz-json-{self.model.metadata.get('jsonVersion', '1.1')}"

    def _answer(
        self, handler: Handler, region: str, model: OperationModel, request: dict, request_id: str
    ) -> Answer:
        params = request.get(DECODED_PARAMS)
        if params is None:
            body = request.get("body")
            params = read_request(model.input_shape, body if isinstance(body, bytes) else _bytes(body))
        self._validate(model, params)
        result = self._call(handler, region, params) or {}
        shape = model.output_shape
        if shape is None:
            return Answer(200, self._headers(request_id), JsonBody({}))
        parse = answer_parser()
        parsed = parse(shape, result) if parse is not None else None
        if parsed is not None:  # an in-process caller's answer: the wire document only if it is read
            body = JsonBody.parsed_as(parsed, lambda: encode_output(shape, result))
            return Answer(200, self._headers(request_id), body)
        return Answer(200, self._headers(request_id), JsonBody(encode_output(shape, result)))

    def _error(self, error: ApiError, operation_name: str, request_id: str) -> Answer:
        document = {"__type": error.code, "message": error.message}
        return Answer(error.status, self._headers(request_id), JsonBody(document))

    def _headers(self, request_id: str) -> dict[str, str]:
        return {"x-amzn-requestid": request_id, "content-type": self.content_type}


def _bytes(body: Any) -> bytes:
    """A request body botocore handed as other than bytes (str, a stream, nothing)."""
    from sagemaker_plans_local.protocol.xml_codec import read_body

    return read_body(body)
