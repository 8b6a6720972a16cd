"""The warm-pool flow of the SageMaker developer guide, answered in-process.

Job 1 keeps its instances for 1800 s; job 2 matches and reuses them (so it
starts in seconds, not minutes); job 1 becomes ``Reused`` by job 2, job 2 is
``InUse`` and then ``Available``; the keep-alive is raised, then ended with 0.
Runs on a virtual clock: an hour of SageMaker time takes milliseconds.
"""

from datetime import datetime, timezone

from sagemaker_plans_local import LocalBackend

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


def training_job(name: str, epochs: int) -> dict:
    return {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/tensorflow-training:2.2-gpu-py37",
            "TrainingInputMode": "File",
        },
        "HyperParameters": {"batch-size": "512", "epochs": str(epochs), "learning-rate": "0.001"},
        "OutputDataConfig": {"S3OutputPath": "s3://my-bucket/output"},
        "ResourceConfig": {
            "InstanceType": "ml.g4dn.xlarge",
            "InstanceCount": 1,
            "VolumeSizeInGB": 250,
            "KeepAlivePeriodInSeconds": 1800,
        },
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "Environment": {"PIP_CACHE_DIR": "/opt/ml/sagemaker/warmpoolcache/pip"},
    }


def show(sm, backend, name: str) -> None:
    job = sm.describe_training_job(TrainingJobName=name)
    start = job.get("TrainingStartTime")
    startup = f"{(start - job['CreationTime']).total_seconds():>5.0f} s" if start else "    -"
    print(
        f"  [{backend.clock.now():%H:%M:%S}] {name}: {job['TrainingJobStatus']:<10} "
        f"{job['SecondaryStatus']:<12} startup {startup}  WarmPoolStatus={job.get('WarmPoolStatus')}"
    )


def main() -> None:
    with LocalBackend(start_time=datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)) as backend:
        sm = backend.client()

        print("1. my-training-job-1 asks for a 1800 s warm pool and starts cold")
        sm.create_training_job(**training_job("my-training-job-1", epochs=1))
        show(sm, backend, "my-training-job-1")
        backend.clock.advance(15 * 60)
        show(sm, backend, "my-training-job-1")

        print("2. ten minutes later a matching job arrives and reuses the pool")
        backend.clock.advance(10 * 60)
        sm.create_training_job(**training_job("my-training-job-2", epochs=2))
        show(sm, backend, "my-training-job-1")
        show(sm, backend, "my-training-job-2")
        backend.clock.advance(60)
        show(sm, backend, "my-training-job-2")
        backend.clock.advance(15 * 60)
        show(sm, backend, "my-training-job-2")

        print("3. keep the pool for an hour instead, then release it")
        sm.update_training_job(
            TrainingJobName="my-training-job-2", ResourceConfig={"KeepAlivePeriodInSeconds": 3600}
        )
        backend.clock.advance(40 * 60)
        show(sm, backend, "my-training-job-2")
        sm.update_training_job(
            TrainingJobName="my-training-job-2", ResourceConfig={"KeepAlivePeriodInSeconds": 0}
        )
        show(sm, backend, "my-training-job-2")

        listed = sm.list_training_jobs(WarmPoolStatusEquals="Reused")["TrainingJobSummaries"]
        print("4. jobs whose pool was reused:", [s["TrainingJobName"] for s in listed])


if __name__ == "__main__":
    main()
