"""Timing and reporting helpers: CPU-time batches, latency stats, plain-text tables.

Verdicts rest on ``time.process_time`` (this process's CPU time): on a shared machine other
processes stretch wall time, not CPU time, so a rerun does not flip a verdict."""

from __future__ import annotations

import gc
import statistics
import time
from typing import Callable, Sequence


def timed(run: Callable[[], None]) -> float:
    """CPU seconds ``run()`` takes (a full collection first, GC left enabled while timing)."""
    gc.collect()
    start = time.process_time()
    run()
    return time.process_time() - start


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


class Latencies:
    """Per-call latencies (seconds) of one configuration."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def record(self, seconds: float) -> None:
        self.values.append(seconds)

    def summary(self) -> dict[str, float]:
        ordered = sorted(self.values)
        return {
            "mean": statistics.fmean(ordered),
            "median": statistics.median(ordered),
            "p90": percentile(ordered, 0.90),
            "p99": percentile(ordered, 0.99),
            "max": ordered[-1],
        }


def rate(value: float) -> str:
    return f"{value:,.0f}"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


def micros(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None) -> str:
    """A plain-text table; ``right[i]`` right-aligns column ``i`` (default: all but the first)."""
    right = right or [i > 0 for i in range(len(headers))]
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            str(cell).rjust(width) if align else str(cell).ljust(width)
            for cell, width, align in zip(cells, widths, right)
        ).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])
