"""The timeline picture: plans' reserved blocks, jobs' phases, warm-pool chains and now, on one time axis.

``timeline(snapshot)`` gives a :class:`matplotlib.figure.Figure` (matplotlib
is the optional extra ``timeline``; importing this module does not need it);
``save(figure, path)`` writes it as ``.png``, ``.svg`` or ``.html`` (a page
embedding the SVG). What is drawn: docs/cli.md, "timeline".
"""

from __future__ import annotations

import html
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from sagemaker_plans_local.inspection.snapshot import Snapshot
from sagemaker_plans_local.inspection.timeline_model import MAX_JOBS, Picture, picture

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INSTALL = "pip install 'sagemaker-plans-local[timeline]'"
FORMATS = (".png", ".svg", ".html")
WIDTH = 13.0  # inches
ROW = 0.55  # inches per row
PANEL = 1.4  # inches per panel beside its rows: title, time axis
LEGEND = 0.6  # inches, the legend below the panels


def timeline(
    snapshot: Snapshot,
    title: str | None = None,
    max_jobs: int = MAX_JOBS,
    start: datetime | None = None,
    end: datetime | None = None,
) -> "Figure":
    """The picture of ``snapshot``: one row per plan and AZ (its blocks), one per job (phases, pool).

    Only the latest ``max_jobs`` jobs get a row (a note says how many were
    left out). ``start`` and/or ``end`` zoom the time axis (a job of seconds
    beside a plan of days). In Jupyter the figure shows inline (it has ``_repr_png_``).
    """
    return timelines([(title, snapshot)], max_jobs, start, end)


def timelines(
    panels: Sequence[tuple[str | None, Snapshot]],
    max_jobs: int = MAX_JOBS,
    start: datetime | None = None,
    end: datetime | None = None,
) -> "Figure":
    """One figure of several snapshots, each ``(title, snapshot)`` a panel with its own time axis."""
    if start is not None and end is not None and start >= end:
        raise ValueError(
            f"a timeline's start ({start.isoformat()}) must come before its end ({end.isoformat()})"
        )
    _require_matplotlib()
    from sagemaker_plans_local.inspection.timeline_draw import TimelineFigure, draw, legend_handles, rows

    pictures = [(title, picture(snapshot, max_jobs)) for title, snapshot in panels]
    heights = [PANEL + ROW * max(rows(each), 1) for _, each in pictures]
    figure = TimelineFigure(figsize=(WIDTH, sum(heights) + LEGEND), layout="constrained")
    axes = figure.subplots(len(pictures), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, (title, each) in zip(axes, pictures):
        draw(ax, each, title, zoom(each, start, end))
    figure.legend(handles=legend_handles(), loc="outside lower center", ncol=8, fontsize=8, frameon=False)
    return figure


def zoom(each: Picture, start: datetime | None, end: datetime | None) -> tuple[datetime, datetime] | None:
    """The window ``start``..``end`` over ``each``'s time; an open side ends at its first or last moment."""
    if start is None and end is None:
        return None
    moments = sorted(each.moments())
    minute = timedelta(minutes=1)
    low = start if start is not None else moments[0]
    high = end if end is not None else moments[-1]
    if start is None and low >= high:
        low = high - minute
    elif high <= low:
        high = low + minute
    return low, high


def save(figure: "Figure", path: str | Path) -> Path:
    """Write ``figure`` to ``path``: ``.png``, ``.svg``, or ``.html`` (a page with the SVG inline)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"cannot write a timeline to {path.name!r}: use one of {', '.join(FORMATS)}")
    _require_matplotlib()
    if suffix == ".png":
        figure.savefig(path, format="png", dpi=110, metadata={"Software": None})
    elif suffix == ".svg":
        path.write_text(svg(figure), encoding="utf-8")
    else:
        path.write_text(page(figure), encoding="utf-8")
    return path


def svg(figure: "Figure") -> str:
    """The figure as an SVG document whose text stays text (searchable, labels readable)."""
    import io

    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "sagemaker-plans-local"}):
        figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def page(figure: "Figure", title: str = "sagemaker-plans-local timeline") -> str:
    """A standalone HTML page showing the figure (its SVG inline; no script)."""
    document = svg(figure)
    inline = document[document.index("<svg") :]
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
        "<style>body{font-family:sans-serif;margin:1em} svg{max-width:100%;height:auto}</style>\n"
        f"</head>\n<body>\n<h1>{html.escape(title)}</h1>\n{inline}</body>\n</html>\n"
    )


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise ImportError(f"the timeline picture needs matplotlib: {INSTALL}") from error
