"""The process-wide backend that local sessions use unless given one."""

from __future__ import annotations

import threading

from ..backend import LocalBackend

_lock = threading.Lock()
_backend: LocalBackend | None = None


def default_backend() -> LocalBackend:
    """One LocalBackend per process, on the wall clock, created on first use (closed at exit)."""
    global _backend
    with _lock:
        if _backend is None:
            _backend = LocalBackend()
        return _backend
