"""The object store's errors; the S3 API maps each to S3's code and HTTP status."""

from __future__ import annotations

from sagemaker_plans_local.core.errors import DomainError


class ObjectStoreError(DomainError):
    """Base of the object store's errors."""


class NoSuchBucket(ObjectStoreError):
    def __init__(self, bucket: str) -> None:
        super().__init__("The specified bucket does not exist")
        self.bucket = bucket


class NoSuchKey(ObjectStoreError):
    def __init__(self, bucket: str, key: str) -> None:
        super().__init__("The specified key does not exist.")
        self.bucket = bucket
        self.key = key


class BucketNotEmpty(ObjectStoreError):
    def __init__(self, bucket: str) -> None:
        super().__init__("The bucket you tried to delete is not empty")
        self.bucket = bucket


class BucketAlreadyOwnedByYou(ObjectStoreError):
    def __init__(self, bucket: str) -> None:
        super().__init__("Your previous request to create the named bucket succeeded and you already own it.")
        self.bucket = bucket


class InvalidBucketName(ObjectStoreError):
    def __init__(self, bucket: str) -> None:
        super().__init__("The specified bucket is not valid.")
        self.bucket = bucket


class NoSuchUpload(ObjectStoreError):
    def __init__(self, upload_id: str) -> None:
        super().__init__(
            "The specified upload does not exist. The upload ID may be invalid, "
            "or the upload may have been aborted or completed."
        )
        self.upload_id = upload_id


class InvalidPart(ObjectStoreError):
    def __init__(self, upload_id: str, part_number: int) -> None:
        super().__init__(
            "One or more of the specified parts could not be found.  The part may not have "
            "been uploaded, or the specified entity tag may not match the part's entity tag."
        )
        self.upload_id = upload_id
        self.part_number = part_number


class InvalidPartOrder(ObjectStoreError):
    def __init__(self, upload_id: str) -> None:
        super().__init__(
            "The list of parts was not in ascending order. The parts list must be "
            "specified in order by part number."
        )
        self.upload_id = upload_id


class EntityTooSmall(ObjectStoreError):
    def __init__(self, upload_id: str, part_number: int, size: int) -> None:
        super().__init__("Your proposed upload is smaller than the minimum allowed object size.")
        self.upload_id = upload_id
        self.part_number = part_number
        self.size = size


class MalformedPartList(ObjectStoreError):
    """CompleteMultipartUpload without any part (S3 answers MalformedXML)."""

    def __init__(self) -> None:
        super().__init__(
            "The XML you provided was not well-formed or did not validate against our published schema"
        )


class KeyTooLong(ObjectStoreError):
    def __init__(self, key: str) -> None:
        super().__init__("Your key is too long")
        self.key = key


class BadDigest(ObjectStoreError):
    """The content's MD5 is not the ``content_md5`` the caller announced; nothing was stored."""

    def __init__(self, expected: bytes, calculated: bytes) -> None:
        super().__init__("The Content-MD5 you specified did not match what we received.")
        self.expected = expected
        self.calculated = calculated


class InvalidArgument(ObjectStoreError):
    """A malformed argument (empty key, part number out of range, ...)."""


class InvalidTag(ObjectStoreError):
    """A bucket tag S3 refuses (``fields``: the ``TagKey``/``TagValue`` S3 names in its answer)."""

    def __init__(self, message: str, **fields: str) -> None:
        super().__init__(message)
        self.fields = fields


class NoSuchTagSet(ObjectStoreError):
    def __init__(self, bucket: str) -> None:
        super().__init__("The TagSet does not exist")
        self.bucket = bucket
