"""A backend whose disk fills up (``python -m tests.durable.full_disk DIR``), on a real full disk.

In a mount namespace of its own (inside a user namespace unless root), a small tmpfs is mounted on
``DIR`` and a root made there; a filler file then takes every free byte. Prints one JSON line: what
each step answered (an error's code, or its exception's type), or ``{"skip": reason}``.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from sagemaker_plans_local.runtime import namespace

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def answer(call) -> str:
    """``ok``, the error code of a ClientError, or an exception's type."""
    from botocore.exceptions import ClientError

    try:
        call()
    except ClientError as error:
        return f"{error.response['Error']['Code']} {error.response['ResponseMetadata']['HTTPStatusCode']}"
    except Exception as error:  # what the test reports: a bare exception is the defect
        return f"raised {type(error).__name__}: {error}"
    return "ok"


def fill(directory: Path) -> None:
    with open(directory / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError:
            pass


def main(directory: Path) -> dict:
    try:
        namespace.unshare(namespace.CLONE_NEWNS)
        namespace.mount(None, "/", None, namespace.MS_REC | namespace.MS_PRIVATE)
        namespace.mount("tmpfs", str(directory), "tmpfs", 0, "size=4m")
    except namespace.ViewError as error:
        return {"skip": str(error)}
    from sagemaker_plans_local import LocalBackend
    from tests.conftest import create_request

    seen = {}
    root = directory / "root"
    backend = LocalBackend(root=root, start_time=START)
    sm = backend.client()
    seen["before"] = answer(lambda: sm.create_training_job(**create_request("before")))
    s3 = backend.client("s3")
    s3.create_bucket(Bucket="kept")
    fill(directory)
    seen["object"] = answer(lambda: s3.put_object(Bucket="kept", Key="k", Body=b"x" * 65536))
    seen["full"] = answer(lambda: sm.create_training_job(**create_request("full")))
    seen["after"] = answer(lambda: sm.describe_training_job(TrainingJobName="before"))
    seen["close"] = answer(backend.close)
    (directory / "filler").unlink()
    with LocalBackend(root=root) as reopened:
        sm = reopened.client()
        seen["kept"] = [job["TrainingJobName"] for job in sm.list_training_jobs()["TrainingJobSummaries"]]
        seen["again"] = answer(lambda: sm.create_training_job(**create_request("full")))
        seen["objects"] = reopened.client("s3").list_objects_v2(Bucket="kept")["KeyCount"]
    return seen


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))), flush=True)
