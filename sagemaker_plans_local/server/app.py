"""The server's WSGI application: one port for every emulated service and the control API.

A request's credential scope picks the service and region, its access key the
account (``server/routing.py``); the service's own ``handle`` answers, as it
does in process. Nothing a client sends raises out of here: a refusal is an
AWS-shaped 4xx, a bug of ours an ``InternalFailure`` 500.
"""

from __future__ import annotations

import functools
import json
import logging
from http import HTTPStatus
from typing import Any, Callable, Iterable, Iterator, Mapping

from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import ClientDisconnected
from werkzeug.wrappers import Response

from sagemaker_plans_local.protocol.answers import Answer, JsonBody
from sagemaker_plans_local.server import control, guard, payload, routing, s3_routes, signatures
from sagemaker_plans_local.server.accounts import Accounts
from sagemaker_plans_local.server.errors import RouteError, error_answer, refusal
from sagemaker_plans_local.server.wsgi_request import WsgiRequest
from sagemaker_plans_local.services.s3.rules import RangeReader

log = logging.getLogger(__name__)

#: The largest JSON or query request body read (AWS's own limits are far smaller).
MAX_BODY = 16 * 1024 * 1024
#: The largest S3 request body (S3's single PutObject limit); streamed, never held in memory.
MAX_STREAM = 5 * 1024**3
_CHUNK = 1024 * 1024
_REASONS = {status.value: status.phrase for status in HTTPStatus}
#: What :meth:`ServerApp.respond` gives: a WSGI answer, called with ``(environ, start_response)``.
WSGIResponse = Callable[[dict, Any], Iterable[bytes]]


class ServerApp:
    """The WSGI application over ``accounts``; ``allow_real_keys`` lets real-looking access keys in.

    ``credentials`` (access key id -> secret) turns SigV4 checking on: every request must be
    signed by one of them (``server/signatures.py``), a control request too (``server/guard.py``).
    ``admin_credentials`` are keys as well, which on the control API also act server-wide
    (``control.admin_keys``). ``host_guard`` says which ``Host`` names are answered (default: loopback only).
    """

    def __init__(
        self,
        accounts: Accounts,
        allow_real_keys: bool = False,
        credentials: Mapping[str, str] | None = None,
        host_guard: guard.Guard | None = None,
        admin_credentials: Mapping[str, str] | None = None,
    ) -> None:
        self.accounts = accounts
        self.allow_real_keys = allow_real_keys
        self.credentials = {**(credentials or {}), **(admin_credentials or {})}
        self._admins = control.admin_keys(credentials or {}, admin_credentials or {})
        self.guard = host_guard or _loopback_guard()

    def __call__(self, environ: dict, start_response: Any) -> Iterable[bytes]:
        request = WsgiRequest(environ)
        try:  # who may call: checked before anything is read or acted on
            refused = self.guard.refusal(request.headers)
            response = self.respond(request) if refused is None else _forbidden(request, refused)
        except Exception:  # a bug of ours: still an AWS-shaped answer
            log.exception("internal error answering %s %s", request.method, request.path)
            failure = RouteError(
                "InternalFailure", "The server failed; this is a bug in sagemaker-plans-local.", 500
            )
            response = _response(error_answer(routing.guess_family(request.headers), failure))
        return response(environ, start_response)

    def respond(self, request: WsgiRequest) -> WSGIResponse:
        """The answer to one request."""
        if request.path.startswith(control.PREFIX):
            status, document = self._control(request)
            return Response(json.dumps(document), status, content_type="application/json")
        family = routing.guess_family(request.headers)
        try:
            scope = routing.scope(request.headers, request.query_string.decode("latin-1"))
            family = routing.family_of(scope.service)
            if routing.looks_real(scope.access_key_id) and not self.allow_real_keys:
                raise refusal(
                    "real-key",
                    family,
                    "The access key looks like a real AWS key; sagemaker-plans-local refuses it "
                    "(start the server with --allow-real-keys to accept it).",
                    403,
                )
            return _response(self._service_answer(request, scope, family), head=request.method == "HEAD")
        except RouteError as error:
            return _response(error_answer(family, error, head=request.method == "HEAD"))

    def _control(self, request: WsgiRequest) -> tuple[int, control.Document]:
        """The control API's answer: signed under ``--access-key`` (the key says who calls), a POST's
        body JSON and bounded."""
        headers = request.headers
        refused = request.method == "POST" and guard.control_type_refusal(request.content_type)
        if refused:
            return 415, {"error": "UnsupportedMediaType", "message": refused}
        try:
            body = _read(request, MAX_BODY, "json") if request.method == "POST" else b""
        except RouteError as error:
            code = "RequestEntityTooLarge" if error.status == 413 else "BadRequest"
            return error.status, {"error": code, "message": error.message}
        if self.credentials:
            query = request.query_string.decode("latin-1")
            url = f"http://{request.host}{_raw_path(request)}" + (f"?{query}" if query else "")
            refused = guard.control_signature_refusal(request.method, url, headers, body, self.credentials)
            if refused:
                return 403, {"error": "AccessDenied", "message": refused}
            key = guard.control_key_id(headers) or ""
            caller = control.Caller(routing.account_for(key), key in self._admins)
        else:
            caller = control.Caller()  # no keys: anyone may do anything
        return control.answer(self.accounts, request.method, request.path, request.args, body, caller)

    def _service_answer(self, request: WsgiRequest, scope: routing.Scope, family: str) -> Answer:
        backend = self.accounts.serving(scope.account)
        if family == "rest-xml":
            payload.check_headers(request.headers)
            signing = self._check_signature(request, scope, family, b"")
            operation_name, request_dict = _s3_request(request)
            if signing is not None:
                payload.require_chunk_signatures(request_dict, signing.chunk_signer())
        else:
            body = _read(request, MAX_BODY, family)
            self._check_signature(request, scope, family, body)
            if family == "json":
                operation_name = routing.json_operation(
                    scope.service, request.method, request.headers.get("X-Amz-Target")
                )
            else:
                if request.method == "GET":  # the query protocol's parameters in the URL
                    body = request.query_string
                operation_name = routing.query_operation(scope.service, request.method, body, request.args)
            request_dict = _request_dict(request, body)
        return backend.service(scope.service).handle(scope.region, operation_name, request_dict)

    def _check_signature(
        self, request: WsgiRequest, scope: routing.Scope, family: str, body: bytes
    ) -> signatures.Signing | None:
        """The verified request's signing (None while signatures are not checked)."""
        if not self.credentials:
            return None
        signed = signatures.SignedRequest(
            request.method,
            request.host,
            _raw_path(request),
            request.query_string.decode("latin-1"),
            request.headers,
            body,
        )
        return signatures.verify(
            signed, scope.credential, self.credentials, routing.signing_name(scope.service), family
        )


def _loopback_guard() -> guard.Guard:
    return guard.Guard("localhost")


def _forbidden(request: WsgiRequest, message: str) -> WSGIResponse:
    """A request :class:`guard.Guard` refuses: 403, as the control API or the request's protocol answers."""
    if request.path.startswith(control.PREFIX):
        document = {"error": "Forbidden", "message": message}
        return Response(json.dumps(document), 403, content_type="application/json")
    family = routing.guess_family(request.headers)
    error = RouteError(guard.FORBIDDEN[family], message, 403)
    return _response(error_answer(family, error, head=request.method == "HEAD"))


def _request_dict(request: WsgiRequest, body: Any) -> dict:
    """The request as botocore hands it to a ``before-call`` handler (its URL as sent)."""
    raw = _raw_uri(request)
    return {
        "body": body,
        "headers": _headers(request.environ),
        "method": request.method,
        "url_path": raw.split("?", 1)[0],
        "query_string": request.args.to_dict(),
        "url": f"{request.scheme}://{request.host}{raw}",
        "context": {},
    }


def _headers(environ: Mapping[str, Any]) -> dict[str, str]:
    """The request's headers by their HTTP names (``X-Amz-Target``), as werkzeug names them."""
    headers = {}
    for key, value in environ.items():
        if key[:5] == "HTTP_":
            headers[_header_name(key)] = value
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            headers[_header_name(key)] = environ[key]
    return headers


@functools.lru_cache(maxsize=1024)
def _header_name(key: str) -> str:
    """An environ key's header name: ``HTTP_X_AMZ_TARGET`` -> ``X-Amz-Target``."""
    return (key[5:] if key[:5] == "HTTP_" else key).replace("_", "-").title()


def _raw_path(request: WsgiRequest) -> str:
    """The path as sent (still percent-encoded)."""
    return _raw_uri(request).split("?", 1)[0]


def _raw_uri(request: WsgiRequest) -> str:
    """The path and query as sent (still percent-encoded)."""
    return request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or request.full_path


def _s3_request(request: WsgiRequest) -> tuple[str, dict]:
    """S3's operation and request, from ``server.s3_routes``."""
    if request.content_length is not None and request.content_length > MAX_STREAM:
        raise refusal("too-large", "rest-xml", f"The body is larger than {MAX_STREAM} bytes.", 400)
    try:
        operation_name, request_dict = s3_routes.route(
            request.method,
            request.path,
            MultiDict(request.args),
            request.headers,
            request.host,
            body=request.stream,
        )
    except s3_routes.S3RouteError as error:
        raise RouteError(error.code, error.message, error.status) from None
    return operation_name, request_dict


def _read(request: WsgiRequest, limit: int, family: str) -> bytes:
    """The whole body, at most ``limit`` bytes (more is a 413 in the family's shape)."""
    too_large = refusal("too-large", family, f"The request body is larger than {limit} bytes.", 413)
    if request.content_length is not None and request.content_length > limit:
        raise too_large
    incomplete = RouteError("IncompleteBody", "The request body ended before its announced length.", 400)
    # read no more than announced: a read of ``limit + 1`` allocates that much first (16 MiB a call)
    size = limit + 1 if request.content_length is None else request.content_length + 1
    try:
        body = request.stream.read(size)
    except (ClientDisconnected, OSError):  # the client went away, or broken chunked framing
        raise incomplete from None
    if request.content_length is not None and len(body) < request.content_length:
        raise incomplete
    if len(body) > limit:
        raise too_large
    return body


class _Answered:
    """An answer as WSGI sends it: status line, header list, body (one bytes, or a stream's chunks)."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: str, headers: list[tuple[str, str]], body: Iterable[bytes]) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def __call__(self, environ: dict, start_response: Any) -> Iterable[bytes]:
        start_response(self.status, self.headers)
        return self.body


class _FileAnswer:
    """An answer whose body is part of a file (an S3 object over 1 MiB): handed to the WSGI server's
    ``wsgi.file_wrapper`` (PEP 3333), which sends it from the file while the worker moves on; read in
    chunks where there is none. Its ``Content-Length`` is the part's length (the wrapper sends no more)."""

    __slots__ = ("status", "headers", "reader")

    def __init__(self, status: str, headers: list[tuple[str, str]], reader: RangeReader) -> None:
        self.status = status
        self.headers = headers
        self.reader = reader

    def __call__(self, environ: dict, start_response: Any) -> Iterable[bytes]:
        start_response(self.status, self.headers)
        wrapper = environ.get("wsgi.file_wrapper")
        if wrapper is None:
            return _chunks(self.reader)
        return wrapper(self.reader.handover(), _CHUNK)


def _response(answer: Answer, head: bool = False) -> WSGIResponse:
    """A service's :class:`Answer` as a WSGI answer (a stream is sent in chunks, never held).

    A bytes body gets its ``Content-Length``; the answer to a HEAD request keeps the one the
    service gave (S3's object size). A header value with CR or LF is a ``ValueError``.
    """
    body = answer.body
    if isinstance(body, JsonBody):
        body = bytes(body)
    status = f"{answer.status} {_REASONS.get(answer.status, 'Unknown')}"
    headers = _header_list(answer.headers)
    if head:
        close = getattr(body, "close", None)
        if close is not None:  # a stream nobody reads
            close()
        return _Answered(status, headers, ())
    if isinstance(body, (bytes, bytearray)):
        if answer.status >= 200 and answer.status not in (204, 304):
            if not any(name.lower() == "content-length" for name, _ in headers):
                headers.append(("Content-Length", str(len(body))))
        return _Answered(status, headers, (bytes(body),))
    if isinstance(body, RangeReader) and _content_length(headers) == body.left > _CHUNK:
        return _FileAnswer(status, headers, body)
    return _Answered(status, headers, _chunks(body))


def _content_length(headers: list[tuple[str, str]]) -> int | None:
    for name, value in headers:
        if name.lower() == "content-length" and value.isdigit():
            return int(value)
    return None


def _header_list(headers: Mapping[str, Any]) -> list[tuple[str, str]]:
    listed = [(name, str(value)) for name, value in headers.items()]
    for name, value in listed:
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"the header {name!r} holds a line break")
    return listed


def _chunks(stream: Any) -> Iterator[bytes]:
    try:
        if hasattr(stream, "read"):
            while chunk := stream.read(_CHUNK):
                yield chunk
        else:
            yield from stream
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
