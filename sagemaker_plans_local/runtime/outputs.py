"""What a run leaves in the object store: model and output archives, checkpoints.

- ``model/`` is packed into ``model.tar.gz`` and ``output/data/`` into
  ``output.tar.gz`` (members relative to the directory, no ``./`` prefix,
  gzip level 1: the archives are valid gzip, made fast), uploaded to
  ``<S3OutputPath>/<job>/output/``; the bucket is created when missing.
  With ``OutputDataConfig.CompressionType`` ``NONE`` the model directory's
  files are uploaded as they are, under ``<S3OutputPath>/<job>/output/model/``.
- Files under the checkpoint directory that are new or changed since they
  were downloaded are uploaded under ``CheckpointConfig.S3Uri``.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path
from typing import Any

from sagemaker_plans_local.runtime.inputs import Snapshot, checkpoint_prefix, parse_s3_uri, snapshot
from sagemaker_plans_local.services.sagemaker.jobs.job_rules import job_output_uri

MODEL_ARCHIVE = "model.tar.gz"
#: Where an uncompressed model's files go, under the job's output prefix.
MODEL_PREFIX = "model/"
OUTPUT_ARCHIVE = "output.tar.gz"
COMPRESS_LEVEL = 1


def output_prefix(s3_output_path: str, job_name: str) -> tuple[str, str]:
    """``(bucket, key prefix)`` of a job's artifacts: ``<S3OutputPath>/<job>/output/``."""
    return parse_s3_uri(job_output_uri(s3_output_path, job_name))


def artifact_uri(s3_output_path: str, job_name: str, archive: str = MODEL_ARCHIVE) -> str:
    """Where ``archive`` of a job lands (``ModelArtifacts.S3ModelArtifacts`` for the model)."""
    bucket, prefix = output_prefix(s3_output_path, job_name)
    return f"s3://{bucket}/{prefix}{archive}"


def pack(directory: Path, archive: Path) -> Path:
    """``directory``'s content into a gzip'd tar at ``archive``."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:gz", compresslevel=COMPRESS_LEVEL) as tar:
        if directory.is_dir():
            for child in sorted(directory.iterdir()):
                tar.add(child, arcname=child.name)
    return archive


def ensure_bucket(store: Any, bucket: str, region: str) -> None:
    if store.bucket_exists(bucket):
        return
    try:
        store.create_bucket(bucket, region)
    except Exception:  # created meanwhile by someone else
        if not store.bucket_exists(bucket):
            raise


def upload_artifacts(
    store: Any,
    s3_output_path: str,
    job_name: str,
    region: str,
    model_dir: Path | None,
    output_data_dir: Path,
    scratch: Path,
    compressed: bool = True,
) -> list[str]:
    """Upload the model (when ``model_dir`` is given: ``model.tar.gz``, or its files as they are
    when not ``compressed``) and ``output.tar.gz``; the URIs written."""
    bucket, prefix = output_prefix(s3_output_path, job_name)
    ensure_bucket(store, bucket, region)
    uploaded = []
    if model_dir is not None and not compressed:
        for rel in sorted(snapshot(model_dir)) if model_dir.is_dir() else []:
            key = prefix + MODEL_PREFIX + rel.replace(os.sep, "/")
            store.upload_file(bucket, key, model_dir / rel)
            uploaded.append(f"s3://{bucket}/{key}")
        model_dir = None
    pairs = ([(model_dir, MODEL_ARCHIVE)] if model_dir is not None else []) + [
        (output_data_dir, OUTPUT_ARCHIVE)
    ]
    for directory, name in pairs:
        archive = pack(directory, scratch / name)
        store.upload_file(bucket, prefix + name, archive)
        archive.unlink()
        uploaded.append(f"s3://{bucket}/{prefix}{name}")
    return uploaded


def upload_checkpoints(store: Any, s3_uri: str, local_dir: Path, baseline: Snapshot, region: str) -> int:
    """Upload files new or changed since ``baseline``; returns how many."""
    if not local_dir.is_dir():
        return 0
    changed = [rel for rel, stat in snapshot(local_dir).items() if baseline.get(rel) != stat]
    if not changed:
        return 0
    bucket, prefix = checkpoint_prefix(s3_uri)
    ensure_bucket(store, bucket, region)
    for rel in sorted(changed):
        store.upload_file(bucket, prefix + rel.replace(os.sep, "/"), local_dir / rel)
    return len(changed)
