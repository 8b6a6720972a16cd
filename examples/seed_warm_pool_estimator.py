"""The developer guide's warm-pool example with the SageMaker Python SDK, run locally.

The seed's TensorFlow estimator (keep_alive_period_in_seconds=1800, PIP_CACHE_DIR
in the persistent cache), a second matching job that reuses the warm pool,
WarmPoolStatus `Reused` / `InUse`, then the keep-alive raised and ended with 0.
The entry point is a small pure-Python script (`examples/code`) run on this
machine. `SAGEMAKER_PLANS_LOCAL=0` sends the very same script to AWS.
"""

from pathlib import Path

import sagemaker
from sagemaker.tensorflow import TensorFlow

from sagemaker_plans_local import Session

HERE = Path(__file__).resolve().parent


def estimator(session, role, job_epochs):
    return TensorFlow(
        entry_point="my-training-script.py",
        source_dir=str(HERE / "code"),
        role=role,
        model_dir="model_dir",
        framework_version="2.2",
        py_version="py37",
        instance_type="ml.g4dn.xlarge",
        instance_count=1,
        volume_size=250,
        hyperparameters={
            "batch-size": 512,
            "epochs": job_epochs,
            "learning-rate": 1e-3,
            "beta_1": 0.9,
            "beta_2": 0.999,
        },
        keep_alive_period_in_seconds=1800,
        environment={"PIP_CACHE_DIR": "/opt/ml/sagemaker/warmpoolcache/pip"},
        sagemaker_session=session,
    )


def warm_pool(session, job_name):
    return session.describe_training_job(job_name).get("WarmPoolStatus")


def main():
    # Creates a SageMaker session and gets the execution role
    session = Session()
    role = sagemaker.get_execution_role(session)
    data = session.upload_data(str(HERE / "data"), key_prefix="my_training_data")

    print("== my-training-job-1: cold start, keeps its instances for 1800 s")
    estimator(session, role, job_epochs=1).fit(data, job_name="my-training-job-1")
    print("my-training-job-1:", warm_pool(session, "my-training-job-1"))

    print("== my-training-job-2: matches and reuses the warm pool")
    second = estimator(session, role, job_epochs=2)
    second.fit(data, job_name="my-training-job-2", wait=False)
    print("my-training-job-1:", warm_pool(session, "my-training-job-1"))
    print("my-training-job-2:", warm_pool(session, "my-training-job-2"))
    second.latest_training_job.wait(logs="All")
    print("my-training-job-2:", warm_pool(session, "my-training-job-2"))
    print("model artifacts:", second.model_data)

    print("== update the keep-alive, then end the warm pool")
    session.update_training_job("my-training-job-2", resource_config={"KeepAlivePeriodInSeconds": 3600})
    print("my-training-job-2:", warm_pool(session, "my-training-job-2"))
    session.update_training_job("my-training-job-2", resource_config={"KeepAlivePeriodInSeconds": 0})
    print("my-training-job-2:", warm_pool(session, "my-training-job-2"))


if __name__ == "__main__":
    main()
