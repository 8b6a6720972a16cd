"""S3 over HTTP: which S3 operation a request is, and the ``request_dict`` its service reads.

Contract (for the server app)::

    route(method, path, query, headers, host, body=b"") -> (operation_name, request_dict)

- ``path``: the request path, percent-decoded (WSGI ``PATH_INFO``, werkzeug's
  ``request.path``); ``query``: the parsed query string (a ``dict`` of lists
  or a werkzeug ``MultiDict``; the first value of each key counts);
  ``headers``: the request headers; ``host``: the ``Host`` the request was
  sent to (port allowed); ``body``: bytes or a readable stream, passed on
  unread (PutObject and UploadPart stream it), through ``server/payload.py``:
  an ``aws-chunked`` body is decoded as it is read and every digest the
  request announces is checked when the body ends. Every body is read under
  its operation's limit (``services/s3/rules.py``, ``body_limit``): an
  announced length over it is an :class:`S3RouteError`, and reading past it
  raises the limit's ``ApiError`` (the rest is never read).
- The answer is what botocore builds for the S3 service (``url_path`` and
  ``auth_path`` the path-style ``/<bucket>/<key>``, percent-encoded as
  botocore encodes it; ``query_string``, ``headers``, ``method``, ``body``,
  ``url``, ``context``), ready for ``services.get("s3").handle(region, name, request_dict)``.
- No S3 operation has this method on this path and query, or the best one lacks
  a required query or header member (POST on a key without ``uploadId``):
  :class:`S3RouteError` (``code``, ``message``, ``status``), which the app answers
  as S3's ``<Error>`` document with that status.

Addressing: virtual-hosted style when the host names a bucket under a known S3
host (``<bucket>.s3.localhost``, ``<bucket>.localhost``, ``<bucket>.s3.amazonaws.com``,
``<bucket>.s3.<region>.amazonaws.com``, ``<bucket>.s3-<region>.amazonaws.com``;
the bucket is everything before the S3 host); path-style otherwise (an IP
address, ``localhost``, ``s3.localhost``, any other name).

The operation comes from the botocore S3 model: each operation's ``http.method``
and ``http.requestUri`` (its path template and literal query keys, e.g.
``/{Bucket}?list-type=2``), its required query-string and header members
(UploadPart's ``partNumber`` and ``uploadId``, CopyObject's ``x-amz-copy-source``).
Among the operations whose method, path and literal query keys match, those whose
required members are all present come first, then the most specific (most literal
and required keys, then the longest literal path), as S3 and moto choose; a tie
goes to the operation not deprecated, then to one not sent to the S3 Express
control endpoint (ListBuckets over ListDirectoryBuckets).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import quote, urlencode

from botocore.model import OperationModel
from werkzeug.exceptions import ClientDisconnected

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.server.payload import checked_body
from sagemaker_plans_local.services.s3 import rules
from sagemaker_plans_local.services.s3.rules import BodyLimit

_LABEL = re.compile(r"\{([^}+]+)(\+?)\}")
#: A virtual-hosted S3 name under amazonaws.com (matched whole: ``$`` would pass a trailing newline).
_AWS_HOST = re.compile(r"(?P<bucket>.+)\.s3(?:[.-](?:dualstack\.)?[a-z0-9-]+)?\.amazonaws\.com(?:\.cn)?")
_LOCAL_SUFFIXES = (".s3.localhost", ".localhost")
_FRAMING = 64 * 1024  # the framing an aws-chunked body may add past 1/64 of its limit (small chunks)


class S3RouteError(Exception):
    """No S3 operation answers this request: S3's error ``code``, ``message`` and HTTP ``status``."""

    def __init__(self, code: str, message: str, status: int) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True)
class _Route:
    """One S3 operation as HTTP: method, path pattern, literal query keys, required members."""

    name: str
    method: str
    path: re.Pattern[str]
    literal_path: int
    literals: tuple[tuple[str, str | None], ...]
    required_query: tuple[str, ...]
    required_headers: tuple[str, ...]
    preferred: tuple[bool, bool]

    def matches(self, method: str, path: str, query: Mapping[str, str]) -> bool:
        if method != self.method or self.path.fullmatch(path) is None:
            return False
        return all(key in query and value in (None, query[key]) for key, value in self.literals)

    def rank(self, query: Mapping[str, str], headers: Mapping[str, str]) -> tuple:
        present = sum(key in query for key in self.required_query)
        present += sum(name in headers for name in self.required_headers)
        complete = present == len(self.required_query) + len(self.required_headers)
        return (complete, len(self.literals) + present, self.literal_path, self.preferred)


def _path_pattern(template: str) -> re.Pattern[str]:
    parts, last = [], 0
    for match in _LABEL.finditer(template):
        parts.append(re.escape(template[last : match.start()]))
        parts.append(".+" if match.group(2) else "[^/]+")
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts) + ("/?" if template != "/" else ""), re.DOTALL)


def _route(operation: OperationModel) -> _Route:
    template, _, literal_query = operation.http["requestUri"].partition("?")
    literals = []
    for item in filter(None, literal_query.split("&")):
        key, sep, value = item.partition("=")
        literals.append((key, value if sep else None))
    shape = operation.input_shape
    required_query: list[str] = []
    required_headers: list[str] = []
    for name in shape.required_members if shape is not None else ():
        serialization = shape.members[name].serialization
        wire_name = serialization.get("name", name)
        if serialization.get("location") == "querystring":
            required_query.append(wire_name)
        elif serialization.get("location") == "header":
            required_headers.append(wire_name.lower())
    express = any(p.name == "UseS3ExpressControlEndpoint" for p in operation.static_context_parameters)
    return _Route(
        name=operation.name,
        method=operation.http["method"],
        path=_path_pattern(template),
        literal_path=len(_LABEL.sub("", template)),
        literals=tuple(literals),
        required_query=tuple(required_query),
        required_headers=tuple(required_headers),
        preferred=(not operation.deprecated, not express),
    )


@functools.lru_cache(maxsize=1)
def _routes() -> tuple[_Route, ...]:
    model = service_model("s3")
    return tuple(_route(model.operation_model(name)) for name in model.operation_names)


def host_bucket(host: str) -> str | None:
    """The bucket a virtual-hosted style ``host`` names, or None for path-style addressing."""
    name = host.strip().lower()
    if name.startswith("["):  # an IPv6 literal, with or without a port
        return None
    name = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
    try:
        ipaddress.ip_address(name)
        return None
    except ValueError:
        pass
    found = _AWS_HOST.fullmatch(name)
    if found:
        return found.group("bucket")
    for suffix in _LOCAL_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix) and name != "s3.localhost":
            return name[: -len(suffix)]
    return None


def _first_values(query: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in (query or {}).items():
        if isinstance(value, (list, tuple)):
            value = value[0] if value else ""
        found[str(key)] = str(value)
    return found


class _Bounded:
    """A request body as sent, read through its operation's :class:`BodyLimit`.

    Reading past ``cap`` bytes raises the limit's ``too_large`` error (the rest is never read);
    a body that ends before its ``Content-Length`` (werkzeug's ``ClientDisconnected``) or whose
    HTTP chunked framing is broken (the server's ``OSError``) is S3's ``IncompleteBody``. Both
    are ``ApiError``s, which the S3 service answers as 400s.
    """

    def __init__(self, stream: Any, limit: BodyLimit, cap: int) -> None:
        self._stream = stream
        self._limit = limit
        self._cap = cap
        self._read = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        return self._take(self._stream.read, size)

    def readline(self, size: int | None = -1) -> bytes:
        return self._take(self._stream.readline, size)

    def _take(self, read: Any, size: int | None) -> bytes:
        room = self._cap + 1 - self._read
        try:
            data = read(room if size is None or size < 0 else min(size, room))
        except (ClientDisconnected, OSError):
            raise ApiError(
                "IncompleteBody",
                "You did not provide the number of bytes specified by the Content-Length HTTP header.",
            ) from None
        self._read += len(data)
        if self._read > self._cap:
            raise ApiError(*self._limit.too_large)
        return data

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


def _bounded(operation: str, headers: Mapping[str, str], body: Any) -> Any:
    """``body`` under ``operation``'s limit: refused now if its announced length is over it.

    The limit is on the payload: an ``aws-chunked`` body announces it in
    ``x-amz-decoded-content-length``, and its framing may take 1/64 more as it is read.
    """
    limit = rules.body_limit(service_model("s3").operation_model(operation))
    chunked = "aws-chunked" in headers.get("content-encoding", "") or headers.get(
        "x-amz-content-sha256", ""
    ).startswith("STREAMING-")
    length = headers.get("x-amz-decoded-content-length" if chunked else "content-length", "").strip()
    if isinstance(body, (bytes, bytearray)) and not chunked:
        length = str(len(body))
    if length.isascii() and length.isdigit() and int(length) > limit.max_bytes:
        raise S3RouteError(*limit.too_large, 400)
    if isinstance(body, (bytes, bytearray)):
        return body
    return _Bounded(body, limit, limit.max_bytes + (limit.max_bytes // 64 + _FRAMING if chunked else 0))


def route(
    method: str, path: str, query: Any, headers: Mapping[str, str], host: str, body: Any = b""
) -> tuple[str, dict]:
    """The S3 operation a request is and the ``request_dict`` its service reads (module docstring)."""
    method = method.upper()
    query_string = _first_values(query)
    sent_headers = {str(k): str(v) for k, v in headers.items()}
    lower_headers = {k.lower(): v for k, v in sent_headers.items()}
    host = host or lower_headers.get("host", "")
    bucket = host_bucket(host)
    full_path = path or "/"
    if bucket is not None:
        full_path = "/" + bucket + (full_path if full_path != "/" else "")
    candidates = [r for r in _routes() if r.matches(method, full_path, query_string)]
    chosen = max(candidates, key=lambda r: r.rank(query_string, lower_headers), default=None)
    if chosen is None or not chosen.rank(query_string, lower_headers)[0]:  # none, or one lacking members
        raise S3RouteError(
            "MethodNotAllowed", f"The specified method {method} is not allowed against this resource.", 405
        )
    header_map, body = checked_body(sent_headers, _bounded(chosen.name, lower_headers, body))
    url_path = quote(full_path, safe="/~")
    url = f"http://{host or 'localhost'}{url_path}"
    if query_string:
        url += "?" + urlencode(query_string, quote_via=quote)
    request = {
        "url_path": url_path,
        "auth_path": url_path,
        "query_string": query_string,
        "headers": header_map,
        "method": method,
        "body": body,
        "url": url,
        "context": {},
    }
    return chosen.name, request
