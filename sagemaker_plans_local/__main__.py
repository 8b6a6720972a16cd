"""``sagemaker-plans-local`` / ``python -m sagemaker_plans_local``: ``run``, ``serve``, ``reset``, inspection.

The inspection commands (``offerings``, ``plans``, ``jobs``, ``pools``, ``clock``, ``cost``,
``timeline``) are in docs/cli.md.

``run script.py [args]`` runs an unmodified script locally; with
``SAGEMAKER_PLANS_LOCAL=0`` it runs as with ``python script.py``: against AWS.
The commands are in ``cli/main.py``.

Output into a pipe that closes early (``reset | head``) ends the command quietly with status 141
(as a shell reports a command killed by SIGPIPE), not with ``[Errno 32] Broken pipe``.
"""

from __future__ import annotations

import sys

from sagemaker_plans_local.cli import main as cli

__all__ = ["main"]
#: The exit status of a command whose reader went away (128 + SIGPIPE).
BROKEN_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (default: the process's arguments); its exit status."""
    try:
        status = cli.main(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's own final flush
        return status
    except BrokenPipeError:
        cli.silence_stdout()
        return BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
