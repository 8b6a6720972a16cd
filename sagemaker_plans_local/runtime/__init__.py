"""Local runtime: runs script-mode training jobs' entry points on this machine (no Docker).

:class:`LocalExecutor` implements the domain's ``Executor`` port; see
``docs/local-runtime.md`` for the contract it gives a script.
"""

from sagemaker_plans_local.runtime.executor import STOP_GRACE_SECONDS, LocalExecutor, LocalRun

__all__ = ["LocalExecutor", "LocalRun", "STOP_GRACE_SECONDS"]
