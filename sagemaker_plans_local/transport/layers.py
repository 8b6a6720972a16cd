"""Outer layers that follow every ``LocalBackend.activate()`` (plain Python, no botocore).

The backend cannot import the layers outside it (the SDK layer imports the
backend); they register here instead, and ``activate()`` enters each one.
The package's ``__init__`` registers the SDK layer.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, ContextManager, Iterator

#: A layer: given the backend being activated, the context that keeps the layer on for the block.
Layer = Callable[[Any], ContextManager[object]]

_LAYERS: list[Layer] = []


def register(layer: Layer) -> None:
    """Enter ``layer`` in every later activation (once, however often it is registered)."""
    if layer not in _LAYERS:
        _LAYERS.append(layer)


@contextlib.contextmanager
def entered(backend: Any) -> Iterator[None]:
    """Every registered layer on for ``backend`` while the block runs (left in reverse order)."""
    with contextlib.ExitStack() as stack:
        for layer in list(_LAYERS):
            stack.enter_context(layer(backend))
        yield
