"""Buckets and objects on the local disk, with S3's rules (no boto3 here).

Layout under ``root``::

    <bucket>/bucket.json        region and creation date
    <bucket>/data/<name>        an object's bytes
    <bucket>/meta/<name>        its metadata (JSON: key, size, etag, dates, types)
    .uploads/<id>/upload.json   an open multipart upload; its parts as <n> / <n>.json
    .tmp/                       files being written (renamed into place when complete)

Bucket names follow S3's rules (lowercase letters, digits, dots and hyphens;
never ``.`` or ``..``) and names starting with a dot are reserved, so a
bucket directory can never be ``.uploads``/``.tmp`` nor escape ``root``.

An object key is any string of 1..1024 UTF-8 bytes. It is stored as *one*
file name: every byte other than ``a-z 0-9 _ -`` is percent-encoded with
upper-case hex (``A`` is ``%41``, ``.`` is ``%2E``, ``/`` is ``%2F``), so a
name never contains a path separator, is never ``.``/``..``, is unique even on
case-insensitive file systems, and keys such as ``a`` and ``a/b`` are two
sibling files. A name longer than 200 characters is replaced by ``~`` and the
SHA-256 of the key (``~`` never appears in an encoded name); the key itself is
always recorded in the metadata file.

ETags are the MD5 hex of the content (no quotes), or ``<md5 of the parts'
binary MD5s>-<number of parts>`` for a completed multipart upload.
``last_modified`` is the clock's time truncated to the second, as S3 reports
it. Every public method is thread-safe.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import secrets
import shutil
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

import attrs

from .clock import Clock
from .errors import DomainError

MAX_KEY_BYTES = 1024
MIN_PART_SIZE = 5 * 1024 * 1024
MAX_PART_NUMBER = 10_000
_CHUNK = 1024 * 1024
_MAX_NAME = 200
_SAFE_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_-")
_ENCODE = [chr(b) if b in _SAFE_BYTES else f"%{b:02X}" for b in range(256)]
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_UPLOAD_ID = re.compile(r"[0-9a-f]{64}")
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")



# -- errors (the API maps each to S3's code and HTTP status) -------------------------


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
        super().__init__("The specified upload does not exist. The upload ID may be invalid, "
                         "or the upload may have been aborted or completed.")
        self.upload_id = upload_id


class InvalidPart(ObjectStoreError):
    def __init__(self, upload_id: str, part_number: int) -> None:
        super().__init__("One or more of the specified parts could not be found.  The part may not have "
                         "been uploaded, or the specified entity tag may not match the part's entity tag.")
        self.upload_id = upload_id
        self.part_number = part_number


class InvalidPartOrder(ObjectStoreError):
    def __init__(self, upload_id: str) -> None:
        super().__init__("The list of parts was not in ascending order. The parts list must be "
                         "specified in order by part number.")
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
        super().__init__("The XML you provided was not well-formed or did not validate "
                         "against our published schema")


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


class UnsafeDownload(ObjectStoreError):
    """``download_prefix`` refused a key whose path would leave the destination."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"Refusing to download key {key!r}: {reason}")
        self.key = key


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


# -- helpers -----------------------------------------------------------------------------


def encode_key(key: str) -> str:
    """The file name of ``key`` (see the module docstring); never a path."""
    raw = key.encode("utf-8")
    name = "".join([_ENCODE[b] for b in raw])
    if len(name) > _MAX_NAME:
        return "~" + hashlib.sha256(raw).hexdigest()
    return name


def decode_name(name: str) -> str | None:
    """The key of an encoded file name, or None for a hashed name (read the metadata)."""
    if name.startswith("~"):
        return None
    out = bytearray()
    index, length = 0, len(name)
    while index < length:
        char = name[index]
        if char == "%":
            out.append(int(name[index + 1:index + 3], 16))
            index += 3
        else:
            out.append(ord(char))
            index += 1
    return out.decode("utf-8")


def valid_bucket_name(name: str) -> bool:
    """S3's bucket naming rules (general purpose buckets)."""
    if not isinstance(name, str) or not _BUCKET_NAME.fullmatch(name):
        return False
    if ".." in name or ".-" in name or "-." in name:
        return False
    if name.startswith(_RESERVED_PREFIXES) or name.endswith(_RESERVED_SUFFIXES):
        return False
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        return True
    return False


def s3_uri(bucket: str, key: str = "") -> str:
    return f"s3://{bucket}/{key}"


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/key`` -> ``("bucket", "some/key")`` (key may be empty)."""
    if not isinstance(uri, str) or not uri.startswith("s3://"):
        raise ValueError(f"not an S3 URI: {uri!r}")
    bucket, _, key = uri[len("s3://"):].partition("/")
    if not bucket:
        raise ValueError(f"S3 URI without a bucket: {uri!r}")
    return bucket, key


def _md5_etag(part_md5s: list[bytes]) -> str:
    return f"{hashlib.md5(b''.join(part_md5s)).hexdigest()}-{len(part_md5s)}"


def _strip_quotes(etag: str) -> str:
    etag = etag.strip()
    if len(etag) >= 2 and etag[0] == etag[-1] == '"':
        return etag[1:-1]
    return etag


def _chunks(data: bytes | bytearray | BinaryIO | Iterable[bytes]) -> Iterator[bytes]:
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
        chunk = read(_CHUNK)
        if not chunk:
            return
        yield chunk.encode("utf-8") if isinstance(chunk, str) else chunk


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat()


def _from_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


# -- the store ------------------------------------------------------------------------


class ObjectStore:
    """S3 buckets and objects kept under ``root`` (see the module docstring)."""

    def __init__(self, root: str | Path, clock: Clock) -> None:
        self.root = Path(root)
        self._clock = clock
        self._lock = threading.RLock()
        self._tmp = self.root / ".tmp"
        self._uploads = self.root / ".uploads"
        for directory in (self.root, self._tmp, self._uploads):
            directory.mkdir(parents=True, exist_ok=True)

    # -- buckets ---------------------------------------------------------------------
    def create_bucket(self, name: str, region: str = "us-east-1", exist_ok: bool = True) -> None:
        """Create a bucket; creating one that already exists is a no-op (or
        ``BucketAlreadyOwnedByYou`` with ``exist_ok=False``)."""
        if not valid_bucket_name(name):
            raise InvalidBucketName(name)
        with self._lock:
            directory = self.root / name
            if (directory / "bucket.json").exists():
                if exist_ok:
                    return
                raise BucketAlreadyOwnedByYou(name)
            (directory / "data").mkdir(parents=True, exist_ok=True)
            (directory / "meta").mkdir(exist_ok=True)
            self._write_json(directory / "bucket.json",
                             {"name": name, "region": region, "created": _iso(self._now())})

    def bucket_exists(self, name: str) -> bool:
        return valid_bucket_name(name) and (self.root / name / "bucket.json").is_file()

    def bucket_region(self, name: str) -> str:
        return self._read_json(self._bucket_dir(name) / "bucket.json")["region"]

    def bucket_created(self, name: str) -> datetime:
        return _from_iso(self._read_json(self._bucket_dir(name) / "bucket.json")["created"])

    def list_buckets(self) -> list[tuple[str, datetime]]:
        """Every bucket as (name, creation date), by name."""
        out = []
        with self._lock:
            for entry in sorted(os.listdir(self.root)):
                if not entry.startswith(".") and self.bucket_exists(entry):
                    out.append((entry, self.bucket_created(entry)))
        return out

    def delete_bucket(self, name: str) -> None:
        """Delete an empty bucket (``BucketNotEmpty`` otherwise)."""
        with self._lock:
            directory = self._bucket_dir(name)
            if os.listdir(directory / "meta"):
                raise BucketNotEmpty(name)
            shutil.rmtree(directory)
            for upload in list(self._all_uploads()):  # S3 discards a deleted bucket's open uploads
                if upload.bucket == name:
                    shutil.rmtree(self._uploads / upload.upload_id, ignore_errors=True)

    # -- objects ---------------------------------------------------------------------
    def put_object(self, bucket: str, key: str, data: bytes | BinaryIO,
                   content_type: str | None = None, metadata: dict | None = None,
                   content_md5: bytes | None = None) -> str:
        """Store ``data`` (bytes or a readable binary stream) under ``key``; returns the etag.

        With ``content_md5`` (the 16-byte digest), content with another MD5
        raises ``BadDigest`` and nothing is stored.
        """
        name = self._name(key)
        self._bucket_dir(bucket)
        tmp, digest, _ = self._spool(data, content_md5)
        return self._commit(bucket, key, name, tmp, digest.hexdigest(), content_type, metadata)

    def upload_file(self, bucket: str, key: str, path: str | Path,
                    content_type: str | None = None, metadata: dict | None = None) -> str:
        with open(path, "rb") as handle:
            return self.put_object(bucket, key, handle, content_type, metadata)

    def head_object(self, bucket: str, key: str) -> StoredObject:
        """The object's metadata (``NoSuchBucket`` / ``NoSuchKey`` if absent)."""
        name = self._name(key, missing=(bucket, key))
        with self._lock:
            return self._stored(bucket, key, name)

    def get_object(self, bucket: str, key: str) -> StoredObject:
        """Like :meth:`head_object`; read the content with ``.open()``."""
        return self.head_object(bucket, key)

    def open_object(self, bucket: str, key: str) -> tuple[StoredObject, BinaryIO]:
        """The object's metadata and its content opened at the same instant.

        A later overwrite replaces the file, so the open handle keeps reading
        the version described by the metadata.
        """
        name = self._name(key, missing=(bucket, key))
        with self._lock:
            stored = self._stored(bucket, key, name)
            return stored, stored.open()

    def delete_object(self, bucket: str, key: str) -> None:
        """Delete ``key`` if present (S3 answers success for a missing key too)."""
        try:
            name = self._name(key)
        except ObjectStoreError:
            self._bucket_dir(bucket)
            return
        with self._lock:
            directory = self._bucket_dir(bucket)
            for path in (directory / "meta" / name, directory / "data" / name):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass

    def copy_object(self, source_bucket: str, source_key: str, bucket: str, key: str,
                    content_type: str | None = None, metadata: dict | None = None,
                    replace_metadata: bool = False) -> StoredObject:
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

    def list_objects(self, bucket: str, prefix: str = "", delimiter: str | None = None,
                     start_after: str | None = None, max_keys: int = 1000,
                     continuation: str | None = None) -> ObjectListing:
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
        with self._lock:
            directory = self._bucket_dir(bucket)
            keys = sorted(self._keys(directory, prefix))
            objects: list[StoredObject] = []
            common: list[str] = []
            last: str | None = None
            truncated = False
            for key in keys:
                entry, rolled = key, False
                if delimiter:
                    at = key.find(delimiter, len(prefix))
                    if at >= 0:
                        entry, rolled = key[:at + len(delimiter)], True
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
                    objects.append(self._stored(bucket, key, encode_key(key)))
                last = entry
        return ObjectListing(objects, common, truncated, last if truncated else None)

    # -- multipart ---------------------------------------------------------------------
    def create_multipart_upload(self, bucket: str, key: str, content_type: str | None = None,
                                metadata: dict | None = None) -> str:
        """Open a multipart upload; returns its id."""
        self._name(key)
        with self._lock:
            self._bucket_dir(bucket)
            upload_id = secrets.token_hex(32)
            directory = self._uploads / upload_id
            directory.mkdir()
            self._write_json(directory / "upload.json", {
                "bucket": bucket, "key": key, "initiated": _iso(self._now()),
                "content_type": content_type, "metadata": dict(metadata or {})})
        return upload_id

    def multipart_upload(self, upload_id: str) -> MultipartUpload:
        """The open upload ``upload_id`` (``NoSuchUpload`` if unknown, completed or aborted)."""
        try:
            record = self._read_json(self._upload_dir(upload_id) / "upload.json")
        except FileNotFoundError:
            raise NoSuchUpload(upload_id) from None
        return MultipartUpload(upload_id, record["bucket"], record["key"], _from_iso(record["initiated"]),
                               record["content_type"] or "binary/octet-stream", record["metadata"])

    def upload_part(self, upload_id: str, part_number: int, data: bytes | BinaryIO,
                    content_md5: bytes | None = None) -> str:
        """Store one part (1..10000; a re-upload replaces it); returns its etag."""
        if not isinstance(part_number, int) or not 1 <= part_number <= MAX_PART_NUMBER:
            raise InvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
        self._upload_dir(upload_id)
        tmp, digest, size = self._spool(data, content_md5)
        with self._lock:
            try:
                directory = self._upload_dir(upload_id)
            except NoSuchUpload:
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, directory / str(part_number))
            self._write_json(directory / f"{part_number}.json", {"etag": digest.hexdigest(), "size": size})
        return digest.hexdigest()

    def list_parts(self, upload_id: str) -> list[tuple[int, str, int]]:
        """The uploaded parts as (part number, etag, size), by part number."""
        directory = self._upload_dir(upload_id)
        parts = []
        for entry in os.listdir(directory):
            if entry.endswith(".json") and entry != "upload.json":
                record = self._read_json(directory / entry)
                parts.append((int(entry[:-5]), record["etag"], record["size"]))
        return sorted(parts)

    def complete_multipart_upload(self, upload_id: str, parts: list[tuple[int, str]]) -> str:
        """Assemble ``parts`` ((part number, etag) in ascending order) into the object; returns its etag."""
        if not parts:
            raise MalformedPartList()
        with self._lock:
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
                if _strip_quotes(etag or "") != record["etag"]:
                    raise InvalidPart(upload_id, number)
                records.append((number, record))
            for number, record in records[:-1]:
                if record["size"] < MIN_PART_SIZE:
                    raise EntityTooSmall(upload_id, number, record["size"])
            name = self._name(upload.key)
            self._bucket_dir(upload.bucket)
            tmp = self._tmp_path()
            with open(tmp, "wb") as out:
                for number, _ in records:
                    with open(directory / str(number), "rb") as part:
                        shutil.copyfileobj(part, out, _CHUNK)
            etag = _md5_etag([bytes.fromhex(record["etag"]) for _, record in records])
            self._commit(upload.bucket, upload.key, name, tmp, etag, upload.content_type, upload.metadata)
            shutil.rmtree(directory, ignore_errors=True)
        return etag

    def abort_multipart_upload(self, upload_id: str) -> None:
        with self._lock:
            shutil.rmtree(self._upload_dir(upload_id))

    # -- runtime helpers -------------------------------------------------------------
    def download_prefix(self, bucket: str, prefix: str, dest_dir: str | Path) -> int:
        """Write every object whose key starts with ``prefix`` under ``dest_dir``; returns the count.

        A file's path is its key relative to ``prefix`` (a leading ``/``
        dropped); a key equal to ``prefix`` is written under its last path
        segment. Keys ending with ``/`` (folder markers) only create their
        directory. Nothing is written if any key would leave ``dest_dir``
        (``..``/``.`` segments, NUL bytes) or clash with another (``a`` and
        ``a/b``): ``UnsafeDownload`` names it.
        """
        dest = Path(dest_dir)
        dest.mkdir(parents=True, exist_ok=True)
        base = dest.resolve()
        plan: list[tuple[str, tuple[str, ...], bool]] = []
        files: dict[tuple[str, ...], str] = {}
        dirs: set[tuple[str, ...]] = set()
        for key in self._all_keys(bucket, prefix):
            if key == prefix:  # the prefix names one object: keep its file name
                relative = key.rsplit("/", 1)[-1] if not key.endswith("/") else ""
            else:
                relative = key[len(prefix):].lstrip("/")
            is_dir = relative.endswith("/") or relative == ""
            parts = tuple(part for part in relative.split("/") if part)
            if not parts and not is_dir:
                raise UnsafeDownload(key, "the key has no file name")
            for part in parts:
                if part in (".", "..") or "\x00" in part or os.sep in part or (os.altsep and os.altsep in part):
                    raise UnsafeDownload(key, f"the path segment {part!r} is not allowed")
                if len(part.encode("utf-8")) > 255:
                    raise UnsafeDownload(key, "a path segment is longer than 255 bytes")
            plan.append((key, parts, is_dir))
            for depth in range(1, len(parts) + (1 if is_dir else 0)):
                dirs.add(parts[:depth])
            if not is_dir:
                if parts in files:
                    raise UnsafeDownload(key, f"it maps to the same file as {files[parts]!r}")
                files[parts] = key
        for parts, key in files.items():
            if parts in dirs:
                raise UnsafeDownload(key, "another key uses it as a directory")
        written = 0
        for key, parts, is_dir in plan:
            target = base.joinpath(*parts) if parts else base
            parent = target if is_dir else target.parent
            parent.mkdir(parents=True, exist_ok=True)
            if os.path.commonpath([base, parent.resolve()]) != str(base):
                raise UnsafeDownload(key, "the path leaves the destination directory")
            if is_dir:
                continue
            stored, handle = self.open_object(bucket, key)
            with handle, open(target, "wb") as out:
                shutil.copyfileobj(handle, out, _CHUNK)
            written += 1
        return written

    s3_uri = staticmethod(s3_uri)
    parse_s3_uri = staticmethod(parse_s3_uri)

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

    def _spool(self, data: bytes | bytearray | BinaryIO | Iterable[bytes],
               content_md5: bytes | None = None) -> tuple[Path, "hashlib._Hash", int]:
        """Write ``data`` to a temporary file; returns (path, md5, size)."""
        tmp = self._tmp_path()
        digest, size = hashlib.md5(), 0
        try:
            with open(tmp, "wb") as out:
                for chunk in _chunks(data):
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

    def _commit(self, bucket: str, key: str, name: str, tmp: Path, etag: str,
                content_type: str | None, metadata: dict | None) -> str:
        """Move a spooled file into place and record its metadata, atomically for readers."""
        with self._lock:
            try:
                directory = self._bucket_dir(bucket)
            except NoSuchBucket:
                tmp.unlink(missing_ok=True)
                raise
            size = tmp.stat().st_size
            os.replace(tmp, directory / "data" / name)
            self._write_json(directory / "meta" / name, {
                "key": key, "size": size, "etag": etag, "last_modified": _iso(self._now()),
                "content_type": content_type or "binary/octet-stream",
                "metadata": {str(k): str(v) for k, v in (metadata or {}).items()}})
        return etag

    def _stored(self, bucket: str, key: str, name: str) -> StoredObject:
        directory = self._bucket_dir(bucket)
        try:
            record = self._read_json(directory / "meta" / name)
        except FileNotFoundError:
            raise NoSuchKey(bucket, key) from None
        if record["key"] != key:  # a hashed name shared by two keys: not this one
            raise NoSuchKey(bucket, key)
        return StoredObject(bucket, key, record["size"], record["etag"], _from_iso(record["last_modified"]),
                            record["content_type"], record["metadata"], directory / "data" / name)

    @staticmethod
    def _keys(directory: Path, prefix: str) -> Iterator[str]:
        meta = directory / "meta"
        for name in os.listdir(meta):
            key = decode_name(name)
            if key is None:
                key = ObjectStore._read_json(meta / name)["key"]
            if key.startswith(prefix):
                yield key

    def _all_keys(self, bucket: str, prefix: str) -> list[str]:
        with self._lock:
            return sorted(self._keys(self._bucket_dir(bucket), prefix))

    def _all_uploads(self) -> Iterator[MultipartUpload]:
        for entry in os.listdir(self._uploads):
            try:
                yield self.multipart_upload(entry)
            except NoSuchUpload:
                continue

    def _write_json(self, path: Path, document: dict) -> None:
        tmp = self._tmp_path()
        tmp.write_text(json.dumps(document), encoding="utf-8")
        os.replace(tmp, path)

    @staticmethod
    def _read_json(path: Path) -> dict:
        return json.loads(path.read_text(encoding="utf-8"))
