"""The object store's files on the local disk: records, spooling and atomic commits.

Layout under ``root``::

    <bucket>/bucket.json          region and creation date
    <bucket>/meta/<name>          an object's metadata (JSON: key, size, etag, dates, types, data)
    <bucket>/data/<name>.<token>  its bytes: one file per version, named by the metadata's "data"
    .uploads/<id>/upload.json     an open multipart upload; its parts as <n>.json and <n>.<token>
    .tmp/                         files being written, and directories being removed (<pid>-<token>)

Bucket names follow S3's rules and names starting with a dot are reserved, so
a bucket directory can never be ``.uploads``/``.tmp`` nor escape ``root``. A
key is stored under one file name (see ``object_keys``; ``.`` never occurs in
one, so ``<name>.<token>`` is unambiguous).

Versions make every read consistent, across threads and processes sharing
``root``: a write puts its bytes under a fresh data name, then replaces the
metadata file (``os.replace``, the commit), then removes the previous
version's data file. A reader reads the metadata, then opens the data file it
names; if a newer commit removed that file in between, it reads the metadata
again. An open file keeps its content on POSIX, so an opened version reads to
its end. Metadata without "data" (stores written before versions) names
``data/<name>``. Mutations hold :meth:`ObjectFiles._locked` (a thread lock
and an ``flock`` on ``root`` shared by every process); reads take no lock.
Removing a bucket or an upload renames its directory into ``.tmp`` first, so
it disappears at once. A process killed mid-write leaves at most an
unreferenced file behind, never a torn object.

``last_modified`` is the clock's time truncated to the second, as S3 reports
it. Every public method is thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

import attrs

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # threads are still serialized; processes are not

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
#: How often a read starts again when newer versions keep replacing the one it found.
_READ_ATTEMPTS = 100


# -- values ------------------------------------------------------------------------------


@attrs.frozen
class StoredObject:
    """One version of an object: its metadata; ``path`` is its content on disk, ``open()`` reads it."""

    bucket: str
    key: str
    size: int
    etag: str
    last_modified: datetime
    content_type: str
    metadata: dict = attrs.field(factory=dict, hash=False)
    path: Path = attrs.field(default=None, eq=False, repr=False)

    def open(self) -> BinaryIO:
        """This version's content, opened for binary reading (the caller closes it).

        ``NoSuchKey`` once a newer version or a delete has replaced it
        (``ObjectStore.open_object`` opens whichever version is current).
        """
        try:
            return open(self.path, "rb")
        except FileNotFoundError:
            raise NoSuchKey(self.bucket, self.key) from None


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


def _in_data(name: object) -> str | None:
    """``name`` if it names a file of a bucket's ``data/`` (a record from elsewhere may name any path)."""
    if isinstance(name, str) and name not in ("", ".", "..") and os.path.basename(name) == name:
        return name
    return None


# -- the store ------------------------------------------------------------------------


class ObjectFiles:
    """The on-disk state of an object store under ``root``; ``ObjectStore`` adds S3's operations."""

    def __init__(self, root: str | Path, clock: Clock) -> None:
        self.root = Path(root)
        self._clock = clock
        self._lock = threading.RLock()
        self._depth = 0  # how deeply this process's holder has entered _locked (under _lock)
        self._lock_fd: int | None = None
        self._tmp = self.root / ".tmp"
        self._uploads = self.root / ".uploads"
        for directory in (self.root, self._tmp, self._uploads):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # the objects are the user's alone

    def bucket_exists(self, name: str) -> bool:
        return valid_bucket_name(name) and (self.root / name / "bucket.json").is_file()

    # -- internals -------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the store against this process's other threads and every other process on ``root``.

        Re-entrant. Across processes it is an exclusive ``flock`` on the
        ``root`` directory, opened for the outermost hold and closed after
        it (so no descriptor outlives a hold, nor a forked child shares one).
        """
        with self._lock:
            self._depth += 1
            try:
                if self._depth == 1 and fcntl is not None:
                    self._lock_fd = os.open(self.root, os.O_RDONLY | os.O_CLOEXEC)
                    fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._lock_fd is not None:
                    fd, self._lock_fd = self._lock_fd, None
                    os.close(fd)  # drops the flock

    def _now(self) -> datetime:
        return self._clock.now().astimezone(timezone.utc).replace(microsecond=0)

    def _bucket_dir(self, name: str) -> Path:
        if not self.bucket_exists(name):
            raise NoSuchBucket(name)
        return self.root / name

    def _bucket_record(self, name: str) -> dict:
        try:
            return self._read_json(self._bucket_dir(name) / "bucket.json")
        except FileNotFoundError:  # deleted since the check
            raise NoSuchBucket(name) from None

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
        """A fresh temporary name, ``<pid>-<token>``: a durable root's next open removes a dead writer's."""
        return self._tmp / f"{os.getpid()}-{secrets.token_hex(16)}"

    def _discard(self, directory: Path) -> None:
        """Remove ``directory``: gone at once for readers (renamed into ``.tmp``), then deleted."""
        doomed = self._tmp_path()
        os.replace(directory, doomed)
        shutil.rmtree(doomed, ignore_errors=True)

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

    @classmethod
    def _data_name(cls, record_path: Path, stem: str) -> str | None:
        """The data file named by the record at ``record_path`` (None without a record, or outside data/)."""
        try:
            return _in_data(cls._read_json(record_path).get("data", stem))
        except FileNotFoundError:
            return None

    def _install(self, tmp: Path, data_dir: Path, record_path: Path, stem: str, record: dict) -> None:
        """Commit ``tmp`` as the new version of ``record_path`` (under :meth:`_locked`).

        The content moves to a fresh ``<stem>.<token>`` in ``data_dir``, the
        record naming it replaces the old one (the commit), and the old
        version's content goes.
        """
        record["data"] = f"{stem}.{secrets.token_hex(8)}"
        os.replace(tmp, data_dir / record["data"])
        old = self._data_name(record_path, stem)
        self._write_json(record_path, record)
        if old is not None:
            (data_dir / old).unlink(missing_ok=True)

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
        """Make a spooled file the current version of ``key``, atomically for every reader."""
        with self._locked():
            try:
                directory = self._bucket_dir(bucket)
            except NoSuchBucket:
                tmp.unlink(missing_ok=True)
                raise
            record = {
                "key": key,
                "size": tmp.stat().st_size,
                "etag": etag,
                "last_modified": iso(self._now()),
                "content_type": content_type or "binary/octet-stream",
                "metadata": {str(k): str(v) for k, v in (metadata or {}).items()},
            }
            self._install(tmp, directory / "data", directory / "meta" / name, name, record)
        return etag

    def _remove(self, bucket: str, name: str) -> None:
        """Delete the object stored as ``name``, if any: its record first (the commit), then its content."""
        with self._locked():
            directory = self._bucket_dir(bucket)
            data = self._data_name(directory / "meta" / name, name)
            if data is not None:
                (directory / "meta" / name).unlink(missing_ok=True)
                (directory / "data" / data).unlink(missing_ok=True)

    def _stored(self, bucket: str, key: str, name: str) -> StoredObject:
        """The current version of ``key`` (no lock needed: records are replaced whole)."""
        directory = self._bucket_dir(bucket)
        try:
            record = self._read_json(directory / "meta" / name)
        except FileNotFoundError:
            self._bucket_dir(bucket)  # the bucket itself may have gone meanwhile
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
            directory / "data" / (_in_data(record.get("data", name)) or name),
        )

    def _open(self, bucket: str, key: str, name: str) -> tuple[StoredObject, BinaryIO]:
        """The current version and its content, opened; a version replaced before it opened: again."""
        for _ in range(_READ_ATTEMPTS):
            stored = self._stored(bucket, key, name)
            try:
                return stored, open(stored.path, "rb")
            except FileNotFoundError:
                continue
        raise NoSuchKey(bucket, key)  # a record whose content stays missing

    def _keys(self, bucket: str, prefix: str) -> Iterator[str]:
        meta = self._bucket_dir(bucket) / "meta"
        try:
            names = os.listdir(meta)
        except FileNotFoundError:  # deleted since the check
            raise NoSuchBucket(bucket) from None
        for name in names:
            key = decode_name(name)
            if key is None:
                try:
                    key = self._read_json(meta / name)["key"]
                except FileNotFoundError:  # deleted since the listing
                    continue
            if key.startswith(prefix):
                yield key

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key of ``bucket`` starting with ``prefix``, sorted."""
        return sorted(self._keys(bucket, prefix))

    def _write_json(self, path: Path, document: dict) -> None:
        tmp = self._tmp_path()
        tmp.write_text(json.dumps(document), encoding="utf-8")
        os.replace(tmp, path)

    @staticmethod
    def _read_json(path: Path) -> dict:
        return json.loads(path.read_text(encoding="utf-8"))
