"""Request ids: one maker for every service's answers."""

from __future__ import annotations

import itertools
import os

_REQUEST_IDS = itertools.count(1)
_PROCESS_PART = f"{os.getpid() & 0xFFFF:04x}"


def new_request_id() -> str:
    """A request id in AWS's UUID layout: unique within the process, cheap, sortable."""
    return f"00000000-{_PROCESS_PART}-4000-8000-{next(_REQUEST_IDS):012x}"


def s3_request_id(request_id: str) -> str:
    """S3's shorter form of ``request_id`` (its ``x-amz-request-id``): 16 upper-case hex digits."""
    return request_id.replace("-", "")[-16:].upper()
