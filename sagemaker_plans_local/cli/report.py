"""The ``cost`` and ``timeline`` commands: the cost report (docs/cost-report.md) and the timeline picture
of a target's snapshot (``inspection/cost.py``, ``inspection/timeline.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from sagemaker_plans_local.cli import views
from sagemaker_plans_local.cli.target import RootTarget, ServerTarget, TargetError
from sagemaker_plans_local.inspection.cost import NO_PRICE, ROW_HEADER, cost_report
from sagemaker_plans_local.inspection.prices import PriceFileError, TrainingPrices
from sagemaker_plans_local.inspection.snapshot import Snapshot

#: The picture formats ``timeline --out`` writes, by the file's suffix.
FORMATS = (".png", ".svg", ".html")


def cost_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="a price list (JSON, docs/cost-report.md) instead of $SAGEMAKER_PLANS_LOCAL_PRICES or the shipped one",
    )


def timeline_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", required=True, metavar="FILE", help="the picture: FILE.png, FILE.svg or FILE.html"
    )
    parser.add_argument("--title", help="the picture's title")
    parser.add_argument("--since", metavar="TIME", help="zoom: the time axis starts here (ISO 8601)")
    parser.add_argument("--until", metavar="TIME", help="zoom: the time axis ends here (ISO 8601)")


def check_out(options: argparse.Namespace) -> None:
    """``timeline --out``: a ValueError unless its suffix is a format written."""
    if getattr(options, "out", None) is not None and Path(options.out).suffix.lower() not in FORMATS:
        raise ValueError(f"--out must end in {', '.join(FORMATS)}, not {options.out!r}")


def cost(target: RootTarget | ServerTarget, options: argparse.Namespace, console: Console) -> Any:
    """The cost report of everything the target holds; ``--json``: ``CostReport.to_json()``."""
    try:
        prices = (
            TrainingPrices.from_file(options.prices) if options.prices else TrainingPrices.from_environment()
        )
    except PriceFileError as error:
        raise TargetError(str(error)) from None
    report = cost_report(Snapshot.collect(target.sagemaker(), target.now()), prices)
    if not options.json:
        rows = [dict(zip(ROW_HEADER, row)) for row in report.rows()]
        columns: list[views.Column] = [(header, header, views.text) for header in ROW_HEADER]
        views.table(console, f"what AWS would bill ({report.currency})", columns, rows)
        totals = [
            {"instance type": kind, "amount": str(amount)}
            for kind, amount in report.by_instance_type().items()
        ]
        views.table(
            console, "per instance type", [(h, h, views.text) for h in ("instance type", "amount")], totals
        )
        console.print(f"total: {report.total} {report.currency}")
        if report.unpriced:
            console.print(f"{len(report.unpriced)} lines have {NO_PRICE} and are not in the total")
        savings = report.savings
        console.print(
            f"warm pools saved {savings.seconds} s of provisioning ({savings.amount} {report.currency}); "
            f"warm starts: {len(savings.warm_starts)}"
        )
        first, _, rest = report.prices_source.partition(". ")
        console.print(f"prices: {first}" + (" (the rest: docs/cost-report.md)" if rest else ""))
    return report.to_json()


def timeline(target: RootTarget | ServerTarget, options: argparse.Namespace, console: Console) -> Any:
    """Draw the target's timeline into ``--out``."""
    from sagemaker_plans_local.inspection import timeline as pictures

    now = target.now()
    snapshot = Snapshot.collect(target.sagemaker(), now)
    try:
        figure = pictures.timeline(snapshot, options.title, start=options.since, end=options.until)
        path = pictures.save(figure, options.out)
    except (ImportError, OSError, ValueError) as error:
        raise TargetError(str(error)) from None
    document = {
        "now": views.iso(now),
        "out": str(path),
        "jobs": len(snapshot.jobs),
        "plans": len(snapshot.plans),
    }
    if not options.json:
        print(f"wrote {path} ({len(snapshot.jobs)} jobs, {len(snapshot.plans)} plans, at {document['now']})")
    return document
