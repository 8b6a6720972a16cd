"""Objects of an S3 prefix written under a local directory, refusing keys that cannot be files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from sagemaker_plans_local.services.s3.object_errors import ObjectStoreError

_CHUNK = 1024 * 1024

#: One key to write: (key, its path segments under the destination, whether it is a folder marker).
_Entry = tuple[str, tuple[str, ...], bool]


class UnsafeDownload(ObjectStoreError):
    """``download_prefix`` refused a key whose path would leave the destination."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"Refusing to download key {key!r}: {reason}")
        self.key = key


def download_prefix(store: Any, bucket: str, prefix: str, dest_dir: str | Path) -> int:
    """Write every object of ``store`` whose key starts with ``prefix`` under ``dest_dir``; returns the count.

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
    plan = _plan(store.keys(bucket, prefix), prefix)
    written = 0
    for key, parts, is_dir in plan:
        target = base.joinpath(*parts) if parts else base
        parent = target if is_dir else target.parent
        parent.mkdir(parents=True, exist_ok=True)
        if os.path.commonpath([base, parent.resolve()]) != str(base):
            raise UnsafeDownload(key, "the path leaves the destination directory")
        if is_dir:
            continue
        _, handle = store.open_object(bucket, key)
        with handle, open(target, "wb") as out:
            shutil.copyfileobj(handle, out, _CHUNK)
        written += 1
    return written


def _plan(keys: list[str], prefix: str) -> list[_Entry]:
    """What each key becomes under the destination; ``UnsafeDownload`` for a key or a clash refused."""
    plan: list[_Entry] = []
    files: dict[tuple[str, ...], str] = {}
    dirs: set[tuple[str, ...]] = set()
    for key in keys:
        _, parts, is_dir = _entry(key, prefix)
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
    return plan


def _entry(key: str, prefix: str) -> _Entry:
    """The path segments of ``key`` relative to ``prefix``; ``UnsafeDownload`` for one refused."""
    if key == prefix:  # the prefix names one object: keep its file name
        relative = key.rsplit("/", 1)[-1] if not key.endswith("/") else ""
    else:
        relative = key[len(prefix) :].lstrip("/")
    is_dir = relative.endswith("/") or relative == ""
    parts = tuple(part for part in relative.split("/") if part)
    if not parts and not is_dir:
        raise UnsafeDownload(key, "the key has no file name")
    for part in parts:
        if part in (".", "..") or "\x00" in part or os.sep in part or (os.altsep and os.altsep in part):
            raise UnsafeDownload(key, f"the path segment {part!r} is not allowed")
        if len(part.encode("utf-8")) > 255:
            raise UnsafeDownload(key, "a path segment is longer than 255 bytes")
    return key, parts, is_dir
