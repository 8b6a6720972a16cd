"""Patch an SDK module when it is imported, not before (importing it can be slow, or need a region).

SDK v3's ``sagemaker.core.remote_function`` imports ``sagemaker.train``,
whose ``AIRHub`` creates boto3 clients at import time and so fails without a
configured region; a local ``Session()`` must work without one.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from types import ModuleType
from typing import Callable

_lock = threading.Lock()


def when_imported(name: str, patch: Callable[[ModuleType], None]) -> None:
    """Call ``patch(module)`` now if ``name`` is imported, else right after its first import."""
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            sys.meta_path.insert(0, _Finder(name, patch))
            return
    patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``name`` through the other finders and runs ``patch`` once its module has executed."""

    def __init__(self, name: str, patch: Callable[[ModuleType], None]) -> None:
        self._name = name
        self._patch = patch

    def find_spec(self, fullname, path, target=None):
        if fullname != self._name:
            return None
        with _lock:
            if self not in sys.meta_path:
                return None
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, self._patch)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, patch: Callable[[ModuleType], None]) -> None:
        self._loader = loader
        self._patch = patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._patch(module)
