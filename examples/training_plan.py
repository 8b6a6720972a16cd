"""Reserve GPU capacity with a SageMaker training plan and run a job on it, in-process.

Search offerings, print them as a table, buy the best, fast-forward until the
plan is Active, run a training job on it and watch the plan's instance
counts, then fast-forward until the plan has Expired.
"""

from datetime import datetime, timedelta, timezone

from sagemaker_plans_local import LocalBackend

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
INSTANCE_TYPE = "ml.p5.48xlarge"


def print_offerings(offerings: list) -> None:
    print(f"  {'#':<2} {'offering id':<16} {'blocks':<58} {'hours':>6} {'fee (USD)':>12}")
    for number, offering in enumerate(offerings, 1):
        blocks = " + ".join(
            f"{b['AvailabilityZone']} {b['StartTime']:%m-%d %H:%M}->{b['EndTime']:%m-%d %H:%M}"
            for b in offering["ReservedCapacityOfferings"]
        )
        hours = f"{offering['DurationHours']}h{offering['DurationMinutes']:02d}"
        print(
            f"  {number:<2} {offering['TrainingPlanOfferingId'][:14] + '..':<16} {blocks:<58} "
            f"{hours:>6} {offering['UpfrontFee']:>12}"
        )


def show_plan(sm, backend, name: str) -> dict:
    plan = sm.describe_training_plan(TrainingPlanName=name)
    print(
        f"  [{backend.clock.now():%Y-%m-%d %H:%M}] {name}: {plan['Status']:<9} "
        f"total={plan['TotalInstanceCount']} in-use={plan['InUseInstanceCount']} "
        f"available={plan['AvailableInstanceCount']}  ({plan['StatusMessage']})"
    )
    return plan


def advance_to(backend, moment: datetime) -> None:
    backend.clock.advance(max(moment - backend.clock.now(), timedelta(0)))


def main() -> None:
    start = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
    with LocalBackend(start_time=start) as backend:
        sm = backend.client()

        print(f"1. Offerings for 4 x {INSTANCE_TYPE}, 3 days, for training jobs, from next week")
        offerings = sm.search_training_plan_offerings(
            InstanceType=INSTANCE_TYPE,
            InstanceCount=4,
            DurationHours=72,
            TargetResources=["training-job"],
            StartTimeAfter=start + timedelta(days=7),
        )["TrainingPlanOfferings"]
        print_offerings(offerings)

        print("2. Buy the best one")
        best = offerings[0]
        plan_arn = sm.create_training_plan(
            TrainingPlanName="llm-pretraining",
            TrainingPlanOfferingId=best["TrainingPlanOfferingId"],
        )["TrainingPlanArn"]
        print("  ", plan_arn)
        show_plan(sm, backend, "llm-pretraining")
        backend.clock.advance(backend.settings.plan_payment_seconds)
        plan = show_plan(sm, backend, "llm-pretraining")

        print("3. Queue a training job on the plan, then fast-forward to the plan's start")
        sm.create_training_job(
            TrainingJobName="pretrain-1",
            RoleArn=ROLE,
            AlgorithmSpecification={
                "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/"
                "pytorch-training:2.5-gpu-py311",
                "TrainingInputMode": "File",
            },
            OutputDataConfig={"S3OutputPath": "s3://my-bucket/output"},
            ResourceConfig={
                "InstanceType": INSTANCE_TYPE,
                "InstanceCount": 4,
                "VolumeSizeInGB": 500,
                "TrainingPlanArn": plan_arn,
            },
            StoppingCondition={"MaxRuntimeInSeconds": 5 * 24 * 3600},
        )
        job = sm.describe_training_job(TrainingJobName="pretrain-1")
        print(f"   pretrain-1: {job['TrainingJobStatus']} / {job['SecondaryStatus']}")
        advance_to(backend, plan["StartTime"])
        show_plan(sm, backend, "llm-pretraining")
        job = sm.describe_training_job(TrainingJobName="pretrain-1")
        print(f"   pretrain-1: {job['TrainingJobStatus']} / {job['SecondaryStatus']}")
        backend.clock.advance(timedelta(hours=1))
        job = sm.describe_training_job(TrainingJobName="pretrain-1")
        print(
            f"   pretrain-1: {job['TrainingJobStatus']} / {job['SecondaryStatus']} "
            f"({job['TrainingTimeInSeconds']} s of training)"
        )
        show_plan(sm, backend, "llm-pretraining")

        print("4. Fast-forward past the plan's end")
        advance_to(backend, plan["EndTime"])
        final = show_plan(sm, backend, "llm-pretraining")
        for rc in final["ReservedCapacitySummaries"]:
            print(
                f"   block {rc['AvailabilityZone']} {rc['StartTime']:%m-%d %H:%M} -> "
                f"{rc['EndTime']:%m-%d %H:%M}: {rc['Status']}"
            )


if __name__ == "__main__":
    main()
