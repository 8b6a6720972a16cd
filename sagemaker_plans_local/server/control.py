"""The control API under ``/_sagemaker_plans_local/``: what ``LocalBackend`` does in process, over HTTP.

Every answer is JSON; a bad request is a 400 ``{"error": code, "message": ...}`` (also a body
nested too deeply for the parser). Who may call it is checked first (``server/app.py``,
``server/guard.py``): a POST's body must be ``application/json`` (else 415), at most 16 MiB
(else 413), and signed under ``--access-key`` (else 403).
``?account=<12 digits>`` picks the account of ``capacity``, ``scripts/...``,
``settings`` and ``reset`` (default: the caller's). Who may do what (:class:`Caller`): without
``--access-key`` anyone may do anything (the default account by default, ``reset`` of every
account); under it a key reaches its own account only, and moving the clock, a ``reset`` of
every account or naming another account needs an admin key (:func:`admin_keys`).
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any, Callable, Mapping

import attrs

from sagemaker_plans_local.backend import EMULATED_SERVICES, LocalBackend
from sagemaker_plans_local.core.arns import is_account_id
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
#: A control handler: ``(accounts, account, document)``; ``account`` is the account a request
#: acts on, None for every account (an admin's ``reset``; the clock's handlers ignore it).
Handler = Callable[[Accounts, str | None, Document], Document]


@attrs.frozen
class Caller:
    """Who sent a control request: the account its key selects, and whether it is an admin
    (may move the clock, reset every account and name any account). Unsigned: anyone, as admin."""

    account: str = DEFAULT_ACCOUNT
    admin: bool = True


def admin_keys(credentials: Mapping[str, str], admin_credentials: Mapping[str, str]) -> frozenset[str]:
    """The key ids that act server-wide: the admin keys; with none, the access keys if they
    all select one account (a server with one tenant, whose actions reach nobody else)."""
    if admin_credentials:
        return frozenset(admin_credentials)
    return frozenset(credentials) if len({account_for(key) for key in credentials}) == 1 else frozenset()


def answer(
    accounts: Accounts,
    method: str,
    path: str,
    args: Mapping[str, str],
    body: bytes,
    caller: Caller = Caller(),
) -> tuple[int, Document]:
    """The control API's answer to one request from ``caller``: (HTTP status, JSON document)."""
    try:
        handlers = ROUTES.get(path[len(PREFIX) :])
        if handlers is None:
            raise ControlError(f"no control path {path!r}; see docs/server.md", 404, "NotFound")
        handler = handlers.get(method)
        if handler is None:
            raise ControlError(
                f"{path} answers {', '.join(sorted(handlers))}, not {method}", 405, "MethodNotAllowed"
            )
        account, named = _account(args, caller)
        if handler in _SERVER_WIDE and not caller.admin:
            raise ControlError(
                f"{method} {path} acts on every account; it needs an admin key (serve --admin-key)",
                403,
                "AccessDenied",
            )
        document = _document(body) if method == "POST" else {}
        scoped = handler in _PER_ACCOUNT or named or not caller.admin
        return 200, handler(accounts, account if scoped else None, document)
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


def _account(args: Mapping[str, str], caller: Caller) -> tuple[str, bool]:
    """The account a request acts on (``?account=``, else the caller's) and whether it was named."""
    account = args.get("account")
    if account is None:
        return caller.account, False
    if not is_account_id(account):
        raise ControlError(f"account must be 12 digits (0-9), not {account!r}")
    if account != caller.account and not caller.admin:
        raise ControlError(
            f"the key reaches its account {caller.account} only, not {account} (an admin key names any)",
            403,
            "AccessDenied",
        )
    return account, True


def _backend(accounts: Accounts, account: str | None) -> LocalBackend:
    assert account is not None  # a per-account handler is always given its account
    return accounts.backend(account)


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


def health(accounts: Accounts, account: str | None, document: Document) -> Document:
    return {"status": "running", "services": list(EMULATED_SERVICES)}


def show_clock(accounts: Accounts, account: str | None, document: Document) -> Document:
    return {"now": accounts.now().isoformat(), "manual": accounts.manual}


def advance_clock(accounts: Accounts, account: str | None, document: Document) -> Document:
    if "next_change" in document:
        return next_change(accounts, document)
    seconds = _field(document, "advance_seconds", (int, float))
    if not math.isfinite(seconds) or seconds < 0 or seconds > 10 * 365 * 86400:
        raise ControlError("advance_seconds must be a number of seconds from 0 to ten years")
    try:
        accounts.advance(seconds)
    except WallClockError as error:
        raise ControlError(str(error), 409, "WallClock") from None
    return show_clock(accounts, account, document)


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


def reset(accounts: Accounts, account: str | None, document: Document) -> Document:
    """Every account (``account`` None: an admin's, clock back to its start) or one, on the clock as it is."""
    if account is None:
        accounts.reset()
    else:
        accounts.reset_account(account)
    return {"status": "reset", "now": accounts.now().isoformat()}


def clear_capacity(accounts: Accounts, account: str | None, document: Document) -> Document:
    backend = _backend(accounts, account)
    backend.capacity.clear()
    return {"status": "cleared"}


def add_capacity(accounts: Accounts, account: str | None, document: Document) -> Document:
    backend = _backend(accounts, account)
    count = _field(document, "count", int)
    if count < 1:
        raise ControlError("count must be at least 1")
    start, end = (parse_time(_field(document, name, str)) for name in ("start", "end"))
    if end <= start:
        raise ControlError("end must be after start")
    zone = _field(document, "availability_zone", str)
    backend.capacity.add(_field(document, "instance_type", str), count, zone, start, end)
    return {"status": "added"}


def script_job(accounts: Accounts, account: str | None, document: Document) -> Document:
    backend = _backend(accounts, account)
    backend.script_job(
        _field(document, "job_name", str),
        outcome=_field(document, "outcome", str, required=False) or "Completed",
        runtime_seconds=_field(document, "runtime_seconds", int, required=False),
        failure_reason=_field(document, "failure_reason", str, required=False),
    )
    return {"status": "scripted"}


def script_plan(accounts: Accounts, account: str | None, document: Document) -> Document:
    backend = _backend(accounts, account)
    payment = _field(document, "payment_succeeds", bool, required=False)
    backend.script_plan(_field(document, "training_plan_name", str), payment_succeeds=bool(payment))
    return {"status": "scripted"}


def change_settings(accounts: Accounts, account: str | None, document: Document) -> Document:
    """Every setting given, each in its range (``core/settings.py``), or none of them (a 400)."""
    backend = _backend(accounts, account)
    names = [field.name for field in attrs.fields(Settings)]
    unknown = [name for name in document if name not in names]
    if unknown:
        raise ControlError(f"no setting {unknown[0]!r}; the settings are {', '.join(names)}")
    attrs.evolve(backend.settings, **document)  # each value checked (a ValueError: a 400) before any is set
    for name, value in document.items():
        setattr(backend.settings, name, value)
    return attrs.asdict(backend.settings)


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
#: What moves the clock every account shares: an admin's only.
_SERVER_WIDE = (advance_clock,)
