"""The inspection commands: ``offerings``, ``plans``, ``jobs``, ``pools``, ``clock``, ``cost``, ``timeline``
(docs/cli.md).

Each reads (or, for ``clock advance``, moves) one target: ``--root DIR`` (a durable
``LocalBackend`` on it), ``--endpoint-url URL`` (a running server), else the server
``$SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL`` or ``$AWS_ENDPOINT_URL`` names, else the SDK layer's
default durable backend. Tables on stdout, or with ``--json`` one JSON document; messages on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any, Callable

from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from sagemaker_plans_local.cli import report, views
from sagemaker_plans_local.cli.durations import parse_duration
from sagemaker_plans_local.cli.target import RootTarget, ServerTarget, TargetError, open_target
from sagemaker_plans_local.inspection.snapshot import Snapshot

Command = Callable[[RootTarget | ServerTarget, argparse.Namespace, Console], Any]
#: The width of tables written to a file or a pipe (a terminal's own width otherwise).
PIPE_WIDTH = 400


def register(commands: Any) -> None:
    """Add the inspection commands to the ``sagemaker-plans-local`` subcommands."""
    target = _target_options()
    offerings = commands.add_parser("offerings", parents=[target], help="search training plan offerings")
    _offering_options(offerings)
    _set(offerings, _offerings)
    _set(commands.add_parser("plans", parents=[target], help="training plans and their blocks"), _plans)
    _set(commands.add_parser("jobs", parents=[target], help="training jobs"), _jobs)
    pools = commands.add_parser("pools", parents=[target], help="warm pools: keep-alive left, chains, caches")
    _set(pools, _pools)
    clock = commands.add_parser("clock", parents=[target], help="show or advance the clock")
    clock.add_argument("clock_command", choices=("show", "advance"))
    clock.add_argument("duration", nargs="?", help="how far to advance: 900, 90s, 30m, 2h, 3d")
    _set(clock, _clock)
    cost = commands.add_parser("cost", parents=[target], help="what AWS would bill for everything held")
    report.cost_options(cost)
    _set(cost, report.cost)
    timeline = commands.add_parser(
        "timeline", parents=[target], help="draw plans, jobs and pools on one time axis"
    )
    report.timeline_options(timeline)
    _set(timeline, report.timeline)


def _target_options() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    where = options.add_mutually_exclusive_group()
    where.add_argument("--root", help="a durable backend root (default: the default backend's)")
    where.add_argument(
        "--endpoint-url",
        help="a running server (default: $SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL, then $AWS_ENDPOINT_URL)",
    )
    options.add_argument("--region", default="us-east-1", help="the region to read (default us-east-1)")
    options.add_argument("--json", action="store_true", help="one JSON document instead of tables")
    return options


def _offering_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--instance-type", help="e.g. ml.p5.48xlarge")
    parser.add_argument("--instance-count", type=int, help="instances wanted")
    parser.add_argument("--duration", help="hours (48) or a duration (90m, 2h, 3d): whole hours")
    parser.add_argument("--start-after", help="ISO 8601: blocks starting after this")
    parser.add_argument("--end-before", help="ISO 8601: blocks ending before this")
    parser.add_argument(
        "--target-resources",
        nargs="+",
        default=["training-job"],
        metavar="RESOURCE",
        help="training-job (default), hyperpod-cluster, ...",
    )
    parser.add_argument("--ultraserver-type", help="an UltraServer type (with --ultraserver-count)")
    parser.add_argument("--ultraserver-count", type=int, help="UltraServers wanted")


def _set(parser: argparse.ArgumentParser, command: Command) -> None:
    parser.set_defaults(action=lambda options: _main(command, options), parser=parser)


def _main(command: Command, options: argparse.Namespace) -> int:
    """Open the target, run ``command`` on it, print its answer; 1 with a message if anything refused."""
    console = Console(width=None if sys.stdout.isatty() else PIPE_WIDTH, highlight=False)
    arguments = _arguments(options)
    try:
        target = open_target(options.root, options.endpoint_url, options.region)
    except TargetError as error:
        return _fail(str(error))
    try:
        document = command(target, arguments, console)
    except TargetError as error:
        return _fail(str(error))
    except ClientError as error:
        return _fail(
            f"{target.description} refused it: {error.response.get('Error', {}).get('Message', error)}"
        )
    except BotoCoreError as error:
        return _fail(f"cannot read {target.description}: {error}")
    finally:
        target.close()
    if options.json:
        print(json.dumps(document, indent=2))
    return 0


def _fail(message: str) -> int:
    print(f"sagemaker-plans-local: {message}", file=sys.stderr)
    return 1


def _arguments(options: argparse.Namespace) -> argparse.Namespace:
    """``options`` checked, durations and times parsed (a bad one exits 2 with the parser's message)."""
    parser: argparse.ArgumentParser = options.parser
    try:
        report.check_out(options)
        if getattr(options, "clock_command", None) == "advance":
            if options.duration is None:
                raise ValueError("clock advance takes a DURATION (900, 90s, 30m, 2h, 3d)")
            options.seconds = parse_duration(options.duration)
        if hasattr(options, "duration") and getattr(options, "clock_command", None) is None:
            _check_offering_options(options)
            options.hours = parse_hours(options.duration)
        for name in ("start_after", "end_before", "since", "until"):
            if getattr(options, name, None) is not None:
                setattr(options, name, _time(getattr(options, name)))
    except ValueError as error:
        parser.error(str(error))
    return options


def _check_offering_options(options: argparse.Namespace) -> None:
    """``offerings`` needs what a search needs: a duration and instances (or UltraServers), named as flags."""
    instances = options.instance_type is not None and options.instance_count is not None
    ultraservers = options.ultraserver_type is not None and options.ultraserver_count is not None
    missing = (
        []
        if instances or ultraservers
        else ["--instance-type and --instance-count (or --ultraserver-type and --ultraserver-count)"]
    )
    if options.duration is None:
        missing.append("--duration")
    if missing:
        raise ValueError(f"offerings needs {' and '.join(missing)}")


def parse_hours(text: str) -> int:
    """``--duration``: a bare number is hours, else a duration; AWS takes whole hours."""
    seconds = float(text) * 3600 if text.strip().replace(".", "", 1).isdigit() else parse_duration(text)
    if seconds <= 0 or seconds % 3600:
        raise ValueError(f"--duration must be a positive number of whole hours, not {text!r}")
    return int(seconds // 3600)


def _time(text: str) -> datetime:
    from sagemaker_plans_local.server.accounts import parse_time

    return parse_time(text)


# -- the commands --------------------------------------------------------------------------------


def _offerings(target: RootTarget | ServerTarget, options: argparse.Namespace, console: Console) -> Any:
    request: dict[str, Any] = {"TargetResources": options.target_resources}
    for key, value in (
        ("InstanceType", options.instance_type),
        ("InstanceCount", options.instance_count),
        ("DurationHours", options.hours),
        ("StartTimeAfter", options.start_after),
        ("EndTimeBefore", options.end_before),
        ("UltraServerType", options.ultraserver_type),
        ("UltraServerCount", options.ultraserver_count),
    ):
        if value is not None:
            request[key] = value
    answer = target.sagemaker().search_training_plan_offerings(**request)
    records = [views.offering_record(offering) for offering in answer["TrainingPlanOfferings"]]
    if not options.json:
        rows = [
            {**block, "id": offering["id"], "fee": views.fee(offering)}
            for offering in records
            for block in offering["blocks"]
        ]
        views.table(console, views.count(records, "training plan offering"), OFFERING_COLUMNS, rows)
    return {"offerings": records}


def _plans(target: RootTarget | ServerTarget, options: argparse.Namespace, console: Console) -> Any:
    now = target.now()
    records = [views.plan_record(plan) for plan in Snapshot.collect(target.sagemaker(), now).plans]
    if not options.json:
        views.table(
            console,
            f"{views.count(records, 'training plan')} at {views.when(views.iso(now))}",
            PLAN_COLUMNS,
            records,
        )
        blocks = [{**block, "plan": plan["name"]} for plan in records for block in plan["blocks"]]
        if blocks:
            views.table(console, "their reserved capacity (blocks)", BLOCK_COLUMNS, blocks)
    return {"now": views.iso(now), "plans": records}


def _jobs(target: RootTarget | ServerTarget, options: argparse.Namespace, console: Console) -> Any:
    now = target.now()
    records = [views.job_record(job) for job in Snapshot.collect(target.sagemaker(), now).jobs]
    if not options.json:
        views.table(
            console,
            f"{views.count(records, 'training job')} at {views.when(views.iso(now))}",
            JOB_COLUMNS,
            records,
        )
    return {"now": views.iso(now), "jobs": records}


def _pools(target: RootTarget | ServerTarget, options: argparse.Namespace, console: Console) -> Any:
    now = target.now()
    snapshot = Snapshot.collect(target.sagemaker(), now)
    records = [
        views.pool_record(chain, now, target.cache_bytes(chain[-1]["TrainingJobName"]))
        for chain in snapshot.pool_chains()
    ]
    if not options.json:
        columns = (
            POOL_COLUMNS
            if target.cache_sizes_known
            else POOL_COLUMNS[:-1] + [("cache", "*", lambda _: "n/a")]
        )
        views.table(
            console,
            f"{views.count(records, 'warm-pool chain')} at {views.when(views.iso(now))}",
            columns,
            records,
        )
    return {"now": views.iso(now), "cache_sizes_known": target.cache_sizes_known, "pools": records}


def _clock(target: RootTarget | ServerTarget, options: argparse.Namespace, console: Console) -> Any:
    if options.clock_command == "advance":
        _advance(target, options.seconds)
    document = {"now": views.iso(target.now()), "manual": target.manual()}
    if not options.json:
        print(document["now"])
    return document


def _advance(target: RootTarget | ServerTarget, seconds: float) -> None:
    """Advance the clock; on an interactive terminal with a progress bar on stderr."""
    if not sys.stderr.isatty() or not seconds:  # a TTY itself: not $FORCE_COLOR, which CI may set
        target.advance(seconds)
        return
    progress_console = Console(stderr=True, force_terminal=True)
    columns = (TextColumn("advancing {task.description}"), BarColumn(), TextColumn("{task.fields[done]}"))
    with Progress(*columns, TimeElapsedColumn(), console=progress_console, transient=True) as progress:
        task = progress.add_task(views.seconds(seconds), total=seconds, done="")
        for done in target.advance_steps(seconds):
            progress.update(task, completed=done, done=views.seconds(done))


OFFERING_COLUMNS: list[views.Column] = [
    ("offering", "id", views.text),
    ("instance type", "instance_type", views.text),
    ("count", "instance_count", views.text),
    ("AZ", "availability_zone", views.text),
    ("start", "start_time", views.when),
    ("end", "end_time", views.when),
    ("duration", "*", views.hours),
    ("upfront fee", "fee", views.text),
]
PLAN_COLUMNS: list[views.Column] = [
    ("plan", "name", views.text),
    ("status", "status", views.text),
    ("start", "start_time", views.when),
    ("end", "end_time", views.when),
    ("duration", "*", views.hours),
    ("instances", "total_instance_count", views.text),
    ("in use", "in_use_instance_count", views.text),
    ("upfront fee", "*", views.fee),
    ("for", "target_resources", views.text),
]
BLOCK_COLUMNS: list[views.Column] = [
    ("plan", "plan", views.text),
    ("block", "arn", lambda arn: views.text(arn).rpartition("/")[2]),
    ("status", "status", views.text),
    ("instance type", "instance_type", views.text),
    ("count", "instance_count", views.text),
    ("AZ", "availability_zone", views.text),
    ("start", "start_time", views.when),
    ("end", "end_time", views.when),
]
JOB_COLUMNS: list[views.Column] = [
    ("job", "name", views.text),
    ("status", "status", views.text),
    ("secondary", "secondary_status", views.text),
    ("instance type", "instance_type", views.text),
    ("count", "instance_count", views.text),
    ("plan", "training_plan_arn", lambda arn: views.text(arn).rpartition("/")[2]),
    ("created", "creation_time", views.when),
    ("started", "training_start_time", views.when),
    ("ended", "training_end_time", views.when),
    ("billable", "billable_seconds", views.text),
]
POOL_COLUMNS: list[views.Column] = [
    ("pool (last job)", "job", views.text),
    ("status", "status", views.text),
    ("instance type", "instance_type", views.text),
    ("count", "instance_count", views.text),
    ("keep-alive left", "remaining_seconds", views.seconds),
    ("expires", "expires_at", views.when),
    ("chain", "chain_length", views.text),
    ("retained billable s", "retained_billable_seconds", views.text),
    ("cache", "cache_bytes", views.size),
]
