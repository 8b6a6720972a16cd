"""What every service answers with: HTTP as AWS would send it (loads nothing else of the layer)."""

from __future__ import annotations

import json
from typing import Any, Iterator, NamedTuple


class Answer(NamedTuple):
    """One answer as HTTP: status, headers, body (bytes, a :class:`JsonBody` or a binary stream)."""

    status: int
    headers: dict[str, str]
    body: Any


class JsonBody:
    """A JSON answer's body: the wire ``document``, serialized only when read (``bytes(body)``)."""

    __slots__ = ("document",)

    def __init__(self, document: dict) -> None:
        self.document = document

    def __bytes__(self) -> bytes:
        return json.dumps(self.document).encode()

    def stream(self, **_: Any) -> Iterator[bytes]:
        """The body as botocore's ``AWSResponse.raw`` yields it."""
        yield bytes(self)
