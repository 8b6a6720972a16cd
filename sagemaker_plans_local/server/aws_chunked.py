"""S3's ``aws-chunked`` body encoding, decoded as it is read, its chunk and trailer signatures verified.

A body is frames ``<hex size>[;chunk-signature=<sig>]\\r\\n<data>\\r\\n``, a last
frame of size 0, then trailing headers (``x-amz-checksum-crc32:...``, and
``x-amz-trailer-signature:...`` when signed) up to an empty line. With a
:class:`ChunkSigner` attached (``STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]``
on a server that checks signatures), each frame's signature must be the HMAC of
``AWS4-HMAC-SHA256-PAYLOAD``, the request's date and scope, the previous
signature (the request's own, the seed, for the first frame), the empty
string's SHA-256 and the frame data's SHA-256; the trailer's signature that of
``AWS4-HMAC-SHA256-TRAILER``, the date, the scope, the last frame's signature
and the SHA-256 of the trailers as ``name:value\\n`` lines (AWS's "Signature
Calculations for the Authorization Header: Transferring Payload in Multiple
Chunks" and "... Including Trailing Headers"). Every error is an ``ApiError``
the S3 service answers as a 4xx when its read fails: a malformed frame
``IncompleteBody`` (400), a wrong signature ``SignatureDoesNotMatch`` (403). A
frame may hold at most :data:`MAX_CHUNK` bytes (*chosen*: S3's single-PUT limit;
S3 names none), so its size has at most 16 hex digits.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import re
from typing import Any, Callable

from sagemaker_plans_local.protocol.errors import ApiError

#: The largest frame accepted (bytes).
MAX_CHUNK = 5 * 1024**3
#: The longest frame header or trailer line read.
MAX_LINE = 4096
#: The most trailing headers read.
MAX_TRAILERS = 16
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_FRAME = re.compile(rb"^([0-9a-fA-F]{1,16})(?:;chunk-signature=([0-9a-f]{64}))?$")
_MISMATCH = "The request signature we calculated does not match the signature you provided."


def incomplete(message: str) -> ApiError:
    """S3's ``IncompleteBody`` (400) with ``message``."""
    return ApiError("IncompleteBody", message, 400)


class ChunkSigner:
    """The chain of a signed ``aws-chunked`` body: ``sign`` is the request's HMAC with its signing key."""

    def __init__(self, sign: Callable[[str], str], date: str, scope: str, seed: str) -> None:
        self._sign = sign
        self._date = date
        self._scope = scope
        self.previous = seed

    def check_chunk(self, data_sha256: str, signature: bytes | None) -> None:
        string = "\n".join(
            ("AWS4-HMAC-SHA256-PAYLOAD", self._date, self._scope, self.previous, EMPTY_SHA256, data_sha256)
        )
        self.previous = self._check(string, signature)

    def check_trailer(self, trailers: list[tuple[str, str]], signature: str | None) -> None:
        canonical = "".join(f"{name}:{value}\n" for name, value in trailers)
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        self._check(
            "\n".join(("AWS4-HMAC-SHA256-TRAILER", self._date, self._scope, self.previous, digest)),
            signature.encode("ascii", "replace") if signature is not None else None,
        )

    def _check(self, string_to_sign: str, signature: bytes | None) -> str:
        expected = self._sign(string_to_sign)
        if signature is None or not hmac.compare_digest(expected.encode("ascii"), signature):
            raise ApiError("SignatureDoesNotMatch", _MISMATCH, 403)
        return expected


class AwsChunked(io.RawIOBase):
    """The payload of an ``aws-chunked`` body read from ``stream`` (module docstring).

    ``signer`` (None: signatures are not checked) may be set until the first read.
    ``expected_size`` (``x-amz-decoded-content-length``; None: any) is the payload's
    length, else ``IncompleteBody`` at the last frame. After it, ``trailers``
    holds the trailing headers (lower-case names, the signature left out) and
    ``size`` the payload's length.
    """

    def __init__(
        self, stream: Any, signer: ChunkSigner | None = None, expected_size: int | None = None
    ) -> None:
        super().__init__()
        self._stream = stream
        self.signer = signer
        self._expected = expected_size
        self.trailers: dict[str, str] = {}
        self.size = 0
        self._left = 0
        self._signature: bytes | None = None
        self._digest = hashlib.sha256()
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left == 0 and not self._done:
            self._next_frame()
        if self._done:
            return 0
        data = self._stream.read(min(len(buffer), self._left))
        if not data:
            raise incomplete("The aws-chunked body ended inside a chunk.")
        buffer[: len(data)] = data
        self._left -= len(data)
        self.size += len(data)
        if self.signer is not None:
            self._digest.update(data)
        if self._left == 0:
            if self._stream.read(2) != b"\r\n":
                raise incomplete("An aws-chunked chunk does not end with CRLF.")
            self._end_frame()
        return len(data)

    def _end_frame(self) -> None:
        if self.signer is not None:
            self.signer.check_chunk(self._digest.hexdigest(), self._signature)
            self._digest = hashlib.sha256()

    def _next_frame(self) -> None:
        found = _FRAME.match(self._stream.readline(MAX_LINE).rstrip(b"\r\n"))
        if found is None:
            raise incomplete("The aws-chunked body has a malformed chunk header.")
        self._left = int(found.group(1), 16)
        self._signature = found.group(2)
        if self._left > MAX_CHUNK:
            raise incomplete(f"An aws-chunked chunk is larger than {MAX_CHUNK} bytes.")
        if self._left == 0:
            if self._expected is not None and self.size != self._expected:
                raise incomplete("The aws-chunked body does not hold x-amz-decoded-content-length bytes.")
            self._end_frame()
            self._read_trailers()
            self._done = True

    def _read_trailers(self) -> None:
        lines: list[tuple[str, str]] = []
        signature: str | None = None
        for _ in range(MAX_TRAILERS + 2):
            line = self._stream.readline(MAX_LINE)
            text = line.rstrip(b"\r\n").decode("latin-1")
            if not text:
                if line and not line.endswith(b"\n"):
                    raise incomplete("The aws-chunked trailer is malformed.")
                break
            name, colon, value = text.partition(":")
            if not colon:
                raise incomplete("The aws-chunked trailer is malformed.")
            if name.strip().lower() == "x-amz-trailer-signature":
                signature = value.strip()
            else:
                lines.append((name.strip().lower(), value.strip()))
        else:
            raise incomplete("The aws-chunked body has too many trailers.")
        if self.signer is not None and (lines or signature is not None):
            self.signer.check_trailer(lines, signature)
        self.trailers = dict(lines)
