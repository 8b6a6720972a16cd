"""ModelTrainer (SDK v3) trains locally: the seed's warm-pool flow, logs, failures, telemetry."""

import io
import json
import logging
import sys
import tarfile
import threading

import pytest
from sagemaker.core.training.configs import Compute, InputData, SourceCode
from sagemaker.core.utils.exceptions import FailedStatusError
from sagemaker.train import ModelTrainer

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-cpu-py311"


def trainer(session, source, name, keep_alive=600, **compute):
    return ModelTrainer(
        training_image=IMAGE,
        role=ROLE,
        sagemaker_session=session,
        base_job_name=name,
        source_code=SourceCode(source_dir=str(source), entry_script="train.py"),
        compute=Compute(
            **{
                "instance_type": "ml.m5.large",
                "instance_count": 1,
                "keep_alive_period_in_seconds": keep_alive,
                **compute,
            }
        ),
    )


def train(model_trainer, data, **options):
    model_trainer.train(input_data_config=[InputData(channel_name="train", data_source=data)], **options)
    return model_trainer._latest_training_job


def read_model(session, uri):
    bucket, key = uri[len("s3://") :].split("/", 1)
    body = session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        return json.load(archive.extractfile("model.json"))


def test_the_seed_warm_pool_flow_reuses_the_pool_and_its_cache(
    sagemaker_backend, sagemaker_session, source, data
):
    first = train(trainer(sagemaker_session, source, "pool-a"), data, logs=False)
    assert first.training_job_status == "Completed"
    assert first.warm_pool_status.status == "Available"
    second = train(trainer(sagemaker_session, source, "pool-b"), data, logs=False)
    first.refresh()
    assert first.warm_pool_status.status == "Reused"
    assert first.warm_pool_status.reused_by_job == second.training_job_name
    assert second.warm_pool_status.status == "Available"
    assert read_model(sagemaker_session, second.model_artifacts.s3_model_artifacts) == {
        "seen": [first.training_job_name],
        "rows": ["a.csv"],
    }
    sagemaker_session.terminate_warm_pool(second.training_job_name)
    second.refresh()
    assert second.warm_pool_status.status == "Terminated"


def test_wait_logs_the_scripts_output_as_sagemaker_core_does(sagemaker_session, source, data):
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("sagemaker.core.resources")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        job = train(trainer(sagemaker_session, source, "logged", keep_alive=0), data, logs=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    messages = [record.getMessage() for record in records]
    stream_lines = [m for m in messages if m.startswith(f"{job.training_job_name}/algo-1")]
    assert any(m.endswith(":\nhello from the entry script") for m in stream_lines)
    assert messages[-1] == "Final Resource Status: [bold]Completed"


def test_a_failing_script_raises_failed_status_error(sagemaker_session, source, data):
    model_trainer = trainer(sagemaker_session, source, "fails", keep_alive=0)
    model_trainer.environment = {"FAIL": "1"}
    with pytest.raises(FailedStatusError, match="AlgorithmError"):
        train(model_trainer, data, logs=False)


def test_no_telemetry_and_no_notice_in_a_local_session(sagemaker_session, source, data, monkeypatch):
    from sagemaker.core.telemetry import telemetry_logging

    sent, logged = [], []
    monkeypatch.setattr(telemetry_logging, "_send_telemetry_request_sync", lambda *args: sent.append(args))
    monkeypatch.setattr(telemetry_logging, "_telemetry_msg_shown", False)
    handler = logging.Handler()
    handler.emit = logged.append
    telemetry_logging.logger.addHandler(handler)
    previous = telemetry_logging.logger.level
    telemetry_logging.logger.setLevel(logging.INFO)
    try:
        train(trainer(sagemaker_session, source, "quiet", keep_alive=0), data, logs=False)
    finally:
        telemetry_logging.logger.removeHandler(handler)
        telemetry_logging.logger.setLevel(previous)
    for thread in threading.enumerate():
        if thread.name == "sagemaker-telemetry":  # the SDK's sender thread, had one been started
            thread.join()
    assert sent == []
    assert not [r for r in logged if r.msg == telemetry_logging.TELEMETRY_OPT_OUT_MESSAGING]


def test_the_notice_filter_lets_the_notice_through_for_other_sessions():
    from sagemaker.core.telemetry import telemetry_logging

    from sagemaker_plans_local.sdk.telemetry import _NoticeFilter

    record = logging.LogRecord(
        "t", logging.INFO, __file__, 1, telemetry_logging.TELEMETRY_OPT_OUT_MESSAGING, None, None
    )
    assert _NoticeFilter(telemetry_logging).filter(record) is True


def test_inside_activated_an_unmodified_model_trainer_trains_locally(tmp_path, source):
    from sagemaker.core.helper.session_helper import Session as CoreSession

    from sagemaker_plans_local import LocalBackend, activated
    from tests.conftest import START

    with LocalBackend(start_time=START, root=tmp_path / "b") as backend, activated(backend):
        plain = CoreSession()  # the SDK's own class, made inside the activation
        folder = tmp_path / "plain-data"
        folder.mkdir()
        (folder / "b.csv").write_text("3,4\n")
        uri = plain.upload_data(str(folder), key_prefix="train")
        model_trainer = ModelTrainer(
            training_image=IMAGE,
            role=ROLE,
            base_job_name="unmodified",
            source_code=SourceCode(source_dir=str(source), entry_script="train.py"),
            compute=Compute(instance_type="ml.m5.large", instance_count=1),
        )
        job = train(model_trainer, uri, logs=False)  # no session given: the SDK makes its own
        assert job.training_job_status == "Completed"
        assert backend.training_job(job.training_job_name).status == "Completed"
        assert read_model(plain, job.model_artifacts.s3_model_artifacts)["rows"] == ["b.csv"]


@pytest.mark.parametrize("terminal", [True, False])
def test_train_shows_sagemaker_cores_wait_panel_on_a_terminal_only(
    sagemaker_session, source, data, terminal, capsys, monkeypatch
):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: terminal)  # the captured stdout
    job = train(trainer(sagemaker_session, source, f"panel-{terminal}".lower(), keep_alive=0), data)
    assert job.training_job_status == "Completed"
    out = capsys.readouterr().out
    if terminal:  # what TrainingJob.wait draws on AWS: its panel, the spinner's text, the status
        assert "Wait Log Panel" in out and "Waiting for TrainingJob..." in out
        assert "Current status:" in out and "Completed" in out
    else:
        assert "Wait Log Panel" not in out and "Current status" not in out
