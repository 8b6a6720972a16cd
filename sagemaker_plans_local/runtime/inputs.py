"""What an instance receives before the script starts: code, channel data, checkpoints.

- The ``sagemaker_submit_directory`` archive (``s3://`` from the object
  store, or a local ``file://`` URI / path as the SDK's local mode gives) is
  extracted into the code directory, member by member, refusing any member
  that would land outside it (``..``, absolute names, links pointing out,
  device files).
- Each ``InputDataConfig`` channel's S3 prefix is downloaded into
  ``input/data/<channel>``; a missing bucket or an empty prefix is the
  client's error, with SageMaker's wording.
- Existing checkpoints under ``CheckpointConfig.S3Uri`` are downloaded into
  the checkpoint directory; what was downloaded is remembered so that only new
  or changed files are uploaded at the end.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlparse

from sagemaker_plans_local.runtime.contract import InstanceContract
from sagemaker_plans_local.runtime.downloads import download_prefix
from sagemaker_plans_local.services.s3.objects import ObjectStoreError, parse_s3_uri

Snapshot = dict[str, tuple[int, int]]  # relative path -> (size, mtime_ns)


class ClientError(Exception):
    """The request's inputs are unusable; ``str(error)`` is the whole failure reason."""


class SourceError(Exception):
    """The code could not be put in place (the toolkit's failure inside the container)."""


class UnsafeArchive(SourceError):
    """An archive member would escape the destination directory."""


# -- code ----------------------------------------------------------------------------
def fetch_source(store: Any, submit_directory: str, code_dir: Path) -> None:
    """Put the submit directory's content into ``code_dir``."""
    if submit_directory.startswith("s3://"):
        bucket, key = parse_s3_uri(submit_directory)
        try:
            _, archive = store.open_object(bucket, key)  # the version current now, whole
        except ObjectStoreError as error:  # NoSuchBucket / NoSuchKey
            raise SourceError(
                f"Failed to download the source code from {submit_directory}: {type(error).__name__}: {error}"
            ) from error
        with archive:
            safe_extract(archive, code_dir)
        return
    local = Path(
        unquote(urlparse(submit_directory).path)
        if submit_directory.startswith("file://")
        else submit_directory
    )
    if local.is_dir():
        shutil.copytree(local, code_dir, dirs_exist_ok=True)
    elif local.is_file():
        with open(local, "rb") as archive:
            safe_extract(archive, code_dir)
    else:
        raise SourceError(f"The source code location {submit_directory} does not exist")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def safe_extract(archive: IO[bytes], dest: Path) -> int:
    """Extract a (compressed) tar stream into ``dest``; members are checked before each write."""
    root = os.path.realpath(dest)
    count = 0
    data_filter = getattr(tarfile, "data_filter", None)
    try:
        with tarfile.open(fileobj=archive, mode="r|*") as tar:
            for member in tar:
                _check_member(member, root)
                if data_filter is not None:
                    tar.extract(member, root, filter=data_filter)
                else:  # Python without extraction filters (< 3.10.12 / 3.11.4)
                    tar.extract(member, root)
                count += 1
    except tarfile.TarError as error:
        raise SourceError(f"The source archive could not be extracted: {error}") from error
    return count


def _check_member(member: tarfile.TarInfo, root: str) -> None:
    name = member.name
    if os.path.isabs(name) or name.startswith(("/", "\\")):
        raise UnsafeArchive(f"Refusing to extract the source archive: member {name!r} has an absolute path")
    target = os.path.realpath(os.path.join(root, name))
    if not _inside(target, root):
        raise UnsafeArchive(
            f"Refusing to extract the source archive: member {name!r} "
            "would be written outside the code directory"
        )
    if member.issym():
        link = os.path.realpath(os.path.join(os.path.dirname(target), member.linkname))
        if os.path.isabs(member.linkname) or not _inside(link, root):
            raise UnsafeArchive(
                f"Refusing to extract the source archive: symlink {name!r} "
                f"points outside the code directory ({member.linkname!r})"
            )
    elif member.islnk():
        link = os.path.realpath(os.path.join(root, member.linkname))
        if not _inside(link, root):
            raise UnsafeArchive(
                f"Refusing to extract the source archive: hard link {name!r} "
                f"points outside the code directory ({member.linkname!r})"
            )
    elif not (member.isfile() or member.isdir()):
        raise UnsafeArchive(f"Refusing to extract the source archive: member {name!r} is a device or FIFO")


# -- channels ---------------------------------------------------------------------------
def no_objects(uri: str, bucket: str, region: str, role: str) -> ClientError:
    """SageMaker's wording for a channel whose S3 prefix holds nothing (or has no bucket)."""
    return ClientError(
        f'ClientError: No S3 objects found under S3 URL "{uri}" given in input data source. '
        f"Please ensure that the bucket exists in the selected region ({region}), that objects "
        f'exist under that S3 prefix, and that the role "{role}" has "s3:ListBucket" '
        f'permissions on bucket "{bucket}".'
    )


def download_channels(store: Any, contract: InstanceContract) -> None:
    """Each channel's S3 prefix into ``input/data/<channel>``."""
    role = contract.job.spec.get("RoleArn", "")
    modes = contract.input_data_config()
    for name, channel in contract.channels.items():
        source = channel.get("DataSource") or {}
        s3 = source.get("S3DataSource")
        if s3 is None:
            kind = next(iter(source), "unknown")
            raise ClientError(
                f"ClientError: Channel {name!r} uses a {kind}, which the local "
                "runtime does not support; only S3DataSource is supported."
            )
        data_type = s3.get("S3DataType", "S3Prefix")
        if data_type != "S3Prefix":
            raise ClientError(
                f"ClientError: Channel {name!r} has S3DataType {data_type}, which "
                "the local runtime does not support; only S3Prefix is supported."
            )
        mode = modes[name]["TrainingInputMode"]
        if mode == "Pipe":
            raise ClientError(
                f"ClientError: Channel {name!r} uses TrainingInputMode Pipe, which "
                "the local runtime does not support; use File or FastFile."
            )
        uri = s3["S3Uri"]
        bucket, prefix = parse_s3_uri(uri)
        dest = contract.tree.channel(name)
        dest.mkdir(parents=True, exist_ok=True)
        if not store.bucket_exists(bucket):
            raise no_objects(uri, bucket, contract.job.region, role)
        try:
            written = download_prefix(store, bucket, prefix, dest)
        except ObjectStoreError as error:  # a key that cannot be a file (UnsafeDownload), ...
            raise ClientError(
                f"ClientError: Data download failed for channel {name!r} from {uri}: {error}"
            ) from error
        if written == 0:
            raise no_objects(uri, bucket, contract.job.region, role)


# -- checkpoints ----------------------------------------------------------------------------
def checkpoint_prefix(s3_uri: str) -> tuple[str, str]:
    """``(bucket, key prefix ending in '/')`` of a checkpoint location ('' for a bucket's root)."""
    bucket, key = parse_s3_uri(s3_uri)
    key = key.rstrip("/")
    return bucket, f"{key}/" if key else ""


def download_checkpoints(store: Any, s3_uri: str, local_dir: Path) -> Snapshot:
    """Existing checkpoints into ``local_dir``; returns what is there afterwards."""
    local_dir.mkdir(parents=True, exist_ok=True)
    bucket, prefix = checkpoint_prefix(s3_uri)
    if store.bucket_exists(bucket):
        download_prefix(store, bucket, prefix, local_dir)
    return snapshot(local_dir)


def snapshot(directory: Path) -> Snapshot:
    """Size and modification time of every file under ``directory``."""
    files: Snapshot = {}
    for base, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(base, name)
            stat = os.stat(path)
            files[os.path.relpath(path, directory)] = (stat.st_size, stat.st_mtime_ns)
    return files
