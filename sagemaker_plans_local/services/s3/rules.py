"""S3's request rules the API applies: ETags, preconditions, byte ranges, tokens, digests, copy sources."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable
from urllib.parse import quote, unquote

from botocore.model import OperationModel

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.xml_reader import MALFORMED_XML, XmlLimits
from sagemaker_plans_local.services.s3.objects import StoredObject

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
#: What a header value cannot hold: CR, LF and the other controls but tab, or a character past Latin-1.
_NOT_IN_HEADER = re.compile("[\x00-\x08\x0a-\x1f\x7f\u0100-\U0010ffff]")
CHUNK_SIZE = 1024 * 1024
KIB, MIB = 1024, 1024 * 1024
#: S3's largest single PUT and largest part (PutObject, UploadPart and every other streamed body).
MAX_OBJECT_BYTES = 5 * 1024 * MIB


@dataclass(frozen=True)
class BodyLimit:
    """The cap on one S3 operation's request body (docs/behaviours.md, "S3 request bodies").

    ``max_bytes`` is refused with ``too_large`` while the body is read; an XML body also has an
    element cap of ``per_item`` elements for each of at most ``max_items`` items, which are the
    list ``items`` (payload member, list member) names: more items than that is ``too_many``.
    """

    max_bytes: int
    items: tuple[str, str] | None = None
    max_items: int = 0
    per_item: int = 1
    too_many: tuple[str, str] = ("MalformedXML", MALFORMED_XML)
    too_large: tuple[str, str] = ("MaxMessageLengthExceeded", "Your request was too big.")

    @property
    def xml(self) -> XmlLimits:
        return XmlLimits(self.max_bytes, max(10_000, self.max_items * self.per_item + 64))

    def check_items(self, params: dict) -> None:
        """``too_many`` (400) if ``params`` hold more than ``max_items`` items."""
        if self.items is not None:
            payload, member = self.items
            if len((params.get(payload) or {}).get(member) or ()) > self.max_items:
                raise ApiError(*self.too_many)


_TAGS = ("Tagging", "TagSet")
#: AWS's documented limits where it has them; the byte caps where it has none are chosen.
BODY_LIMITS = {
    "DeleteObjects": BodyLimit(8 * MIB, ("Delete", "Objects"), 1_000, per_item=8),
    "CompleteMultipartUpload": BodyLimit(10 * MIB, ("MultipartUpload", "Parts"), 10_000, per_item=10),
    "PutObjectTagging": BodyLimit(
        64 * KIB, _TAGS, 10, 3, ("BadRequest", "Object tags cannot be greater than 10")
    ),
    "PutBucketTagging": BodyLimit(
        256 * KIB, _TAGS, 50, 3, ("InvalidTag", "Bucket tag count cannot be greater than 50")
    ),
    "PutBucketCors": BodyLimit(64 * KIB, ("CORSConfiguration", "CORSRules"), 100, 16),
    "PutBucketLifecycleConfiguration": BodyLimit(
        2 * MIB, ("LifecycleConfiguration", "Rules"), 1_000, per_item=32
    ),
    "PutBucketPolicy": BodyLimit(20 * KIB),
    "PutBucketVersioning": BodyLimit(16 * KIB),
}
DEFAULT_LIMIT = BodyLimit(MIB)
STREAMED_LIMIT = BodyLimit(
    MAX_OBJECT_BYTES,
    too_large=("EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size."),
)


def body_limit(operation: OperationModel) -> BodyLimit:
    """The cap on ``operation``'s request body: its own, 5 GiB for a streamed payload, else 1 MiB."""
    found = BODY_LIMITS.get(operation.name)
    if found is not None:
        return found
    shape = operation.input_shape
    payload = shape.serialization.get("payload") if shape is not None else None
    if payload and shape is not None and shape.members[payload].serialization.get("streaming"):
        return STREAMED_LIMIT
    return DEFAULT_LIMIT


def header_value(value: str, argument: str) -> str:
    """``value``, which the answer sends as a header (``InvalidArgument`` if no header can carry it)."""
    if _NOT_IN_HEADER.search(value):
        raise ApiError(
            "InvalidArgument",
            f"The value of {argument} cannot be sent as an HTTP header: it holds a control character "
            "(CR, LF, ...) or one ISO-8859-1 cannot represent.",
            fields={"ArgumentName": argument, "ArgumentValue": value},
        )
    return value


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

    @property
    def left(self) -> int:
        """Bytes of the range not read yet."""
        return max(self._left, 0)

    def handover(self) -> BinaryIO:
        """The open file at the range's next byte, for a server that sends :attr:`left` bytes of it
        itself: the reader is then done, and whoever took the file closes it."""
        self._left = 0
        return self._handle

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
