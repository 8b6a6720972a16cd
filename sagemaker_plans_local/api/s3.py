"""S3: the buckets and objects the SageMaker SDK and ordinary user code use.

Requests are read back from botocore's rest-xml serialization (virtual-host
or path-style addressing alike) and answers written from the output shapes,
headers included, so botocore's parser yields what S3 gives. Buckets are
global (one namespace for every region) and owned by the backend's account;
a request with ``ExpectedBucketOwner`` naming another account is
``AccessDenied``. Objects are unversioned. Keys are just keys: whatever they
contain (``../``, ``/abs``, NUL ...), they are stored inside the store.

Errors are S3's: ``<Error>`` documents with S3's codes, messages and extra
fields (``BucketName``, ``Key``, ``UploadId``), and no body for HEAD
requests (botocore then reports the HTTP status, e.g. code ``404``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any, BinaryIO, Callable
from urllib.parse import quote, unquote

from botocore.model import OperationModel

from ..domain import object_store as store
from ..domain.object_store import ObjectStore, StoredObject
from . import xml_wire
from .aws_services import AwsService, ServiceError, operation

NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_KEYS = 1000
US_EAST_1 = "us-east-1"
#: Root element names S3 gives its XML answers (botocore ignores them, readers of the raw body may not).
ROOTS = {
    "ListBuckets": "ListAllMyBucketsResult",
    "ListObjects": "ListBucketResult",
    "ListObjectsV2": "ListBucketResult",
    "DeleteObjects": "DeleteResult",
    "CreateMultipartUpload": "InitiateMultipartUploadResult",
    "CompleteMultipartUpload": "CompleteMultipartUploadResult",
    "CopyObject": "CopyObjectResult",
}
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
_CHUNK = 1024 * 1024


def _quoted(etag: str) -> str:
    return f'"{etag}"'


def _unquoted(etag: str) -> str:
    etag = etag.strip()
    if etag.startswith("W/"):
        etag = etag[2:]
    return etag[1:-1] if len(etag) >= 2 and etag[0] == etag[-1] == '"' else etag


def _etag_matches(condition: str, etag: str) -> bool:
    return any(part.strip() == "*" or _unquoted(part) == etag for part in condition.split(","))


class _RangeReader:
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
            chunk = self.read(_CHUNK)
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


class S3Api(AwsService):
    """S3 over an :class:`ObjectStore`, owned by ``account_id``."""

    service_name = "s3"
    ERRORS = (
        (store.NoSuchBucket, "NoSuchBucket", 404),
        (store.NoSuchKey, "NoSuchKey", 404),
        (store.BucketNotEmpty, "BucketNotEmpty", 409),
        (store.BucketAlreadyOwnedByYou, "BucketAlreadyOwnedByYou", 409),
        (store.InvalidBucketName, "InvalidBucketName", 400),
        (store.NoSuchUpload, "NoSuchUpload", 404),
        (store.InvalidPart, "InvalidPart", 400),
        (store.InvalidPartOrder, "InvalidPartOrder", 400),
        (store.EntityTooSmall, "EntityTooSmall", 400),
        (store.MalformedPartList, "MalformedXML", 400),
        (store.KeyTooLong, "KeyTooLongError", 400),
        (store.BadDigest, "BadDigest", 400),
        (store.InvalidArgument, "InvalidArgument", 400),
    )

    def __init__(self, objects: ObjectStore, account_id: str,
                 on_request: Callable[[], None] | None = None) -> None:
        super().__init__(on_request)
        self.objects = objects
        self.account_id = account_id
        self.owner_id = hashlib.sha256(f"sagemaker-plans-local/{account_id}".encode()).hexdigest()

    # -- protocol --------------------------------------------------------------------------
    def _answer(self, handler, region: str, model: OperationModel, request_dict: dict, request_id: str):
        try:
            params = xml_wire.read_rest_request(model, request_dict)
        except xml_wire.MalformedRequest as error:
            if error.member is None:
                raise ServiceError("MalformedXML", error.message) from None
            raise ServiceError("InvalidArgument", error.message, fields={"ArgumentName": error.member}) from None
        self._check_owner(params)
        answer = self._call(handler, region, params)
        status, result = answer if isinstance(answer, tuple) else (model.http.get("responseCode", 200), answer)
        if model.name == "GetBucketLocation":
            # S3 answers a bare <LocationConstraint> (empty for us-east-1); botocore reads its text
            # in an after-call handler rather than by the output shape.
            headers, body = {}, xml_wire.xml_document(
                model.output_shape.members["LocationConstraint"], result.get("LocationConstraint") or "",
                "LocationConstraint", NAMESPACE)
        else:
            headers, body = xml_wire.rest_response(model.output_shape, result or {}, ROOTS.get(model.name),
                                                   NAMESPACE)
        if isinstance(body, bytes) and body:
            headers["Content-Type"] = "application/xml"
            headers["Content-Length"] = str(len(body))
        headers.update(self._ids(request_id))
        if model.http.get("method") == "HEAD" and not hasattr(body, "read"):
            body = b""
        return status, headers, body

    def _error(self, error: ServiceError, operation_name: str, request_id: str):
        headers = self._ids(request_id)
        try:
            method = self.model.operation_model(operation_name).http.get("method")
        except Exception:  # not an S3 operation at all
            method = None
        if method == "HEAD" or error.status == 304:
            return error.status, headers, b""
        body = xml_wire.s3_error(error.code, error.message, request_id, headers["x-amz-id-2"], error.fields)
        headers["Content-Type"] = "application/xml"
        return error.status, headers, body

    def service_error(self, error):
        answer = super().service_error(error)
        fields = {}
        if isinstance(error, (store.NoSuchBucket, store.BucketNotEmpty, store.BucketAlreadyOwnedByYou,
                              store.InvalidBucketName)):
            fields["BucketName"] = error.bucket
        elif isinstance(error, store.NoSuchKey):
            fields["Key"] = error.key
        elif isinstance(error, (store.NoSuchUpload, store.InvalidPartOrder)):
            fields["UploadId"] = error.upload_id
        elif isinstance(error, store.InvalidPart):
            fields.update(UploadId=error.upload_id, PartNumber=error.part_number)
        elif isinstance(error, store.EntityTooSmall):
            fields.update(ProposedSize=error.size, MinSizeAllowed=store.MIN_PART_SIZE)
        elif isinstance(error, store.BadDigest):
            fields.update(ExpectedDigest=error.expected.hex(), CalculatedDigest=error.calculated.hex())
        elif isinstance(error, store.KeyTooLong):
            fields.update(Size=len(error.key.encode("utf-8")), MaxSizeAllowed=store.MAX_KEY_BYTES)
        answer.fields = fields
        return answer

    @staticmethod
    def _ids(request_id: str) -> dict[str, str]:
        host_id = base64.b64encode(hashlib.sha256(request_id.encode()).digest()).decode()
        return {"x-amz-request-id": request_id[:16], "x-amz-id-2": host_id}

    def _check_owner(self, params: dict) -> None:
        expected = params.get("ExpectedBucketOwner")
        if expected is not None and expected != self.account_id:
            raise ServiceError("AccessDenied", "Access Denied", 403)

    # -- buckets -----------------------------------------------------------------------------
    @operation("ListBuckets")
    def list_buckets(self, region: str, params: dict) -> dict:
        prefix = params.get("Prefix") or ""
        bucket_region = params.get("BucketRegion")
        after = _decode_token(params.get("ContinuationToken"))
        buckets = []
        for name, created in self.objects.list_buckets():
            if not name.startswith(prefix) or (after is not None and name <= after):
                continue
            located = self.objects.bucket_region(name)
            if bucket_region is not None and located != bucket_region:
                continue
            buckets.append({"Name": name, "CreationDate": created, "BucketRegion": located})
        result: dict = {"Owner": {"ID": self.owner_id}}
        limit = params.get("MaxBuckets")
        if limit is not None:
            if not 1 <= limit <= 10000:
                raise ServiceError("InvalidArgument", "Argument max-buckets must be an integer between 1 and 10000")
            if len(buckets) > limit:
                buckets = buckets[:limit]
                result["ContinuationToken"] = _encode_token(buckets[-1]["Name"])
        result["Buckets"] = buckets
        if params.get("Prefix") is not None:
            result["Prefix"] = params["Prefix"]
        return result

    @operation("CreateBucket")
    def create_bucket(self, region: str, params: dict) -> dict:
        bucket = params["Bucket"]
        constraint = (params.get("CreateBucketConfiguration") or {}).get("LocationConstraint") or None
        if region == US_EAST_1:
            if constraint == US_EAST_1:
                raise ServiceError("InvalidLocationConstraint", "The specified location-constraint is not valid",
                                   fields={"LocationConstraint": constraint})
        elif constraint != region:
            described = constraint or "unspecified"
            raise ServiceError("IllegalLocationConstraintException",
                               f"The {described} location constraint is incompatible for the region "
                               "specific endpoint this request was sent to.")
        self.objects.create_bucket(bucket, constraint or US_EAST_1, exist_ok=region == US_EAST_1)
        location = f"/{bucket}" if region == US_EAST_1 else f"http://{bucket}.s3.amazonaws.com/"
        return {"Location": location}

    @operation("HeadBucket")
    def head_bucket(self, region: str, params: dict) -> dict:
        bucket = params["Bucket"]
        return {"BucketRegion": self.objects.bucket_region(bucket), "AccessPointAlias": False}

    @operation("DeleteBucket")
    def delete_bucket(self, region: str, params: dict) -> dict:
        self.objects.delete_bucket(params["Bucket"])
        return {}

    @operation("GetBucketLocation")
    def get_bucket_location(self, region: str, params: dict) -> dict:
        located = self.objects.bucket_region(params["Bucket"])
        # botocore reads this one from the root element's text (parse_get_bucket_location).
        return {"LocationConstraint": None if located == US_EAST_1 else located}

    # -- objects -------------------------------------------------------------------------------
    @operation("PutObject")
    def put_object(self, region: str, params: dict) -> dict:
        etag = self.objects.put_object(params["Bucket"], params["Key"], params.get("Body", b""),
                                       params.get("ContentType"), _metadata(params), _content_md5(params))
        return {"ETag": _quoted(etag)}

    @operation("GetObject")
    def get_object(self, region: str, params: dict):
        stored, handle = self.objects.open_object(params["Bucket"], params["Key"])
        try:
            self._check_conditions(stored, params)
            start, length, content_range = self._range(stored, params.get("Range"))
        except BaseException:
            handle.close()
            raise
        result = self._object_headers(stored, params)
        result["ContentLength"] = length
        result["Body"] = _RangeReader(handle, start, length)
        if content_range is not None:
            result["ContentRange"] = content_range
            return 206, result
        return 200, result

    @operation("HeadObject")
    def head_object(self, region: str, params: dict):
        stored = self.objects.head_object(params["Bucket"], params["Key"])
        self._check_conditions(stored, params)
        _, length, content_range = self._range(stored, params.get("Range"))
        result = self._object_headers(stored, params)
        result["ContentLength"] = length
        if content_range is not None:
            result["ContentRange"] = content_range
            return 206, result
        return 200, result

    @operation("DeleteObject")
    def delete_object(self, region: str, params: dict) -> dict:
        self.objects.delete_object(params["Bucket"], params["Key"])
        return {}

    @operation("DeleteObjects")
    def delete_objects(self, region: str, params: dict) -> dict:
        bucket = params["Bucket"]
        self.objects.bucket_region(bucket)
        request = params.get("Delete") or {}
        identifiers = request.get("Objects") or []
        if not identifiers or len(identifiers) > 1000:
            raise ServiceError("MalformedXML", "The XML you provided was not well-formed or did not validate "
                                               "against our published schema")
        deleted, errors = [], []
        for identifier in identifiers:
            key = identifier.get("Key", "")
            try:
                self.objects.delete_object(bucket, key)
            except store.ObjectStoreError as error:
                answer = self.service_error(error)
                errors.append({"Key": key, "Code": answer.code, "Message": answer.message})
            else:
                deleted.append({"Key": key})
        result: dict = {}
        if deleted and not request.get("Quiet", False):
            result["Deleted"] = deleted
        if errors:
            result["Errors"] = errors
        return result

    @operation("CopyObject")
    def copy_object(self, region: str, params: dict) -> dict:
        source_bucket, source_key = _copy_source(params["CopySource"])
        bucket, key = params["Bucket"], params["Key"]
        replace = params.get("MetadataDirective", "COPY") == "REPLACE"
        if (source_bucket, source_key) == (bucket, key) and not replace:
            raise ServiceError("InvalidRequest",
                               "This copy request is illegal because it is trying to copy an object to itself "
                               "without changing the object's metadata, storage class, website redirect "
                               "location or encryption attributes.")
        source = self.objects.head_object(source_bucket, source_key)
        self._check_copy_conditions(source, params)
        copied = self.objects.copy_object(source_bucket, source_key, bucket, key, params.get("ContentType"),
                                          _metadata(params), replace_metadata=replace)
        return {"CopyObjectResult": {"ETag": _quoted(copied.etag), "LastModified": copied.last_modified}}

    @operation("ListObjects")
    def list_objects(self, region: str, params: dict) -> dict:
        listing, max_keys = self._list(params, start_after=params.get("Marker"), continuation=None)
        encode = _encoder(params)
        result = self._listing_result(params, listing, max_keys, encode)
        result["Marker"] = encode(params.get("Marker") or "")
        if listing.is_truncated and params.get("Delimiter"):
            result["NextMarker"] = encode(listing.next_marker)
        return result

    @operation("ListObjectsV2")
    def list_objects_v2(self, region: str, params: dict) -> dict:
        token = params.get("ContinuationToken")
        continuation = _decode_token(token)
        if token is not None and continuation is None:
            raise ServiceError("InvalidArgument", "The continuation token provided is incorrect",
                               fields={"ArgumentName": "continuation-token"})
        listing, max_keys = self._list(params, start_after=params.get("StartAfter"), continuation=continuation)
        encode = _encoder(params)
        result = self._listing_result(params, listing, max_keys, encode, owner=params.get("FetchOwner", False))
        result["KeyCount"] = len(listing.objects) + len(listing.common_prefixes)
        if token is not None:
            result["ContinuationToken"] = token
        if params.get("StartAfter") is not None:
            result["StartAfter"] = encode(params["StartAfter"])
        if listing.is_truncated:
            result["NextContinuationToken"] = _encode_token(listing.next_marker)
        return result

    # -- multipart -------------------------------------------------------------------------------
    @operation("CreateMultipartUpload")
    def create_multipart_upload(self, region: str, params: dict) -> dict:
        bucket, key = params["Bucket"], params["Key"]
        upload_id = self.objects.create_multipart_upload(bucket, key, params.get("ContentType"),
                                                         _metadata(params))
        return {"Bucket": bucket, "Key": key, "UploadId": upload_id}

    @operation("UploadPart")
    def upload_part(self, region: str, params: dict) -> dict:
        self._upload(params)
        etag = self.objects.upload_part(params["UploadId"], params["PartNumber"], params.get("Body", b""),
                                        _content_md5(params))
        return {"ETag": _quoted(etag)}

    @operation("CompleteMultipartUpload")
    def complete_multipart_upload(self, region: str, params: dict) -> dict:
        upload = self._upload(params)
        parts = [(part.get("PartNumber"), part.get("ETag", ""))
                 for part in (params.get("MultipartUpload") or {}).get("Parts") or []]
        if any(number is None for number, _ in parts):
            raise ServiceError("MalformedXML", "The XML you provided was not well-formed or did not validate "
                                               "against our published schema")
        etag = self.objects.complete_multipart_upload(upload.upload_id, parts)
        location = f"https://{upload.bucket}.s3.{region}.amazonaws.com/{quote(upload.key, safe='/~')}"
        return {"Location": location, "Bucket": upload.bucket, "Key": upload.key, "ETag": _quoted(etag)}

    @operation("AbortMultipartUpload")
    def abort_multipart_upload(self, region: str, params: dict) -> dict:
        upload = self._upload(params)
        self.objects.abort_multipart_upload(upload.upload_id)
        return {}

    # -- helpers --------------------------------------------------------------------------------
    def _upload(self, params: dict) -> store.MultipartUpload:
        self.objects.bucket_region(params["Bucket"])
        upload = self.objects.multipart_upload(params["UploadId"])
        if (upload.bucket, upload.key) != (params["Bucket"], params["Key"]):
            raise store.NoSuchUpload(params["UploadId"])
        return upload

    def _object_headers(self, stored: StoredObject, params: dict) -> dict:
        result = {
            "AcceptRanges": "bytes",
            "LastModified": stored.last_modified,
            "ETag": _quoted(stored.etag),
            "ContentType": params.get("ResponseContentType") or stored.content_type,
            "Metadata": dict(stored.metadata),
        }
        for member in ("CacheControl", "ContentDisposition", "ContentEncoding", "ContentLanguage", "Expires"):
            override = params.get(f"Response{member}")
            if override is not None:
                result[member] = override
        return {name: value for name, value in result.items() if value is not None}

    @staticmethod
    def _check_conditions(stored: StoredObject, params: dict) -> None:
        """If-Match / If-Unmodified-Since (412) and If-None-Match / If-Modified-Since (304), as S3 orders them."""
        if_match, if_none_match = params.get("IfMatch"), params.get("IfNoneMatch")
        modified_since, unmodified_since = params.get("IfModifiedSince"), params.get("IfUnmodifiedSince")
        if if_match is not None:
            if not _etag_matches(if_match, stored.etag):
                raise ServiceError("PreconditionFailed", "At least one of the pre-conditions you specified "
                                                         "did not hold", 412, fields={"Condition": "If-Match"})
        elif unmodified_since is not None and stored.last_modified > unmodified_since:
            raise ServiceError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold",
                               412, fields={"Condition": "If-Unmodified-Since"})
        if if_none_match is not None:
            if _etag_matches(if_none_match, stored.etag):
                raise ServiceError("NotModified", "Not Modified", 304)
        elif modified_since is not None and stored.last_modified <= modified_since:
            raise ServiceError("NotModified", "Not Modified", 304)

    @staticmethod
    def _check_copy_conditions(stored: StoredObject, params: dict) -> None:
        failed = None
        if params.get("CopySourceIfMatch") is not None and not _etag_matches(params["CopySourceIfMatch"],
                                                                             stored.etag):
            failed = "x-amz-copy-source-If-Match"
        elif params.get("CopySourceIfNoneMatch") is not None and _etag_matches(params["CopySourceIfNoneMatch"],
                                                                               stored.etag):
            failed = "x-amz-copy-source-If-None-Match"
        elif params.get("CopySourceIfUnmodifiedSince") is not None and \
                stored.last_modified > params["CopySourceIfUnmodifiedSince"]:
            failed = "x-amz-copy-source-If-Unmodified-Since"
        elif params.get("CopySourceIfModifiedSince") is not None and \
                stored.last_modified <= params["CopySourceIfModifiedSince"]:
            failed = "x-amz-copy-source-If-Modified-Since"
        if failed:
            raise ServiceError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold",
                               412, fields={"Condition": failed})

    @staticmethod
    def _range(stored: StoredObject, header: str | None) -> tuple[int, int, str | None]:
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
            raise ServiceError("InvalidRange", "The requested range is not satisfiable", 416,
                               fields={"RangeRequested": header, "ActualObjectSize": size})
        return start, end - start + 1, f"bytes {start}-{end}/{size}"

    def _list(self, params: dict, start_after: str | None, continuation: str | None):
        max_keys = params.get("MaxKeys", MAX_KEYS)
        if max_keys < 0:
            raise ServiceError("InvalidArgument", "max-keys cannot be negative",
                               fields={"ArgumentName": "max-keys", "ArgumentValue": max_keys})
        max_keys = min(max_keys, MAX_KEYS)
        listing = self.objects.list_objects(params["Bucket"], prefix=params.get("Prefix") or "",
                                            delimiter=params.get("Delimiter"), start_after=start_after,
                                            max_keys=max_keys, continuation=continuation)
        return listing, max_keys

    def _listing_result(self, params: dict, listing: store.ObjectListing, max_keys: int,
                        encode: Callable[[str], str], owner: bool = True) -> dict:
        contents = []
        for stored in listing.objects:
            entry = {"Key": encode(stored.key), "LastModified": stored.last_modified,
                     "ETag": _quoted(stored.etag), "Size": stored.size, "StorageClass": "STANDARD"}
            if owner:
                entry["Owner"] = {"ID": self.owner_id}
            contents.append(entry)
        result: dict = {
            "IsTruncated": listing.is_truncated,
            "Name": params["Bucket"],
            "Prefix": encode(params.get("Prefix") or ""),
            "MaxKeys": max_keys,
        }
        if contents:
            result["Contents"] = contents
        if params.get("Delimiter"):
            result["Delimiter"] = encode(params["Delimiter"])
        if listing.common_prefixes:
            result["CommonPrefixes"] = [{"Prefix": encode(prefix)} for prefix in listing.common_prefixes]
        if params.get("EncodingType"):
            result["EncodingType"] = params["EncodingType"]
        return result


def _metadata(params: dict) -> dict | None:
    """User metadata from ``x-amz-meta-*`` headers; S3 keeps the names lower-cased (HTTP headers ignore case)."""
    metadata = params.get("Metadata")
    return None if metadata is None else {str(k).lower(): v for k, v in metadata.items()}


def _encoder(params: dict) -> Callable[[str], str]:
    """URL-encode listing values when the caller asked ``EncodingType=url`` (boto3 always does)."""
    if params.get("EncodingType") == "url":
        return lambda value: quote(value, safe="/")
    return lambda value: value


def _encode_token(marker: str) -> str:
    return base64.urlsafe_b64encode(("m:" + marker).encode("utf-8")).decode("ascii")


def _decode_token(token: str | None) -> str | None:
    if not token:
        return None
    try:
        text = base64.urlsafe_b64decode(token.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError, binascii.Error):
        return None
    return text[2:] if text.startswith("m:") else None


def _copy_source(value: str) -> tuple[str, str]:
    """``bucket/key`` (URL-encoded, maybe with a leading ``/`` and ``?versionId=``) -> (bucket, key)."""
    path = value.split("?versionId=", 1)[0]
    path = unquote(path).lstrip("/")
    bucket, _, key = path.partition("/")
    if not bucket or not key:
        raise ServiceError("InvalidArgument", "Invalid copy source object key",
                           fields={"ArgumentName": "x-amz-copy-source", "ArgumentValue": value})
    return bucket, key


def _content_md5(params: dict) -> bytes | None:
    """The digest announced in ``Content-MD5`` (``InvalidDigest`` if it is not a base64 MD5)."""
    value = params.get("ContentMD5")
    if value is None:
        return None
    try:
        digest = base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        digest = b""
    if len(digest) != 16:
        raise ServiceError("InvalidDigest", "The Content-MD5 you specified was invalid.",
                           fields={"Content-MD5": value})
    return digest
