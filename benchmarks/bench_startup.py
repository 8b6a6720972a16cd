"""Section 8: start-up and SDK session cost.

(a) ``LocalBackend().client()`` against a plain ``boto3.client("sagemaker")``, each in a fresh
interpreter (``python -c``), in turns: only a new process has every cache cold (imports,
botocore's parsed JSON), and that is what a user's script or test run pays. (b) The README's
``Estimator(...).fit()`` (no session passed, SDK v2) in a fresh process: the first call, then
later calls against ``python train.py`` run by hand in turns in the same process; the wall
clock's simulated provisioning (``settings.wall_clock_phase_scale``: the job's ``Starting``
phase) is reported as a share, with the ratio without it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_measure import ratio, table, verdict

#: Target: LocalBackend().client() in a fresh process at most this times a plain boto3 client.
CLIENT_VS_BOTO3 = 1.3
#: Target: a later README Estimator(...).fit() at most this times ``python train.py``.
FIT_VS_SCRIPT = 4.0

PLAIN = (
    'import boto3; boto3.client("sagemaker", region_name="us-east-1", '
    'aws_access_key_id="testing", aws_secret_access_key="testing")'
)
OURS = "from sagemaker_plans_local import LocalBackend; LocalBackend().client()"
README_SCRIPT = """\
import os
with open(os.path.join(os.environ["SM_MODEL_DIR"], "model.txt"), "w") as f:
    f.write("ok")
print("trained")
"""


def child_environment(work: Path) -> dict[str, str]:
    """The environment of the measured processes: this checkout importable, no AWS config, no IMDS."""
    package = Path(importlib.util.find_spec("sagemaker_plans_local").origin).parent.parent
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(package), os.environ.get("PYTHONPATH")))),
        "AWS_CONFIG_FILE": str(work / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(work / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "SAGEMAKER_SUPPRESS_V2_WARNING": "1",
        "SAGEMAKER_PLANS_LOCAL_HOME": str(work / "home"),  # the default backend's durable state, fresh
    }


def process_seconds(code: str, env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of ``python -c code``, interpreter start-up included."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def run_client_startup(repeats: int, work: Path, env: dict[str, str]) -> None:
    print(f"   (a) a first client in a fresh process (python -c, {repeats} runs each in turns; wall seconds)")
    runs: dict[str, list[float]] = {"bare": [], "plain": [], "ours": []}
    for _ in range(repeats):
        for label, code in (("bare", "pass"), ("plain", PLAIN), ("ours", OURS)):
            runs[label].append(process_seconds(code, env, work))
    labels = {
        "bare": "python -c pass (interpreter alone)",
        "plain": 'boto3.client("sagemaker")',
        "ours": "LocalBackend().client()",
    }
    print(
        table(
            ["process", "best", "median", "max"],
            [
                [labels[key], *(f"{f(values):.3f}" for f in (min, statistics.median, max))]
                for key, values in runs.items()
            ],
        )
    )
    plain, ours, bare = (statistics.median(runs[key]) for key in ("plain", "ours", "bare"))
    value = ours / plain
    print(
        f"   ours/plain (medians): {ratio(value)}  {verdict(value <= CLIENT_VS_BOTO3)} "
        f"(target <= {CLIENT_VS_BOTO3:g}x); past the interpreter's start: "
        f"{ratio((ours - bare) / (plain - bare))}"
    )


def readme_fits(later: int) -> dict:
    """In this (fresh) process: the README's Estimator(...).fit() 1 + ``later`` times, the script in turns."""
    import logging

    logging.disable(logging.WARNING)
    from sagemaker_plans_local import Estimator

    def fit() -> tuple[float, float]:
        started = time.perf_counter()
        est = Estimator(
            image_uri="my-image",
            role="SageMakerRole",
            instance_count=1,
            instance_type="ml.m5.large",
            entry_point="train.py",
            source_dir="src",
            keep_alive_period_in_seconds=1800,
        )
        est.fit(logs=False)
        elapsed = time.perf_counter() - started
        job = est.sagemaker_session.sagemaker_client.describe_training_job(
            TrainingJobName=est.latest_training_job.name
        )
        if job["TrainingJobStatus"] != "Completed":
            raise RuntimeError(f"{job['TrainingJobName']} ended {job['TrainingJobStatus']}")
        starting = [t for t in job["SecondaryStatusTransitions"] if t["Status"] == "Starting"]
        return elapsed, sum((t["EndTime"] - t["StartTime"]).total_seconds() for t in starting)

    env = {**os.environ, "SM_MODEL_DIR": os.path.abspath("floor-model")}
    os.makedirs(env["SM_MODEL_DIR"], exist_ok=True)
    results: dict[str, list] = {"first": [fit()], "later": [], "script": []}
    for _ in range(later):
        started = time.perf_counter()
        subprocess.run([sys.executable, "src/train.py"], env=env, check=True, stdout=subprocess.DEVNULL)
        results["script"].append(time.perf_counter() - started)
        results["later"].append(fit())
    return results


def run_readme_fit(later: int, work: Path, env: dict[str, str]) -> None:
    print(
        f"   (b) the README's Estimator(...).fit(), no session passed (SDK v2, fresh process, wall clock; "
        f"1 + {later} calls, `python train.py` in turns)"
    )
    try:
        major = int(importlib.metadata.version("sagemaker").split(".")[0])
    except importlib.metadata.PackageNotFoundError:
        major = 0
    if major != 2:
        print("       (needs the SageMaker Python SDK v2: run it with .venv/bin/python; `make bench` does)")
        return
    (work / "src").mkdir(exist_ok=True)
    (work / "src" / "train.py").write_text(README_SCRIPT)
    code = f"import json, bench_startup; print(json.dumps(bench_startup.readme_fits({later})))"
    env = {**env, "PYTHONPATH": os.pathsep.join((str(Path(__file__).parent), env["PYTHONPATH"]))}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=work, check=True, capture_output=True, text=True
    )
    results = json.loads(out.stdout.strip().splitlines()[-1])
    later_total = statistics.median(t for t, _ in results["later"])
    later_phase = statistics.median(p for _, p in results["later"])
    script = statistics.median(results["script"])
    first, first_phase = results["first"][0]
    print(
        table(
            ["call (wall seconds)", "runs", "median", "of it: Starting phase"],
            [
                ["first Estimator(...).fit()", "1", f"{first:.3f}", f"{first_phase:.3f}"],
                ["later Estimator(...).fit()", str(later), f"{later_total:.3f}", f"{later_phase:.3f}"],
                ["python train.py", str(later), f"{script:.3f}", "-"],
            ],
        )
    )
    value = later_total / script
    print(
        f"   later fit()/script: {ratio(value)}  {verdict(value <= FIT_VS_SCRIPT)} (target <= {FIT_VS_SCRIPT:g}x); "
        f"without the Starting phase: {ratio((later_total - later_phase) / script)}"
    )


def run_startup(repeats: int, later_fits: int) -> None:
    print("\n8. Start-up and SDK session cost")
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        env = child_environment(work)
        run_client_startup(repeats, work, env)
        run_readme_fit(later_fits, work, env)
