"""Which backend answers a given SDK session: the one waits and telemetry consult.

A session is local when it is one of our ``Session``s (it has a ``backend``),
when its boto3 session came from one (registered here), or, failing both,
while an ``activated()`` block is open (the innermost one's backend).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..backend import LocalBackend

_lock = threading.Lock()
_active: list["LocalBackend"] = []
_boto_sessions: "weakref.WeakKeyDictionary[Any, LocalBackend]" = weakref.WeakKeyDictionary()


def register_boto_session(boto_session: Any, backend: "LocalBackend") -> None:
    """Remember that ``boto_session`` (of a local Session) is answered by ``backend``."""
    with _lock:
        _boto_sessions[boto_session] = backend


def push(backend: "LocalBackend") -> None:
    with _lock:
        _active.append(backend)


def pop(backend: "LocalBackend") -> None:
    with _lock:
        _active.remove(backend)


def active() -> "LocalBackend | None":
    """The innermost open activation's backend."""
    with _lock:
        return _active[-1] if _active else None


def backend_for(session: Any = None) -> "LocalBackend | None":
    """The backend answering ``session`` (an SDK session or a boto3 session), or None: AWS."""
    backend = getattr(session, "backend", None)
    if backend is not None:
        return backend
    boto_session = getattr(session, "boto_session", session)
    if boto_session is not None:
        with _lock:
            try:
                backend = _boto_sessions.get(boto_session)
            except TypeError:  # not weak-referenceable: no session of ours
                backend = None
        if backend is not None:
            return backend
    return active()
