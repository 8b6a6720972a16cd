"""``sagemaker-plans-local`` / ``python -m sagemaker_plans_local``: ``run``, ``serve``, ``reset``, inspection.

The inspection commands (``offerings``, ``plans``, ``jobs``, ``pools``, ``clock``, ``cost``,
``timeline``) are in docs/cli.md.

``run script.py [args]`` runs an unmodified script locally; with
``SAGEMAKER_PLANS_LOCAL=0`` it runs as with ``python script.py``: against AWS.
The commands are in ``server/cli.py``.
"""

from __future__ import annotations

import sys

from sagemaker_plans_local.server.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
