"""S3 buckets, objects and multipart uploads on the local disk, with S3's rules (no boto3 here).

The files' layout is ``object_files``'s; key names and URIs are ``object_keys``'s.
ETags are the MD5 hex of the content (no quotes), or ``<md5 of the parts'
binary MD5s>-<number of parts>`` for a completed multipart upload.
Every public method is thread-safe, and safe with other processes on the same root.
"""

from __future__ import annotations

import os
import secrets
import shutil
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Iterator

from sagemaker_plans_local.services.s3.bucket_tags import BucketTags
from sagemaker_plans_local.services.s3.object_errors import (
    BadDigest,
    BucketAlreadyOwnedByYou,
    BucketNotEmpty,
    EntityTooSmall,
    InvalidArgument,
    InvalidBucketName,
    InvalidPart,
    InvalidPartOrder,
    KeyTooLong,
    MalformedPartList,
    NoSuchBucket,
    NoSuchKey,
    NoSuchUpload,
    ObjectStoreError,
)
from sagemaker_plans_local.services.s3.object_files import (
    CHUNK_SIZE,
    MultipartUpload,
    ObjectListing,
    StoredObject,
    from_iso,
    iso,
    md5_etag,
    strip_quotes,
)
from sagemaker_plans_local.services.s3.object_keys import (
    MAX_KEY_BYTES,
    decode_name,
    encode_key,
    parse_s3_uri,
    s3_uri,
    valid_bucket_name,
)

__all__ = [
    "BadDigest",
    "BucketAlreadyOwnedByYou",
    "BucketNotEmpty",
    "EntityTooSmall",
    "InvalidArgument",
    "InvalidBucketName",
    "InvalidPart",
    "InvalidPartOrder",
    "KeyTooLong",
    "MalformedPartList",
    "NoSuchBucket",
    "NoSuchKey",
    "NoSuchUpload",
    "ObjectStoreError",
    "MultipartUpload",
    "ObjectListing",
    "StoredObject",
    "MAX_KEY_BYTES",
    "MIN_PART_SIZE",
    "MAX_PART_NUMBER",
    "decode_name",
    "encode_key",
    "parse_s3_uri",
    "s3_uri",
    "valid_bucket_name",
    "ObjectStore",
]

MIN_PART_SIZE = 5 * 1024 * 1024
MAX_PART_NUMBER = 10_000


class ObjectStore(BucketTags):
    """S3 buckets and objects kept under ``root`` (see ``object_files``)."""

    # -- buckets ---------------------------------------------------------------------
    def create_bucket(self, name: str, region: str = "us-east-1", exist_ok: bool = True) -> None:
        """Create a bucket; creating one that already exists is a no-op (or
        ``BucketAlreadyOwnedByYou`` with ``exist_ok=False``)."""
        if not valid_bucket_name(name):
            raise InvalidBucketName(name)
        with self._locked():
            directory = self.root / name
            if (directory / "bucket.json").exists():
                if exist_ok:
                    return
                raise BucketAlreadyOwnedByYou(name)
            (directory / "data").mkdir(parents=True, exist_ok=True)
            (directory / "meta").mkdir(exist_ok=True)
            self._write_json(
                directory / "bucket.json", {"name": name, "region": region, "created": iso(self._now())}
            )

    def bucket_region(self, name: str) -> str:
        return self._bucket_record(name)["region"]

    def bucket_created(self, name: str) -> datetime:
        return from_iso(self._bucket_record(name)["created"])

    def list_buckets(self) -> list[tuple[str, datetime]]:
        """Every bucket as (name, creation date), by name."""
        out = []
        for entry in sorted(os.listdir(self.root)):
            if not entry.startswith(".") and self.bucket_exists(entry):
                try:
                    out.append((entry, self.bucket_created(entry)))
                except NoSuchBucket:  # deleted since the listing
                    continue
        return out

    def delete_bucket(self, name: str) -> None:
        """Delete an empty bucket (``BucketNotEmpty`` otherwise)."""
        with self._locked():
            directory = self._bucket_dir(name)
            if os.listdir(directory / "meta"):
                raise BucketNotEmpty(name)
            self._discard(directory)
            for upload in list(self._all_uploads()):  # S3 discards a deleted bucket's open uploads
                if upload.bucket == name:
                    self._discard(self._uploads / upload.upload_id)

    # -- objects ---------------------------------------------------------------------
    def put_object(
        self,
        bucket: str,
        key: str,
        data: bytes | BinaryIO,
        content_type: str | None = None,
        metadata: dict | None = None,
        content_md5: bytes | None = None,
    ) -> str:
        """Store ``data`` (bytes or a readable binary stream) under ``key``; returns the etag.

        With ``content_md5`` (the 16-byte digest), content with another MD5
        raises ``BadDigest`` and nothing is stored.
        """
        name = self._name(key)
        self._bucket_dir(bucket)
        tmp, digest, _ = self._spool(data, content_md5)
        return self._commit(bucket, key, name, tmp, digest.hexdigest(), content_type, metadata)

    def upload_file(
        self,
        bucket: str,
        key: str,
        path: str | Path,
        content_type: str | None = None,
        metadata: dict | None = None,
    ) -> str:
        with open(path, "rb") as handle:
            return self.put_object(bucket, key, handle, content_type, metadata)

    def head_object(self, bucket: str, key: str) -> StoredObject:
        """The object's metadata (``NoSuchBucket`` / ``NoSuchKey`` if absent)."""
        return self._stored(bucket, key, self._name(key, missing=(bucket, key)))

    def get_object(self, bucket: str, key: str) -> StoredObject:
        """Like :meth:`head_object`; read the content with ``.open()``."""
        return self.head_object(bucket, key)

    def open_object(self, bucket: str, key: str) -> tuple[StoredObject, BinaryIO]:
        """The object's metadata and its content opened at the same instant.

        Each version has its own file, so the open handle keeps reading the
        version described by the metadata whatever is written or deleted later.
        """
        return self._open(bucket, key, self._name(key, missing=(bucket, key)))

    def delete_object(self, bucket: str, key: str) -> None:
        """Delete ``key`` if present (S3 answers success for a missing key too)."""
        try:
            name = self._name(key)
        except ObjectStoreError:
            self._bucket_dir(bucket)
            return
        self._remove(bucket, name)

    def copy_object(
        self,
        source_bucket: str,
        source_key: str,
        bucket: str,
        key: str,
        content_type: str | None = None,
        metadata: dict | None = None,
        replace_metadata: bool = False,
    ) -> StoredObject:
        """Copy an object; its content type and metadata come along unless ``replace_metadata``."""
        source, handle = self.open_object(source_bucket, source_key)
        with handle:
            if not replace_metadata:
                content_type, metadata = source.content_type, source.metadata
            name = self._name(key)
            self._bucket_dir(bucket)
            tmp, digest, _ = self._spool(handle)
        self._commit(bucket, key, name, tmp, digest.hexdigest(), content_type, metadata)
        return self.head_object(bucket, key)

    def list_objects(
        self,
        bucket: str,
        prefix: str = "",
        delimiter: str | None = None,
        start_after: str | None = None,
        max_keys: int = 1000,
        continuation: str | None = None,
    ) -> ObjectListing:
        """One page of keys starting with ``prefix``, in lexicographic (UTF-8 byte) order.

        With a ``delimiter``, keys containing it after the prefix are rolled
        up into common prefixes (each counting as one entry against
        ``max_keys``). An entry (key or common prefix) is listed only if it
        sorts after ``start_after`` and after ``continuation`` (the
        ``next_marker`` of the previous page).
        """
        prefix = prefix or ""
        delimiter = delimiter or None
        markers = [m for m in (start_after, continuation) if m]
        marker = max(markers) if markers else None
        objects: list[StoredObject] = []
        common: list[str] = []
        last: str | None = None
        truncated = False
        for key in self.keys(bucket, prefix):
            entry, rolled = key, False
            if delimiter:
                at = key.find(delimiter, len(prefix))
                if at >= 0:
                    entry, rolled = key[: at + len(delimiter)], True
            if marker is not None and entry <= marker:
                continue
            if rolled and common and common[-1] == entry:
                continue
            if len(objects) + len(common) >= max_keys:
                truncated = max_keys > 0
                break
            if rolled:
                common.append(entry)
            else:
                try:
                    objects.append(self._stored(bucket, key, encode_key(key)))
                except NoSuchKey:  # deleted since the listing
                    continue
            last = entry
        return ObjectListing(objects, common, truncated, last if truncated else None)

    # -- multipart ---------------------------------------------------------------------
    def create_multipart_upload(
        self, bucket: str, key: str, content_type: str | None = None, metadata: dict | None = None
    ) -> str:
        """Open a multipart upload; returns its id."""
        self._name(key)
        with self._locked():
            self._bucket_dir(bucket)
            upload_id = secrets.token_hex(32)
            directory = self._uploads / upload_id
            directory.mkdir()
            self._write_json(
                directory / "upload.json",
                {
                    "bucket": bucket,
                    "key": key,
                    "initiated": iso(self._now()),
                    "content_type": content_type,
                    "metadata": dict(metadata or {}),
                },
            )
        return upload_id

    def multipart_upload(self, upload_id: str) -> MultipartUpload:
        """The open upload ``upload_id`` (``NoSuchUpload`` if unknown, completed or aborted)."""
        try:
            record = self._read_json(self._upload_dir(upload_id) / "upload.json")
        except FileNotFoundError:
            raise NoSuchUpload(upload_id) from None
        return MultipartUpload(
            upload_id,
            record["bucket"],
            record["key"],
            from_iso(record["initiated"]),
            record["content_type"] or "binary/octet-stream",
            record["metadata"],
        )

    def upload_part(
        self, upload_id: str, part_number: int, data: bytes | BinaryIO, content_md5: bytes | None = None
    ) -> str:
        """Store one part (1..10000; a re-upload replaces it); returns its etag."""
        if not isinstance(part_number, int) or not 1 <= part_number <= MAX_PART_NUMBER:
            raise InvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
        self._upload_dir(upload_id)
        tmp, digest, size = self._spool(data, content_md5)
        with self._locked():
            try:
                directory = self._upload_dir(upload_id)
            except NoSuchUpload:
                tmp.unlink(missing_ok=True)
                raise
            record = {"etag": digest.hexdigest(), "size": size}
            self._install(tmp, directory, directory / f"{part_number}.json", str(part_number), record)
        return digest.hexdigest()

    def list_parts(self, upload_id: str) -> list[tuple[int, str, int]]:
        """The uploaded parts as (part number, etag, size), by part number."""
        directory = self._upload_dir(upload_id)
        parts = []
        try:
            for entry in os.listdir(directory):
                if entry.endswith(".json") and entry != "upload.json":
                    record = self._read_json(directory / entry)
                    parts.append((int(entry[:-5]), record["etag"], record["size"]))
        except FileNotFoundError:  # completed or aborted meanwhile
            raise NoSuchUpload(upload_id) from None
        return sorted(parts)

    def complete_multipart_upload(self, upload_id: str, parts: list[tuple[int, str]]) -> str:
        """Assemble ``parts`` ((part number, etag) in ascending order) into the object; returns its etag.

        The upload is claimed first (its directory moved into ``.tmp``), so of
        two completions racing, in any processes, one wins and the other gets
        ``NoSuchUpload``; a failure after the claim puts the upload back.
        """
        if not parts:
            raise MalformedPartList()
        upload, claimed, records = self._claim(upload_id, parts)
        tmp, name = self._tmp_path(), self._name(upload.key)
        try:
            with open(tmp, "wb") as out:
                for number, record in records:
                    with open(claimed / record.get("data", str(number)), "rb") as part:
                        shutil.copyfileobj(part, out, CHUNK_SIZE)
            etag = md5_etag([bytes.fromhex(record["etag"]) for _, record in records])
            self._commit(upload.bucket, upload.key, name, tmp, etag, upload.content_type, upload.metadata)
        except NoSuchBucket:  # deleted meanwhile: S3 discards its uploads
            shutil.rmtree(claimed, ignore_errors=True)
            raise
        except BaseException:
            tmp.unlink(missing_ok=True)
            os.replace(claimed, self._uploads / upload_id)
            raise
        shutil.rmtree(claimed, ignore_errors=True)
        return etag

    def _claim(
        self, upload_id: str, parts: list[tuple[int, str]]
    ) -> tuple[MultipartUpload, Path, list[tuple[int, dict]]]:
        """Check ``parts`` and take the upload out of ``.uploads``: (upload, its new directory, records)."""
        with self._locked():
            upload = self.multipart_upload(upload_id)
            directory = self._upload_dir(upload_id)
            numbers = [number for number, _ in parts]
            if any(b <= a for a, b in zip(numbers, numbers[1:])):
                raise InvalidPartOrder(upload_id)
            records = []
            for number, etag in parts:
                path = directory / f"{number}.json"
                if not path.is_file():
                    raise InvalidPart(upload_id, number)
                record = self._read_json(path)
                if strip_quotes(etag or "") != record["etag"]:
                    raise InvalidPart(upload_id, number)
                records.append((number, record))
            for number, record in records[:-1]:
                if record["size"] < MIN_PART_SIZE:
                    raise EntityTooSmall(upload_id, number, record["size"])
            self._bucket_dir(upload.bucket)
            claimed = self._tmp_path()
            os.replace(directory, claimed)
        return upload, claimed, records

    def abort_multipart_upload(self, upload_id: str) -> None:
        with self._locked():
            self._discard(self._upload_dir(upload_id))

    def _all_uploads(self) -> Iterator[MultipartUpload]:
        for entry in os.listdir(self._uploads):
            try:
                yield self.multipart_upload(entry)
            except NoSuchUpload:
                continue

    s3_uri = staticmethod(s3_uri)
    parse_s3_uri = staticmethod(parse_s3_uri)
