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

from typing import Any, Callable
from urllib.parse import quote

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.service import operation
from sagemaker_plans_local.services.s3 import objects as store
from sagemaker_plans_local.services.s3.api_tagging import BucketTaggingApi
from sagemaker_plans_local.services.s3.objects import StoredObject
from sagemaker_plans_local.services.s3.protocol import MAX_KEYS, US_EAST_1
from sagemaker_plans_local.services.s3.rules import (
    RangeReader,
    byte_range,
    check_conditions,
    check_copy_conditions,
    content_md5,
    copy_source,
    decode_token,
    encode_token,
    encoder,
    header_value,
    quoted,
    user_metadata,
)

#: GetObject's response header overrides given as text, by member and query key.
_OVERRIDES = tuple(
    (f"Response{name}", f"response-{key}")
    for name, key in (
        ("CacheControl", "cache-control"),
        ("ContentDisposition", "content-disposition"),
        ("ContentEncoding", "content-encoding"),
        ("ContentLanguage", "content-language"),
        ("ContentType", "content-type"),
    )
)


def _check_overrides(params: dict) -> None:
    for member, argument in _OVERRIDES:
        if isinstance(params.get(member), str):
            header_value(params[member], argument)


class S3Api(BucketTaggingApi):
    """S3 over an :class:`ObjectStore`, owned by ``account_id``: its operations (bucket tagging's
    in ``api_tagging``)."""

    # -- buckets -----------------------------------------------------------------------------
    @operation("ListBuckets")
    def list_buckets(self, region: str, params: dict) -> dict:
        prefix = params.get("Prefix") or ""
        bucket_region = params.get("BucketRegion")
        after = decode_token(params.get("ContinuationToken"))
        buckets: list[dict[str, Any]] = []
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
                raise ApiError(
                    "InvalidArgument", "Argument max-buckets must be an integer between 1 and 10000"
                )
            if len(buckets) > limit:
                buckets = buckets[:limit]
                result["ContinuationToken"] = encode_token(buckets[-1]["Name"])
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
                raise ApiError(
                    "InvalidLocationConstraint",
                    "The specified location-constraint is not valid",
                    fields={"LocationConstraint": constraint},
                )
        elif constraint != region:
            described = constraint or "unspecified"
            raise ApiError(
                "IllegalLocationConstraintException",
                f"The {described} location constraint is incompatible for the region "
                "specific endpoint this request was sent to.",
            )
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
        etag = self.objects.put_object(
            params["Bucket"],
            params["Key"],
            params.get("Body", b""),
            params.get("ContentType"),
            user_metadata(params),
            content_md5(params),
        )
        return {"ETag": quoted(etag)}

    @operation("GetObject")
    def get_object(self, region: str, params: dict):
        _check_overrides(params)
        stored, handle = self.objects.open_object(params["Bucket"], params["Key"])
        try:
            check_conditions(stored, params)
            start, length, content_range = byte_range(stored, params.get("Range"))
        except BaseException:
            handle.close()
            raise
        result = self._object_headers(stored, params)
        result["ContentLength"] = length
        result["Body"] = RangeReader(handle, start, length)
        if content_range is not None:
            result["ContentRange"] = content_range
            return 206, result
        return 200, result

    @operation("HeadObject")
    def head_object(self, region: str, params: dict):
        _check_overrides(params)
        stored = self.objects.head_object(params["Bucket"], params["Key"])
        check_conditions(stored, params)
        _, length, content_range = byte_range(stored, params.get("Range"))
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
        if not identifiers:  # more than 1,000 are refused as the body is read (rules.BODY_LIMITS)
            raise ApiError(
                "MalformedXML",
                "The XML you provided was not well-formed or did not validate against our published schema",
            )
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
        source_bucket, source_key = copy_source(params["CopySource"])
        bucket, key = params["Bucket"], params["Key"]
        replace = params.get("MetadataDirective", "COPY") == "REPLACE"
        if (source_bucket, source_key) == (bucket, key) and not replace:
            raise ApiError(
                "InvalidRequest",
                "This copy request is illegal because it is trying to copy an object to itself "
                "without changing the object's metadata, storage class, website redirect "
                "location or encryption attributes.",
            )
        source = self.objects.head_object(source_bucket, source_key)
        check_copy_conditions(source, params)
        copied = self.objects.copy_object(
            source_bucket,
            source_key,
            bucket,
            key,
            params.get("ContentType"),
            user_metadata(params),
            replace_metadata=replace,
        )
        return {"CopyObjectResult": {"ETag": quoted(copied.etag), "LastModified": copied.last_modified}}

    @operation("ListObjects")
    def list_objects(self, region: str, params: dict) -> dict:
        listing, max_keys = self._list(params, start_after=params.get("Marker"), continuation=None)
        encode = encoder(params)
        result = self._listing_result(params, listing, max_keys, encode)
        result["Marker"] = encode(params.get("Marker") or "")
        if listing.is_truncated and params.get("Delimiter"):
            result["NextMarker"] = encode(listing.next_marker)
        return result

    @operation("ListObjectsV2")
    def list_objects_v2(self, region: str, params: dict) -> dict:
        token = params.get("ContinuationToken")
        continuation = decode_token(token)
        if token is not None and continuation is None:
            raise ApiError(
                "InvalidArgument",
                "The continuation token provided is incorrect",
                fields={"ArgumentName": "continuation-token"},
            )
        listing, max_keys = self._list(
            params, start_after=params.get("StartAfter"), continuation=continuation
        )
        encode = encoder(params)
        result = self._listing_result(
            params, listing, max_keys, encode, owner=params.get("FetchOwner", False)
        )
        result["KeyCount"] = len(listing.objects) + len(listing.common_prefixes)
        if token is not None:
            result["ContinuationToken"] = token
        if params.get("StartAfter") is not None:
            result["StartAfter"] = encode(params["StartAfter"])
        if listing.is_truncated:
            result["NextContinuationToken"] = encode_token(listing.next_marker)
        return result

    # -- multipart -------------------------------------------------------------------------------
    @operation("CreateMultipartUpload")
    def create_multipart_upload(self, region: str, params: dict) -> dict:
        bucket, key = params["Bucket"], params["Key"]
        upload_id = self.objects.create_multipart_upload(
            bucket, key, params.get("ContentType"), user_metadata(params)
        )
        return {"Bucket": bucket, "Key": key, "UploadId": upload_id}

    @operation("UploadPart")
    def upload_part(self, region: str, params: dict) -> dict:
        self._upload(params)
        etag = self.objects.upload_part(
            params["UploadId"], params["PartNumber"], params.get("Body", b""), content_md5(params)
        )
        return {"ETag": quoted(etag)}

    @operation("CompleteMultipartUpload")
    def complete_multipart_upload(self, region: str, params: dict) -> dict:
        upload = self._upload(params)
        parts = [
            (part.get("PartNumber"), part.get("ETag", ""))
            for part in (params.get("MultipartUpload") or {}).get("Parts") or []
        ]
        if any(number is None for number, _ in parts):
            raise ApiError(
                "MalformedXML",
                "The XML you provided was not well-formed or did not validate against our published schema",
            )
        etag = self.objects.complete_multipart_upload(upload.upload_id, parts)
        location = f"https://{upload.bucket}.s3.{region}.amazonaws.com/{quote(upload.key, safe='/~')}"
        return {"Location": location, "Bucket": upload.bucket, "Key": upload.key, "ETag": quoted(etag)}

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
            "ETag": quoted(stored.etag),
            "ContentType": params.get("ResponseContentType") or stored.content_type,
            "Metadata": dict(stored.metadata),
        }
        for member in ("CacheControl", "ContentDisposition", "ContentEncoding", "ContentLanguage", "Expires"):
            override = params.get(f"Response{member}")
            if override is not None:
                result[member] = override
        return {name: value for name, value in result.items() if value is not None}

    def _list(self, params: dict, start_after: str | None, continuation: str | None):
        max_keys = params.get("MaxKeys", MAX_KEYS)
        if max_keys < 0:
            raise ApiError(
                "InvalidArgument",
                "max-keys cannot be negative",
                fields={"ArgumentName": "max-keys", "ArgumentValue": max_keys},
            )
        max_keys = min(max_keys, MAX_KEYS)
        listing = self.objects.list_objects(
            params["Bucket"],
            prefix=params.get("Prefix") or "",
            delimiter=params.get("Delimiter"),
            start_after=start_after,
            max_keys=max_keys,
            continuation=continuation,
        )
        return listing, max_keys

    def _listing_result(
        self,
        params: dict,
        listing: store.ObjectListing,
        max_keys: int,
        encode: Callable[[str], str],
        owner: bool = True,
    ) -> dict:
        contents = []
        for stored in listing.objects:
            entry = {
                "Key": encode(stored.key),
                "LastModified": stored.last_modified,
                "ETag": quoted(stored.etag),
                "Size": stored.size,
                "StorageClass": "STANDARD",
            }
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
