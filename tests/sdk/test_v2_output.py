"""What a user reads from fit() with SDK v2: no stray dot before ``Training seconds:``, no telemetry notice."""

import logging

from sagemaker.telemetry import telemetry_logging

from sagemaker_plans_local import Estimator
from tests.sdk.test_fit import IMAGE, ROLE


def test_a_job_without_log_streams_prints_no_dot_before_its_times(sagemaker_session, capsys):
    estimator = Estimator(
        image_uri=IMAGE,
        role=ROLE,
        instance_count=1,
        instance_type="ml.m5.large",
        output_path="s3://dot-bucket/output",
        sagemaker_session=sagemaker_session,
    )
    sagemaker_session.boto_session.client("s3").create_bucket(Bucket="dot-bucket")
    estimator.fit(job_name="no-streams", logs=True)  # a simulated job: it writes no log stream
    lines = capsys.readouterr().out.splitlines()
    times = lines.index(next(line for line in lines if line.startswith("Training seconds:")))
    assert lines[times - 1].endswith("Completed - Training job completed")
    assert lines[times + 1].startswith("Billable seconds:")


def test_no_telemetry_notice_for_a_local_session(sagemaker_session):
    logged = []
    handler = logging.Handler()
    handler.emit = logged.append
    telemetry_logging.logger.addHandler(handler)
    previous = telemetry_logging.logger.level
    telemetry_logging.logger.setLevel(logging.INFO)
    try:
        estimator = Estimator(
            image_uri=IMAGE,
            role=ROLE,
            instance_count=1,
            instance_type="ml.m5.large",
            output_path="s3://dot-bucket/output",
            sagemaker_session=sagemaker_session,
        )
        sagemaker_session.boto_session.client("s3").create_bucket(Bucket="dot-bucket")
        estimator.fit(job_name="quiet", logs=False)
    finally:
        telemetry_logging.logger.removeHandler(handler)
        telemetry_logging.logger.setLevel(previous)
    assert not [r for r in logged if r.msg == telemetry_logging.TELEMETRY_OPT_OUT_MESSAGING]
