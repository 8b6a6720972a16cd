"""Availability Zones of a region: their names and their (fixed) AZ ids.

AWS maps AZ names to AZ ids per account; the id's prefix is the region's code
(``use1`` for us-east-1, ``apne1`` for ap-northeast-1). *Chosen:* the mapping
is the same for every account: the zone with letter ``a`` is ``az1``, ``b`` is
``az2`` and so on (``us-east-1c`` -> ``use1-az3``).
"""

from __future__ import annotations

import re

_ZONE_LETTERS = {"us-east-1": "abcdef", "us-west-2": "abcd"}
_DEFAULT_LETTERS = "abc"
#: How region names abbreviate their direction words in AZ ids.
_DIRECTIONS = {
    "northeast": "ne",
    "northwest": "nw",
    "southeast": "se",
    "southwest": "sw",
    "north": "n",
    "south": "s",
    "east": "e",
    "west": "w",
    "central": "c",
}
_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+-\d+)(?P<letter>[a-z])$")


def availability_zones(region: str) -> list[str]:
    """The region's AZ names: us-east-1a–f, us-west-2a–d, otherwise a–c."""
    return [region + letter for letter in _ZONE_LETTERS.get(region, _DEFAULT_LETTERS)]


def region_code(region: str) -> str:
    """``us-east-1`` -> ``use1``, ``eu-central-1`` -> ``euc1``, ``ap-northeast-1`` -> ``apne1``."""
    area, direction, number = region.split("-", 2)
    return area + _DIRECTIONS.get(direction, direction[:1]) + number


def zone_id(availability_zone: str) -> str | None:
    """The AZ id of an AZ name (``us-east-1b`` -> ``use1-az2``); None for a name that is not an AZ's."""
    match = _ZONE.match(availability_zone)
    if match is None:
        return None
    number = ord(match["letter"]) - ord("a") + 1
    return f"{region_code(match['region'])}-az{number}"
