"""A small world for the executor's tests: a manual clock, an object store, logs, jobs to run."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import tarfile
import tempfile
import time
import types
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.runtime import LocalExecutor
from sagemaker_plans_local.runtime.contract import LOG_GROUP
from sagemaker_plans_local.services.logs.streams import LogStore
from sagemaker_plans_local.services.s3.objects import ObjectStore
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import WarmPool

START = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
EPOCH = int(START.timestamp())
REGION = "us-east-1"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SCRIPTS = Path(__file__).parent / "scripts"


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.clock = VirtualClock(START)
        self.store = ObjectStore(tmp_path / "s3", self.clock)
        self.logs = LogStore(self.clock)
        self.store.create_bucket("bucket", REGION)
        self.executor = LocalExecutor(
            tmp_path / "runtime", self.store, self.logs, self.clock, stop_grace_seconds=0.5
        )

    # -- building jobs -------------------------------------------------------------
    def job(
        self,
        name: str,
        entry: str,
        files: dict | None = None,
        hyperparameters: dict | None = None,
        count: int = 1,
        channels: dict | None = None,
        environment: dict | None = None,
        checkpoint: dict | None = None,
        pool: str | None = None,
        block_end: datetime | None = None,
        source: str | None = None,
    ) -> TrainingJob:
        files = dict(files or {})
        if entry not in files:
            files[entry] = (SCRIPTS / entry).read_bytes()
        if source is None:
            source = f"s3://bucket/{name}/source/sourcedir.tar.gz"
            self.store.put_object("bucket", f"{name}/source/sourcedir.tar.gz", source_archive(files))
        hps = {k: json.dumps(v) for k, v in (hyperparameters or {}).items()}
        hps.update(
            {
                "sagemaker_program": json.dumps(entry),
                "sagemaker_submit_directory": json.dumps(source),
                "sagemaker_container_log_level": "20",
                "sagemaker_job_name": json.dumps(name),
                "sagemaker_region": json.dumps(REGION),
            }
        )
        spec = {
            "TrainingJobName": name,
            "RoleArn": ROLE,
            "AlgorithmSpecification": {"TrainingImage": "image", "TrainingInputMode": "File"},
            "HyperParameters": hps,
            "OutputDataConfig": {"S3OutputPath": "s3://out-bucket/results"},
            "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": count, "VolumeSizeInGB": 30},
            "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        }
        if channels:
            spec["InputDataConfig"] = [
                {
                    "ChannelName": channel,
                    "DataSource": {
                        "S3DataSource": {
                            "S3DataType": "S3Prefix",
                            "S3Uri": uri,
                            "S3DataDistributionType": "FullyReplicated",
                        }
                    },
                }
                for channel, uri in channels.items()
            ]
        if environment:
            spec["Environment"] = environment
        if checkpoint:
            spec["CheckpointConfig"] = checkpoint
        arn = f"arn:aws:sagemaker:{REGION}:123456789012:training-job/{name}"
        job = TrainingJob(name, arn, spec, START, 0, START)
        if pool is not None:
            cache = self.tmp / "cache" / pool
            cache.mkdir(parents=True, exist_ok=True)
            job.pool = WarmPool(pool, None, "ml.m5.xlarge", count, cache, holder=job.name)
        if block_end is not None:
            job.block = types.SimpleNamespace(end=block_end)
        return job

    def run(self, job: TrainingJob, at: datetime = START, timeout: float = 30):
        run = self.executor.start(job, at)
        result = run.wait(timeout)
        assert result is not None, "the run did not end in time"
        assert run.join(timeout)
        return run, result

    # -- reading results ----------------------------------------------------------------
    def lines(self, stream: str) -> list[str]:
        return [event.message for event in self.logs.events(LOG_GROUP, stream, start_from_head=True)[0]]

    def events(self, stream: str):
        return self.logs.events(LOG_GROUP, stream, start_from_head=True)[0]

    def archive(self, key: str) -> dict[str, bytes]:
        with self.store.get_object("out-bucket", key).open() as handle:
            with tarfile.open(fileobj=handle, mode="r:gz") as tar:
                return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}

    def streams(self, prefix: str) -> list[str]:
        if not self.logs.log_group_exists(LOG_GROUP):
            return []
        return [info.name for info in self.logs.streams(LOG_GROUP, prefix)]

    def has(self, bucket: str, key: str) -> bool:
        return self.store.bucket_exists(bucket) and any(
            o.key == key for o in self.store.list_objects(bucket, key).objects
        )


def source_archive(files: dict) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def tiny_wheel(directory: Path, value: int = 42) -> Path:
    """A pure-Python wheel of ``tinypkg`` 0.1, written by hand (no build backend, no network)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tinypkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("tinypkg/__init__.py", f"VALUE = {value}\n")
        wheel.writestr(
            "tinypkg-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n"
        )
        wheel.writestr(
            "tinypkg-0.1.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(
            "tinypkg-0.1.dist-info/RECORD",
            "tinypkg/__init__.py,,\ntinypkg-0.1.dist-info/METADATA,,\n"
            "tinypkg-0.1.dist-info/WHEEL,,\ntinypkg-0.1.dist-info/RECORD,,\n",
        )
    return path


def wait_for_line(world: World, stream: str, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if text in world.lines(stream):
                return
        except Exception:  # the stream does not exist yet
            pass
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {stream}")


@contextlib.contextmanager
def torch_master_port():
    """Held while a multi-node torch job runs: its TCPStore listens on port 7777 of *every* address,
    so two such jobs on one machine (two test workers, two SDK environments) must take turns."""
    with open(Path(tempfile.gettempdir()) / "sagemaker-plans-local-tests-port-7777.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
