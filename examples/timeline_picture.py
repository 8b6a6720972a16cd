"""Draw the timeline picture of two scenarios, each on a manual-clock backend (docs/cli.md, "timeline").

1. The seed's warm-pool flow (examples/warm_pools.py): job 1 keeps its pool,
   job 2 reuses it ten minutes later and keeps its own, its keep-alive raised
   to an hour.
2. A training plan of two one-day blocks in two AZs: a job waits for the plan,
   runs in the first block; a 3-hour job started two hours before the first
   block ends is interrupted at its cutoff and resumes in the second block.

Usage: python examples/timeline_picture.py [OUT.png|OUT.svg|OUT.html] (default: the repository's docs/timeline.png)
"""

import runpy
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.inspection.snapshot import Snapshot
from sagemaker_plans_local.inspection.timeline import save, timelines

HERE = Path(__file__).resolve().parent
P5 = "ml.p5.48xlarge"
#: The start of a capacity day (blocks run 11:30 -> 11:30 UTC).
DAY = datetime(2026, 1, 1, 11, 30, tzinfo=timezone.utc)


def warm_pool_flow() -> Snapshot:
    """The seed's flow, seen 40 minutes after job 2's keep-alive was raised to 3600 s."""
    training_job = runpy.run_path(str(HERE / "warm_pools.py"))["training_job"]
    with LocalBackend(start_time=datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)) as backend:
        sm = backend.client()
        sm.create_training_job(**training_job("my-training-job-1", epochs=1))
        backend.clock.advance(25 * 60)
        sm.create_training_job(**training_job("my-training-job-2", epochs=2))
        backend.clock.advance(16 * 60)
        sm.update_training_job(
            TrainingJobName="my-training-job-2", ResourceConfig={"KeepAlivePeriodInSeconds": 3600}
        )
        backend.clock.advance(40 * 60)
        return Snapshot.collect(sm, backend.clock.now())


def plan_job(name: str, plan_arn: str, count: int) -> dict:
    """A job on the plan (the request of examples/warm_pools.py, on p5 instances, without a pool)."""
    request = runpy.run_path(str(HERE / "warm_pools.py"))["training_job"](name, epochs=3)
    request["ResourceConfig"] = {
        "InstanceType": P5,
        "InstanceCount": count,
        "VolumeSizeInGB": 250,
        "TrainingPlanArn": plan_arn,
    }
    return request


def two_block_plan() -> Snapshot:
    """A 48-hour plan (blocks on days 2 and 5, two AZs), a short job and a resumed one, seen on day 5."""
    with LocalBackend(start_time=datetime(2026, 1, 1, tzinfo=timezone.utc)) as backend:
        sm = backend.client()
        backend.capacity.clear()
        backend.capacity.add(P5, 2, "us-east-1a", DAY + timedelta(days=2), DAY + timedelta(days=3))
        backend.capacity.add(P5, 2, "us-east-1b", DAY + timedelta(days=5), DAY + timedelta(days=6))
        offering = sm.search_training_plan_offerings(
            InstanceType=P5, InstanceCount=2, DurationHours=48, TargetResources=["training-job"]
        )["TrainingPlanOfferings"][0]
        plan = sm.create_training_plan(
            TrainingPlanName="pretraining", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )["TrainingPlanArn"]
        backend.clock.advance(timedelta(days=1))  # paid and Scheduled
        backend.script_job("warm-up", runtime_seconds=4 * 3600)
        sm.create_training_job(**plan_job("warm-up", plan, count=1))  # waits for the first block
        backend.script_job("pretrain", runtime_seconds=3 * 3600)
        backend.clock.advance(DAY + timedelta(days=3, hours=-2) - backend.clock.now())
        sm.create_training_job(**plan_job("pretrain", plan, count=2))  # cut off at the block's end
        backend.clock.advance(DAY + timedelta(days=5, hours=6) - backend.clock.now())
        return Snapshot.collect(sm, backend.clock.now())


def main(argv: list[str]) -> None:
    out = Path(argv[1]) if len(argv) > 1 else HERE.parent / "docs" / "timeline.png"
    figure = timelines(
        [
            ("1. The seed's warm-pool flow: job 1's pool reused by job 2", warm_pool_flow()),
            (
                "2. A two-block training plan: a job interrupted at the first block's end resumes",
                two_block_plan(),
            ),
        ]
    )
    save(figure, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv)
