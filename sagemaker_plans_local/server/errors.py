"""Errors the server answers itself (no credential, a bad route, a body too large), AWS-shaped.

Each has the shape of the protocol the request was for: awsJson's
``{"__type", "message"}``, the query protocol's ``<ErrorResponse>`` and S3's
``<Error>`` document (no body for a HEAD request).
"""

from __future__ import annotations

from sagemaker_plans_local.protocol import xml_wire
from sagemaker_plans_local.protocol.answers import Answer, JsonBody
from sagemaker_plans_local.protocol.request_ids import new_request_id

#: The query protocol's namespace when the request does not say which query service it is for.
QUERY_NAMESPACE = "https://sts.amazonaws.com/doc/2011-06-15/"
#: The error code of each kind of refusal, by protocol family ("json", "query", "rest-xml").
CODES = {
    "missing-credential": {
        "json": "MissingAuthenticationTokenException",
        "query": "MissingAuthenticationToken",
        "rest-xml": "AccessDenied",
    },
    "real-key": {
        "json": "UnrecognizedClientException",
        "query": "InvalidClientTokenId",
        "rest-xml": "InvalidAccessKeyId",
    },
    "too-large": {
        "json": "RequestEntityTooLargeException",
        "query": "RequestEntityTooLarge",
        "rest-xml": "EntityTooLarge",
    },
}


class RouteError(Exception):
    """A request the server refuses before any service sees it: ``code``, ``message``, HTTP ``status``."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def refusal(kind: str, family: str, message: str, status: int) -> RouteError:
    """The :class:`RouteError` of a kind listed in :data:`CODES`, coded for ``family``."""
    return RouteError(CODES[kind][family], message, status)


def error_answer(family: str, error: RouteError, namespace: str | None = None, head: bool = False) -> Answer:
    """``error`` as the ``family``'s protocol answers it."""
    request_id = new_request_id()
    if family == "json":
        headers = {"x-amzn-requestid": request_id, "content-type": "application/x-amz-json-1.1"}
        return Answer(error.status, headers, JsonBody({"__type": error.code, "message": error.message}))
    if family == "query":
        body = xml_wire.query_error(error.code, error.message, request_id, namespace or QUERY_NAMESPACE)
        return Answer(error.status, {"x-amzn-RequestId": request_id, "Content-Type": "text/xml"}, body)
    headers = {"x-amz-request-id": request_id, "x-amz-id-2": request_id}
    if head:
        return Answer(error.status, headers, b"")
    headers["Content-Type"] = "application/xml"
    return Answer(error.status, headers, xml_wire.s3_error(error.code, error.message, request_id, request_id))
