"""Reserve capacity with a training plan, then fit() an Estimator on it, locally.

Search offerings, buy the best, and run `Estimator(training_plan=arn).fit()`:
the job waits for the plan's first block, runs the entry point on this
machine, and the plan's instance counts follow it. The plan's first block
starts at least 30 minutes after the search: locally the waits fast-forward
the backend's clock to it (an explicit choice; without it a wall-clock backend
waits in real time, as AWS would). `SAGEMAKER_PLANS_LOCAL=0` sends the same
script to AWS (where the plan costs real money, and the waits are real).
"""

from pathlib import Path

from sagemaker_plans_local import Estimator, Session

HERE = Path(__file__).resolve().parent
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-gpu-py311"


def main():
    session = Session()
    if session.backend is not None:
        session.backend.settings.fast_forward_waits = True  # skip the wait for the first block
    data = session.upload_data(str(HERE / "data"), key_prefix="plan-demo/data")

    offerings = session.search_training_plan_offerings("ml.p5.48xlarge", instance_count=2, duration_hours=24)
    for offering in offerings:
        block = offering["ReservedCapacityOfferings"][0]
        print(
            f"offering {offering['TrainingPlanOfferingId'][:16]}…  {block['AvailabilityZone']}  "
            f"{offering['DurationHours']}h{offering['DurationMinutes']:02d}  ${offering['UpfrontFee']}"
        )
    plan_arn = session.create_training_plan("estimator-plan", offerings[0]["TrainingPlanOfferingId"])
    print("bought", plan_arn, "->", session.describe_training_plan("estimator-plan")["Status"])
    print("payment settled ->", session.wait_for_training_plan("estimator-plan")["Status"])

    estimator = Estimator(
        image_uri=IMAGE,
        role=ROLE,
        instance_count=2,
        instance_type="ml.p5.48xlarge",
        entry_point="my-training-script.py",
        source_dir=str(HERE / "code"),
        hyperparameters={"epochs": 3},
        keep_alive_period_in_seconds=600,
        training_plan=plan_arn,
        sagemaker_session=session,
    )
    estimator.fit({"training": data})

    job = session.describe_training_job(estimator.latest_training_job.name)
    plan = session.describe_training_plan("estimator-plan")
    print(
        f"job {job['TrainingJobName']}: {job['TrainingJobStatus']} on {job['ResourceConfig']['TrainingPlanArn']}"
    )
    print(
        f"plan {plan['Status']}: in use {plan['InUseInstanceCount']} (the warm pool), "
        f"available {plan['AvailableInstanceCount']} of {plan['TotalInstanceCount']}"
    )
    print("model artifacts:", estimator.model_data)


if __name__ == "__main__":
    main()
