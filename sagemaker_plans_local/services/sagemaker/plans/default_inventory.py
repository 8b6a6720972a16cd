"""The capacity a fresh backend offers: deterministic, varied by instance type.

What each type looks like is documented in docs/default-inventory.md.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Sequence

import attrs

from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityBlock
from sagemaker_plans_local.services.sagemaker.plans.offering_search import DayGrid
from sagemaker_plans_local.services.sagemaker.plans.offerings import MAX_LEAD
from sagemaker_plans_local.services.sagemaker.plans.ultraservers import ultra_server_types
from sagemaker_plans_local.services.sagemaker.plans.zones import availability_zones

__all__ = ["PROFILES", "ULTRA_SERVER_PROFILE", "Profile", "availability_zones", "default_inventory"]


@attrs.frozen
class Profile:
    """How one instance type's capacity looks in each AZ that has any.

    An AZ's timeline alternates gaps of ``gap_days`` (the first one may be
    shorter) and blocks of ``block_days`` with an instance count from ``counts``.
    """

    zones: int | None  # how many of the region's AZs have capacity; None: all
    block_days: tuple[int, int]
    gap_days: tuple[int, int]
    counts: tuple[int, ...]


NONE = Profile(zones=0, block_days=(1, 1), gap_days=(0, 0), counts=(1,))
#: Types the API model may add later get this.
MODEST = Profile(zones=2, block_days=(3, 10), gap_days=(2, 6), counts=(4, 8, 16))

PROFILES = {
    # Plenty: back-to-back blocks of 32 or 64 in every AZ.
    "ml.p5.48xlarge": Profile(None, (7, 21), (0, 0), (32, 64)),
    "ml.p5.4xlarge": Profile(None, (5, 14), (0, 1), (16, 32, 64)),
    "ml.trn1.32xlarge": Profile(None, (4, 14), (1, 3), (16, 32, 64)),
    "ml.p4d.24xlarge": Profile(None, (5, 20), (0, 3), (8, 16, 32)),
    # In between: fewer AZs, shorter blocks, longer gaps, smaller counts.
    "ml.p5e.48xlarge": Profile(3, (4, 14), (1, 4), (8, 16, 32)),
    "ml.p5en.48xlarge": Profile(3, (3, 10), (2, 7), (4, 8, 16, 32)),
    "ml.p4de.24xlarge": Profile(2, (3, 10), (1, 5), (4, 8, 16)),
    "ml.p6-b200.48xlarge": Profile(2, (2, 7), (3, 10), (2, 4, 8)),
    "ml.p6e-gb200.36xlarge": Profile(1, (2, 5), (5, 12), (2, 4, 8)),
    # Fragments: one to three days, separated by at least two empty days.
    "ml.trn2.48xlarge": Profile(None, (1, 3), (2, 5), (8, 16, 32)),
    # Sold out.
    "ml.p6-b300.48xlarge": NONE,
}
#: UltraServers (counted in UltraServers) of every type whose instance type is offered.
ULTRA_SERVER_PROFILE = Profile(zones=2, block_days=(3, 10), gap_days=(1, 5), counts=(1, 2, 4))


def default_inventory(instance_types: Sequence[str], region: str, now: datetime) -> list[CapacityBlock]:
    """Free capacity for the next 56 days from ``now``; the same inputs give the same blocks.

    Every block starts and ends at 11:30 UTC, except that one may start at
    ``now``. Within one (type, AZ) blocks never overlap, so every free count
    is a power of two up to 64. UltraServer types whose instance type is in
    ``instance_types`` get UltraServer capacity (keyed by UltraServer type).
    """
    grid = DayGrid.from_origin(now)
    last = grid.index_at_or_before(now + MAX_LEAD)
    ultra = [
        name for name, kind in sorted(ultra_server_types().items()) if kind.instance_type in instance_types
    ]
    blocks = []
    for instance_type in [*instance_types, *ultra]:
        profile = ULTRA_SERVER_PROFILE if instance_type in ultra else PROFILES.get(instance_type, MODEST)
        rng = random.Random(f"{region}/{instance_type}")
        zones = availability_zones(region)
        if profile.zones is not None:
            zones = sorted(rng.sample(zones, min(profile.zones, len(zones))))
        for az in zones:
            day = rng.randint(0, profile.gap_days[1])
            while day < last:
                end = min(day + rng.randint(*profile.block_days), last)
                blocks.append(
                    CapacityBlock(instance_type, az, grid.at(day), grid.at(end), rng.choice(profile.counts))
                )
                day = end + rng.randint(*profile.gap_days)
    return blocks
