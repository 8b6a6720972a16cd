"""Every public name works under the installed SDK major (this module runs under v2 and v3)."""

import os
import subprocess
import sys
import textwrap

import boto3
import pytest
from botocore.client import ClientCreator
from botocore.config import Config

from sagemaker_plans_local import LocalBackend, Session, activate, activated
from sagemaker_plans_local.sdk.default_backend import HOME_VARIABLE
from sagemaker_plans_local.sdk.major import sdk_major, session_module

UNREACHABLE = "http://127.0.0.1:9"
NO_RETRIES = Config(retries={"max_attempts": 1}, connect_timeout=1)


def clean_env(**extra: str) -> dict[str, str]:
    """A bare environment for a subprocess: no AWS configuration, and the test's own per-user
    directory (tests/conftest.py), so the default backend never writes the real one."""
    return {
        "PATH": "/usr/bin:/bin",
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_DEFAULT_REGION": "us-east-1",
        HOME_VARIABLE: os.environ[HOME_VARIABLE],
        **extra,
    }


def sdk_session_class():
    return session_module().Session


def test_importing_the_package_imports_no_sdk_and_no_boto3():
    code = (
        "import sys, sagemaker_plans_local; print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('sagemaker', 'boto3', 'botocore')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr


def test_session_is_the_installed_majors_session_class(sagemaker_backend):
    session = Session(backend=sagemaker_backend)
    assert isinstance(session, sdk_session_class())
    assert session.local and session.backend is sagemaker_backend
    assert session.boto_region_name == "us-east-1"
    assert session.account_id() == "123456789012"


def test_session_methods_for_plans_and_pools_work_on_both_majors(sagemaker_backend, sagemaker_session):
    sagemaker_backend.settings.plan_payment_seconds = 0
    offerings = sagemaker_session.search_training_plan_offerings("ml.p5.48xlarge", 1, 24)
    arn = sagemaker_session.create_training_plan("names-plan", offerings[0]["TrainingPlanOfferingId"])
    assert sagemaker_session.wait_for_training_plan("names-plan")["TrainingPlanArn"] == arn


def test_estimator_is_v2_only_and_v3_is_pointed_to_model_trainer():
    if sdk_major() == 2:
        import sagemaker.estimator

        from sagemaker_plans_local import Estimator

        assert issubclass(Estimator, sagemaker.estimator.Estimator)
    else:
        with pytest.raises(ImportError, match="ModelTrainer"):
            from sagemaker_plans_local import Estimator  # noqa: F401


def test_activated_makes_a_plain_sdk_session_local(tmp_path):
    with LocalBackend(root=tmp_path / "backend") as backend, activated(backend) as active:
        assert active is backend
        session = sdk_session_class()()
        session.boto_session.client("s3").create_bucket(Bucket="plain-bucket")
        assert session.default_bucket() == "sagemaker-us-east-1-123456789012"
        assert session.account_id() == "123456789012"
    names = {bucket["Name"] for bucket in backend.client("s3").list_buckets()["Buckets"]}
    assert names == {"plain-bucket", "sagemaker-us-east-1-123456789012"}


def test_activate_lasts_until_undone(tmp_path):
    with LocalBackend(root=tmp_path / "backend") as backend:
        deactivate = activate(backend)
        try:
            sm = boto3.client("sagemaker", region_name="us-east-1")
            assert sm.list_training_jobs()["TrainingJobSummaries"] == []
        finally:
            deactivate()
        assert ClientCreator.create_client.__module__ == "botocore.client"


def test_pytest_fixtures_give_the_majors_local_session(
    sagemaker_backend, sagemaker_client, sagemaker_session
):
    assert (
        isinstance(sagemaker_session, sdk_session_class()) and sagemaker_session.backend is sagemaker_backend
    )
    from tests.conftest import create_request

    sagemaker_client.create_training_job(**create_request("fixture-job"))
    described = sagemaker_session.sagemaker_client.describe_training_job(TrainingJobName="fixture-job")
    assert described["TrainingJobStatus"] == "InProgress"


def test_cli_runs_an_unmodified_script(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent("""
        import sys, boto3
        sm = boto3.client("sagemaker", region_name="us-east-1")
        print("jobs:", sm.list_training_jobs()["TrainingJobSummaries"], "args:", sys.argv[1:])
    """)
    )
    result = subprocess.run(
        [sys.executable, "-m", "sagemaker_plans_local", "run", str(script), "--x", "1"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "jobs: [] args: ['--x', '1']" in result.stdout


def test_waiting_for_a_plan_on_a_wall_clock_does_not_run_ahead_unless_asked(tmp_path):
    from datetime import datetime, timezone

    with LocalBackend(root=tmp_path / "wall") as backend:
        session = Session(backend=backend)
        offering = session.search_training_plan_offerings("ml.p5.48xlarge", 1, 24)[0]
        session.create_training_plan("wall-plan", offering["TrainingPlanOfferingId"])
        assert session.wait_for_training_plan("wall-plan")["Status"] == "Scheduled"  # a compressed real wait
        assert backend.clock.now() <= datetime.now(timezone.utc)
        session.create_training_plan(
            "forwarded-plan",
            session.search_training_plan_offerings("ml.p5.48xlarge", 1, 24)[0]["TrainingPlanOfferingId"],
        )
        assert session.wait_for_training_plan("forwarded-plan", fast_forward=True)["Status"] == "Scheduled"
