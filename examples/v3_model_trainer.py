"""The developer guide's warm-pool example in SageMaker Python SDK v3 terms, run locally.

`ModelTrainer` with `Compute(keep_alive_period_in_seconds=1800)` and PIP_CACHE_DIR in
the persistent cache: the first `train()` starts cold and keeps its instances, the
second matches and reuses the warm pool (WarmPoolStatus `Reused` / `InUse`), then the
keep-alive is ended with 0. The entry script (`examples/code`) runs on this machine
through v3's own driver, with a real `/opt/ml` view. `SAGEMAKER_PLANS_LOCAL=0` sends
the very same script to AWS.
"""

from pathlib import Path

from sagemaker.core.training.configs import Compute, InputData, SourceCode
from sagemaker.train import ModelTrainer

from sagemaker_plans_local import Session

HERE = Path(__file__).resolve().parent
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311"


def trainer(session, number: int, epochs: int) -> ModelTrainer:
    # v3 names a job <base_job_name>-<second of the call>: a base per job keeps two train()s
    # in one second apart (AWS would refuse the second name too).
    return ModelTrainer(
        training_image=IMAGE,
        role=ROLE,
        sagemaker_session=session,
        base_job_name=f"my-training-job-{number}",
        source_code=SourceCode(source_dir=str(HERE / "code"), entry_script="my-training-script.py"),
        compute=Compute(
            instance_type="ml.g4dn.xlarge",
            instance_count=1,
            volume_size_in_gb=250,
            keep_alive_period_in_seconds=1800,
        ),
        hyperparameters={"batch-size": 512, "epochs": epochs, "learning-rate": 1e-3},
        environment={"PIP_CACHE_DIR": "/opt/ml/sagemaker/warmpoolcache/pip"},
    )


def warm_pool(session, job_name: str):
    return session.sagemaker_client.describe_training_job(TrainingJobName=job_name).get("WarmPoolStatus")


def main():
    session = Session()
    data = session.upload_data(str(HERE / "data"), key_prefix="my_training_data")
    channels = [InputData(channel_name="training", data_source=data)]

    print("== first train(): cold start, keeps its instances for 1800 s")
    first = trainer(session, 1, epochs=1)
    first.train(input_data_config=channels, logs=False)
    first_job = first._latest_training_job.training_job_name
    print(first_job, warm_pool(session, first_job))

    print("== second train(): matches and reuses the warm pool")
    second = trainer(session, 2, epochs=2)
    second.train(input_data_config=channels, wait=False, logs=False)
    job = second._latest_training_job
    second_job = job.training_job_name
    print(first_job, warm_pool(session, first_job))
    print(second_job, warm_pool(session, second_job))
    job.wait(logs=True)  # the script's output: its run counter in the persistent cache
    print(second_job, warm_pool(session, second_job))
    job.refresh()
    print("model artifacts:", job.model_artifacts.s3_model_artifacts)

    print("== end the warm pool")
    session.sagemaker_client.update_training_job(
        TrainingJobName=second_job, ResourceConfig={"KeepAlivePeriodInSeconds": 0}
    )
    print(second_job, warm_pool(session, second_job))


if __name__ == "__main__":
    main()
