"""Durations as the CLI takes them: ``900`` or ``900s`` (seconds), ``30m``, ``2h``, ``3d``."""

from __future__ import annotations

import re

UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$", re.ASCII)


def parse_duration(text: str) -> float:
    """The seconds ``text`` says (a non-negative number, optionally followed by s, m, h or d)."""
    match = _DURATION.match(text.strip().lower())
    if match is None:
        raise ValueError(f"not a duration: {text!r} (examples: 900, 90s, 30m, 2h, 3d)")
    number, unit = match.groups()
    seconds = float(number) * UNITS[unit]
    return int(seconds) if seconds.is_integer() else seconds
