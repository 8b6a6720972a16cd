"""The ``sagemaker-plans-local`` command: ``run`` a script locally, ``serve`` over HTTP, ``reset``, inspect.

- ``run script.py [args]``: the script with every boto3 client answered in-process.
- ``serve [--host] [--port] [--root] [--start-time] [--allow-real-keys] [--access-key KEY:SECRET]
  [--admin-key KEY:SECRET] [--allowed-host NAME] [--no-run-code] [--unauthenticated]``: the server
  (docs/server.md); prints one line with its URL when ready; Ctrl-C or SIGTERM stops it.
- ``reset [--root DIR | --endpoint-url URL] [--yes]``: empties the default backend's durable
  state (or the root given), or resets a running server.
- ``offerings``, ``plans``, ``jobs``, ``pools``, ``clock show|advance DURATION``, ``cost``,
  ``timeline --out FILE``: read (or move the clock of) a root, a server or the default backend
  (``cli/inspect_commands.py``, docs/cli.md).
- ``simulate WORKLOAD --policy ...``: a what-if comparison of policies (``cli/simulate.py``, docs/what-if.md).
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import signal
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sagemaker_plans_local.cli import simulate
from sagemaker_plans_local.cli.inspect_commands import register
from sagemaker_plans_local.server.guard import control_request

CONTROL = "/_sagemaker_plans_local/"


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    return int(options.action(options))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sagemaker-plans-local",
        description="SageMaker training jobs, warm pools and training plans, locally.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a Python script with every boto3 client answered locally")
    run.add_argument("script", help="the script to run, as with `python script.py`")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    run.set_defaults(action=_run)
    serve = commands.add_parser("serve", help="answer every emulated service over HTTP on one port")
    serve.add_argument("--host", default="127.0.0.1", help="the address to bind (default: loopback only)")
    serve.add_argument("--port", type=int, default=0, help="the port (default 0: a free one)")
    serve.add_argument("--root", help="where the server's files live (state stays in memory)")
    serve.add_argument("--start-time", help="a manual clock starting at this ISO 8601 time")
    serve.add_argument("--allow-real-keys", action="store_true", help="accept AKIA/ASIA-looking access keys")
    serve.add_argument(
        "--access-key",
        action="append",
        default=[],
        metavar="KEY:SECRET",
        help="check SigV4 signatures: only requests signed with one of these keys are answered (repeatable)",
    )
    serve.add_argument(
        "--admin-key",
        action="append",
        default=[],
        metavar="KEY:SECRET",
        help="a key that may also move the clock, reset every account and name any account (repeatable)",
    )
    _guard_options(serve)
    serve.set_defaults(action=_serve)
    reset = commands.add_parser(
        "reset", help="empty the default backend's durable state (or a root's, or a running server's)"
    )
    target = reset.add_mutually_exclusive_group()
    target.add_argument("--root", help="the backend root to empty (default: the default backend's)")
    target.add_argument("--endpoint-url", help="reset this running server instead")
    reset.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    reset.set_defaults(action=_reset)
    register(commands)
    simulate.register(commands)
    return parser


def _guard_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME (*.NAME: names under it; '*': any, dangerous) (repeatable)",
    )
    serve.add_argument(
        "--no-run-code", action="store_true", help="simulate every job on the clock; run no job's code"
    )
    serve.add_argument(
        "--unauthenticated",
        action="store_true",
        help="allow a non-loopback --host without --access-key (anyone reaching the port may do anything)",
    )


def _run(options: argparse.Namespace) -> int:
    from sagemaker_plans_local.sdk.activation import activated

    sys.argv = [options.script, *options.args]
    with activated():
        runpy.run_path(options.script, run_name="__main__")
    return 0


def _credentials(pairs: list[str], option: str = "--access-key") -> dict[str, str]:
    """``KEY:SECRET`` arguments as a key -> secret map (a ValueError names a malformed one)."""
    credentials = {}
    for pair in pairs:
        key, separator, secret = pair.partition(":")
        if not key or not separator or not secret:
            raise ValueError(f"{option} wants KEY:SECRET, not {pair!r}")
        credentials[key] = secret
    return credentials


def _serve(options: argparse.Namespace) -> int:
    from sagemaker_plans_local.core.journal import SchemaError
    from sagemaker_plans_local.server.accounts import parse_time
    from sagemaker_plans_local.server.guard import is_loopback
    from sagemaker_plans_local.server.runner import LocalServer

    try:
        start = parse_time(options.start_time) if options.start_time else None
        credentials = _credentials(options.access_key)
        admins = _credentials(options.admin_key, "--admin-key")
        if not (is_loopback(options.host.strip("[]")) or credentials or admins or options.unauthenticated):
            raise ValueError(
                f"--host {options.host} lets anyone who reaches the port call the server"
                f"{'' if options.no_run_code else ' and run commands as you'}; give --access-key "
                "KEY:SECRET (and --no-run-code), or --unauthenticated if that is what you want"
            )
        server = LocalServer(
            options.host,
            options.port,
            options.root,
            start,
            options.allow_real_keys,
            credentials,
            allowed_hosts=options.allowed_host,
            run_code=not options.no_run_code,
            admin_credentials=admins,
        )
    except (ValueError, OSError, SchemaError) as error:
        print(f"sagemaker-plans-local: {error}", file=sys.stderr)
        return 1
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    server.start()
    print(f"sagemaker-plans-local serving on {server.url}", flush=True)
    try:
        while not stopped.wait(3600):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _control(request: urllib.request.Request) -> dict[str, Any] | None:
    """A control call's JSON answer; None (the cause printed) if it was refused or unreachable."""
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return dict(json.load(response))
    except urllib.error.HTTPError as error:
        print(f"sagemaker-plans-local: {json.load(error).get('message', error)}", file=sys.stderr)
    except (urllib.error.URLError, OSError) as error:
        print(f"sagemaker-plans-local: cannot reach {request.full_url}: {error}", file=sys.stderr)
    return None


def _reset(options: argparse.Namespace) -> int:
    from sagemaker_plans_local.sdk.default_backend import ENDPOINT_VARIABLE, default_backend_root

    if options.endpoint_url:
        url = options.endpoint_url.rstrip("/")
        if not _confirmed(options, f"Reset the server at {url}, removing all of its state?"):
            return 1
        request = control_request(url + CONTROL + "reset", b"{}")
        document = _control(request)
        if document is None:
            return 1
        print(f"reset the server at {url} (its clock now {document['now']})")
        return 0
    root = Path(options.root).expanduser() if options.root else default_backend_root()
    if not options.root and os.environ.get(ENDPOINT_VARIABLE, "").strip():
        print(
            f"sagemaker-plans-local: note: {ENDPOINT_VARIABLE} is set, so sessions use that server; "
            "reset it with --endpoint-url",
            file=sys.stderr,
        )
    if not _confirmed(options, f"Remove everything under {root}?"):
        return 1
    return _empty(root.absolute())


def _confirmed(options: argparse.Namespace, question: str) -> bool:
    """Whether to go ahead: asked on an interactive terminal unless ``--yes``; a script goes ahead."""
    if options.yes or not sys.stdin.isatty():
        return True
    if input(f"{question} [y/N] ").strip().lower() in ("y", "yes"):
        return True
    print("sagemaker-plans-local: nothing reset", file=sys.stderr)
    return False


def _empty(root: Path) -> int:
    """Remove everything under ``root``, naming each entry removed; 1 if refused or failed."""
    if not root.exists():
        print(f"nothing to reset: {root} does not exist")
        return 0
    home, real = Path.home().resolve(), root.resolve()
    if not root.is_dir() or real == home or real in home.parents:  # a mistyped --root, not ours
        print(f"sagemaker-plans-local: {root} is not a backend root; nothing removed", file=sys.stderr)
        return 1
    try:
        for entry in sorted(root.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            _tell(f"removed {entry}")
    except OSError as error:
        print(f"sagemaker-plans-local: {error}", file=sys.stderr)
        return 1
    _tell(f"{root} is empty")
    return 0


def _tell(line: str) -> None:
    """Print a line of what was done; a reader gone away (``reset | head``) stops the printing, not the work."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        silence_stdout()


def silence_stdout() -> None:
    """Point stdout at the null device: its reader went away, and nothing more is written to it."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
