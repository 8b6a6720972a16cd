"""Reading workloads: the CSV contract, JSON rows, describe-training-job answers; bad rows named, nothing partial."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from sagemaker_plans_local.simulation.workload import (
    DEFAULT_START,
    WorkloadError,
    from_answers,
    from_csv,
    from_json,
    load_workload,
)

HEADER = (
    "submit_time,name,instance_type,instance_count,run_seconds,keep_alive_seconds,max_pending_seconds,after\n"
)


def test_the_csv_contract_with_seconds_groups_and_dependencies():
    workload = from_csv(
        HEADER
        + "0,prep,ml.g5.xlarge,1,600,,,\n"
        + "0,train,ml.p5.48xlarge,2,7200,600,3600,prep\n"
        + "86400,prep,ml.g5.xlarge,1,600.0,,,\n"
        + "86400,train,ml.p5.48xlarge,2,7200,,,prep\n"
    )
    assert workload.start == DEFAULT_START
    assert [job.name for job in workload.jobs] == ["prep-1", "train-1", "prep-2", "train-2"]
    assert [job.after for job in workload.jobs] == [None, 0, None, 2]  # the latest earlier job of that name
    train = workload.jobs[1]
    assert (train.instance_count, train.run_seconds, train.keep_alive_seconds, train.max_pending_seconds) == (
        2,
        7200,
        600,
        3600,
    )
    assert workload.submit_time(workload.jobs[3]) == DEFAULT_START + timedelta(days=1)


def test_iso_times_start_the_workload_at_the_earliest():
    workload = from_csv(
        "submit_time,name,instance_type,instance_count,run_seconds\n"
        "2026-03-02T10:00:00+01:00,b,ml.g5.xlarge,1,60\n"
        "2026-03-02T08:30:00Z,a,ml.g5.xlarge,1,60\n"
    )
    assert workload.start == datetime(2026, 3, 2, 8, 30, tzinfo=timezone.utc)
    assert [job.submit_seconds for job in workload.jobs] == [1800, 0]


def test_every_bad_row_is_named_with_its_field_and_nothing_is_returned():
    with pytest.raises(WorkloadError) as raised:
        from_csv(
            HEADER
            + "0,ok,ml.g5.xlarge,1,600,,,\n"
            + "-5,bad-time,ml.g5.xlarge,1,600,,,\n"
            + "0,bad-type,ml.nope,1,600,,,\n"
            + "0,bad-count,ml.g5.xlarge,zero,600,,,\n"
            + "0,bad-keep,ml.g5.xlarge,1,600,7200,,\n"
            + "0,bad-pending,ml.g5.xlarge,1,600,,60,\n"
            + "0,bad-after,ml.g5.xlarge,1,600,,,later\n"
            + "0,bad_name!,ml.g5.xlarge,1,600,,,\n"
            + "2026-01-01T00:00:00,no-zone,ml.g5.xlarge,1,600,,,\n"
            + "0,later,ml.g5.xlarge,1,,,,\n"
        )
    problems = raised.value.problems
    assert problems[0] == "row 2, field submit_time: '-5' is not a number of seconds >= 0"
    assert problems[1].startswith(
        "row 3, field instance_type: Value 'ml.nope' at 'resourceConfig.instanceType'"
    )
    assert "Member must satisfy enum value set" in problems[1]
    assert problems[2] == "row 4, field instance_count: 'zero' is not an instance count (a whole number >= 1)"
    assert (
        problems[3]
        == "row 5, field keep_alive_seconds: 7200 exceeds the maximum allowed keep-alive of 3600 seconds"
    )
    assert problems[4].startswith(
        "row 6, field max_pending_seconds: Value '60' at 'stoppingCondition.maxPendingTimeInSeconds'"
    )
    assert problems[5] == "row 7, field after: 'later' names no earlier job"
    assert problems[6].startswith(
        "row 8, field name: Value 'bad_name!' at 'trainingJobName' failed to satisfy"
    )
    assert (
        problems[7]
        == "row 9, field submit_time: '2026-01-01T00:00:00' has no zone (add Z or an offset such as +00:00)"
    )
    assert problems[8] == "row 10, field run_seconds: missing"
    assert len(problems) == 9 and "nothing simulated" in str(raised.value)


def test_a_header_without_the_contract_is_refused():
    with pytest.raises(WorkloadError, match="missing column 'run_seconds'.*\n.*unknown column 'gpus'"):
        from_csv("submit_time,name,instance_type,instance_count,gpus\n0,a,ml.g5.xlarge,1,8\n")


def test_json_rows_and_a_file(tmp_path):
    rows = [
        {
            "submit_time": 0,
            "name": "a",
            "instance_type": "ml.g5.xlarge",
            "instance_count": 1,
            "run_seconds": 60,
        }
    ]
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(rows))
    assert load_workload(path).jobs == from_json(rows).jobs
    with pytest.raises(WorkloadError, match="row 1, unknown field 'gpu'"):
        from_json([{**rows[0], "gpu": 1}])
    path.write_text("{not json")
    with pytest.raises(WorkloadError, match="not JSON"):
        load_workload(path)


def aws_cli_answer(name: str, created: str, **extra) -> dict:
    """A describe-training-job answer as the AWS CLI prints it (ISO 8601 timestamps)."""
    return {
        "TrainingJobName": name,
        "TrainingJobArn": f"arn:aws:sagemaker:us-east-1:123456789012:training-job/{name}",
        "TrainingJobStatus": "Completed",
        "CreationTime": created,
        "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 2, "VolumeSizeInGB": 50},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "TrainingTimeInSeconds": 1234,
        "BillableTimeInSeconds": 1234,
        **extra,
    }


def test_an_aws_cli_export_of_describe_answers():
    later = aws_cli_answer("b", "2026-02-01T10:10:00.500000+00:00")
    later["ResourceConfig"]["KeepAlivePeriodInSeconds"] = 900
    workload = from_json([later, aws_cli_answer("a", "2026-02-01T10:00:00+00:00")])
    assert workload.start == datetime(2026, 2, 1, 10, tzinfo=timezone.utc)
    assert [(job.name, job.submit_seconds, job.keep_alive_seconds) for job in workload.jobs] == [
        ("a", 0, None),
        ("b", 600.5, 900),
    ]
    assert workload.jobs[0].instance_count == 2 and workload.jobs[0].run_seconds == 1234


def test_a_describe_answer_without_a_run_time_is_named():
    never = aws_cli_answer("never", "2026-02-01T10:00:00Z", TrainingJobStatus="Stopped")
    del never["TrainingTimeInSeconds"], never["BillableTimeInSeconds"]
    with pytest.raises(
        WorkloadError, match=r"row 1 \(never\), field TrainingTimeInSeconds: missing \(the job is Stopped"
    ):
        from_answers([never])
