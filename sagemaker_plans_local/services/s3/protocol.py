"""S3's protocol: rest-xml requests read back, answers and ``<Error>`` documents written, error fields.

S3's answers carry its request ids (``x-amz-request-id``, ``x-amz-id-2``);
errors are ``<Error>`` documents with S3's codes, messages and extra fields,
and no body for HEAD requests.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Callable

from botocore.model import OperationModel

from sagemaker_plans_local.core.errors import DomainError
from sagemaker_plans_local.protocol import xml_wire
from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.request_ids import s3_request_id
from sagemaker_plans_local.protocol.service import Answer, AwsService, Handler
from sagemaker_plans_local.protocol.xml_codec import BodyTooLarge
from sagemaker_plans_local.services.s3 import object_errors, rules
from sagemaker_plans_local.services.s3 import objects as store
from sagemaker_plans_local.services.s3.objects import ObjectStore

NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_KEYS = 1000
US_EAST_1 = "us-east-1"
#: Conditional headers an unreadable date of is ignored, not refused (RFC 7232, which S3 follows).
LENIENT_HEADERS = ("IfModifiedSince", "IfUnmodifiedSince")
#: Root element names S3 gives its XML answers (botocore ignores them, readers of the raw body may not).
ROOTS = {
    "ListBuckets": "ListAllMyBucketsResult",
    "ListObjects": "ListBucketResult",
    "ListObjectsV2": "ListBucketResult",
    "DeleteObjects": "DeleteResult",
    "CreateMultipartUpload": "InitiateMultipartUploadResult",
    "CompleteMultipartUpload": "CompleteMultipartUploadResult",
    "CopyObject": "CopyObjectResult",
    "GetBucketTagging": "Tagging",
}


class S3Protocol(AwsService):
    """The protocol half of ``S3Api``: S3 over an :class:`ObjectStore`, owned by ``account_id``."""

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
        (object_errors.InvalidTag, "InvalidTag", 400),
        (object_errors.NoSuchTagSet, "NoSuchTagSet", 404),
    )

    def __init__(
        self, objects: ObjectStore, account_id: str, on_request: Callable[[], None] | None = None
    ) -> None:
        super().__init__(on_request)
        self.objects = objects
        self.account_id = account_id
        self.owner_id = hashlib.sha256(f"sagemaker-plans-local/{account_id}".encode()).hexdigest()

    # -- protocol --------------------------------------------------------------------------
    def _answer(
        self, handler: Handler, region: str, model: OperationModel, request: dict, request_id: str
    ) -> Answer:
        limit = rules.body_limit(model)
        try:
            params = xml_wire.read_rest_request(model, request, limit.xml, LENIENT_HEADERS)
        except BodyTooLarge:
            raise ApiError(*limit.too_large) from None
        except xml_wire.MalformedRequest as error:
            if error.member is None:
                raise ApiError("MalformedXML", error.message) from None
            raise ApiError("InvalidArgument", error.message, fields={"ArgumentName": error.member}) from None
        limit.check_items(params)
        self._check_owner(params)
        answer = self._call(handler, region, params)
        status, result = (
            answer if isinstance(answer, tuple) else (model.http.get("responseCode", 200), answer)
        )
        headers, body = self._encode(model, result)
        if isinstance(body, bytes) and body:
            headers["Content-Type"] = "application/xml"
            headers["Content-Length"] = str(len(body))
        headers.update(self._ids(request_id))
        if model.http.get("method") == "HEAD" and not hasattr(body, "read"):
            body = b""
        return Answer(status, headers, body)

    @staticmethod
    def _encode(model: OperationModel, result: dict) -> tuple[dict[str, str], Any]:
        if model.name == "GetBucketLocation":
            # S3 answers a bare <LocationConstraint> (empty for us-east-1); botocore reads its text
            # in an after-call handler rather than by the output shape.
            body = xml_wire.xml_document(
                model.output_shape.members["LocationConstraint"],
                result.get("LocationConstraint") or "",
                "LocationConstraint",
                NAMESPACE,
            )
            return {}, body
        return xml_wire.rest_response(model.output_shape, result or {}, ROOTS.get(model.name), NAMESPACE)

    def _error(self, error: ApiError, operation_name: str, request_id: str) -> Answer:
        headers = self._ids(request_id)
        try:
            method = self.model.operation_model(operation_name).http.get("method")
        except Exception:  # not an S3 operation at all
            method = None
        if method == "HEAD" or error.status == 304:
            return Answer(error.status, headers, b"")
        body = xml_wire.s3_error(error.code, error.message, request_id, headers["x-amz-id-2"], error.fields)
        headers["Content-Type"] = "application/xml"
        return Answer(error.status, headers, body)

    def service_error(self, error: DomainError) -> ApiError:
        answer = super().service_error(error)
        fields: dict[str, Any] = {}
        if isinstance(
            error,
            (
                store.NoSuchBucket,
                store.BucketNotEmpty,
                store.BucketAlreadyOwnedByYou,
                store.InvalidBucketName,
                object_errors.NoSuchTagSet,
            ),
        ):
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
        elif isinstance(error, object_errors.InvalidTag):
            fields.update(error.fields)
        elif isinstance(error, store.KeyTooLong):
            fields.update(Size=len(error.key.encode("utf-8")), MaxSizeAllowed=store.MAX_KEY_BYTES)
        answer.fields = fields
        return answer

    @staticmethod
    def _ids(request_id: str) -> dict[str, str]:
        host_id = base64.b64encode(hashlib.sha256(request_id.encode()).digest()).decode()
        return {"x-amz-request-id": s3_request_id(request_id), "x-amz-id-2": host_id}

    def _check_owner(self, params: dict) -> None:
        expected = params.get("ExpectedBucketOwner")
        if expected is not None and expected != self.account_id:
            raise ApiError("AccessDenied", "Access Denied", 403)
