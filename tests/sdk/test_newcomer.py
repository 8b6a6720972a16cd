"""What a newcomer trips on with the SDKs, fixed: nothing configured, a role found as on SageMaker, a clean exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sagemaker_plans_local import Session
from sagemaker_plans_local.sdk.default_region import configured_region
from sagemaker_plans_local.sdk.major import installed_major

ROOT = Path(__file__).resolve().parents[2]
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


def _bare_environment(tmp_path: Path) -> dict[str, str]:
    """This machine's environment with no AWS configuration at all."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_the_remote_function_module_imports_with_nothing_configured(tmp_path):
    module = "sagemaker.remote_function" if installed_major() == 2 else "sagemaker.core.remote_function"
    code = f"import sagemaker_plans_local, os\nfrom {module} import remote\nprint(os.environ['AWS_DEFAULT_REGION'])"
    done = _python(code, _bare_environment(tmp_path), tmp_path)
    assert (done.returncode, done.stdout.splitlines()[-1:]) == (0, ["us-east-1"]), done.stderr


def test_a_configured_region_is_left_alone(tmp_path, monkeypatch):
    env = _bare_environment(tmp_path)
    (tmp_path / "config").write_text("[profile team]\nregion = eu-west-1\n")
    env.update(AWS_CONFIG_FILE=str(tmp_path / "config"), AWS_PROFILE="team")
    done = _python(
        "import sagemaker_plans_local, os\nprint(os.environ.get('AWS_DEFAULT_REGION'))", env, tmp_path
    )
    assert done.stdout.splitlines()[-1:] == ["None"], done.stderr
    env["SAGEMAKER_PLANS_LOCAL"] = "0"  # against AWS nothing is set for the user
    env.pop("AWS_PROFILE")
    done = _python(
        "import sagemaker_plans_local, os\nprint(os.environ.get('AWS_DEFAULT_REGION'))", env, tmp_path
    )
    assert done.stdout.splitlines()[-1:] == ["None"], done.stderr
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    assert configured_region() == "ap-south-1"


def test_the_pytest_plugin_collects_a_module_that_imports_the_remote_function(tmp_path):
    module = "sagemaker.remote_function" if installed_major() == 2 else "sagemaker.core.remote_function"
    (tmp_path / "test_collected.py").write_text(
        f"from {module} import remote\n\ndef test_it(sagemaker_client):\n"
        "    assert sagemaker_client.list_training_jobs()['TrainingJobSummaries'] == []\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_collected.py"],
        env=_bare_environment(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_the_execution_role_is_found_as_on_sagemaker(sagemaker_backend):
    session = Session(backend=sagemaker_backend)
    if installed_major() == 2:
        from sagemaker import get_execution_role
    else:
        from sagemaker.core.helper.session_helper import get_execution_role
    assert get_execution_role(session) == ROLE


def test_a_v3_model_trainer_without_a_role_uses_the_callers(sagemaker_backend, tmp_path):
    if installed_major() == 2:  # v2's estimators take role= (get_execution_role above)
        assert Session(backend=sagemaker_backend).get_caller_identity_arn() == ROLE
        return
    from sagemaker.core.training.configs import Compute
    from sagemaker.train import ModelTrainer
    from sagemaker.train.defaults import TrainDefaults

    session = Session(backend=sagemaker_backend)
    assert TrainDefaults.get_role(sagemaker_session=session) == ROLE
    trainer = ModelTrainer(
        training_image="my-image", sagemaker_session=session, compute=Compute(instance_type="ml.m5.large")
    )
    assert trainer.role == ROLE


def test_an_activation_left_open_exits_quietly(tmp_path):
    code = (
        "import boto3\nfrom sagemaker_plans_local import activate\nactivate()\n"
        "boto3.client('sagemaker', region_name='us-east-1').list_training_jobs()\nprint('done')\n"
    )
    done = _python(code, _bare_environment(tmp_path), tmp_path)
    assert (done.returncode, done.stdout.splitlines()[-1:]) == (0, ["done"]), done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr
