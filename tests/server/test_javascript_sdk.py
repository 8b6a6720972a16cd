"""The AWS SDK for JavaScript v3 (from npm) reaches the server: another language, same answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.server.clients import client

ROOT = Path(__file__).resolve().parents[2]
#: Where `make` installs @aws-sdk/client-sagemaker (`make node-sdk`).
NODE_SDK = ROOT / ".node-sdk" / "node_modules"
SCRIPT = Path(__file__).parent / "js" / "training_jobs.mjs"


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (NODE_SDK / "@aws-sdk" / "client-sagemaker").is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI must have node and .node-sdk (make node-sdk installs the JavaScript SDK)")
        pytest.skip("no node or no .node-sdk here: `make node-sdk` installs the JavaScript SDK")
    return node


def test_the_javascript_sdk_creates_describes_and_lists_jobs(sagemaker_server):
    node = _node()
    run = subprocess.run(
        [node, str(SCRIPT), sagemaker_server.url, "from-javascript"],
        env={**os.environ, "NODE_PATH": str(NODE_SDK)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["status"] == "InProgress"
    assert answer["arn"] == "arn:aws:sagemaker:us-east-1:123456789012:training-job/from-javascript"
    assert answer["created"] is True  # the SDK parsed the wire timestamp into a Date
    assert answer["names"] == ["from-javascript"]
    assert answer["missing"] == {"name": "ValidationException", "status": 400}
    described = client(sagemaker_server).describe_training_job(TrainingJobName="from-javascript")
    assert described["TrainingJobArn"] == answer["arn"]
