"""Keep the SDK's telemetry (an HTTP GET outside boto3) and its notice out of local sessions.

Opting out through the session's SDK config would work too, but a non-empty
config makes the SDK re-validate its config schema on every call (about 60 ms
each, ten per ``fit()``). Instead, once per process, the SDK's sender
(``_send_telemetry_request`` of ``sagemaker.telemetry.telemetry_logging`` in
v2, ``sagemaker.core.telemetry.telemetry_logging`` in v3) is wrapped and a
filter is put on that module's logger: both stay silent for a local session
(and for every session while an activation is open) and behave as before for
every other session. The notice ("SageMaker Python SDK will collect
telemetry ...") is logged by the SDK's decorator around the call; the filter
finds that call's session in the decorator's frame.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from types import FrameType

from sagemaker_plans_local.sdk import routing
from sagemaker_plans_local.sdk.major import sdk_major

_lock = threading.Lock()
_installed = False


def _module():
    name = (
        "sagemaker.telemetry.telemetry_logging"
        if sdk_major() == 2
        else "sagemaker.core.telemetry.telemetry_logging"
    )
    return importlib.import_module(name)


def install() -> None:
    """Wrap the SDK's telemetry sender and filter its notice (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        module = _module()
        original = module._send_telemetry_request

        def send(status, feature_list, session, *args, **kwargs):
            if routing.backend_for(session) is not None:
                return None
            return original(status, feature_list, session, *args, **kwargs)

        module._send_telemetry_request = send
        module.logger.addFilter(_NoticeFilter(module))
        _installed = True


class _NoticeFilter(logging.Filter):
    """Drops the telemetry notice when the call it is logged for has a local session."""

    def __init__(self, module) -> None:
        super().__init__()
        self._notice = module.TELEMETRY_OPT_OUT_MESSAGING
        self._file = module.__file__

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != self._notice:
            return True
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self._file:
            frame = frame.f_back
        session = frame.f_locals.get("sagemaker_session") if frame is not None else None
        return routing.backend_for(session) is None
