"""Drawing a :class:`~sagemaker_plans_local.inspection.timeline_model.Picture` on matplotlib axes.

Imported only by :mod:`~sagemaker_plans_local.inspection.timeline` when a picture
is asked for (matplotlib is an optional extra). Every artist carries a gid
(``block:<plan>:<az>:<i>``, ``job:<name>:<phase>:<i>``, ``end:<name>``,
``pool:<job>``, ``keepalive:<job>``, ``expiry:<job>``, ``chain:<a>-><b>``,
``now``) and a label saying what it is, so tests and SVG readers find them.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

from matplotlib import dates
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from sagemaker_plans_local.inspection.timeline_model import PHASES, Block, Chain, JobRow, Picture

HEIGHT = 0.6  # of a bar, in rows
#: A zoom: the time axis from its first to its second moment.
Window = tuple[datetime, datetime]
COLOURS = {
    "block": "#d6e6f5",
    "pending": "#c8c8c8",
    "starting": "#f2c14e",
    "training": "#3f9b5a",
    "interrupted": "#d1495b",
    "resumed": "#8e6cc7",
    "pool": "#7cc3e8",
}
HATCHES = {"interrupted": "//", "pool": ".."}
OUTCOMES = {"Completed": ("o", "#1e5e33"), "Failed": ("X", "#a4161a"), "Stopped": ("s", "#555555")}
TEXT_SHARE = 0.045  # a bar gets its text inside when at least this share of the axis wide
MARK_SHARE = 0.004  # a job's phase narrower than this share of the axis also gets a mark, to stay visible


class TimelineFigure(Figure):
    """A figure that shows itself inline in Jupyter (IPython's ``_repr_png_``), pyplot or not."""

    def _repr_png_(self) -> bytes:
        out = io.BytesIO()
        self.savefig(out, format="png", dpi=90)
        return out.getvalue()


def draw(ax: Axes, picture: Picture, title: str | None = None, window: Window | None = None) -> None:
    """Draw ``picture`` on ``ax``: block rows, then job rows (in creation order), on one UTC time axis.

    ``window`` (start, end) zooms the axis to that time (what lies outside is cut at its edges).
    """
    low, high = _limits(picture) if window is None else (float(dates.date2num(w)) for w in window)
    span = high - low
    row = 0
    labels: list[str] = []
    for plan, zone, blocks in picture.blocks:
        for block in blocks:
            _block(ax, row, block, span)
        labels.append(f"plan {plan}\n{zone}")
        row += 1
    rows = {}
    for job in picture.jobs:
        rows[job.name] = row
        _job(ax, row, job, span)
        labels.append(_job_title(job))
        row += 1
    for chain in picture.chains:
        _arrow(ax, rows[chain.source], rows[chain.target], chain)
    _now(ax, picture.now, low, high)
    _axes(ax, labels, low, high, title)
    if picture.hidden:
        note = f"{picture.hidden} earlier job{'s' if picture.hidden > 1 else ''} not drawn"
        ax.set_title(note, loc="right", fontsize=9, gid="hidden")


def _now(ax: Axes, now: datetime, low: float, high: float) -> None:
    x = float(dates.date2num(now))
    if not low <= x <= high:  # zoomed away from now
        return
    line = ax.axvline(x, color="#c0392b", linewidth=1.5, zorder=5, gid="now")
    line.set_label(f"now {now:%Y-%m-%d %H:%M:%S} UTC")
    right = (x - low) / (high - low) > 0.5  # the text on the side with room
    ax.annotate(
        "now",
        (x, 1),
        xycoords=("data", "axes fraction"),
        xytext=(-4 if right else 4, -4),
        textcoords="offset points",
        color="#c0392b",
        fontsize=9,
        ha="right" if right else "left",
        va="top",
    )


def rows(picture: Picture) -> int:
    """How many rows ``picture`` takes."""
    return len(picture.blocks) + len(picture.jobs)


def _limits(picture: Picture) -> tuple[float, float]:
    moments = list(picture.moments())
    first, last = min(moments), max(moments)
    pad = max((last - first) * 0.03, timedelta(minutes=1))
    return float(dates.date2num(first - pad)), float(dates.date2num(last + pad))


def _bar(ax: Axes, row: int, start: datetime, end: datetime, gid: str, label: str, colour: str) -> Rectangle:
    left = float(dates.date2num(start))
    bar = Rectangle(
        (left, row - HEIGHT / 2),
        float(dates.date2num(end)) - left,
        HEIGHT,
        facecolor=COLOURS.get(colour, colour),
        edgecolor="#333333",
        linewidth=0.6,
        hatch=HATCHES.get(colour),
        gid=gid,
        label=label,
    )
    ax.add_patch(bar)
    return bar


def _inside(ax: Axes, bar: Rectangle, text: str, span: float, colour: str = "black") -> None:
    """``text`` centred in ``bar`` if it is wide enough (on a pale box over a hatch)."""
    if bar.get_width() >= TEXT_SHARE * span:
        box = {"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1} if bar.get_hatch() else None
        colour = "black" if box else colour
        ax.text(
            bar.get_x() + bar.get_width() / 2,
            bar.get_y() + HEIGHT / 2,
            text,
            ha="center",
            va="center",
            fontsize=8,
            color=colour,
            clip_on=True,
            zorder=4,
            bbox=box,
        )


def _block(ax: Axes, row: int, block: Block, span: float) -> None:
    counts = f"{block.instance_count} × {block.instance_type}"
    gid = f"block:{block.plan}:{block.zone}:{block.index}"
    label = f"{block.plan} block {block.index}: {counts} in {block.zone} ({block.status})"
    bar = _bar(ax, row, block.start, block.end, gid, label, "block")
    _inside(ax, bar, f"{counts}\n{block.status}", span)


def _job(ax: Axes, row: int, job: JobRow, span: float) -> None:
    for index, phase in enumerate(job.spans):
        gid = f"job:{job.name}:{phase.kind}:{index}"
        label = f"{job.name}: {phase.kind} ({phase.status}) {phase.start:%m-%d %H:%M:%S}–{phase.end:%H:%M:%S}"
        bar = _bar(ax, row, phase.start, phase.end, gid, label, phase.kind)
        _inside(ax, bar, phase.kind, span, "white" if phase.kind in ("training", "interrupted") else "black")
        if bar.get_width() < MARK_SHARE * span:
            _mark(ax, bar, row, phase.kind)
    if job.outcome and job.ended:
        marker, colour = OUTCOMES.get(job.outcome, ("D", "#555555"))
        (end,) = ax.plot(
            [dates.date2num(job.ended)], [row], marker=marker, color=colour, markersize=7, zorder=4
        )
        end.set_gid(f"end:{job.name}")
        end.set_label(f"{job.name}: {job.outcome} {job.ended:%m-%d %H:%M:%S}")
    if job.pool:
        _pool(ax, row, job, span)


def _mark(ax: Axes, bar: Rectangle, row: int, kind: str) -> None:
    """A mark of fixed size at the middle of a bar too narrow to see (seconds beside days): the bar stays exact."""
    (mark,) = ax.plot(
        [bar.get_x() + bar.get_width() / 2],
        [row],
        marker="|",
        markersize=14,
        markeredgewidth=4,
        color=COLOURS.get(kind, "#555555"),
        zorder=3,
    )
    mark.set_gid(f"mark:{bar.get_gid()}")
    mark.set_label(bar.get_label())


def _pool(ax: Axes, row: int, job: JobRow, span: float) -> None:
    pool = job.pool
    assert pool is not None
    held = int((pool.end - pool.start).total_seconds())
    label = f"{pool.job}: warm pool {pool.status}, kept {held} s"
    bar = _bar(ax, row, pool.start, pool.end, f"pool:{pool.job}", label, "pool")
    _inside(ax, bar, f"pool {pool.status}", span)
    if pool.expiry is None:  # ended before its keep-alive ran out
        bar.set_label(f"{label}, ended before its keep-alive")
        return
    reused = pool.status == "Reused"  # the keep-alive ended at the reuse: no window beyond, no expiry
    left = float(dates.date2num(pool.start))
    window = Rectangle(
        (left, row - HEIGHT / 2 - 0.08),
        float(dates.date2num(pool.end if reused else pool.expiry)) - left,
        HEIGHT + 0.16,
        fill=False,
        edgecolor="#1f6fa8",
        linestyle="--",
        linewidth=1,
        gid=f"keepalive:{pool.job}",
        label=f"{pool.job}: keep-alive {int((pool.expiry - pool.start).total_seconds())} s",
    )
    ax.add_patch(window)
    if reused:
        window.set_label(f"{window.get_label()}, ended after {held} s by {pool.reused_by}'s reuse")
        return
    (expiry,) = ax.plot([dates.date2num(pool.expiry)], [row], marker="|", markersize=16, color="#1f6fa8")
    expiry.set_gid(f"expiry:{pool.job}")
    verb = "expires" if pool.status == "Available" else "expired"
    expiry.set_label(f"{pool.job}: keep-alive {verb} {pool.expiry:%m-%d %H:%M:%S}")


def _arrow(ax: Axes, source: int, target: int, chain: Chain) -> None:
    gid = f"chain:{chain.source}->{chain.target}"
    x = float(dates.date2num(chain.handed))
    arrow = ax.annotate(
        "",
        xy=(x, target - HEIGHT / 2),
        xytext=(x, source + HEIGHT / 2),
        arrowprops={
            "arrowstyle": "-|>",
            "color": "#1f6fa8",
            "linewidth": 1.5,
            "connectionstyle": "arc3,rad=0.3",
            "mutation_scale": 18,
        },
        zorder=6,
    )
    arrow.set_gid(gid)
    if arrow.arrow_patch is not None:  # what an SVG shows of an annotation without text
        arrow.arrow_patch.set_gid(gid)
    arrow.set_label(f"{chain.target} reused the pool of {chain.source}")


def _job_title(job: JobRow) -> str:
    where = f" · plan {job.plan}" if job.plan else ""
    return f"{job.name}\n{job.instance_count} × {job.instance_type}{where}"


def _axes(ax: Axes, labels: list[str], low: float, high: float, title: str | None) -> None:
    ax.set_xlim(low, high)
    ax.set_ylim(len(labels) - 0.4, -0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=9)
    locator = dates.AutoDateLocator(tz=timezone.utc, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator, tz=timezone.utc))
    ax.set_xlabel("time (UTC)", fontsize=9)
    ax.grid(axis="x", color="#e6e6e6", zorder=0)
    ax.set_axisbelow(True)
    if title:
        ax.set_title(title, fontsize=11, loc="left")


def legend_handles() -> list[Patch | Line2D]:
    """The legend's entries: what each colour, outline and marker means."""
    handles: list[Patch | Line2D] = [
        Patch(facecolor=COLOURS[kind], edgecolor="#333333", hatch=HATCHES.get(kind), label=kind)
        for kind in ("block", *PHASES, "pool")
    ]
    handles[0].set_label("reserved block")
    handles[-1].set_label("warm pool kept")
    handles.append(Patch(fill=False, edgecolor="#1f6fa8", linestyle="--", label="keep-alive window"))
    handles.extend(
        Line2D([], [], marker=marker, color=colour, linestyle="", label=outcome.lower())
        for outcome, (marker, colour) in OUTCOMES.items()
    )
    handles.append(
        Line2D([], [], color="#1f6fa8", marker=r"$\rightarrow$", linestyle="", label="pool reused by")
    )
    handles.append(Line2D([], [], color="#c0392b", label="now"))
    return handles
