"""Which backend answers a given SDK session: the one waits and telemetry consult.

A session is local when it is one of our ``Session``s (it has a ``backend``),
when its boto3 session came from one (registered here), or, failing both,
while an ``activated()`` block is open (the innermost one's backend).
"""

from __future__ import annotations

import threading
import weakref
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from sagemaker_plans_local.sdk.remote import Backend

_lock = threading.Lock()
_active: list["Backend"] = []
_boto_sessions: "weakref.WeakKeyDictionary[Any, Backend]" = weakref.WeakKeyDictionary()


def register_boto_session(boto_session: Any, backend: "Backend") -> None:
    """Remember that ``boto_session`` (of a local Session) is answered by ``backend``."""
    with _lock:
        _boto_sessions[boto_session] = backend


def local_session(
    session: Any,
    backend: "Backend | None",
    local: bool | None,
    kwargs: dict,
    install_waits: Callable[[], None],
    endpoint_url: str | None = None,
) -> None:
    """Make ``session`` (an SDK session about to initialise with ``kwargs``) local or not.

    Sets ``session.local`` (default: the flag) and ``session.backend``: ``backend``, else
    the server at ``endpoint_url``, else the process-wide backend (``default_backend``);
    a local session gets the backend's boto3 session and the major's local waits.
    """
    from sagemaker_plans_local.sdk.default_backend import default_backend
    from sagemaker_plans_local.sdk.flag import local_by_default
    from sagemaker_plans_local.sdk.remote import RemoteBackend

    if backend is not None and endpoint_url is not None:
        raise ValueError("give a Session either backend or endpoint_url, not both")
    if endpoint_url is not None:
        backend = RemoteBackend(endpoint_url)
    session.local = local_by_default() if local is None else local
    session.backend = (backend or default_backend()) if session.local else None
    if session.backend is not None:
        kwargs.setdefault("boto_session", session.backend.boto_session())
        register_boto_session(kwargs["boto_session"], session.backend)
        install_waits()


def push(backend: "Backend") -> None:
    with _lock:
        _active.append(backend)


def pop(backend: "Backend") -> None:
    with _lock:
        _active.remove(backend)


def active() -> "Backend | None":
    """The innermost open activation's backend."""
    with _lock:
        return _active[-1] if _active else None


def backend_for(session: Any = None) -> "Backend | None":
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


def route_remote_function_wait(
    remote_job: ModuleType, local_logs: Callable[[Any, "Backend", str, bool], dict]
) -> None:
    """Make ``remote_job._logs_for_job`` (what ``@remote`` jobs wait with) wait on the session's backend.

    ``local_logs(session, backend, job_name, wait)`` answers local sessions; others get the SDK's own.
    """
    original = remote_job._logs_for_job  # type: ignore[attr-defined]  # the SDK's untyped module

    def _logs_for_job(sagemaker_session, job_name, wait=False, poll=10, log_type="All", timeout=None):
        backend = backend_for(sagemaker_session)
        if backend is None:
            return original(sagemaker_session, job_name, wait, poll, log_type, timeout)
        return local_logs(sagemaker_session, backend, job_name, wait)

    remote_job._logs_for_job = _logs_for_job  # type: ignore[attr-defined]  # the SDK's untyped module
