"""The comparison chart of a simulation: total cost against p95 queue wait, and each policy's cost split.

Left: one point per policy (a sweep's points joined in sweep order, a curve). Right: one bar per policy,
split into plan fees, billable training and warm-pool retained time. Saved like the timeline
(``inspection.timeline.save``: ``.png``, ``.svg``, ``.html``); shown inline in Jupyter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from sagemaker_plans_local.inspection.timeline import INSTALL

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from sagemaker_plans_local.simulation.answers import PolicyResult

#: The cost split's parts: (PolicyResult attribute, legend, colour).
PARTS = (
    ("plan_fees", "plan fees", "#4c72b0"),
    ("training", "training", "#dd8452"),
    ("warm_pool", "warm pools", "#55a868"),
)
WIDTH = 13.0  # inches
ROW = 0.35  # inches per policy in the split


def comparison(
    results: Sequence["PolicyResult"], curves: Sequence[Sequence[int]] = (), title: str = ""
) -> "Figure":
    """The chart of ``results`` (``curves``: the indexes of each sweep's results, in order); needs matplotlib
    (the ``timeline`` extra)."""
    try:
        from sagemaker_plans_local.inspection.timeline_draw import TimelineFigure
    except ImportError as error:
        raise ImportError(f"the comparison chart needs matplotlib: {INSTALL}") from error

    height = max(4.5, 1.6 + ROW * len(results))
    figure = TimelineFigure(figsize=(WIDTH, height), layout="constrained")
    cost_ax, split_ax = figure.subplots(1, 2, width_ratios=(3, 2))
    currency = results[0].currency if results else "USD"
    waits = [result.wait()["p95"] / 60 for result in results]
    totals = [float(result.total) for result in results]
    curved = {index for curve in curves for index in curve}
    for curve in curves:
        cost_ax.plot([waits[i] for i in curve], [totals[i] for i in curve], "-", color="#8172b3", alpha=0.6)
    for index, result in enumerate(results):
        marker = "o" if index in curved else "D"
        cost_ax.plot(waits[index], totals[index], marker, color="#8172b3" if index in curved else "#c44e52")
        cost_ax.annotate(
            result.policy,
            (waits[index], totals[index]),
            fontsize=7,
            xytext=(4, 4),
            textcoords="offset points",
        )
    cost_ax.set_xlim(left=0)
    cost_ax.set_xlabel("p95 queue wait (minutes)")
    cost_ax.set_ylabel(f"total cost ({currency})")
    cost_ax.set_title(f"{title}cost against queue wait", fontsize=10, loc="left")
    cost_ax.grid(alpha=0.3)
    _split(split_ax, results, currency)
    return figure


def _split(ax: "Axes", results: Sequence["PolicyResult"], currency: str) -> None:
    rows = range(len(results))
    left = [0.0] * len(results)
    for attribute, legend, colour in PARTS:
        values = [float(getattr(result, attribute)) for result in results]
        ax.barh(list(rows), values, left=left, color=colour, label=legend)
        left = [base + value for base, value in zip(left, values)]
    ax.set_yticks(list(rows), [result.policy for result in results], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"cost ({currency})")
    ax.set_title("cost split", fontsize=10, loc="left")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
