"""Section 4: the SageMaker Python SDK's fit() through sagemaker_plans_local.

(a) A trivial script-mode job: fit() against running the script by hand (the
floor) and against the same estimator on moto.  (b) Cold vs warm start of a
job whose requirements.txt installs a local wheel, on a warm pool
(``bench_fit_warm.py``).
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

from bench_measure import ratio, table, verdict

#: Target: a trivial fit() costs at most FIT_VS_FLOOR x the script run by hand + FIT_OVERHEAD s.
FIT_VS_FLOOR = 1.5
FIT_OVERHEAD = 0.5

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/bench-training:latest"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "bench-bucket"

TRIVIAL_SCRIPT = """\
import os
with open(os.path.join(os.environ["SM_MODEL_DIR"], "model.txt"), "w") as f:
    f.write("ok")
print("trained")
"""


def seconds(value: float) -> str:
    return f"{value:.3f}"


class Stopwatch:
    """Real seconds spent in wrapped callables while armed, and how often they were called."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.armed = False

    def wrap(self, function):
        def timed_call(*args, **kwargs):
            if not self.armed:
                return function(*args, **kwargs)
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        return timed_call


class Fits:
    """Estimators on one session, fit() timed alone (the estimator is built before the timer)."""

    def __init__(self, session, source_dir: Path, **estimator_kwargs) -> None:
        self.session = session
        self.source_dir = source_dir
        self.kwargs = estimator_kwargs
        self.count = 0

    def estimator(self, role: str = ROLE):
        from sagemaker.estimator import Estimator

        return Estimator(
            image_uri=IMAGE,
            role=role,
            instance_count=1,
            instance_type="ml.m5.large",
            entry_point="train.py",
            source_dir=str(self.source_dir),
            output_path=f"s3://{BUCKET}/out",
            sagemaker_session=self.session,
            **self.kwargs,
        )

    def next_name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}-{self.count:03d}"

    def fit(self, prefix: str, role: str = ROLE, meters: tuple[Stopwatch, ...] = ()) -> tuple[float, str]:
        """Seconds of ``fit(wait=True, logs=False)`` and the job name; ``meters`` run during the call only."""
        estimator, name = self.estimator(role), self.next_name(prefix)
        gc.collect()
        for meter in meters:
            meter.armed = True
        started = time.perf_counter()
        try:
            estimator.fit(job_name=name, wait=True, logs=False)
            return time.perf_counter() - started, name
        finally:
            for meter in meters:
                meter.armed = False

    def submit(self, prefix: str):
        """Seconds of ``fit(wait=False)`` (the submission alone), the estimator and the job name."""
        estimator, name = self.estimator(), self.next_name(prefix)
        gc.collect()
        started = time.perf_counter()
        estimator.fit(job_name=name, wait=False, logs=False)
        return time.perf_counter() - started, estimator, name

    def split(self, prefix: str) -> tuple[float, float]:
        """Seconds of ``fit(wait=False)`` (the submission), then of ``wait()`` (the job's end)."""
        submitted, estimator, _ = self.submit(prefix)
        started = time.perf_counter()
        estimator.latest_training_job.wait(logs="None")
        return submitted, time.perf_counter() - started


def floor_run(source_dir: Path, model_dir: Path) -> float:
    """``<python> train.py`` in a subprocess, interpreter start-up included (as fit's run pays it)."""
    model_dir.mkdir(exist_ok=True)
    env = dict(os.environ, SM_MODEL_DIR=str(model_dir))
    gc.collect()
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "train.py"],
        cwd=source_dir,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def stats_row(label: str, values: list[float]) -> list[str]:
    return [
        label,
        str(len(values)),
        seconds(min(values)),
        seconds(statistics.median(values)),
        seconds(max(values)),
    ]


# -- (a) trivial fit(): ours, the floor, moto ---------------------------------------


def run_trivial(session, backend, work: Path, fits: int, splits: int, what_ifs: int) -> dict:
    import sagemaker.utils

    source = work / "trivial"
    source.mkdir()
    (source / "train.py").write_text(TRIVIAL_SCRIPT)
    ours = Fits(session, source)
    results: dict[str, list[float]] = {"floor": [], "later": []}

    first, _ = ours.fit("bench-fit-first")
    results["first"] = [first]
    # Unprofiled attribution of the later fits: the SDK's config schema validation
    # (run on every config lookup because a local Session's config is not empty: it
    # opts telemetry out) and our backend's wait for the job's end (the script run).
    validation, waiting = Stopwatch(), Stopwatch()
    validate = sagemaker.utils.validate_sagemaker_config
    with (
        patch.object(sagemaker.utils, "validate_sagemaker_config", validation.wrap(validate)),
        patch.object(backend, "wait_for_training_job", waiting.wrap(backend.wait_for_training_job)),
    ):
        for _ in range(fits):  # floor and ours take turns, so drift in load hits both
            results["floor"].append(floor_run(source, work / "floor-model"))
            results["later"].append(ours.fit("bench-fit", meters=(validation, waiting))[0])
    results["floor"].append(floor_run(source, work / "floor-model"))
    results["validation"] = [validation.seconds / fits, validation.calls / fits]
    results["waiting"] = [waiting.seconds / fits]

    submits, waits = [], []
    for _ in range(splits):
        submitted, waited = ours.split("bench-fit-split")
        submits.append(submitted)
        waits.append(waited)
    results["submit"], results["wait"] = submits, waits

    # What-if: the same fit() with the SDK's config validation skipped.
    with patch.object(sagemaker.utils, "validate_sagemaker_config", lambda config=None: None):
        results["what-if"] = [ours.fit("bench-fit-noval")[0] for _ in range(what_ifs)]
    return results


def run_moto(work: Path, waits: int, submits: int) -> dict | None:
    """The same estimator on a plain SDK Session under moto; None if moto is missing."""
    try:
        from moto import mock_aws
    except ImportError:
        return None
    import boto3
    import sagemaker.session
    import sagemaker.telemetry.telemetry_logging as telemetry

    source = work / "trivial"
    results: dict = {"wait": [], "submit": [], "status": "-"}
    # A plain Session has telemetry on: its request (HTTP, outside boto3) is made a
    # no-op so nothing leaves the machine.  Its config stays empty, as for a user
    # without SDK defaults files, so the SDK skips config validation.
    with (
        mock_aws(),
        patch.object(telemetry, "_send_telemetry_request", lambda *args, **kwargs: None),
        contextlib.redirect_stdout(io.StringIO()),
    ):  # the SDK's status line and dots while polling
        boto_session = boto3.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
        )
        session = sagemaker.session.Session(boto_session=boto_session)
        boto_session.client("s3").create_bucket(Bucket=BUCKET)
        fits = Fits(session, source)
        fits.submit("moto-warm-up")  # unmeasured: moto's first-call costs
        for _ in range(waits):
            results["wait"].append(fits.fit("moto-fit")[0])
        for _ in range(submits):
            submitted, _, name = fits.submit("moto-fit-submit")
            results["submit"].append(submitted)
            # moto's job is Completed as soon as it is created: the SDK's wait only sleeps.
            results["status"] = session.describe_training_job(name)["TrainingJobStatus"]
    return results


def report_trivial(ours: dict, moto: dict | None) -> None:
    floor = statistics.median(ours["floor"])
    later = statistics.median(ours["later"])
    rows = [
        stats_row("floor: <python> train.py in a subprocess", ours["floor"]),
        stats_row("ours: first fit() in the process", ours["first"]),
        stats_row("ours: later fit()s", ours["later"]),
        stats_row("  ours: fit(wait=False) (submission)", ours["submit"]),
        stats_row("  ours: then wait() (the job's run)", ours["wait"]),
    ]
    if ours["what-if"]:
        rows.append(stats_row("  what-if: ours, SDK config validation skipped", ours["what-if"]))
    if moto is not None:
        if moto["wait"]:
            rows.append(stats_row("moto: fit(wait=True)", moto["wait"]))
        if moto["submit"]:
            rows.append(stats_row("  moto: fit(wait=False) (submission)", moto["submit"]))
    print(table(["configuration (seconds of the call)", "runs", "best", "median", "max"], rows))

    limit = FIT_VS_FLOOR * floor + FIT_OVERHEAD
    print(
        f"   target: ours <= {FIT_VS_FLOOR:g} x floor + {FIT_OVERHEAD:g} s = {seconds(limit)} s; "
        f"later fit()s median {seconds(later)} s ({ratio(later / floor)} floor, "
        f"{later - floor:+.3f} s)  {verdict(later <= limit)}; first fit() {seconds(ours['first'][0])} s "
        f"{verdict(ours['first'][0] <= limit)}"
    )
    validation, calls = ours["validation"]
    waiting = ours["waiting"][0]
    print(
        f"   where a later fit() goes (mean, unprofiled timers): SDK config schema validation "
        f"{seconds(validation)} s ({calls:.0f} calls, {100 * validation / later:.0f}%), backend wait for "
        f"the job (code in place, script run, model.tar.gz) {seconds(waiting)} s "
        f"({100 * waiting / later:.0f}%), the rest of the SDK and our API calls "
        f"{seconds(max(0.0, later - validation - waiting))} s"
    )
    if ours["what-if"]:
        what_if = statistics.median(ours["what-if"])
        print(
            f"   what-if without the SDK's config validation: median {seconds(what_if)} s "
            f"{verdict(what_if <= limit)} (diagnostic only: the SDK validates its config schema on "
            "every call when a session's SDK config is not empty; a local Session keeps it empty)"
        )
    if moto is None:
        print("   (moto is not installed: the moto rows are skipped; pip install 'moto[sagemaker]')")
    elif moto["wait"]:
        moto_wait = statistics.median(moto["wait"])
        print(
            f"   moto: fit(wait=True) median {seconds(moto_wait)} s: the SDK sleeps 5 s before its first "
            f"DescribeTrainingJob, which finds moto's job {moto['status']} at once "
            f"(the submission alone: median {seconds(statistics.median(moto['submit']))} s); "
            f"ours is {ratio(moto_wait / later)} faster"
        )
    else:
        print(
            "   moto: fit(wait=True) not measured in --quick (the SDK sleeps 5 s before its first "
            "DescribeTrainingJob); submission only"
        )


# -- the section ---------------------------------------------------------------


def run_fit(fits: int, splits: int, moto_waits: int, moto_submits: int, pairs: int, what_ifs: int) -> None:
    print(
        "\n4. SDK fit() through sagemaker_plans_local (sagemaker.estimator.Estimator, script mode, "
        "instance_count=1; wall time of the fit() call only, estimator and session built before the timer)"
    )
    from bench_train import sdk_major

    if sdk_major() != 2:
        print("   (needs the SageMaker Python SDK v2: run it with .venv/bin/python; `make bench` does)")
        return
    os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    quiet = {
        name: logging.getLogger(name) for name in ("sagemaker", "sagemaker.config", "botocore.credentials")
    }
    levels = {name: logger.level for name, logger in quiet.items()}
    for logger in quiet.values():
        logger.setLevel(logging.WARNING)  # "Creating training-job ...", "Not applying SDK defaults ...", ...
    try:
        from sagemaker_plans_local import LocalBackend, Session

        with tempfile.TemporaryDirectory(prefix="bench-fit-") as tmp, LocalBackend() as backend:
            work = Path(tmp)
            session = Session(backend=backend, local=True)
            session.boto_session.client("s3").create_bucket(Bucket=BUCKET)
            trivial = run_trivial(session, backend, work, fits, splits, what_ifs)
            moto = run_moto(work, moto_waits, moto_submits)
            print(
                "\n4a. A trivial script (writes SM_MODEL_DIR/model.txt, prints a line): "
                "ours vs running it by hand vs moto"
            )
            report_trivial(trivial, moto)
            from bench_fit_warm import report_warm, run_warm  # section 4b, beside this file

            warm = run_warm(session, work, pairs, what_ifs)
            print(
                "\n4b. Cold vs warm start, requirements.txt installing a local wheel, "
                "keep_alive_period_in_seconds=1800 (the second fit() of a pair has the same configuration)"
            )
            report_warm(warm)
    finally:
        for name, logger in quiet.items():
            logger.setLevel(levels[name])
