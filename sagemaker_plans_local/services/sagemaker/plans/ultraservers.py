"""UltraServer types: how many instances of which type one UltraServer is.

An UltraServer is several instances in one NVLink domain, reserved and
counted as a whole. The sizes are data (``sagemaker_plans_local/data/ultraservers.json``,
with their source); the inventory keeps UltraServer capacity under the
UltraServer type, counted in UltraServers.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import attrs

#: Spare instances per UltraServer when CreateTrainingPlan names none (the API reference: "Default is 1").
DEFAULT_SPARES = 1


@attrs.frozen
class UltraServerType:
    """One UltraServer type: ``instances`` instances of ``instance_type``."""

    name: str
    instance_type: str
    instances: int


@functools.lru_cache(maxsize=None)
def ultra_server_types() -> dict[str, UltraServerType]:
    """The known UltraServer types, by name."""
    text = (resources.files("sagemaker_plans_local") / "data" / "ultraservers.json").read_text("utf-8")
    table = json.loads(text)["ultraserver_types"]
    return {
        name: UltraServerType(name, entry["instance_type"], entry["instances"])
        for name, entry in table.items()
    }


def ultra_server_type(name: str) -> UltraServerType | None:
    return ultra_server_types().get(name)
