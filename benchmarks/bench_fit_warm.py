"""Section 4b: cold vs warm start of a fit() whose requirements.txt installs a local wheel.

Pairs of fits on one configuration (a RoleArn of its own): the first makes a
warm pool, installing the wheel in the job's virtualenv; the second reuses the
pool, its virtualenv kept and pip skipped. Run by ``bench_fit.run_fit``.
"""

from __future__ import annotations

import base64
import hashlib
import statistics
import zipfile
from pathlib import Path
from unittest.mock import patch

from bench_fit import ROLE, Fits, seconds, stats_row
from bench_measure import ratio, table, verdict

#: Target: a warm start (pool reused, pip skipped) costs at most this share of the cold start.
WARM_VS_COLD = 0.25

WHEEL_NAME, WHEEL_VERSION = "benchwheel", "0.1"

WHEEL_SCRIPT = f"""\
import os
import {WHEEL_NAME}
with open(os.path.join(os.environ["SM_MODEL_DIR"], "model.txt"), "w") as f:
    f.write(str({WHEEL_NAME}.VALUE))
print("{WHEEL_NAME}", {WHEEL_NAME}.VALUE)
"""


def build_wheel(directory: Path) -> Path:
    """A minimal pure-Python wheel, written by hand (no build backend, no network)."""
    dist_info = f"{WHEEL_NAME}-{WHEEL_VERSION}.dist-info"
    files = {
        f"{WHEEL_NAME}/__init__.py": b"VALUE = 42\n",
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {WHEEL_NAME}\nVersion: {WHEEL_VERSION}\n".encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: bench_fit\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }

    def digest(data: bytes) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    record = "".join(f"{name},sha256={digest(data)},{len(data)}\n" for name, data in files.items())
    path = directory / f"{WHEEL_NAME}-{WHEEL_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{dist_info}/RECORD", record + f"{dist_info}/RECORD,,\n")
    return path


def log_lines(session, job_name: str) -> list[str]:
    logs = session.boto_session.client("logs", region_name=session.boto_region_name)
    group = "/aws/sagemaker/TrainingJobs"
    lines = []
    streams = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=f"{job_name}/")["logStreams"]
    for stream in streams:
        events = logs.get_log_events(
            logGroupName=group, logStreamName=stream["logStreamName"], startFromHead=True
        )["events"]
        lines += [event["message"] for event in events]
    return lines


def run_warm(session, work: Path, pairs: int, what_ifs: int) -> dict:
    import sagemaker.utils

    wheel = build_wheel(work)
    source = work / "with-requirements"
    source.mkdir()
    (source / "train.py").write_text(WHEEL_SCRIPT)
    (source / "requirements.txt").write_text(f"{wheel}\n")
    fits = Fits(session, source, keep_alive_period_in_seconds=1800)
    results: dict = {"cold": [], "warm": [], "checks": [], "what-if": []}

    def pair(index: int, prefix: str) -> tuple[float, float]:
        role = f"{ROLE}-pair-{prefix}-{index}"  # a RoleArn of its own: the cold job matches no pool
        cold, cold_name = fits.fit(f"bench-cold-{prefix}", role=role)
        warm, warm_name = fits.fit(f"bench-warm-{prefix}", role=role)
        first = session.describe_training_job(cold_name).get("WarmPoolStatus") or {}
        second = session.describe_training_job(warm_name).get("WarmPoolStatus") or {}
        if first.get("Status") != "Reused" or first.get("ReusedByJob") != warm_name:
            raise RuntimeError(f"{warm_name} did not reuse the warm pool of {cold_name}: {first}")
        cold_log, warm_log = log_lines(session, cold_name), log_lines(session, warm_name)
        expected = f"{WHEEL_NAME} 42"
        installed = any(f"Successfully installed {WHEEL_NAME}" in line for line in cold_log)
        reinstalled = any(WHEEL_NAME in line and expected not in line for line in warm_log)
        if not installed or reinstalled or expected not in cold_log or expected not in warm_log:
            raise RuntimeError(f"unexpected logs: cold {cold_log[-5:]}, warm {warm_log}")
        results["checks"].append((cold_name, first, warm_name, second))
        return cold, warm

    for index in range(pairs):
        cold, warm = pair(index, "p")
        results["cold"].append(cold)
        results["warm"].append(warm)
    with patch.object(sagemaker.utils, "validate_sagemaker_config", lambda config=None: None):
        results["what-if"] = [pair(index, "noval") for index in range(what_ifs)]
    return results


def report_warm(results: dict) -> None:
    cold, warm = statistics.median(results["cold"]), statistics.median(results["warm"])
    rows = [
        stats_row("cold: new pool, venv + pip install of the wheel", results["cold"]),
        stats_row("warm: pool reused, venv kept, pip skipped", results["warm"]),
    ]
    what_if_cold = [cold for cold, _ in results["what-if"]]
    what_if_warm = [warm for _, warm in results["what-if"]]
    if results["what-if"]:
        rows.append(stats_row("  what-if, SDK config validation skipped: cold", what_if_cold))
        rows.append(stats_row("  what-if, SDK config validation skipped: warm", what_if_warm))
    print(table(["fit(wait=True, logs=False) (seconds)", "runs", "best", "median", "max"], rows))
    cold_name, first, warm_name, second = results["checks"][-1]
    print(
        f"   warm pool reused, every pair: {cold_name} WarmPoolStatus {first['Status']} "
        f"(ReusedByJob {first['ReusedByJob']}); {warm_name} WarmPoolStatus {second.get('Status')} once "
        "Completed; logs: pip installed the wheel on the cold start only, the script imported it "
        "both times"
    )
    print(
        f"   warm/cold (medians): {ratio(warm / cold)}  {verdict(warm <= WARM_VS_COLD * cold)} "
        f"(target <= {WARM_VS_COLD:g}x); cold - warm = {seconds(cold - warm)} s (virtualenv + pip)"
    )
    if results["what-if"]:
        cold_w, warm_w = statistics.median(what_if_cold), statistics.median(what_if_warm)
        print(
            f"   what-if without the SDK's config validation: warm/cold {ratio(warm_w / cold_w)} "
            f"{verdict(warm_w <= WARM_VS_COLD * cold_w)} (diagnostic only)"
        )
