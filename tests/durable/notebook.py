"""A notebook kernel on a root's detached runner (``python -m tests.durable.notebook PLAN``).

``PLAN`` is JSON: ``root``, ``jobs`` (``[name, seconds]`` pairs: ``sleeper.py`` from ``source``),
and optionally ``settings`` (set first), ``barrier`` (print ``open`` and wait for a line on stdin
before creating) and ``hold`` (after ``created``, stay open until stdin ends).
"""

from __future__ import annotations

import json
import sys

from sagemaker_plans_local import LocalBackend
from tests.durable.worker import job_request


def main(plan: dict) -> None:
    backend = LocalBackend(root=plan["root"], runner="detached")
    for name, value in plan.get("settings", {}).items():
        setattr(backend.settings, name, value)
    if plan.get("barrier"):
        print("open", flush=True)
        sys.stdin.readline()
    sm = backend.client()
    for name, seconds in plan["jobs"]:
        sm.create_training_job(**job_request(name, 0, plan["source"], seconds))
    print("created", flush=True)
    if plan.get("hold"):
        sys.stdin.read()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
