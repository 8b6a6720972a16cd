"""IAM roles: every role name exists (IAM is not modeled); each keeps the time it was first asked for."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from datetime import datetime, timezone

from sagemaker_plans_local.core.clock import Clock


@dataclass(frozen=True)
class Role:
    """A role of the account: its name, its stable ``AROA...`` id and its creation time (UTC, whole seconds)."""

    name: str
    role_id: str
    created: datetime


class Roles:
    """The account's roles; a role's creation time is the clock's when it was first asked for."""

    def __init__(self, account_id: str, clock: Clock) -> None:
        self.account_id = account_id
        self._clock = clock
        self._created: dict[str, datetime] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Role:
        """The role ``name`` (any name: every role exists)."""
        with self._lock:
            created = self._created.setdefault(
                name, self._clock.now().astimezone(timezone.utc).replace(microsecond=0)
            )
        return Role(name, role_id(self.account_id, name), created)


def role_id(account_id: str, name: str) -> str:
    """The stable ``AROA...`` id of the account's role ``name``."""
    return "AROA" + hashlib.sha256(f"{account_id}/{name}".encode()).hexdigest()[:17].upper()
