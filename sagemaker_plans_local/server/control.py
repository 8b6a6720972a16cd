"""The control API under ``/_sagemaker_plans_local/``: what ``LocalBackend`` does in process, over HTTP.

Every answer is JSON; a bad request is a 400 ``{"error": code, "message": ...}`` (also a body
nested too deeply for the parser). Who may call it is checked first (``server/app.py``,
``server/guard.py``): a POST's body must be ``application/json`` (else 415), at most 16 MiB
(else 413), and signed under ``--access-key`` (else 403).
``?account=<12 digits>`` picks the account of ``capacity``, ``scripts/...``
and ``settings`` (default: the default account); ``clock`` and ``reset`` act
on every account.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any, Callable, Mapping

import attrs

from sagemaker_plans_local.backend import EMULATED_SERVICES, LocalBackend
from sagemaker_plans_local.core.errors import DomainError
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.server.accounts import Accounts, WallClockError, parse_time
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT, account_for

PREFIX = "/_sagemaker_plans_local/"


class ControlError(Exception):
    """A control request refused: HTTP ``status``, ``code`` and ``message``."""

    def __init__(self, message: str, status: int = 400, code: str = "BadRequest") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


Document = dict[str, Any]
Handler = Callable[[Accounts, LocalBackend | None, Document], Document]


def answer(
    accounts: Accounts, method: str, path: str, args: Mapping[str, str], body: bytes
) -> tuple[int, Document]:
    """The control API's answer to one request: (HTTP status, JSON document)."""
    try:
        handlers = ROUTES.get(path[len(PREFIX) :])
        if handlers is None:
            raise ControlError(f"no control path {path!r}; see docs/server.md", 404, "NotFound")
        handler = handlers.get(method)
        if handler is None:
            raise ControlError(
                f"{path} answers {', '.join(sorted(handlers))}, not {method}", 405, "MethodNotAllowed"
            )
        document = _document(body) if method == "POST" else {}
        backend = accounts.backend(_account(args)) if handler in _PER_ACCOUNT else None
        return 200, handler(accounts, backend, document)
    except ControlError as error:
        return error.status, {"error": error.code, "message": error.message}
    except (DomainError, ValueError, TypeError, OverflowError) as error:  # the backend refused the values
        return 400, {"error": "BadRequest", "message": str(getattr(error, "message", error))}


def _document(body: bytes) -> Document:
    if not body.strip():
        return {}
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ControlError("the body is not JSON") from None
    except RecursionError:  # nested deeper than the parser goes
        raise ControlError("the body's JSON is nested too deeply") from None
    if not isinstance(document, dict):
        raise ControlError("the body must be a JSON object")
    return document


def _account(args: Mapping[str, str]) -> str:
    account = args.get("account", DEFAULT_ACCOUNT)
    if account_for(account) != account:
        raise ControlError(f"account must be 12 digits, not {account!r}")
    return account


def _field(document: Document, name: str, kind: type | tuple[type, ...], required: bool = True) -> Any:
    value = document.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        value = None  # JSON true is no number
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ControlError(f"{name!r} must be given as {names}")
    return value


def health(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    return {"status": "running", "services": list(EMULATED_SERVICES)}


def show_clock(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    return {"now": accounts.now().isoformat(), "manual": accounts.manual}


def advance_clock(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    if "next_change" in document:
        return next_change(accounts, document)
    seconds = _field(document, "advance_seconds", (int, float))
    if not math.isfinite(seconds) or seconds < 0 or seconds > 10 * 365 * 86400:
        raise ControlError("advance_seconds must be a number of seconds from 0 to ten years")
    try:
        accounts.advance(seconds)
    except WallClockError as error:
        raise ControlError(str(error), 409, "WallClock") from None
    return show_clock(accounts, backend, document)


def next_change(accounts: Accounts, document: Document) -> Document:
    """``{"next_change": true}``: every account's clock to the earliest change scheduled in any account.

    Answers the time and whether anything was scheduled (``changed``); 409 on a wall clock.
    """
    if _field(document, "next_change", bool) is not True or "advance_seconds" in document:
        raise ControlError("next_change takes true, and no advance_seconds beside it")
    if not accounts.manual:
        raise ControlError(
            "the server follows the wall clock; it moves to its next change by itself", 409, "WallClock"
        )
    due = _next_due(accounts, settle=True)
    if due is not None:
        accounts.advance(max((due - accounts.now()).total_seconds(), 0.0))
    return {"now": accounts.now().isoformat(), "manual": True, "changed": due is not None}


def _next_due(accounts: Accounts, settle: bool) -> datetime | None:
    """The earliest change scheduled in any account; with ``settle``, after the jobs' running
    processes have run up to it (as an in-process wait lets them), so a process ending sooner
    places its end first and the clock stops there rather than at the later change.
    """
    backends = accounts.backends()
    dues = [due for backend in backends if (due := backend.clock.next_due()) is not None]
    if not dues or not settle:
        return min(dues, default=None)
    for backend in backends:
        backend.clock.settle(min(dues))
    return _next_due(accounts, settle=False)


def reset(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    accounts.reset()
    return {"status": "reset", "now": accounts.now().isoformat()}


def clear_capacity(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    assert backend is not None
    backend.capacity.clear()
    return {"status": "cleared"}


def add_capacity(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    assert backend is not None
    count = _field(document, "count", int)
    if count < 1:
        raise ControlError("count must be at least 1")
    start, end = (parse_time(_field(document, name, str)) for name in ("start", "end"))
    if end <= start:
        raise ControlError("end must be after start")
    zone = _field(document, "availability_zone", str)
    backend.capacity.add(_field(document, "instance_type", str), count, zone, start, end)
    return {"status": "added"}


def script_job(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    assert backend is not None
    backend.script_job(
        _field(document, "job_name", str),
        outcome=_field(document, "outcome", str, required=False) or "Completed",
        runtime_seconds=_field(document, "runtime_seconds", int, required=False),
        failure_reason=_field(document, "failure_reason", str, required=False),
    )
    return {"status": "scripted"}


def script_plan(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    assert backend is not None
    payment = _field(document, "payment_succeeds", bool, required=False)
    backend.script_plan(_field(document, "training_plan_name", str), payment_succeeds=bool(payment))
    return {"status": "scripted"}


def change_settings(accounts: Accounts, backend: LocalBackend | None, document: Document) -> Document:
    assert backend is not None
    fields = {field.name: field for field in attrs.fields(Settings)}
    for name, value in document.items():
        if name not in fields:
            raise ControlError(f"no setting {name!r}; the settings are {', '.join(fields)}")
        _check_setting(name, str(fields[name].type), value)
    for name, value in document.items():
        setattr(backend.settings, name, value)
    return attrs.asdict(backend.settings)


def _check_setting(name: str, declared: str, value: Any) -> None:
    """A setting's value must be of its declared type (``Quota``: null, a count or {type: count})."""
    if declared == "bool":
        ok = isinstance(value, bool)
    elif declared == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    elif declared == "int":
        ok = _count(value)
    else:  # Quota
        ok = value is None or _count(value) or (isinstance(value, dict) and all(map(_count, value.values())))
    if not ok:
        raise ControlError(f"setting {name!r} takes a {declared}, not {value!r}")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


ROUTES: dict[str, dict[str, Handler]] = {
    "health": {"GET": health},
    "clock": {"GET": show_clock, "POST": advance_clock},
    "reset": {"POST": reset},
    "capacity": {"POST": add_capacity},
    "capacity/clear": {"POST": clear_capacity},
    "scripts/jobs": {"POST": script_job},
    "scripts/plans": {"POST": script_plan},
    "settings": {"POST": change_settings, "GET": change_settings},
}
_PER_ACCOUNT = (add_capacity, clear_capacity, script_job, script_plan, change_settings)
