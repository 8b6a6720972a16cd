"""What a server without a root lets go of its idle accounts: a fresh one entirely, another's state
suspended on disk.

An ephemeral account's backend (:class:`ServedBackend`) is *fresh* while nothing but reads
(``Describe``, ``List``, ``Get``, ... as a durable root tells them) reached it over HTTP and nothing
handed it out (the control API, ``LocalServer.backend``). Let go, a fresh account with nothing
scheduled is dropped, only its creation time remembered (its default capacity inventory is laid
out from it), and made again on its next request; any other is suspended: its state pickled into
its temporary root (:meth:`ServedBackend.suspend`), which is kept, and resumed from there.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.backend_root import BackendRoot
from sagemaker_plans_local.backend_state import suspend
from sagemaker_plans_local.durable.services import READS


class ServedBackend(LocalBackend):
    """An ephemeral account's backend in a server, made in ``home`` (a temporary root its account
    keeps while suspended); ``fresh`` while only reads reached it."""

    def __init__(self, home: BackendRoot, **kwargs: Any) -> None:
        super().__init__(root=home, **kwargs)
        self.home = home
        self.fresh = True

    def service(self, service_name: str) -> Any:
        service = super().service(service_name)
        return _Watched(service, self) if self.fresh else service

    def suspend(self) -> bool:
        """Close the idle backend, its state left in ``home`` (kept) for the next backend made in it to
        resume; False, the backend left open: at work, or a state that cannot be kept now."""
        if self.at_work() or not suspend(self._emulation, self.home):
            return False
        self.close()
        return True


class _Watched:
    """A fresh backend's service: a request that is not a read makes the backend hold state."""

    __slots__ = ("service", "backend")

    def __init__(self, service: Any, backend: ServedBackend) -> None:
        self.service = service
        self.backend = backend

    def handle(self, region: str, operation_model: Any, request: dict | None) -> Any:
        name = operation_model if isinstance(operation_model, str) else operation_model.name
        if not name.startswith(READS):
            self.backend.fresh = False  # before the call: one that fails counts too
        return self.service.handle(region, operation_model, request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)


class IdleAccounts:
    """The ephemeral accounts a server let go: dropped ones by creation time, suspended ones by root."""

    def __init__(self) -> None:
        self.created: dict[str, datetime] = {}
        self.suspended: dict[str, BackendRoot] = {}

    def let_go(self, account: str, backend: ServedBackend) -> bool:
        """Drop or suspend an idle account's backend (False: it stays open, its state cannot be kept now)."""
        if backend.fresh and backend.home.created is not None and backend.clock.next_due() is None:
            self.created[account] = backend.home.created
            backend.close()
            return True
        if backend.suspend():
            self.suspended[account] = backend.home
            return True
        return False

    def home(self, account: str, now: datetime) -> BackendRoot:
        """Where the account's next backend starts: its suspended state (``kept``), else a new root
        created when the account first was (``now`` if it never was)."""
        suspended = self.suspended.pop(account, None)
        if suspended is not None:
            return suspended
        return BackendRoot(None, created=self.created.pop(account, now))

    def clear(self) -> None:
        """Forget every account let go (a reset, a server's close): suspended states removed."""
        for home in self.suspended.values():
            home.discard()
        self.suspended.clear()
        self.created.clear()
