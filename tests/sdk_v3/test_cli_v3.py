"""An unmodified v3 script (plain ModelTrainer, no session given) runs locally under the CLI."""

import subprocess
import sys
import textwrap

from tests.sdk.test_public_names import clean_env

SCRIPT = textwrap.dedent("""
    import sys
    from sagemaker.core.training.configs import Compute, SourceCode
    from sagemaker.train import ModelTrainer

    trainer = ModelTrainer(training_image="my-image", role="arn:aws:iam::123456789012:role/SageMakerRole",
                           base_job_name="cli-v3", source_code=SourceCode(source_dir=sys.argv[1],
                                                                         entry_script="train.py"),
                           compute=Compute(instance_type="ml.m5.large", keep_alive_period_in_seconds=60))
    trainer.train(logs=False)
    job = trainer._latest_training_job
    print("status", job.training_job_status, job.warm_pool_status.status)
""")


def test_cli_trains_an_unmodified_model_trainer_script(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "train.py").write_text("print('trained')\n")
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = {key: value for key, value in clean_env().items() if key != "AWS_DEFAULT_REGION"}  # none configured
    result = subprocess.run(
        [sys.executable, "-m", "sagemaker_plans_local", "run", str(script), str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "status Completed Available"
