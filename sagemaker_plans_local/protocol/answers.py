"""What every service answers with: HTTP as AWS would send it (loads nothing else of the layer)."""

from __future__ import annotations

import contextvars
import json
from typing import Any, Callable, Iterator, NamedTuple

#: ``parse(output shape, handler result)``: botocore's parsed answer, or None to leave it to the wire.
Parse = Callable[[Any, dict], "dict | None"]
_PARSE: contextvars.ContextVar[Parse | None] = contextvars.ContextVar("parse_answers", default=None)


class Answer(NamedTuple):
    """One answer as HTTP: status, headers, body (bytes, a :class:`JsonBody` or a binary stream)."""

    status: int
    headers: dict[str, str]
    body: Any


class JsonBody:
    """A JSON answer's body: the wire ``document``, serialized only when read (``bytes(body)``).

    An answer made under :func:`parsing_answers` also carries ``parsed``, botocore's parsed
    form of the document, and makes the document itself only if someone asks for it.
    """

    __slots__ = ("_document", "_make", "parsed")

    def __init__(self, document: dict | None = None, make: Callable[[], dict] | None = None) -> None:
        self._document = document
        self._make = make
        self.parsed: dict | None = None

    @classmethod
    def parsed_as(cls, parsed: dict, make: Callable[[], dict]) -> "JsonBody":
        """A body whose parsed form is known; ``make()`` gives its wire document when it is read."""
        body = cls(None, make)
        body.parsed = parsed
        return body

    @property
    def document(self) -> dict:
        if self._document is None:
            assert self._make is not None  # a body has a document or the means to make it
            self._document, self._make = self._make(), None
        return self._document

    def __bytes__(self) -> bytes:
        return json.dumps(self.document).encode()

    def stream(self, **_: Any) -> Iterator[bytes]:
        """The body as botocore's ``AWSResponse.raw`` yields it."""
        yield bytes(self)


class parsing_answers:  # noqa: N801  # used as a context manager, like contextlib's
    """JSON answers made in the block (this thread) carry ``parse``'s parsed form (see JsonBody)."""

    __slots__ = ("_parse", "_token")

    def __init__(self, parse: Parse) -> None:
        self._parse = parse

    def __enter__(self) -> None:
        self._token = _PARSE.set(self._parse)

    def __exit__(self, *_: Any) -> None:
        _PARSE.reset(self._token)


def answer_parser() -> Parse | None:
    """The ``parse`` of the innermost :func:`parsing_answers` block, if any."""
    return _PARSE.get()
