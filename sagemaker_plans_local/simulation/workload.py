"""The jobs a what-if simulation submits (docs/what-if.md, "The workload").

A :class:`Workload` comes from a CSV or JSON file of jobs (:func:`load_workload`), from DescribeTrainingJob
answers (an AWS CLI export, or what a durable root holds: :mod:`.history`), or is built in Python. Every
row is checked before anything is simulated: a bad row is a :class:`WorkloadError` naming the row and the
field, with the service model's own wording where the field becomes a request member.
"""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import attrs

from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.protocol.service_model import operation_model
from sagemaker_plans_local.protocol.validation import violations
from sagemaker_plans_local.simulation.history import rows_from_answers
from sagemaker_plans_local.simulation.times import parse_moment

#: Where seconds-only submit times count from when the workload names no moment.
DEFAULT_START = datetime(2026, 1, 1, tzinfo=timezone.utc)
REQUIRED = ("submit_time", "name", "instance_type", "instance_count", "run_seconds")
OPTIONAL = ("keep_alive_seconds", "max_pending_seconds", "after")
COLUMNS = REQUIRED + OPTIONAL
#: The errors one WorkloadError lists at most (the count of the others is given).
MAX_LISTED = 20


class WorkloadError(ValueError):
    """A workload that cannot be simulated: every problem found, each naming its row and field."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        listed = problems[:MAX_LISTED]
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        super().__init__(
            f"{source}: {len(problems)} problem(s), nothing simulated:\n  " + "\n  ".join(listed) + more
        )


@attrs.frozen
class Job:
    """One job: submitted ``submit_seconds`` after the workload's start (or when ``after`` has completed)."""

    name: str
    submit_seconds: float
    instance_type: str
    instance_count: int
    run_seconds: int
    keep_alive_seconds: int | None = None
    max_pending_seconds: int | None = None
    after: int | None = None  #: the index of the job that must complete first (an earlier one)


@attrs.frozen
class Workload:
    """Jobs in the order given (``submit_seconds`` from ``start``); ``source`` says where they came from."""

    jobs: tuple[Job, ...]
    start: datetime = DEFAULT_START
    source: str = "python"

    def submit_time(self, job: Job) -> datetime:
        """When ``job`` is submitted (before waiting for its ``after``)."""
        return self.start + timedelta(seconds=job.submit_seconds)


def load_workload(path: str | Path, start: datetime | None = None) -> Workload:
    """The workload in ``path``: ``.csv`` (the documented header) or ``.json`` (rows or describe answers)."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise WorkloadError(str(path), [f"cannot read the file: {error}"]) from None
    if path.suffix.lower() == ".csv":
        return from_csv(text, str(path), start)
    try:
        document = json.loads(text)
    except ValueError as error:
        raise WorkloadError(str(path), [f"not JSON: {error}"]) from None
    return from_json(document, str(path), start)


def from_csv(text: str, source: str = "workload.csv", start: datetime | None = None) -> Workload:
    """A workload from CSV text whose header names the documented columns (row N is the file's line N+1)."""
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    problems = [f"header: missing column {name!r}" for name in REQUIRED if name not in header]
    problems += [
        f"header: unknown column {name!r} (columns: {', '.join(COLUMNS)})"
        for name in header
        if name not in COLUMNS
    ]
    if problems:
        raise WorkloadError(source, problems)
    rows = [{key.strip(): value for key, value in row.items() if key is not None} for row in reader]
    return from_rows(rows, source, start)


def from_json(document: Any, source: str = "workload.json", start: datetime | None = None) -> Workload:
    """A workload from a JSON list of rows (the CSV's columns as keys) or of DescribeTrainingJob answers."""
    if isinstance(document, dict) and "TrainingJobName" in document:
        document = [document]
    if not isinstance(document, list) or not all(isinstance(item, dict) for item in document):
        raise WorkloadError(
            source, ["a JSON workload is a list of objects (rows, or describe-training-job answers)"]
        )
    if document and all("TrainingJobName" in item for item in document):
        rows, problems = rows_from_answers(document)
        if problems:
            raise WorkloadError(source, problems)
        return from_rows(rows, source, start)
    return from_rows(document, source, start)


def from_rows(
    rows: Iterable[Mapping[str, Any]], source: str = "python", start: datetime | None = None
) -> Workload:
    """A workload from row mappings (the CSV's columns as keys); a :class:`WorkloadError` lists every bad row."""
    rows = list(rows)
    problems: list[str] = []
    parsed = [_Row.parse(number, row, problems) for number, row in enumerate(rows, 1)]
    if not rows:
        problems.append("no jobs")
    moments = [row.moment for row in parsed if row.moment is not None]
    origin = start or (min(moments) if moments else DEFAULT_START)
    names = _job_names(parsed)
    jobs = []
    latest: dict[str, int] = {}  # a group name -> the index of its latest job so far
    for index, row in enumerate(parsed):
        after = None
        if row.after:
            after = latest.get(row.after.casefold())
            if after is None:
                problems.append(f"row {row.number}, field after: {row.after!r} names no earlier job")
        seconds = row.seconds if row.moment is None else (row.moment - origin).total_seconds()
        if seconds < 0:
            problems.append(
                f"row {row.number}, field submit_time: before the workload's start {origin.isoformat()}"
            )
        problems += _name_problems(row.number, names[index])
        jobs.append(
            Job(
                names[index],
                seconds,
                row.instance_type,
                row.count,
                row.run,
                row.keep_alive,
                row.max_pending,
                after,
            )
        )
        latest[row.name.casefold()] = index
    if problems:
        raise WorkloadError(source, sorted(problems, key=_row_number))
    return Workload(tuple(jobs), origin, source)


def _row_number(problem: str) -> int:
    """The row a problem names (``row N, ...``; 0 for the others), to list problems in row order."""
    words = problem.split(",")[0].split()
    return int(words[1]) if len(words) == 2 and words[0] == "row" and words[1].isdigit() else 0


def _job_names(rows: list["_Row"]) -> list[str]:
    """Each row's job name: its name, or ``<name>-<n>`` for the n-th job of a name used more than once."""
    totals: dict[str, int] = {}
    for row in rows:
        totals[row.name.casefold()] = totals.get(row.name.casefold(), 0) + 1
    seen: dict[str, int] = {}
    names = []
    for row in rows:
        key = row.name.casefold()
        seen[key] = seen.get(key, 0) + 1
        names.append(row.name if totals[key] == 1 else f"{row.name}-{seen[key]}")
    return names


def _name_problems(number: int, name: str) -> list[str]:
    shape = operation_model("CreateTrainingJob").input_shape.members["TrainingJobName"]
    return [f"row {number}, field name: {problem}" for problem in violations(shape, name, "trainingJobName")]


@attrs.define
class _Row:
    number: int
    name: str = ""
    moment: datetime | None = None
    seconds: float = 0.0
    instance_type: str = ""
    count: int = 0
    run: int = 0
    keep_alive: int | None = None
    max_pending: int | None = None
    after: str = ""

    @classmethod
    def parse(cls, number: int, row: Mapping[str, Any], problems: list[str]) -> "_Row":
        """The row's fields, each problem appended to ``problems`` as ``row N, field F: ...``."""
        parsed = cls(number)
        found: list[str] = []
        if not isinstance(row, Mapping):
            problems.append(f"row {number}: not an object of the workload's columns")
            return parsed
        found += [
            f"unknown field {key!r} (fields: {', '.join(COLUMNS)})" for key in row if key not in COLUMNS
        ]
        found += [f"field {key}: missing" for key in REQUIRED if _blank(row.get(key))]
        parsed.name = "" if _blank(row.get("name")) else str(row["name"]).strip()
        parsed.after = "" if _blank(row.get("after")) else str(row["after"]).strip()
        for key, reader in _READERS.items():
            if not _blank(row.get(key)):
                try:
                    reader(parsed, row[key])
                except ValueError as error:
                    found.append(f"field {key}: {error}")
        problems += [f"row {number}, {problem}" for problem in found]
        return parsed


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _integer(value: Any, what: str, low: int = 1) -> int:
    """``value`` as a whole number >= ``low`` (``"600"``, ``600`` and ``600.0`` alike)."""
    try:
        number = float(str(value).strip()) if not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number != int(number) or number < low:
        raise ValueError(f"{value!r} is not {what} (a whole number >= {low})")
    return int(number)


def _request_member(shape_path: tuple[str, ...], path: str, value: Any) -> None:
    """A ValueError with the service model's wording if ``value`` breaks the CreateTrainingJob member's rules."""
    shape = operation_model("CreateTrainingJob").input_shape
    for name in shape_path:
        shape = shape.members[name]  # type: ignore[attr-defined]
    found = violations(shape, value, path)
    if found:
        raise ValueError("; ".join(found))


def _submit_time(row: _Row, value: Any) -> None:
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        row.moment = parse_moment(text)
        return
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{value!r} is not a number of seconds >= 0")
    row.seconds = seconds


def _instance_type(row: _Row, value: Any) -> None:
    row.instance_type = str(value).strip()
    _request_member(("ResourceConfig", "InstanceType"), "resourceConfig.instanceType", row.instance_type)


def _count(row: _Row, value: Any) -> None:
    row.count = _integer(value, "an instance count")


def _run(row: _Row, value: Any) -> None:
    row.run = _integer(value, "a run time in seconds")


def _keep_alive(row: _Row, value: Any) -> None:
    seconds = _integer(value, "a keep-alive in seconds", low=0)
    _request_member(
        ("ResourceConfig", "KeepAlivePeriodInSeconds"), "resourceConfig.keepAlivePeriodInSeconds", seconds
    )
    limit = Settings().max_keep_alive_seconds
    if seconds > limit:
        raise ValueError(f"{seconds} exceeds the maximum allowed keep-alive of {limit} seconds")
    row.keep_alive = seconds


def _max_pending(row: _Row, value: Any) -> None:
    seconds = _integer(value, "a pending time in seconds")
    _request_member(
        ("StoppingCondition", "MaxPendingTimeInSeconds"), "stoppingCondition.maxPendingTimeInSeconds", seconds
    )
    row.max_pending = seconds


_READERS = {
    "submit_time": _submit_time,
    "instance_type": _instance_type,
    "instance_count": _count,
    "run_seconds": _run,
    "keep_alive_seconds": _keep_alive,
    "max_pending_seconds": _max_pending,
}


def from_answers(answers: Iterable[dict[str, Any]], source: str = "describe answers") -> Workload:
    """A workload replaying ``answers`` (DescribeTrainingJob answers, timestamps as datetimes or ISO strings)."""
    rows, problems = rows_from_answers(answers)
    if problems:
        raise WorkloadError(source, problems)
    return from_rows(rows, source)


def from_root(root: str | Path, region: str = "us-east-1") -> Workload:
    """The jobs a durable root holds (read through its SageMaker API, by an observer that runs no code)."""
    from sagemaker_plans_local.backend import LocalBackend
    from sagemaker_plans_local.inspection.snapshot import Snapshot

    path = Path(root).expanduser()
    if not path.is_dir():
        raise WorkloadError(str(path), ["no backend root there"])
    with LocalBackend(root=path, region=region, runs_code=False) as backend:
        snapshot = Snapshot.collect(backend.client(), backend.clock.now())
    if not snapshot.jobs:
        raise WorkloadError(str(path), ["the root holds no training jobs"])
    return from_answers(snapshot.jobs, f"the root {path}")
