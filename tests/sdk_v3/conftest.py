"""tests/sdk_v3 runs under SDK v3 only (collected nowhere else, so no env reports skips).

Shared fixtures: ``source`` (an entry script that records the warm-pool
cache it finds and writes a model) and ``data`` (a training channel).

``sagemaker.train`` creates boto3 clients when imported (``AIRHub``) and so
needs a configured region: it is imported here with one, which is then
taken back so that no other test sees it.
"""

import os
import textwrap

import pytest

from sagemaker_plans_local.sdk.major import sdk_major

if sdk_major() < 3:
    collect_ignore_glob = ["test_*.py"]
else:
    _previous = os.environ.get("AWS_DEFAULT_REGION")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    try:
        import sagemaker.ai_registry.air_hub  # noqa: F401
        import sagemaker.train.model_trainer  # noqa: F401
    finally:
        if _previous is None:
            del os.environ["AWS_DEFAULT_REGION"]


CACHE = "/opt/ml/sagemaker/warmpoolcache"

TRAIN = textwrap.dedent(f"""
    import json, os, pathlib, sys
    print("hello from the entry script", flush=True)
    if os.environ.get("FAIL"):
        sys.exit("something broke")
    seen = []
    if os.environ.get("SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY") == "{CACHE}":
        marker = pathlib.Path("{CACHE}", "seen.txt")
        seen = marker.read_text().split() if marker.exists() else []
        marker.write_text(" ".join(seen + [os.environ["TRAINING_JOB_NAME"]]))
    rows = sorted(p.name for p in pathlib.Path("/opt/ml/input/data/train").iterdir())
    pathlib.Path("/opt/ml/model/model.json").write_text(json.dumps({{"seen": seen, "rows": rows}}))
""")


@pytest.fixture
def source(tmp_path):
    directory = tmp_path / "src"
    directory.mkdir()
    (directory / "train.py").write_text(TRAIN)
    return directory


@pytest.fixture
def data(sagemaker_session, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.csv").write_text("1,2\n")
    return sagemaker_session.upload_data(str(folder), key_prefix="train")
