"""Keep the SDK's telemetry (an HTTP GET outside boto3) from leaving a local process.

Opting out through the session's SDK config would work too, but a non-empty
config makes the SDK re-validate its config schema on every call (about 60 ms
each, ten per ``fit()``). Instead the SDK's telemetry sender is wrapped once:
it stays silent for local sessions and while an activation is open, and
behaves as before for every other session.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_installed = False
_silenced = 0  # open activations


def _is_local(session) -> bool:
    return getattr(session, "backend", None) is not None


def install() -> None:
    """Wrap the SDK's telemetry sender (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        from sagemaker.telemetry import telemetry_logging

        original = telemetry_logging._send_telemetry_request

        def send(status, feature_list, session, *args, **kwargs):
            if _silenced or _is_local(session):
                return None
            return original(status, feature_list, session, *args, **kwargs)

        telemetry_logging._send_telemetry_request = send
        _installed = True


class silenced:
    """While open, no telemetry is sent for any session (``activated()`` uses it)."""

    def __enter__(self) -> "silenced":
        global _silenced
        install()
        with _lock:
            _silenced += 1
        return self

    def __exit__(self, *exc_info) -> None:
        global _silenced
        with _lock:
            _silenced -= 1
