"""Route every botocore client created while active to a backend.

``botocore.client.ClientCreator.create_client`` is wrapped for as long as at
least one activation is open; clients created meanwhile get the innermost
active backend's hooks, which fall silent once that activation ends.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator

from botocore.client import ClientCreator

_lock = threading.RLock()
_active: list["Activation"] = []
#: botocore's own create_client, captured by the first activation. It is kept after the last
#: activation closes, so a client creation still running in another thread finishes on it.
_original_create_client: Callable = ClientCreator.create_client


class Activation:
    """One open ``activate()``: how to attach a backend to a new client."""

    def __init__(self, attach: Callable[[object, Callable[[], bool]], None], region: str) -> None:
        self._attach = attach
        self.region = region
        self.open = True

    def is_open(self) -> bool:
        return self.open

    def attach(self, client) -> None:
        self._attach(client, self.is_open)


def _create_client(self, service_name, region_name=None, *args, **kwargs):
    activation = _active[-1] if _active else None
    if activation is not None and region_name is None:
        region_name = activation.region
    client = _original_create_client(self, service_name, region_name, *args, **kwargs)
    if activation is not None:
        activation.attach(client)
    return client


@contextlib.contextmanager
def activated(activation: Activation) -> Iterator[Activation]:
    """Keep ``activation`` open for the duration of the ``with`` block."""
    global _original_create_client
    with _lock:
        if not _active:
            _original_create_client = ClientCreator.create_client
            ClientCreator.create_client = _create_client
        _active.append(activation)
    try:
        yield activation
    finally:
        with _lock:
            activation.open = False
            _active.remove(activation)
            if not _active:
                ClientCreator.create_client = _original_create_client
