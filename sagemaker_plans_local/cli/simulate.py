"""The ``simulate`` command: a workload under several policies, compared (docs/what-if.md, docs/cli.md).

``sagemaker-plans-local simulate WORKLOAD|--root DIR --policy P [--policy P ...] [--sweep S] [--prices FILE]
[--capacity FILE] [--start TIME] [--json] [--out FILE] [--timeline FILE [--timeline-policy P]]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from sagemaker_plans_local.cli import views
from sagemaker_plans_local.cli.report import FORMATS

if TYPE_CHECKING:  # the simulator (and the SageMaker domain) load when the command runs
    from sagemaker_plans_local.simulation.simulator import Simulation

#: The width of the table written to a file or a pipe.
PIPE_WIDTH = 400
COLUMNS: list[views.Column] = [
    ("policy", "policy", views.text),
    ("total", "total", views.text),
    ("plan fees", "plan_fees", views.text),
    ("training", "training", views.text),
    ("warm pools", "warm_pool", views.text),
    ("per job", "cost_per_job", views.text),
    ("jobs", "jobs", views.text),
    ("completed", "completed", views.text),
    ("failed", "failed", views.text),
    ("warm starts", "warm_starts", views.text),
    ("wait p50", "*", lambda record: views.seconds(record["wait_seconds"]["p50"])),
    ("wait p95", "*", lambda record: views.seconds(record["wait_seconds"]["p95"])),
    ("wait max", "*", lambda record: views.seconds(record["wait_seconds"]["max"])),
    ("plan use", "plan_utilization", lambda value: "-" if value is None else f"{value:.1%}"),
    ("last end", "makespan_seconds", views.seconds),
]


def register(commands: Any) -> None:
    """Add ``simulate`` to the ``sagemaker-plans-local`` subcommands."""
    parser = commands.add_parser("simulate", help="what if: a workload under several policies, compared")
    parser.add_argument(
        "workload", nargs="?", help="a CSV or JSON file of jobs, or of describe-training-job answers"
    )
    parser.add_argument("--root", help="instead of a file: the jobs this durable backend root holds")
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        help="on-demand | as-is | keep-alive=SECONDS | plan=TYPE:COUNT:HOURS[+overflow], joined with +; repeatable",
    )
    parser.add_argument(
        "--sweep", help="repeat each policy over keep-alive=FROM..TO[/STEP], plan-count=.. or plan-hours=.."
    )
    parser.add_argument("--prices", metavar="FILE", help="a price list (JSON, docs/cost-report.md)")
    parser.add_argument(
        "--capacity", metavar="FILE", help="the capacity plans are bought from (JSON, docs/what-if.md)"
    )
    parser.add_argument(
        "--start", metavar="TIME", help="the workload's start, for seconds-only submit times (ISO 8601)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    parser.add_argument("--out", metavar="FILE", help="the comparison chart: FILE.png, FILE.svg or FILE.html")
    parser.add_argument(
        "--timeline", metavar="FILE", help="also the timeline picture of one policy (--timeline-policy)"
    )
    parser.add_argument(
        "--timeline-policy", metavar="POLICY", help="the policy --timeline draws (default: the first)"
    )
    parser.add_argument("--workers", type=int, help="processes for the policies (default: one per core)")
    parser.set_defaults(action=run, parser=parser)


def run(options: argparse.Namespace) -> int:
    """The command: check the options, simulate, print the table (or JSON), draw what was asked."""
    from sagemaker_plans_local.inspection.prices import PriceFileError
    from sagemaker_plans_local.simulation.capacity import CapacityFileError
    from sagemaker_plans_local.simulation.runner import SimulationError
    from sagemaker_plans_local.simulation.simulator import simulate
    from sagemaker_plans_local.simulation.workload import WorkloadError

    parser: argparse.ArgumentParser = options.parser
    try:
        policies = _policies(options)
    except ValueError as error:  # PolicyError too
        parser.error(str(error))
    bars = _Bars()
    try:
        workload = _workload(options)
        simulation = simulate(
            workload,
            policies,
            sweep_over=options.sweep,
            prices=options.prices,
            capacity=options.capacity,
            workers=options.workers,
            progress=bars if sys.stderr.isatty() and not options.json else None,
        )
        drawn = _draw(simulation, options)
    except (WorkloadError, SimulationError, PriceFileError, CapacityFileError, ImportError, OSError) as error:
        print(f"sagemaker-plans-local: {error}", file=sys.stderr)
        return 1
    finally:
        bars.stop()
    if options.json:
        print(json.dumps(simulation.to_json(), indent=2))
    else:
        _table(simulation, drawn)
    return 0


def _policies(options: argparse.Namespace) -> list[Any]:
    """The policies, checked before anything runs (a bad one is a usage error)."""
    from sagemaker_plans_local.simulation.policies import parse_policy, sweep

    if (options.workload is None) == (options.root is None):
        raise ValueError("give a WORKLOAD file or --root DIR (one of them)")
    for name in ("out", "timeline"):
        value = getattr(options, name)
        if value is not None and Path(value).suffix.lower() not in FORMATS:
            raise ValueError(f"--{name} must end in {', '.join(FORMATS)}, not {value!r}")
    if options.timeline_policy and not options.timeline:
        raise ValueError("--timeline-policy goes with --timeline FILE")
    chosen = [parse_policy(text) for text in options.policy or ["on-demand"]]
    if options.sweep:
        sweep(options.sweep, chosen)  # checked here; simulate() expands it
    return chosen


def _workload(options: argparse.Namespace) -> Any:
    from sagemaker_plans_local.simulation.times import parse_moment
    from sagemaker_plans_local.simulation.workload import WorkloadError, from_root, load_workload

    if options.root is not None:
        return from_root(options.root)
    start = None
    if options.start:
        try:
            start = parse_moment(options.start)
        except ValueError as error:
            raise WorkloadError("--start", [str(error)]) from None
    return load_workload(options.workload, start)


def _draw(simulation: "Simulation", options: argparse.Namespace) -> list[str]:
    from sagemaker_plans_local.inspection.timeline import save

    drawn = []
    if options.out:
        drawn.append(str(save(simulation.figure(), options.out)))
    if options.timeline:
        policy = options.timeline_policy or simulation.results[0].policy
        drawn.append(str(save(simulation.timeline(policy), options.timeline)))
    return drawn


def _table(simulation: "Simulation", drawn: list[str]) -> None:
    console = Console(width=None if sys.stdout.isatty() else PIPE_WIDTH, highlight=False)
    document = simulation.to_json()
    workload = document["workload"]
    start = views.when(workload["start"])
    title = (
        f"what if: {workload['jobs']} jobs from {workload['source']} (from {start}), {document['currency']}"
    )
    views.table(console, title, COLUMNS, document["policies"])
    cheapest = min(simulation.results, key=lambda result: result.total)
    console.print(f"cheapest: {cheapest.policy} ({cheapest.total} {cheapest.currency})")
    for result in simulation.results:
        if result.unpriced:
            console.print(
                f"{result.policy}: no price for {', '.join(result.unpriced)}; those lines are not in the total"
            )
    first, _, rest = simulation.prices.source.partition(". ")
    console.print(f"prices: {first}" + (" (the rest: docs/cost-report.md)" if rest else ""))
    for path in drawn:
        console.print(f"wrote {path}")


class _Bars:
    """A progress bar per policy on stderr (only on a terminal)."""

    def __init__(self) -> None:
        self.bars: Progress | None = None
        self.tasks: dict[str, Any] = {}

    def __call__(self, policy: str, done: int, total: int) -> None:
        if self.bars is None:
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total} jobs"),
            )
            self.bars = Progress(*columns, TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.bars.start()
        if policy not in self.tasks:
            self.tasks[policy] = self.bars.add_task(policy, total=total)
        self.bars.update(self.tasks[policy], completed=done)

    def stop(self) -> None:
        if self.bars is not None:
            self.bars.stop()
            self.bars = None
