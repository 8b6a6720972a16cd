"""waitress's request parser, refusing malformed HTTP as soon as it shows instead of at the idle timeout.

waitress judges a request's head only once it has ended (``\\r\\n\\r\\n``) and a chunked body's
framing only once a line has: a head with bare LF line endings, or bytes that are no HTTP at all
(a TLS ClientHello on the plain port), never end, and a chunk size of 18 hex digits waits for
its data. :class:`Parser` judges what has arrived after every read, and refuses (a 400, or 413
for a body over the limit, answered by ``http_channel.AwsErrorTask``) at the first byte that
cannot begin a valid request. It also bounds what waitress holds in memory unbounded: a chunk's
size line and a chunked body's trailer.
"""

from __future__ import annotations

import re
from typing import Any

from waitress.parser import HTTPRequestParser, ParsingError, TransferEncodingNotImplemented, crack_first_line
from waitress.receiver import ChunkedReceiver
from waitress.utilities import BadRequest, Error, RequestEntityTooLarge

from sagemaker_plans_local.server import app as wsgi_app
from sagemaker_plans_local.server import control, routing

#: Bytes a chunk's size line (the size and its extensions) may take before its CRLF.
MAX_CHUNK_LINE = 4096
#: Chunk sizes from here on (more than 16 significant hex digits, 2**64) are no size a client means.
_HUGE_CHUNK = 16**16
#: The start of a request line: a method (RFC 9110's token characters), then a space.
_METHOD_START = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]*(?: |\Z)")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_LINE_BREAK = re.compile(rb"\r\n|\n|\r")


class Headers:
    """waitress's parsed headers (``X_AMZ_TARGET``) looked up by their HTTP names."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.upper().replace("-", "_"), default)


class _LimitedBody:
    """waitress's adjustments with a smaller body limit (every other setting the server's)."""

    def __init__(self, adjustments: Any, max_request_body_size: int) -> None:
        self._adjustments = adjustments
        self.max_request_body_size = max_request_body_size

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adjustments, name)


class Parser(HTTPRequestParser):
    """waitress's parser, judging a request as it arrives.

    Refused at once: a bare CR or LF in the head, a start that cannot be a request line (checked
    by waitress's own ``crack_first_line`` once the line has ended), a chunk size that is not
    hex or over 16 significant digits, a chunk larger than what the body limit leaves (413), a
    chunk size line over :data:`MAX_CHUNK_LINE` bytes, a trailer over the header limit.
    Requests whose body is a JSON or form document (the control API, awsJson, query) are refused
    by their ``Content-Length`` (or a chunk's size) at the app's 16 MiB, before the body is read:
    only S3 may send up to 5 GiB, spooled to disk.
    """

    completed: bool
    adj: Any
    error: Any
    headers: dict[str, str]
    _start_checked = False

    def received(self, data: bytes) -> int:
        if self.completed:
            return 0
        if self.body_rcv is None:  # the head
            problem = self._head_problem(data)
            if problem is not None:
                self._refuse_head(data, problem)
                return len(data)
            return super().received(data)
        consumed = super().received(data)
        if isinstance(self.body_rcv, ChunkedReceiver) and not self.completed:
            room = self.adj.max_request_body_size - self.body_bytes_received
            error = chunk_problem(self.body_rcv, room, self.adj.max_request_header_size)
            if error is not None:
                self.error, self.completed = error, True
        return consumed

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        if _document_body(self.path or "", Headers(self.headers)):
            self.adj = _LimitedBody(self.adj, wsgi_app.MAX_BODY + 1)  # type: ignore[has-type]  # >= is refused

    def _head_problem(self, data: bytes) -> str | None:
        """What makes the head so far no valid request (``data`` added to what came before), or None."""
        seen = self.header_plus
        whole = seen + data if seen else data
        end = whole.find(b"\r\n\r\n")
        head = whole if end < 0 else whole[: end + 4]
        if _bare_cr_or_lf(head[len(seen) - 1 :] if seen else head, judged=bool(seen)):
            return "Bare CR or LF found in HTTP message"
        if end >= 0 or self._start_checked:  # a whole head: waitress judges its first line itself
            return None
        start = head.lstrip()
        line_end = start.find(b"\r\n")
        if line_end < 0:
            return None if _METHOD_START.match(start) else "Start line is invalid"
        try:
            if crack_first_line(start[:line_end].rstrip()) == (b"", b"", b""):
                return "Start line is invalid"
        except ParsingError as error:
            return str(error.args[0])
        self._start_checked = True
        return None

    def _refuse_head(self, data: bytes, problem: str) -> None:
        """The request refused with a 400; its headers, as far as they can be read, say its shape."""
        head = (self.header_plus + data).split(b"\r\n\r\n", 1)[0]
        lines = [line for line in _LINE_BREAK.split(head.lstrip()) if line]
        try:
            self.parse_header(b"\r\n".join(lines) + b"\r\n")
        except (ParsingError, TransferEncodingNotImplemented, ValueError):
            self.headers = {}
            self.parse_header(b"GET / HTTP/1.0\r\n")  # as waitress does for a head too large
        self.error = BadRequest(problem)
        self.completed = True


def _bare_cr_or_lf(part: bytes, judged: bool) -> bool:
    """Whether ``part`` has a CR or LF outside a CRLF (``judged``: its first byte came in an earlier
    read and was judged then, with the byte before it; a CR last is judged with the byte after it).

    Counted rather than searched: the head of every request passes here.
    """
    pairs = part.count(b"\r\n")
    line_feeds = part.count(b"\n") - (judged and part.startswith(b"\n"))
    returns = part.count(b"\r") - part.endswith(b"\r")
    return line_feeds != pairs or returns != pairs


def chunk_problem(receiver: ChunkedReceiver, room: int, max_trailer: int) -> Error | None:
    """What is wrong with a chunked body so far (``room``: bytes the body limit leaves), or None."""
    size = receiver.chunk_remainder
    line = receiver.control_line
    if line:
        if len(line) > MAX_CHUNK_LINE:
            return BadRequest("Chunk size line too long")
        digits = line.split(b";", 1)[0].rstrip(b"\r")
        if digits and not _HEX.fullmatch(digits):
            return BadRequest("Invalid chunk size")
        if digits:
            significant = digits.lstrip(b"0")
            size = _HUGE_CHUNK if len(significant) > 16 else int(significant or b"0", 16)
    if size >= _HUGE_CHUNK:
        return BadRequest("Invalid chunk size")
    if size >= room:
        return RequestEntityTooLarge("a chunk exceeds max_body")
    if len(receiver.trailer) > max_trailer:
        return BadRequest("Chunked trailer too large")
    return None


def _document_body(path: str, headers: Headers) -> bool:
    return path.startswith(control.PREFIX) or routing.guess_family(headers) != "rest-xml"
