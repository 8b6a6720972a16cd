"""Started with every local training process (on its PYTHONPATH): see ``transport/in_job.py``."""

import os

if os.environ.get("SAGEMAKER_PLANS_LOCAL_OBJECTS"):
    from sagemaker_plans_local.transport.in_job import install

    install()


def _chain() -> None:
    """Run the sitecustomize this one shadows, if there is one further down sys.path."""
    import importlib.machinery
    import importlib.util
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_chain()
