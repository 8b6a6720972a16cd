"""S3's request rules the API applies: ETags, preconditions, byte ranges, tokens, digests, copy sources."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, BinaryIO, Callable
from urllib.parse import quote, unquote

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.services.s3.objects import StoredObject

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
CHUNK_SIZE = 1024 * 1024


def quoted(etag: str) -> str:
    return f'"{etag}"'


def unquoted(etag: str) -> str:
    etag = etag.strip()
    if etag.startswith("W/"):
        etag = etag[2:]
    return etag[1:-1] if len(etag) >= 2 and etag[0] == etag[-1] == '"' else etag


def etag_matches(condition: str, etag: str) -> bool:
    return any(part.strip() == "*" or unquoted(part) == etag for part in condition.split(","))


class RangeReader:
    """A binary stream over ``length`` bytes of an open file (the ``raw`` of a GetObject answer)."""

    def __init__(self, handle: BinaryIO, start: int, length: int) -> None:
        handle.seek(start)
        self._handle = handle
        self._left = length

    def read(self, amt: int | None = None) -> bytes:
        if self._left <= 0:
            self.close()
            return b""
        size = self._left if amt is None or amt < 0 else min(amt, self._left)
        data = self._handle.read(size)
        self._left -= len(data)
        if not data:
            self._left = 0
        if self._left <= 0:
            self.close()
        return data

    def stream(self, **_: Any):
        while True:
            chunk = self.read(CHUNK_SIZE)
            if not chunk:
                return
            yield chunk

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._handle.close()

    @property
    def closed(self) -> bool:
        return self._handle.closed


def check_conditions(stored: StoredObject, params: dict) -> None:
    """If-Match / If-Unmodified-Since (412) and If-None-Match / If-Modified-Since (304), as S3 orders them."""
    if_match, if_none_match = params.get("IfMatch"), params.get("IfNoneMatch")
    modified_since, unmodified_since = params.get("IfModifiedSince"), params.get("IfUnmodifiedSince")
    if if_match is not None:
        if not etag_matches(if_match, stored.etag):
            raise ApiError(
                "PreconditionFailed",
                "At least one of the pre-conditions you specified did not hold",
                412,
                fields={"Condition": "If-Match"},
            )
    elif unmodified_since is not None and stored.last_modified > unmodified_since:
        raise ApiError(
            "PreconditionFailed",
            "At least one of the pre-conditions you specified did not hold",
            412,
            fields={"Condition": "If-Unmodified-Since"},
        )
    if if_none_match is not None:
        if etag_matches(if_none_match, stored.etag):
            raise ApiError("NotModified", "Not Modified", 304)
    elif modified_since is not None and stored.last_modified <= modified_since:
        raise ApiError("NotModified", "Not Modified", 304)


def check_copy_conditions(stored: StoredObject, params: dict) -> None:
    failed = None
    if params.get("CopySourceIfMatch") is not None and not etag_matches(
        params["CopySourceIfMatch"], stored.etag
    ):
        failed = "x-amz-copy-source-If-Match"
    elif params.get("CopySourceIfNoneMatch") is not None and etag_matches(
        params["CopySourceIfNoneMatch"], stored.etag
    ):
        failed = "x-amz-copy-source-If-None-Match"
    elif (
        params.get("CopySourceIfUnmodifiedSince") is not None
        and stored.last_modified > params["CopySourceIfUnmodifiedSince"]
    ):
        failed = "x-amz-copy-source-If-Unmodified-Since"
    elif (
        params.get("CopySourceIfModifiedSince") is not None
        and stored.last_modified <= params["CopySourceIfModifiedSince"]
    ):
        failed = "x-amz-copy-source-If-Modified-Since"
    if failed:
        raise ApiError(
            "PreconditionFailed",
            "At least one of the pre-conditions you specified did not hold",
            412,
            fields={"Condition": failed},
        )


def byte_range(stored: StoredObject, header: str | None) -> tuple[int, int, str | None]:
    """(start, length, Content-Range or None); an unparsable range is ignored, as S3 does."""
    size = stored.size
    match = _RANGE.fullmatch(header.strip()) if header else None
    if match is None or (not match[1] and not match[2]):
        return 0, size, None
    if match[1]:
        start = int(match[1])
        end = min(int(match[2]), size - 1) if match[2] else size - 1
        if match[2] and int(match[2]) < start:
            return 0, size, None
    else:
        suffix = int(match[2])
        start, end = max(size - suffix, 0), size - 1
        if suffix == 0:
            start = size
    if start >= size:
        raise ApiError(
            "InvalidRange",
            "The requested range is not satisfiable",
            416,
            fields={"RangeRequested": header, "ActualObjectSize": size},
        )
    return start, end - start + 1, f"bytes {start}-{end}/{size}"


def user_metadata(params: dict) -> dict | None:
    """User metadata from ``x-amz-meta-*`` headers; S3 keeps the names lower-cased (HTTP headers ignore case)."""
    metadata = params.get("Metadata")
    return None if metadata is None else {str(k).lower(): v for k, v in metadata.items()}


def encoder(params: dict) -> Callable[[str], str]:
    """URL-encode listing values when the caller asked ``EncodingType=url`` (boto3 always does)."""
    if params.get("EncodingType") == "url":
        return lambda value: quote(value, safe="/")
    return lambda value: value


def encode_token(marker: str) -> str:
    return base64.urlsafe_b64encode(("m:" + marker).encode("utf-8")).decode("ascii")


def decode_token(token: str | None) -> str | None:
    if not token:
        return None
    try:
        text = base64.urlsafe_b64decode(token.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError, binascii.Error):
        return None
    return text[2:] if text.startswith("m:") else None


def copy_source(value: str) -> tuple[str, str]:
    """``bucket/key`` (URL-encoded, maybe with a leading ``/`` and ``?versionId=``) -> (bucket, key)."""
    path = value.split("?versionId=", 1)[0]
    path = unquote(path).lstrip("/")
    bucket, _, key = path.partition("/")
    if not bucket or not key:
        raise ApiError(
            "InvalidArgument",
            "Invalid copy source object key",
            fields={"ArgumentName": "x-amz-copy-source", "ArgumentValue": value},
        )
    return bucket, key


def content_md5(params: dict) -> bytes | None:
    """The digest announced in ``Content-MD5`` (``InvalidDigest`` if it is not a base64 MD5)."""
    value = params.get("ContentMD5")
    if value is None:
        return None
    try:
        digest = base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        digest = b""
    if len(digest) != 16:
        raise ApiError(
            "InvalidDigest", "The Content-MD5 you specified was invalid.", fields={"Content-MD5": value}
        )
    return digest
