"""Section 12: multi-instance jobs on this machine: start-up cost of 2 and 8 instances vs 1, peak RSS.

Each job runs a trivial script on every instance through the local executor
(the instances' view with their names, one process per instance), in turns
in the same run: 1, 2, 8 instances, ``repeats`` times each. Start-up cost is
the run's duration (preparation, processes, uploads) of a script that does
nothing; the peak RSS is each of the 8 instances' own peak (``ru_maxrss``,
which its script prints), summed.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from bench_measure import ratio, table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sagemaker_plans_local.core.clock import VirtualClock  # noqa: E402
from sagemaker_plans_local.runtime import LocalExecutor  # noqa: E402
from sagemaker_plans_local.services.logs.streams import LogStore  # noqa: E402
from sagemaker_plans_local.services.s3.objects import ObjectStore  # noqa: E402
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob  # noqa: E402

START = datetime(2026, 3, 1, tzinfo=timezone.utc)
SCRIPT = "import resource; print('rss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)\n"
COUNTS = (1, 2, 8)


def job(name: str, count: int, code: Path) -> TrainingJob:
    hps = {"sagemaker_program": json.dumps("rss.py"), "sagemaker_submit_directory": json.dumps(str(code))}
    spec = {
        "TrainingJobName": name,
        "AlgorithmSpecification": {"TrainingImage": "image", "TrainingInputMode": "File"},
        "HyperParameters": hps,
        "ResourceConfig": {"InstanceType": "ml.p5.48xlarge", "InstanceCount": count, "VolumeSizeInGB": 30},
    }
    return TrainingJob(
        name, f"arn:aws:sagemaker:us-east-1:123456789012:training-job/{name}", spec, START, 0, START
    )


def run_once(executor: LocalExecutor, logs: LogStore, name: str, count: int, code: Path) -> tuple[float, int]:
    """(the run's duration in s, the sum of its instances' peak RSS in KiB)."""
    run = executor.start(job(name, count, code), START)
    result = run.wait(300)
    if result is None or result.exit_code != 0:
        raise RuntimeError(f"{name}: {result}")
    run.join(60)
    rss = 0
    for stream in run.streams:
        events = logs.events("/aws/sagemaker/TrainingJobs", stream, start_from_head=True)[0]
        rss += sum(int(e.message.split()[1]) for e in events if e.message.startswith("rss "))
    return result.duration, rss


def run_multinode(repeats: int = 5) -> None:
    print("\n== 12. Multi-instance jobs: start-up of 2 and 8 instances vs 1, peak RSS of 8 ==")
    with tempfile.TemporaryDirectory(prefix="bench-multinode-") as scratch:
        root = Path(scratch)
        clock = VirtualClock(START)
        logs = LogStore(clock)
        executor = LocalExecutor(root / "runtime", ObjectStore(root / "s3", clock), logs, clock)
        code = root / "code"
        code.mkdir()
        (code / "rss.py").write_text(SCRIPT)
        durations: dict[int, list[float]] = {count: [] for count in COUNTS}
        peaks: list[int] = []
        for turn in range(repeats + 1):  # the first turn warms up (the view's probe, imports)
            for count in COUNTS:
                duration, rss = run_once(executor, logs, f"mn-{count}-{turn}", count, code)
                if turn:
                    durations[count].append(duration)
                    if count == COUNTS[-1]:
                        peaks.append(rss)
        executor.close(10)
    one = statistics.median(durations[1])
    rows = [
        [
            f"{count} instance(s)",
            f"{statistics.median(durations[count]) * 1e3:,.0f}",
            ratio(statistics.median(durations[count]) / one),
        ]
        for count in COUNTS
    ]
    print(table(["job", "median start-up (ms)", "vs 1 instance"], rows))
    print(f"peak RSS of the 8-instance job (its 8 processes, summed): {max(peaks) / 1024:,.1f} MiB")
