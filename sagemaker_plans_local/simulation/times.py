"""Times in what-if files: ISO 8601 with a zone."""

from __future__ import annotations

from datetime import datetime


def parse_moment(text: str) -> datetime:
    """An ISO 8601 time with its zone (``Z`` or an offset) as an aware datetime; ValueError otherwise."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is neither seconds nor an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no zone (add Z or an offset such as +00:00)")
    return moment
