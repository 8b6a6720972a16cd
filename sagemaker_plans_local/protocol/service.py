"""What the SageMaker SDK needs besides SageMaker: STS, IAM, S3 and CloudWatch Logs.

Each service is a class whose ``handle(region, operation_model, request_dict)``
answers one request botocore serialized, with ``(status, headers, body)`` as
the service would send them on the wire (``body``: bytes, or a binary stream
for S3's GetObject). :class:`~sagemaker_plans_local.transport.service_hook.ServiceHook`
hands that answer to botocore's own parser for the service's protocol.

Requests are read back and answers written from the botocore shapes
(:mod:`.xml_wire` for rest-xml and query, :mod:`.wire` for JSON). An
operation a service does not implement answers HTTP 501 ``NotImplemented``
naming it; a bug answers HTTP 500 ``InternalFailure``; neither raises.

This module holds the shared machinery; the services live in :mod:`.s3`,
:mod:`.sts`, :mod:`.iam` and :mod:`.logs` and are re-exported here.
"""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any, Callable, ClassVar

from botocore.model import OperationModel

from sagemaker_plans_local.core.errors import DomainError
from sagemaker_plans_local.protocol import xml_wire
from sagemaker_plans_local.protocol.errors import ApiError, constraint_violations
from sagemaker_plans_local.protocol.json_wire import encode_output, read_request
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.protocol.validation import violations

log = logging.getLogger(__name__)

Answer = tuple[int, dict, Any]
Handler = Callable[[str, dict], Any]


class ServiceError(Exception):
    """An error the service answers with: code, message, HTTP status, extra fields (S3)."""

    def __init__(
        self, code: str, message: str, status: int = 400, fields: dict | None = None, sender: bool = True
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.fields = fields or {}
        self.sender = sender

    def __repr__(self) -> str:
        return f"ServiceError({self.code!r}, {self.message!r}, {self.status})"


def not_implemented(service_name: str, operation_name: str) -> ServiceError:
    return ServiceError(
        "NotImplemented",
        f"The operation {operation_name} of {service_name} is not implemented by the "
        "sagemaker-plans-local backend; see docs/backend.md for the operations it emulates.",
        status=501,
        sender=False,
    )


def internal_failure(operation_name: str) -> ServiceError:
    return ServiceError(
        "InternalFailure",
        f"The backend failed to answer {operation_name}; this is a bug in sagemaker-plans-local.",
        status=500,
        sender=False,
    )


def operation(name: str) -> Callable[[Handler], Handler]:
    """Mark a method as the handler of the operation ``name``: ``handler(region, params) -> result``."""

    def mark(function: Handler) -> Handler:
        function.aws_operation = name
        return function

    return mark


def new_request_id() -> str:
    return secrets.token_hex(16).upper()


class AwsService:
    """The shared part of every emulated service; subclasses set the protocol hooks.

    ``on_request`` (optional) runs before each implemented operation, e.g.
    to let the backend's clock apply the state changes that are due.
    """

    service_name: ClassVar[str]
    #: domain error class -> (code, HTTP status); the first matching class wins.
    ERRORS: ClassVar[tuple[tuple[type, str, int], ...]] = ()

    def __init__(self, on_request: Callable[[], None] | None = None) -> None:
        self.model = service_model(self.service_name)
        self.protocol = self.model.metadata["protocol"]
        self._on_request = on_request
        self._handlers: dict[str, Callable[[str, dict], Any]] = {}
        for attribute in dir(type(self)):
            function = getattr(type(self), attribute)
            name = getattr(function, "aws_operation", None)
            if name is not None:
                self._handlers[name] = getattr(self, attribute)

    @property
    def operations(self) -> list[str]:
        """The operations answered (every other one is ``NotImplemented``)."""
        return sorted(self._handlers)

    def handle(self, region: str, operation_model: OperationModel | str, request_dict: dict) -> Answer:
        """Answer one serialized request: (HTTP status, headers, body)."""
        name = operation_model if isinstance(operation_model, str) else operation_model.name
        request_id = new_request_id()
        try:
            handler = self._handlers.get(name)
            if handler is None:
                raise not_implemented(self.model.service_name, name)
            if self._on_request is not None:
                self._on_request()
            model = self.model.operation_model(name)
            return self._answer(handler, region, model, request_dict or {}, request_id)
        except ServiceError as error:
            return self._error(error, name, request_id)
        except Exception:  # a bug of ours must still reach the caller AWS-shaped
            log.exception("internal error answering %s.%s", self.service_name, name)
            return self._error(internal_failure(name), name, request_id)

    def service_error(self, error: DomainError) -> ServiceError:
        """The service's answer to a domain error (``TypeError`` if unmapped: a bug)."""
        for kind, code, status in self.ERRORS:
            if isinstance(error, kind):
                return ServiceError(code, error.message, status)
        raise TypeError(f"unmapped domain error {type(error).__name__}")

    def _call(self, handler: Callable[[str, dict], Any], region: str, params: dict) -> Any:
        try:
            return handler(region, params)
        except DomainError as error:
            raise self.service_error(error) from None

    # -- protocol hooks -------------------------------------------------------------------
    def _answer(
        self, handler, region: str, model: OperationModel, request_dict: dict, request_id: str
    ) -> Answer:
        raise NotImplementedError

    def _error(self, error: ServiceError, operation_name: str, request_id: str) -> Answer:
        raise NotImplementedError


class QueryService(AwsService):
    """An AWS query-protocol service (STS, IAM): form fields in, XML out."""

    VALIDATION_CODE: ClassVar[str] = "ValidationError"

    @property
    def namespace(self) -> str:
        return (
            self.model.metadata.get("xmlNamespace")
            or f"https://{self.service_name}.amazonaws.com/doc/{self.model.api_version}/"
        )

    def _answer(self, handler, region, model, request_dict, request_id):
        try:
            params = xml_wire.read_query_request(model.input_shape, request_dict.get("body"))
        except xml_wire.MalformedRequest as error:
            raise ServiceError("MalformedQueryString", error.message) from None
        if model.input_shape is not None:
            problems = violations(model.input_shape, params)
            if problems:
                raise ServiceError(self.VALIDATION_CODE, constraint_violations(problems).message)
        result = self._call(handler, region, params) or {}
        body = xml_wire.query_response(model, result, request_id, self.namespace)
        return 200, {"x-amzn-RequestId": request_id, "Content-Type": "text/xml"}, body

    def _error(self, error, operation_name, request_id):
        body = xml_wire.query_error(error.code, error.message, request_id, self.namespace, error.sender)
        return error.status, {"x-amzn-RequestId": request_id, "Content-Type": "text/xml"}, body


class JsonService(AwsService):
    """An AWS JSON-protocol service (CloudWatch Logs)."""

    VALIDATION_CODE: ClassVar[str] = "ValidationException"

    @property
    def content_type(self) -> str:
        return f"application/x-amz-json-{self.model.metadata.get('jsonVersion', '1.1')}"

    def _answer(self, handler, region, model, request_dict, request_id):
        try:
            params = read_request(model.input_shape, xml_wire.read_body(request_dict.get("body")))
        except ApiError as error:  # what the JSON deserializer refuses
            raise ServiceError(error.code, error.message) from None
        if model.input_shape is not None:
            problems = violations(model.input_shape, params)
            if problems:
                raise ServiceError(self.VALIDATION_CODE, constraint_violations(problems).message)
        result = self._call(handler, region, params) or {}
        document = encode_output(model.output_shape, result) if model.output_shape is not None else {}
        return (
            200,
            {"x-amzn-RequestId": request_id, "Content-Type": self.content_type},
            json.dumps(document).encode("utf-8"),
        )

    def _error(self, error, operation_name, request_id):
        document = {"__type": error.code, "message": error.message}
        return (
            error.status,
            {"x-amzn-RequestId": request_id, "Content-Type": self.content_type},
            json.dumps(document).encode("utf-8"),
        )


def __getattr__(name: str) -> Any:  # re-export the services without an import cycle
    if name == "S3Api":
        from sagemaker_plans_local.services.s3.api import S3Api

        return S3Api
    if name == "StsApi":
        from sagemaker_plans_local.services.iam_sts.sts import StsApi

        return StsApi
    if name == "IamApi":
        from sagemaker_plans_local.services.iam_sts.iam import IamApi

        return IamApi
    if name == "LogsApi":
        from sagemaker_plans_local.services.logs.api import LogsApi

        return LogsApi
    raise AttributeError(name)
