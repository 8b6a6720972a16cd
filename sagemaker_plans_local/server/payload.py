"""An S3 request body as its service reads it: ``aws-chunked`` decoded, every announced digest checked.

S3 checks what a client announces about a body whether or not it checks
signatures, and so does the server:

- ``x-amz-content-sha256``: a SHA-256 (64 hex digits) must be the body's
  (``XAmzContentSHA256Mismatch``, 400); ``UNSIGNED-PAYLOAD`` and the
  ``STREAMING-...`` values announce no digest; anything else is refused before
  routing (``InvalidArgument``, :func:`check_headers`).
- ``x-amz-checksum-crc32``, ``-crc32c``, ``-crc64nvme``, ``-sha1``, ``-sha256`` (a header,
  or for an ``aws-chunked`` body the trailer ``x-amz-trailer`` names): the
  base64 checksum of the payload (``BadDigest`` on a mismatch, ``InvalidRequest``
  for a value that is no such checksum or a named trailer that never came).
  CRC32C and CRC64NVME are computed with ``awscrt`` when it is installed (botocore's
  own optional ``crt`` extra) and not checked otherwise.
- ``Content-MD5``: checked by the object store (``BadDigest``).

Each digest is computed while the body streams to the store and compared when
it ends, so a body that does not match raises from the store's read: the store
removes its temporary file and commits nothing. ``aws-chunked`` bodies
(``Content-Encoding: aws-chunked`` or ``x-amz-content-sha256: STREAMING-...``) are
decoded by ``server/aws_chunked.py``; their ``Content-Length`` becomes
``x-amz-decoded-content-length`` and ``aws-chunked`` leaves ``Content-Encoding``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import io
import re
import zlib
from typing import Any, Callable, Mapping

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.server.aws_chunked import AwsChunked, ChunkSigner
from sagemaker_plans_local.server.errors import RouteError

UNSIGNED = "UNSIGNED-PAYLOAD"
#: The streaming values of ``x-amz-content-sha256`` whose chunks carry signatures.
SIGNED_STREAMING = ("STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER")
STREAMING = (*SIGNED_STREAMING, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
_SHA256 = re.compile(r"[0-9a-f]{64}")  # fullmatch
_CHECKSUM_PREFIX = "x-amz-checksum-"


class _Crc32:
    """zlib's CRC32 as a hash object (big-endian digest, as S3 encodes it)."""

    def __init__(self) -> None:
        self._value = 0

    def update(self, data: bytes) -> None:
        self._value = zlib.crc32(data, self._value)

    def digest(self) -> bytes:
        return self._value.to_bytes(4, "big")


class _Crt:
    """An ``awscrt.checksums`` function (``crc32c``, ``crc64nvme``) as a hash object."""

    def __init__(self, function: Callable[[bytes, int], int], size: int) -> None:
        self._function = function
        self._size = size
        self._value = 0

    def update(self, data: bytes) -> None:
        self._value = self._function(data, self._value)

    def digest(self) -> bytes:
        return self._value.to_bytes(self._size, "big")


def _crt(name: str, size: int) -> Callable[[], Any] | None:
    try:
        from awscrt import checksums  # type: ignore[import-not-found]
    except ImportError:
        return None
    function = getattr(checksums, name, None)
    return None if function is None else (lambda: _Crt(function, size))


#: The checksums S3 accepts: name -> (a new hash object, or None where no library computes it; digest size).
CHECKSUMS: dict[str, tuple[Callable[[], Any] | None, int]] = {
    "crc32": (_Crc32, 4),
    "crc32c": (_crt("crc32c", 4), 4),
    "crc64nvme": (_crt("crc64nvme", 8), 8),
    "sha1": (hashlib.sha1, 20),
    "sha256": (hashlib.sha256, 32),
}


def whole_body_digest_holds(headers: Mapping[str, str], body: bytes) -> bool:
    """Whether a body read whole (every service but S3, and the control API) is what its
    ``X-Amz-Content-SHA256`` says: absent, or the body's SHA-256 (``UNSIGNED-PAYLOAD`` is not).

    A signature covers that header in place of the body, so a signed request whose body does
    not match it could be replayed with any body.
    """
    claimed = headers.get("X-Amz-Content-SHA256")
    return claimed is None or claimed == hashlib.sha256(body).hexdigest()


def check_headers(headers: Mapping[str, str]) -> None:
    """Refuse (400 ``InvalidArgument``) an ``x-amz-content-sha256`` S3 does not accept."""
    claimed = headers.get("x-amz-content-sha256")
    if claimed is None or claimed == UNSIGNED or claimed in STREAMING:
        return
    if not _SHA256.fullmatch(claimed):
        raise RouteError(
            "InvalidArgument",
            "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, "
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-UNSIGNED-PAYLOAD-TRAILER or a valid sha256 value.",
        )
    if "aws-chunked" in _encodings(headers.get("content-encoding", "")):
        raise RouteError("InvalidArgument", "An aws-chunked body needs a STREAMING- x-amz-content-sha256.")


#: One digest of a body: its hash object, the digest announced (read when the body ends), the error.
_Check = tuple[Any, Callable[[], bytes], ApiError]


class _Checked(io.RawIOBase):
    """``source`` read through, its digests compared with what was announced when it ends."""

    def __init__(self, source: Any, checks: list[_Check]) -> None:
        super().__init__()
        self._source = source
        self._checks = checks
        self._failed: ApiError | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._failed is not None:
            raise self._failed
        data = self._source.read(len(buffer))
        if data:
            buffer[: len(data)] = data
            for digest, _, _ in self._checks:
                digest.update(data)
            return len(data)
        for digest, expected, error in self._checks:
            if digest.digest() != expected():
                self._failed = error
                raise error
        self._checks = []
        return 0


def checked_body(headers: dict[str, str], body: Any) -> tuple[dict[str, str], Any]:
    """``headers`` and ``body`` as the S3 service reads them (module docstring)."""
    lower = {name.lower(): name for name in headers}
    value = {name: headers[original] for name, original in lower.items()}
    stream = io.BytesIO(bytes(body)) if isinstance(body, (bytes, bytearray)) else body
    claimed = value.get("x-amz-content-sha256", "")
    checks: list[_Check] = []
    if _SHA256.fullmatch(claimed):
        checks.append((hashlib.sha256(), lambda: bytes.fromhex(claimed), _sha256_mismatch()))
    encodings = _encodings(value.get("content-encoding", ""))
    decoder = None
    if "aws-chunked" in encodings or claimed.startswith("STREAMING-"):
        headers = _decoded_headers(headers, lower, encodings)
        decoded = value.get("x-amz-decoded-content-length", "")
        decoder = AwsChunked(
            stream, expected_size=int(decoded) if decoded.isascii() and decoded.isdigit() else None
        )
        stream = io.BufferedReader(decoder)
    checks.extend(_checksums(value, decoder))
    if decoder is None and not checks:
        return headers, body
    return headers, _Payload(_Checked(stream, checks), decoder)


class _Payload(io.BufferedReader):
    """The body the service reads; ``decoder`` is its ``aws-chunked`` decoder (None if not chunked)."""

    def __init__(self, raw: io.RawIOBase, decoder: AwsChunked | None) -> None:
        super().__init__(raw)
        self.decoder = decoder


def require_chunk_signatures(request: dict, signer: ChunkSigner) -> None:
    """Verify the chunk and trailer signatures of a signed ``aws-chunked`` body as it is read.

    ``request``: the ``request_dict`` of a signature-checked request, its body a :func:`checked_body`.
    """
    claimed = {name.lower(): value for name, value in request["headers"].items()}.get("x-amz-content-sha256")
    if claimed in SIGNED_STREAMING:
        body = request["body"]
        assert isinstance(body, _Payload) and body.decoder is not None  # a STREAMING- body is decoded
        body.decoder.signer = signer


def _decoded_headers(headers: dict[str, str], lower: dict[str, str], encodings: list[str]) -> dict[str, str]:
    headers = dict(headers)
    others = ",".join(e for e in encodings if e and e != "aws-chunked")
    if "content-encoding" in lower:
        del headers[lower["content-encoding"]]
    if others:
        headers["Content-Encoding"] = others
    decoded = headers.get(lower.get("x-amz-decoded-content-length", ""))
    if decoded is not None:
        headers.pop(lower.get("content-length", "Content-Length"), None)
        headers["Content-Length"] = decoded
    return headers


def _checksums(value: dict[str, str], decoder: AwsChunked | None) -> list[_Check]:
    """The checksum checks of a body: its ``x-amz-checksum-*`` headers, or its announced trailer."""
    announced: list[tuple[str, Callable[[], str]]] = [
        (name, functools.partial(value.__getitem__, name))
        for name in value
        if name.startswith(_CHECKSUM_PREFIX)
    ]
    trailer = value.get("x-amz-trailer", "").strip().lower()
    if decoder is not None and trailer.startswith(_CHECKSUM_PREFIX):

        def from_trailer() -> str:
            if trailer not in decoder.trailers:
                raise ApiError(
                    "InvalidRequest", f"The body ended without the {trailer} trailer it announced."
                )
            return decoder.trailers[trailer]

        announced.append((trailer, from_trailer))
    checks: list[_Check] = []
    for name, expected in announced:
        algorithm = name[len(_CHECKSUM_PREFIX) :]
        if algorithm not in CHECKSUMS:
            continue  # x-amz-checksum-type, x-amz-checksum-algorithm: no values
        factory, size = CHECKSUMS[algorithm]
        if factory is not None:
            checks.append((factory(), _decoder(name, expected, size), _bad_digest(algorithm)))
    return checks


def _decoder(name: str, expected: Callable[[], str], size: int) -> Callable[[], bytes]:
    def digest() -> bytes:
        try:
            found = base64.b64decode(expected(), validate=True)
        except (ValueError, binascii.Error):
            found = b""
        if len(found) != size:
            raise ApiError("InvalidRequest", f"Value for {name} header is invalid.")
        return found

    return digest


def _bad_digest(algorithm: str) -> ApiError:
    # S3's own words: "The CRC32 you specified ...", "The sha256 you specified ..."
    shown = algorithm.upper() if algorithm.startswith("crc") else algorithm
    return ApiError("BadDigest", f"The {shown} you specified did not match the calculated checksum.")


def _sha256_mismatch() -> ApiError:
    return ApiError(
        "XAmzContentSHA256Mismatch",
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
    )


def _encodings(header: str) -> list[str]:
    return [encoding.strip() for encoding in header.split(",")]
