"""The object store's files on the local disk: records, spooling and atomic commits.

Layout under ``root``::

    <bucket>/bucket.json        region and creation date
    <bucket>/data/<name>        an object's bytes
    <bucket>/meta/<name>        its metadata (JSON: key, size, etag, dates, types)
    .uploads/<id>/upload.json   an open multipart upload; its parts as <n> / <n>.json
    .tmp/                       files being written (renamed into place when complete)

Bucket names follow S3's rules and names starting with a dot are reserved, so
a bucket directory can never be ``.uploads``/``.tmp`` nor escape ``root``. A
key is stored under one file name (see ``object_keys``).

``last_modified`` is the clock's time truncated to the second, as S3 reports
it. Every public method is thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

import attrs

from sagemaker_plans_local.core.clock import Clock
from sagemaker_plans_local.services.s3.object_errors import (
    BadDigest,
    InvalidArgument,
    KeyTooLong,
    NoSuchBucket,
    NoSuchKey,
    NoSuchUpload,
)
from sagemaker_plans_local.services.s3.object_keys import (
    MAX_KEY_BYTES,
    decode_name,
    encode_key,
    valid_bucket_name,
)

CHUNK_SIZE = 1024 * 1024
_UPLOAD_ID = re.compile(r"[0-9a-f]{64}")


# -- values ------------------------------------------------------------------------------


@attrs.frozen
class StoredObject:
    """An object's metadata; ``path`` is its content on disk, ``open()`` reads it."""

    bucket: str
    key: str
    size: int
    etag: str
    last_modified: datetime
    content_type: str
    metadata: dict = attrs.field(factory=dict, hash=False)
    path: Path = attrs.field(default=None, eq=False, repr=False)

    def open(self) -> BinaryIO:
        """The content, opened for binary reading (the caller closes it)."""
        return open(self.path, "rb")


@attrs.frozen
class ObjectListing:
    """One page of ``list_objects``: objects and common prefixes, in key order."""

    objects: list[StoredObject]
    common_prefixes: list[str]
    is_truncated: bool
    #: The last key or common prefix of the page, to pass as ``continuation`` (None if complete).
    next_marker: str | None


@attrs.frozen
class MultipartUpload:
    upload_id: str
    bucket: str
    key: str
    initiated: datetime
    content_type: str
    metadata: dict = attrs.field(factory=dict, hash=False)


def md5_etag(part_md5s: list[bytes]) -> str:
    return f"{hashlib.md5(b''.join(part_md5s)).hexdigest()}-{len(part_md5s)}"


def strip_quotes(etag: str) -> str:
    etag = etag.strip()
    if len(etag) >= 2 and etag[0] == etag[-1] == '"':
        return etag[1:-1]
    return etag


def iter_chunks(data: bytes | bytearray | BinaryIO | Iterable[bytes]) -> Iterator[bytes]:
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield bytes(data)
        return
    if isinstance(data, str):
        yield data.encode("utf-8")
        return
    read = getattr(data, "read", None)
    if read is None:
        for chunk in data:
            yield chunk
        return
    while True:
        chunk = read(CHUNK_SIZE)
        if not chunk:
            return
        yield chunk.encode("utf-8") if isinstance(chunk, str) else chunk


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat()


def from_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


# -- the store ------------------------------------------------------------------------


class ObjectFiles:
    """The on-disk state of an object store under ``root``; ``ObjectStore`` adds S3's operations."""

    def __init__(self, root: str | Path, clock: Clock) -> None:
        self.root = Path(root)
        self._clock = clock
        self._lock = threading.RLock()
        self._tmp = self.root / ".tmp"
        self._uploads = self.root / ".uploads"
        for directory in (self.root, self._tmp, self._uploads):
            directory.mkdir(parents=True, exist_ok=True)

    def bucket_exists(self, name: str) -> bool:
        return valid_bucket_name(name) and (self.root / name / "bucket.json").is_file()

    # -- internals -------------------------------------------------------------------
    def _now(self) -> datetime:
        return self._clock.now().astimezone(timezone.utc).replace(microsecond=0)

    def _bucket_dir(self, name: str) -> Path:
        if not self.bucket_exists(name):
            raise NoSuchBucket(name)
        return self.root / name

    def _upload_dir(self, upload_id: str) -> Path:
        if not isinstance(upload_id, str) or not _UPLOAD_ID.fullmatch(upload_id):
            raise NoSuchUpload(upload_id)
        directory = self._uploads / upload_id
        if not (directory / "upload.json").is_file():
            raise NoSuchUpload(upload_id)
        return directory

    @staticmethod
    def _name(key: str, missing: tuple[str, str] | None = None) -> str:
        """The file name of ``key``; a key that cannot exist raises (``NoSuchKey`` if ``missing``)."""
        if not isinstance(key, str) or not key:
            if missing:
                raise NoSuchKey(*missing)
            raise InvalidArgument("An object key must not be empty")
        try:
            raw = key.encode("utf-8")
        except UnicodeEncodeError:
            if missing:
                raise NoSuchKey(*missing) from None
            raise InvalidArgument("An object key must be valid UTF-8") from None
        if len(raw) > MAX_KEY_BYTES:
            if missing:
                raise NoSuchKey(*missing)
            raise KeyTooLong(key)
        return encode_key(key)

    def _tmp_path(self) -> Path:
        return self._tmp / secrets.token_hex(16)

    def _spool(
        self, data: bytes | bytearray | BinaryIO | Iterable[bytes], content_md5: bytes | None = None
    ) -> tuple[Path, "hashlib._Hash", int]:
        """Write ``data`` to a temporary file; returns (path, md5, size)."""
        tmp = self._tmp_path()
        digest, size = hashlib.md5(), 0
        try:
            with open(tmp, "wb") as out:
                for chunk in iter_chunks(data):
                    digest.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if content_md5 is not None and digest.digest() != content_md5:
            tmp.unlink(missing_ok=True)
            raise BadDigest(content_md5, digest.digest())
        return tmp, digest, size

    def _commit(
        self,
        bucket: str,
        key: str,
        name: str,
        tmp: Path,
        etag: str,
        content_type: str | None,
        metadata: dict | None,
    ) -> str:
        """Move a spooled file into place and record its metadata, atomically for readers."""
        with self._lock:
            try:
                directory = self._bucket_dir(bucket)
            except NoSuchBucket:
                tmp.unlink(missing_ok=True)
                raise
            size = tmp.stat().st_size
            os.replace(tmp, directory / "data" / name)
            self._write_json(
                directory / "meta" / name,
                {
                    "key": key,
                    "size": size,
                    "etag": etag,
                    "last_modified": iso(self._now()),
                    "content_type": content_type or "binary/octet-stream",
                    "metadata": {str(k): str(v) for k, v in (metadata or {}).items()},
                },
            )
        return etag

    def _stored(self, bucket: str, key: str, name: str) -> StoredObject:
        directory = self._bucket_dir(bucket)
        try:
            record = self._read_json(directory / "meta" / name)
        except FileNotFoundError:
            raise NoSuchKey(bucket, key) from None
        if record["key"] != key:  # a hashed name shared by two keys: not this one
            raise NoSuchKey(bucket, key)
        return StoredObject(
            bucket,
            key,
            record["size"],
            record["etag"],
            from_iso(record["last_modified"]),
            record["content_type"],
            record["metadata"],
            directory / "data" / name,
        )

    @staticmethod
    def _keys(directory: Path, prefix: str) -> Iterator[str]:
        meta = directory / "meta"
        for name in os.listdir(meta):
            key = decode_name(name)
            if key is None:
                key = ObjectFiles._read_json(meta / name)["key"]
            if key.startswith(prefix):
                yield key

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key of ``bucket`` starting with ``prefix``, sorted."""
        with self._lock:
            return sorted(self._keys(self._bucket_dir(bucket), prefix))

    def _write_json(self, path: Path, document: dict) -> None:
        tmp = self._tmp_path()
        tmp.write_text(json.dumps(document), encoding="utf-8")
        os.replace(tmp, path)

    @staticmethod
    def _read_json(path: Path) -> dict:
        return json.loads(path.read_text(encoding="utf-8"))
