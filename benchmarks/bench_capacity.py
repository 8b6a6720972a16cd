"""Section 7: capacity inventory updates -- adding or selling a block costs about the same with
300 or 3,000 blocks in one (type, AZ). Timed in CPU time (``time.process_time``)."""

from __future__ import annotations

import gc
import random
import time
from datetime import datetime, timedelta

from bench_measure import micros, ratio, table, verdict
from bench_workload import START

#: Target: per block, building (or selling) the large inventory costs at most this much more.
BUILD_RATIO = 2.0
INSTANCE_TYPE, ZONE = "ml.p5.48xlarge", "us-east-1a"

Block = tuple[int, datetime, datetime]


def blocks(count: int) -> list[Block]:
    """``count`` blocks of 1-14 days at random starts over ``count`` days, some overlapping."""
    rng = random.Random(count)
    found = []
    for _ in range(count):
        start = START + timedelta(hours=rng.randrange(count * 24))
        found.append((rng.choice((1, 2, 4, 8)), start, start + timedelta(days=rng.randint(1, 14))))
    return found


def _build_and_sell(pieces: list[Block]) -> tuple[float, float]:
    """CPU seconds to add every block to an empty inventory, then to sell each block in full."""
    from sagemaker_plans_local.services.sagemaker.plans.regional_capacity import RegionalCapacity

    capacity = RegionalCapacity()
    inventory = capacity.for_region("us-east-1")
    started = time.process_time()
    for count, start, end in pieces:
        capacity.add(INSTANCE_TYPE, count, ZONE, start, end)
    built = time.process_time()
    for count, start, end in pieces:
        inventory.remove(INSTANCE_TYPE, ZONE, start, end, count)
    sold = time.process_time()
    assert inventory.blocks() == []
    return built - started, sold - built


def _best_per_block(size: int, repeats: int) -> tuple[float, float]:
    pieces = blocks(size)
    best_build = best_sell = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            build, sell = _build_and_sell(pieces)
            best_build, best_sell = min(best_build, build / size), min(best_sell, sell / size)
    finally:
        gc.enable()
    return best_build, best_sell


def run_capacity(sizes: tuple[int, ...], repeats: int) -> None:
    """Per-block cost of building and selling inventories of each size, against the smallest."""
    print(
        "\n7. Capacity inventory: add every block, then sell each one, in one (type, AZ) "
        f"(CPU time per block, best of {repeats})"
    )
    measured = {size: _best_per_block(size, repeats) for size in sizes}
    base_build, base_sell = measured[sizes[0]]
    rows, worst = [], 0.0
    for size, (build, sell) in measured.items():
        rows.append(
            [
                f"{size:,} blocks",
                micros(build),
                ratio(build / base_build),
                micros(sell),
                ratio(sell / base_sell),
            ]
        )
        if size <= 10 * sizes[0]:
            worst = max(worst, build / base_build, sell / base_sell)
    print(table(["inventory", "add us/block", f"x {sizes[0]:,}", "sell us/block", f"x {sizes[0]:,}"], rows))
    print(
        f"   worst per-block cost up to {10 * sizes[0]:,} blocks: {ratio(worst)} that of "
        f"{sizes[0]:,}  {verdict(worst <= BUILD_RATIO)} (target <= {BUILD_RATIO:g}x)"
    )
