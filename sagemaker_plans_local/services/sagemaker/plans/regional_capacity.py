"""The account's view of free capacity: one inventory per region, addressed by AZ."""

from __future__ import annotations

import re
from datetime import datetime

from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityInventory

_ZONE_SUFFIX = re.compile(r"[a-z]+$")


def region_of(availability_zone: str) -> str:
    """``us-east-1a`` -> ``us-east-1``."""
    return _ZONE_SUFFIX.sub("", availability_zone)


class RegionalCapacity:
    """What ``backend.capacity`` is: adds go to the inventory of the AZ's region."""

    def __init__(self) -> None:
        self._inventories: dict[str, CapacityInventory] = {}

    def add(
        self, instance_type: str, instance_count: int, availability_zone: str, start: datetime, end: datetime
    ) -> None:
        """Make ``instance_count`` instances free in that AZ for ``[start, end)``; adds stack."""
        self.for_region(region_of(availability_zone)).add(
            instance_type, instance_count, availability_zone, start, end
        )

    def clear(self) -> None:
        """Empty the inventory of every region."""
        for inventory in self._inventories.values():
            inventory.clear()

    def for_region(self, region: str) -> CapacityInventory:
        """The inventory of ``region``, made empty on first use."""
        inventory = self._inventories.get(region)
        if inventory is None:
            inventory = self._inventories[region] = CapacityInventory()
        return inventory
