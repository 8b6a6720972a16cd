"""Workload rows from jobs already run: DescribeTrainingJob answers, as the AWS CLI prints them or a root holds them.

Each answer becomes one row: submitted at its ``CreationTime``, named by ``TrainingJobName``, with its
``ResourceConfig`` instance type and count, ``TrainingTimeInSeconds`` (else ``BillableTimeInSeconds``) as
its run time, its keep-alive and its ``MaxPendingTimeInSeconds``. A job that never trained has no run
time to replay and is an error naming it (docs/what-if.md, "Your own history").
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from sagemaker_plans_local.simulation.times import parse_moment


def rows_from_answers(answers: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The workload rows of describe answers (creation order), and the problems found (``row N, field F``)."""
    rows: list[tuple[datetime, dict[str, Any]]] = []
    problems: list[str] = []
    for number, answer in enumerate(answers, 1):
        found: list[str] = []
        row = _row(answer, found)
        problems += [
            f"row {number} ({answer.get('TrainingJobName', '?')}), field {problem}" for problem in found
        ]
        if not found:
            rows.append(row)
    rows.sort(key=lambda pair: pair[0])
    return [row for _, row in rows], problems


def _row(answer: dict[str, Any], found: list[str]) -> tuple[datetime, dict[str, Any]]:
    resources = answer.get("ResourceConfig") or {}
    if resources.get("InstanceGroups"):
        found.append("ResourceConfig.InstanceGroups: heterogeneous clusters are not simulated")
    created = _moment(answer.get("CreationTime"), "CreationTime", found)
    run = answer.get("TrainingTimeInSeconds") or answer.get("BillableTimeInSeconds")
    if not run:
        status = answer.get("TrainingJobStatus", "?")
        found.append(f"TrainingTimeInSeconds: missing (the job is {status} and never reported a run time)")
    for key in ("InstanceType", "InstanceCount"):
        if key not in resources and not resources.get("InstanceGroups"):
            found.append(f"ResourceConfig.{key}: missing")
    row = {
        "submit_time": created.isoformat(),
        "name": answer.get("TrainingJobName"),
        "instance_type": resources.get("InstanceType"),
        "instance_count": resources.get("InstanceCount"),
        "run_seconds": run,
        "keep_alive_seconds": resources.get("KeepAlivePeriodInSeconds"),
        "max_pending_seconds": (answer.get("StoppingCondition") or {}).get("MaxPendingTimeInSeconds"),
    }
    return created, row


def _moment(value: Any, field: str, found: list[str]) -> datetime:
    """A timestamp as the API gives it (datetime) or the AWS CLI prints it (ISO 8601, or epoch seconds)."""
    try:
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, timezone.utc)
        if isinstance(value, str):
            return parse_moment(value)
        found.append(f"{field}: missing")
    except (ValueError, OverflowError, OSError) as error:
        found.append(f"{field}: {error}")
    return datetime.min.replace(tzinfo=timezone.utc)
