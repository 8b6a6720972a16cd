"""One WSGI request as the app reads it, straight from the environ: no werkzeug ``Request`` per call.

Each attribute means what werkzeug's ``Request`` attribute of the same name does (``path`` decoded
and with one leading slash, ``query_string`` bytes, ``host`` without the scheme's default port,
``args`` a ``MultiDict``, ``stream`` bounded by ``Content-Length``), computed on first use only:
a DescribeTrainingJob reads a few headers and its body, and builds nothing else.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping
from urllib.parse import parse_qsl

from werkzeug.datastructures import MultiDict
from werkzeug.sansio.utils import get_content_length, get_host
from werkzeug.wsgi import get_input_stream

_ENTITY = ("CONTENT_TYPE", "CONTENT_LENGTH")


class EnvironHeaders(Mapping[str, str]):
    """The request's headers, read from the environ by any spelling of their names (``x-amz-target``).

    Iterated (and ``items()``), names come as werkzeug's ``EnvironHeaders`` gives them (``X-Amz-Target``).
    """

    __slots__ = ("environ",)

    def __init__(self, environ: Mapping[str, Any]) -> None:
        self.environ = environ

    def get(self, key: str, default: Any = None) -> Any:
        """The header's value (``default`` if it was not sent)."""
        name = key.upper().replace("-", "_")
        return self.environ.get(name if name in _ENTITY else "HTTP_" + name, default)

    def __getitem__(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        for key, value in self.environ.items():
            if key[:5] == "HTTP_" and key[5:] not in _ENTITY:
                yield key[5:].replace("_", "-").title()
            elif key in _ENTITY and value:
                yield key.replace("_", "-").title()

    def __len__(self) -> int:
        return sum(1 for _ in self)


class WsgiRequest:
    """The parts of one request the app reads (module docstring); the costlier ones on first use."""

    __slots__ = (
        "environ",
        "method",
        "path",
        "query_string",
        "headers",
        "content_length",
        "_args",
        "_host",
        "_stream",
    )

    def __init__(self, environ: dict) -> None:
        self.environ = environ
        self.method: str = environ.get("REQUEST_METHOD", "GET").upper()
        raw = environ.get("PATH_INFO") or ""
        #: ``PATH_INFO`` decoded as UTF-8, with one leading slash.
        self.path = "/" + (raw if raw.isascii() else raw.encode("latin-1").decode(errors="replace")).lstrip(
            "/"
        )
        self.query_string: bytes = environ.get("QUERY_STRING", "").encode("latin-1")
        self.headers = EnvironHeaders(environ)
        self._args: MultiDict[str, str] | None = None
        self._host: str | None = None
        self._stream: Any = None
        #: The body's announced length (None when chunked or not given), read once.
        self.content_length: int | None = get_content_length(
            environ.get("CONTENT_LENGTH"), environ.get("HTTP_TRANSFER_ENCODING")
        )

    @property
    def full_path(self) -> str:
        return f"{self.path}?{self.query_string.decode()}"

    @property
    def args(self) -> MultiDict[str, str]:
        """The URL's parameters (invalid bytes stay percent-encoded)."""
        if self._args is None:
            query = self.query_string.decode()
            pairs = parse_qsl(query, keep_blank_values=True, errors="werkzeug.url_quote") if query else []
            self._args = MultiDict(pairs)
        return self._args

    @property
    def scheme(self) -> str:
        return self.environ.get("wsgi.url_scheme", "http")

    @property
    def host(self) -> str:
        """The ``Host`` header (else the server's name and port), less the scheme's default port."""
        if self._host is None:
            environ = self.environ
            server = None
            if "SERVER_NAME" in environ:
                port = environ.get("SERVER_PORT") or ""
                server = (environ["SERVER_NAME"], int(port) if port.isdigit() else None)
            self._host = get_host(self.scheme, environ.get("HTTP_HOST"), server)
        return self._host

    @property
    def content_type(self) -> str | None:
        return self.environ.get("CONTENT_TYPE")

    @property
    def stream(self) -> Any:
        """The body: the server's own stream where it ends it, else bounded by ``Content-Length``."""
        if self._stream is None:
            environ = self.environ
            terminated = "wsgi.input_terminated" in environ
            self._stream = environ["wsgi.input"] if terminated else get_input_stream(environ)
        return self._stream
